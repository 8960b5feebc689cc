"""numpy policy: NEP 50 and the ufuncs, and a live cross-check on a sample."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings

import ml_dtypes
import numpy as np
import pytest

import exactref as er
from exactref._versions import minor_name
from exactref.promotion import PromotionError, check_inplace, get_policy, result_type
from exactref.promotion import _fixtures as F
from exactref.promotion._numpy import UFUNC


def test_nep50_weak_scalars():
    assert result_type("uint8[3]", 2, policy="numpy") is er.dtype("uint8")
    assert result_type("float16[3]", 1e300, policy="numpy") is er.dtype("float16")
    assert result_type("bool[3]", 2, policy="numpy") is er.dtype("int64")
    assert result_type("float32[3]", 1j, policy="numpy") is er.dtype("complex64")
    assert result_type(2, 0.5, policy="numpy") is er.dtype("float64")
    # numpy scalars and 0-d arrays are strong
    assert result_type("float32[3]", np.float64(0.5), policy="numpy") is er.dtype("float64")
    assert result_type("float32[3]", "float64[]", policy="numpy") is er.dtype("float64")


def _numpy(ml_dtypes):
    """The numpy policy with the rules of an ml_dtypes minor, whichever is installed."""
    return get_policy("numpy", ml_dtypes=ml_dtypes)


@pytest.mark.parametrize("minor", ["0.5", "0.6"])
def test_ufunc_not_result_type_for_ml_dtypes(minor):
    # ml_dtypes 0.5 and 0.6: np.result_type(float8_e4m3fn, float8_e5m2) raises; np.add
    # returns float32
    pol = _numpy(minor)
    assert result_type("float8_e4m3fn[3]", "float8_e5m2[3]", policy=pol) is er.dtype("float32")
    assert result_type("int4[3]", 3, policy=pol) is er.dtype("int8")
    assert result_type("bfloat16[3]", 0.5, policy=pol) is er.dtype("float32")
    assert result_type("int4[3]", "int4[3]", policy=pol, op="div") is er.dtype("float16")


def test_ml_dtypes_07_keeps_its_types_with_python_scalars():
    """ml_dtypes 0.7 registers its promotion with numpy: Python scalars are weak with its
    types too, and a sub-byte integer's Python int is checked against int16 (uint8)."""
    pol = _numpy("0.7")
    assert result_type("float4_e2m1fn[3]", 0.1, policy=pol) is er.dtype("float4_e2m1fn")
    assert result_type("bfloat16[3]", 0.5, policy=pol) is er.dtype("bfloat16")
    assert result_type("int4[3]", 300, policy=pol) is er.dtype("int4")
    assert result_type("int4[3]", "int4[3]", policy=pol, op="div") is er.dtype("float64")
    assert result_type("bfloat16[3]", "float8_e4m3fn[3]", policy=pol) is er.dtype("bfloat16")
    assert result_type("float8_e4m3fn[3]", 2**63, policy=pol) is er.dtype("float8_e4m3fn")
    with pytest.raises(er.PromotionError, match="out of bounds for uint8"):
        result_type("uint4[3]", 300, policy=pol)
    with pytest.raises(er.PromotionError, match="out of bounds for int16"):
        result_type("int4[3]", 2**31, policy=pol)
    # 0.6 differs on each of these (so the rules are the version's, not one table)
    p06 = _numpy("0.6")
    assert result_type("float4_e2m1fn[3]", 0.1, policy=p06) is er.dtype("float32")
    with pytest.raises(er.PromotionError, match="out of bounds for int8"):
        result_type("int4[3]", 300, policy=p06)


def test_ml_dtypes_05_has_no_int1():
    with pytest.raises(er.PromotionError, match="numpy has no dtype int1"):
        result_type("int1[3]", "int8[3]", policy=_numpy("0.5"))
    assert result_type("int1[3]", "int8[3]", policy=_numpy("0.6")) is er.dtype("int8")


def test_the_installed_ml_dtypes_picks_the_rules():
    installed = minor_name(ml_dtypes.__version__)
    if installed not in F.NUMPY_FIXTURES:
        pytest.skip(f"ml_dtypes {ml_dtypes.__version__} was not measured")
    assert get_policy("numpy").rules is _numpy(installed).rules
    assert ml_dtypes.__version__ in get_policy("numpy").checked
    # the patch version does not matter
    assert _numpy(installed + ".99").rules is _numpy(installed).rules


def test_an_unmeasured_ml_dtypes_gets_the_nearest_rules_and_one_warning(monkeypatch):
    from exactref import _versions
    from exactref.promotion import _numpy as N

    monkeypatch.setattr(_versions, "_WARNED", set())
    real = _versions.installed
    monkeypatch.setattr(_versions, "installed",
                        lambda lib: "0.9.0" if lib == "ml_dtypes" else real(lib))
    with pytest.warns(er.UnmeasuredVersionWarning) as record:
        rules = N.rules()
        N.rules()  # once per process
    assert len(record) == 1
    text = str(record[0].message)
    assert "ml_dtypes 0.9.0 is installed" in text
    assert "0.5.4, 0.6.0, 0.7.0" in text
    assert "python scripts/record_promotion_fixtures.py numpy" in text
    assert rules is _numpy("0.7").rules
    assert _numpy("0.4").rules is _numpy("0.5").rules
    with pytest.raises(ValueError, match="ml_dtypes must be a version"):
        _numpy("new")


def test_three_operands_are_not_associative():
    assert result_type("int8[3]", "uint8[3]", "float16[3]", policy="numpy") is er.dtype("float16")


def test_inplace_same_kind():
    with pytest.raises(PromotionError) as info:
        check_inplace("add", "int64", 1.5, policy="numpy")
    assert info.value.library_error == ("UFuncTypeError", "Cannot cast ufunc 'add' output from "
                                        "dtype('float64') to dtype('int64') with casting rule "
                                        "'same_kind'")
    assert check_inplace("add", "float32", "float64[3]", policy="numpy") is er.dtype("float64")


def test_can_cast_castings():
    assert not er.can_cast("float64", "float32", policy="numpy")
    assert er.can_cast("float64", "float32", policy="numpy", casting="same_kind")
    assert er.can_cast("float64", "int8", policy="numpy", casting="unsafe")
    with pytest.raises(ValueError, match="casting must be"):
        er.can_cast("float64", "int8", policy="numpy", casting="kind")


def _make(spec):
    from exactref.promotion._operands import operand

    o = operand(spec)
    if o.tier == "array":  # int1 holds no 1 (its values are -1 and 0): zeros, as recorded
        fill = np.zeros if o.format.name == "int1" else np.ones
        return fill((3,) if o.ndim else (), dtype=o.format.np_dtype)
    if o.tier == "typed":
        return o.format.np_dtype.type(o.value)
    return o.value


#: exactref's ops with no ufunc of their own, as the recorder computes them.
_NOT_UFUNCS = {"rsqrt": lambda x: 1 / np.sqrt(x),
               "clamp": lambda x, lo, hi=None: np.clip(x, lo, hi),
               "fma": lambda x, y, z: x * y + z}


def _installed_fixture():
    """The fixture of the installed ml_dtypes minor (skip where it was not measured)."""
    minor = minor_name(ml_dtypes.__version__)
    if minor not in F.NUMPY_FIXTURES:
        pytest.skip(f"ml_dtypes {ml_dtypes.__version__} was not measured: run "
                    f"scripts/record_promotion_fixtures.py numpy")
    return F.NUMPY_FIXTURES[minor]


def test_live_numpy_sample():
    """Recompute a sample of the installed ml_dtypes' fixture cells with the installed numpy
    and ml_dtypes, and compare the policy (its rules for that minor) with them."""
    library = _installed_fixture()
    checked = 0
    for i, cell in enumerate(F.cells(library)):
        if i % 97 or (cell.op not in UFUNC and cell.op not in _NOT_UFUNCS):
            continue
        ufunc = _NOT_UFUNCS.get(cell.op) or getattr(np, UFUNC[cell.op])
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = np.asarray(ufunc(*map(_make, cell.operands)))
            live = F.Cell(library, cell.op, cell.operands, str(out.dtype), False, None, None,
                          ())
        except Exception as exc:  # noqa: BLE001 - the library's own error is the data
            live = F.Cell(library, cell.op, cell.operands, None, False,
                          (type(exc).__name__, " ".join(str(exc).split())), cell.fallback, ())
        verdict, detail = F.compare(live)
        assert verdict != "disagree", (cell.id, detail)
        checked += 1
    assert checked > 300


#: Set in the fresh interpreter that runs the live checks (see :func:`fresh_run`).
_FRESH = "EXACTREF_FRESH_PROCESS"


@pytest.fixture(scope="module")
def fresh_run():
    """The live checks below, run once in a fresh interpreter. numpy's answer for an ml_dtypes
    type with a Python scalar can depend on the calls the process made before: under
    ml_dtypes 0.7.0 and numpy 2.4.6, ``np.maximum(int2 array, 0.5)`` gave float64 in a test
    worker that had run other files first, and float16 (what a fresh process gives, and the
    fixture records) everywhere else. The rules are checked against numpy as a new process
    sees it; None in that process itself."""
    if os.environ.get(_FRESH):
        return None
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "-rf",
         __file__, "-k", "test_live_numpy_every_pair or test_numpy_installed_policy_agrees"],
        env=dict(os.environ, **{_FRESH: "1"}), capture_output=True, text=True, timeout=1200)


def _checked_in_fresh_process(request, run) -> bool:
    """Whether this check ran in the fresh interpreter (and passed there); False where this is
    that interpreter, which runs the check itself."""
    if run is None:
        return False
    out = run.stdout + run.stderr
    assert run.returncode in (0, 1) and " passed" in out, out[-3000:]
    name = re.escape(request.node.name)
    failed = [ln for ln in run.stdout.splitlines()
              if ln.startswith("FAILED") and re.search(rf"::{name}( |$)", ln)]
    assert not failed, out[-6000:]
    return True


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "maximum", "bitwise_or",
                                "bitwise_xor", "ne", "atan2"])
def test_live_numpy_every_pair(op, request, fresh_run):
    """Every pair of the installed ml_dtypes' dtypes (arrays, and each with a Python scalar)
    through the installed numpy's ufunc, against the policy's rules for that ml_dtypes: the
    cross-check of the rules with the library itself, ufuncs the fixture does not record
    (bitwise_or, bitwise_xor, ne with scalars) included; in a fresh interpreter."""
    if _checked_in_fresh_process(request, fresh_run):
        return
    library = _installed_fixture()
    pol = get_policy("numpy")
    names = [f"{f.name}[3]" for f in pol.formats]
    ufunc = getattr(np, UFUNC[op])
    pairs = [(a, b) for a in names for b in names]
    pairs += [(a, s) for a in names for s in ("True", "2", "0.5", "1j")]
    pairs += [(s, a) for a in names for s in ("True", "2", "0.5", "1j")]
    wrong = []
    for a, b in pairs:
        args = [_make(a), _make(b) if b.endswith("]") else eval(b)]  # noqa: S307 - literals
        if not a.endswith("]"):
            args = [eval(a), _make(b)]  # noqa: S307
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = np.asarray(ufunc(*args))
            live = F.Cell(library, op, (a, b), str(out.dtype), False, None, None, ())
        except Exception as exc:  # noqa: BLE001 - the library's own error is the data
            live = F.Cell(library, op, (a, b), None, False,
                          (type(exc).__name__, " ".join(str(exc).split())), None, ())
        verdict, detail = F.compare(live)
        if verdict == "disagree":
            wrong.append(f"{live.id}: {detail}")
    assert not wrong, f"{len(wrong)} of {len(pairs)}:\n" + "\n".join(wrong[:20])


@pytest.mark.parametrize("op, want", [("eq", "bool"), ("lt", "bool"), ("ne", "bool"),
                                      ("div", "float64")])
def test_python_ints_out_of_an_int_range_where_numpy_takes_them(op, want):
    """NEP 50: comparisons take any Python int exactly, and true division converts it to
    float64, not to the array's integer type: numpy does not raise (found by the numpy
    equivalents' audit)."""
    a = np.array([1, 2], np.int8)
    fn = {"eq": np.equal, "lt": np.less, "ne": np.not_equal, "div": np.true_divide}[op]
    assert fn(a, 1000).dtype.name == want
    assert er.result_type(a, 1000, policy="numpy", op=op).name == want
    with pytest.raises(er.PromotionError, match="out of bounds for int8"):
        er.result_type(a, 1000, policy="numpy", op="add")


@pytest.mark.parametrize("op", ["add", "div", "pow", "lt", "maximum", "atan2", "sqrt", "abs",
                                "clamp"])
def test_numpy_installed_policy_agrees_with_the_measured_rules(op, request, fresh_run):
    """policy="numpy_installed" (numpy asked, what equivalents.numpy and the numpy audit
    use) gives the measured policy's dtype, or raises where it raises, on every dtype of the
    installed ml_dtypes with arrays, 0-d arrays and Python scalars; in a fresh interpreter."""
    if _checked_in_fresh_process(request, fresh_run):
        return
    _installed_fixture()  # the measured rules must be the installed version's
    live, rules = get_policy("numpy_installed"), get_policy("numpy")
    names = [f"{f.name}[3]" for f in rules.formats]
    others = names + [f"{f.name}[]" for f in rules.formats[:14]] + [True, 2, 300, 0.5, 1j]
    cases = [(a,) for a in names] if op in ("sqrt", "abs") else \
        [(a, b, 1) for a in names for b in (0, 0.5)] if op == "clamp" else \
        [(a, b) for a in names for b in others] + [(b, a) for a in names for b in others[-5:]]
    wrong = []
    for args in cases:
        got = []
        for pol in (live, rules):
            try:
                got.append(result_type(*args, op=op, policy=pol).name)
            except PromotionError as exc:
                got.append(("error", exc.library_error[0] if exc.library_error else None))
        if got[0] != got[1]:
            wrong.append(f"{op}{args}: numpy {got[0]}, the measured rules {got[1]}")
    assert not wrong, f"{len(wrong)} of {len(cases)}:\n" + "\n".join(wrong[:20])


def test_numpy_installed_policy_cast_and_inplace():
    assert er.can_cast("float64", "float32", policy="numpy_installed") is False
    assert er.can_cast("float64", "float32", policy="numpy_installed", casting="same_kind")
    assert check_inplace("add", "float32", "float64[3]",
                         policy="numpy_installed") is er.dtype("float64")
    with pytest.raises(PromotionError) as info:
        check_inplace("add", "int64", 1.5, policy="numpy_installed")
    assert info.value.library_error[0] == "UFuncTypeError"
    with pytest.raises(PromotionError, match="numpy has no addcmul"):
        result_type("float32[3]", "float32[3]", "float32[3]", op="addcmul",
                    policy="numpy_installed")
    assert "(installed)" in get_policy("numpy_installed").checked

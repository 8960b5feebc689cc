"""The zoo's measure (issue 21): each case's verdict under four checks, and the table.

(a) exactref with default options: ``er.<op>(inputs...).covers(actual).all()``;
(b) ``torch.testing.assert_close``'s rule at PyTorch's default tolerances, written in numpy:
    ``|a - e| <= atol + rtol * |e|`` (NaN never close, equal infinities close), with ``e`` the
    op evaluated in float64 on the same inputs and rounded once to the actual's dtype
    (assert_close checks dtypes by default, so a test compares against an expected value of the
    actual's dtype); (rtol, atol) from ``_DTYPE_PRECISIONS`` in torch/testing/_comparison.py:
    float32 (1.3e-6, 1e-5), float16 (1e-3, 1e-5), bfloat16 (1.6e-2, 1e-5); a dtype the table
    does not list (the float8 formats) gets (0, 0) (``dtype_precisions.get(dtype, (0.0, 0.0))``);
(c) the same rule at the op's OpInfo tolerance override, where it has one (``kernels.OPINFO``,
    cited there), each of rtol and atol the larger of the override and the default, as
    torch's TestCase.assertEqual combines them;
(d) exactref under the declared contract (``contract=er.Contract(**case.contract)``; before the
    Contract lands, the same fields as the op's keywords).

Run ``python3 tests/zoo/zoo_measure.py`` for the table (``--markdown`` in markdown,
``--write-docs docs/zoo.md`` to refresh the docs' table in place).
"""

from __future__ import annotations

import functools
import sys
import warnings
from dataclasses import dataclass

import ml_dtypes
import numpy as np
from kernels import to64
from zoo_cases import CASES

import exactref as er

ASSERT_CLOSE = {"float32": (1.3e-6, 1e-5), "float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5)}


@dataclass
class Verdict:
    """Each check's verdict on one case: True = the check passes the kernel."""

    default: bool
    declared: bool
    assert_close: bool
    opinfo: bool | None  # None: the op has no OpInfo override for this dtype
    error_ulps: float  # the kernel's largest distance from the exact rounding (ulps)
    tol_median: float  # the default tolerance, median and max (ulps)
    tol_max: float
    declared_median: float
    note: str = ""  # an exception raised by a check, if any


def close(actual, expected, rtol, atol) -> bool:
    a = np.asarray(actual, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        ok = (np.abs(a - e) <= atol + rtol * np.abs(e)) | ((a == e) & np.isinf(e))
    return bool(np.all(ok & ~np.isnan(a) & ~np.isnan(e)))


def ulp_of(values, dt):
    fi = ml_dtypes.finfo(dt)
    v = np.abs(np.asarray(values, dtype=np.float64))
    with np.errstate(divide="ignore"):
        e = np.floor(np.log2(np.where(v > 0, v, 1.0)))
    e = np.where(v > 0, np.maximum(e, fi.minexp), fi.minexp)
    return np.exp2(e - fi.nmant)


def error_ulps(actual, rounded) -> float:
    a = np.asarray(actual, dtype=np.float64)
    r = np.asarray(rounded, dtype=np.float64)
    same = (a == r) | (np.isnan(a) & np.isnan(r))
    with np.errstate(invalid="ignore"):
        d = np.abs(a - r) / ulp_of(r, np.asarray(actual).dtype)
    d = np.where(same, 0.0, np.where(np.isfinite(d), d, np.inf))
    return float(d.max()) if d.size else 0.0


def call(case, args, kwargs, contract):
    op = getattr(er, case.op)
    if not contract:
        return op(*args, **kwargs)
    if hasattr(er, "Contract"):
        return op(*args, **kwargs, contract=er.Contract(**contract))
    return op(*args, **{**kwargs, **contract})


def _covers(result, actual):
    cov = result.covers(*actual) if isinstance(actual, tuple) else result.covers(actual)
    return cov


def _tol(cov):
    stats = getattr(cov, "tolerance_stats", None)
    return stats if isinstance(stats, tuple) else (float("nan"), float("nan"))


@functools.cache
def measure(name: str) -> Verdict:
    case = next(c for c in CASES if c.name == name)
    args, kwargs = case.inputs()
    note = ""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")  # overflows are some bugs' point; weak-check warnings
        actual = case.kernel(*args, **kwargs)
        golden = np.asarray(case.golden(*[to64(a) for a in args], **kwargs), dtype=np.float64)
        res = call(case, args, kwargs, None)
        cov = _covers(res, actual)
        default, (tmed, tmax) = cov.all(), _tol(cov)
        try:
            dres = call(case, args, kwargs, case.contract)
            dcov = _covers(dres, actual)
            declared, dmed = dcov.all(), _tol(dcov)[0]
        except (TypeError, ValueError) as exc:  # an option the op cannot honour yet
            declared, dmed, note = default, float("nan"), f"{type(exc).__name__}: {exc}"[:200]
    if isinstance(actual, tuple):  # quantize: (codes, scales) -> dequantized values
        codes, scales = actual
        value = codes * np.repeat(scales, codes.shape[-1] // scales.shape[-1], -1)
        expected, rtol_atol, err = golden, (0.0, 0.0), float("nan")
    else:
        dt = np.asarray(actual).dtype
        value = np.asarray(actual).astype(np.float64)
        expected = golden.astype(dt).astype(np.float64)
        rtol_atol = ASSERT_CLOSE.get(str(dt), (0.0, 0.0))
        err = error_ulps(actual, np.asarray(res.rounded.numpy() if hasattr(res.rounded, "numpy")
                                            else res.rounded, dtype=np.float64))
    ac = close(value, expected, *rtol_atol)
    oi = None if case.opinfo is None else close(
        value, expected, *(max(d, o) for d, o in zip(rtol_atol, case.opinfo, strict=True)))
    return Verdict(default, declared, ac, oi, err, tmed, tmax, dmed, note)


def verdict_text(passes: bool | None, correct: bool) -> str:
    if passes is None:
        return "-"
    if correct:
        return "pass" if passes else "FALSE ALARM"
    return "missed" if passes else "caught"


def available(cases=None):
    """The cases this machine can run (torch's only where torch is installed)."""
    try:
        import torch  # noqa: F401
        return list(cases or CASES)
    except ImportError:
        return [c for c in cases or CASES if not c.torch]


def rows(cases=None):
    """The table's rows: (case, family, dtype, label, assert_close, opinfo, default, declared,
    error ulps, default tolerance median/max ulps)."""
    out = []
    for case in available(cases):
        v = measure(case.name)
        out.append((case.name, case.family, case.dtype, "correct" if case.correct else "bug",
                    verdict_text(v.assert_close, case.correct),
                    verdict_text(v.opinfo, case.correct),
                    verdict_text(v.default, case.correct), verdict_text(v.declared, case.correct),
                    f"{v.error_ulps:.3g}", f"{v.tol_median:.3g} / {v.tol_max:.3g}",
                    f"{v.declared_median:.3g}"))
    return out


HEADER = ("case", "family", "dtype", "kind", "assert_close", "OpInfo", "exactref default",
          "declared", "error ulps", "default tol ulps (median / max)", "declared median")


def markdown(cases=None) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(r) + " |" for r in rows(cases)]
    return "\n".join(lines)


def summary(cases=None) -> dict:
    """Counts: bugs each check catches, false alarms each check raises."""
    bugs = [c for c in available(cases) if not c.correct]
    good = [c for c in available(cases) if c.correct]
    out = {"cases": len(bugs) + len(good), "bugs": len(bugs), "correct": len(good)}
    for key in ("assert_close", "opinfo", "default", "declared"):
        out[f"{key} caught"] = sum(getattr(measure(c.name), key) is False for c in bugs)
        out[f"{key} false alarms"] = sum(getattr(measure(c.name), key) is False for c in good)
    return out


def write_docs(path="docs/zoo.md") -> None:
    """Replace the table between the ``<!-- zoo-table -->`` markers of ``path``."""
    text = open(path, encoding="utf-8").read()
    start, end = "<!-- zoo-table -->", "<!-- /zoo-table -->"
    i, j = text.index(start) + len(start), text.index(end)
    counts = ", ".join(f"{k}: {v}" for k, v in summary().items())
    with open(path, "w", encoding="utf-8") as f:
        f.write(text[:i] + "\n" + markdown() + "\n\n" + counts + "\n" + text[j:])


if __name__ == "__main__":
    if "--write-docs" in sys.argv:
        write_docs(sys.argv[sys.argv.index("--write-docs") + 1])
    elif "--markdown" in sys.argv:
        print(markdown())
    else:
        for r in rows():
            print(" ".join(f"{x:<14}" for x in r))
    print(summary())

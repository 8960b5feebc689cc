"""The custom-kernel protocol with a declared contract, on inputs chosen for each dimension:
``--compute`` reaches a long op, ``--flush both`` clears a TensorFlow-style kernel (and its
absence catches it), ``--contract FILE.toml``, ``--set`` and ``[tool.exactref]`` merge with the
explicit options winning, ``--op gemm`` audits gemm, refusals name the dimension and what the
op takes, reproducers carry the whole failing row and fail in a fresh interpreter, and every
``--template`` audits clean."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

from exactref.cli import main

HERE = pathlib.Path(__file__).parent


@pytest.fixture(autouse=True)
def _importable(monkeypatch):
    monkeypatch.syspath_prepend(str(HERE))


def _audit(capsys, kernel, op, *more):
    rc = main(["audit", f"contract_kernels:{kernel}", "--op", op, "--kinds", "same",
               "--no-progress", "--no-pyproject", *more])
    return rc, capsys.readouterr()


def _report(tmp_path, kernel, op, *more) -> dict:
    out = tmp_path / "r.json"
    main(["audit", f"contract_kernels:{kernel}", "--op", op, "--kinds", "same",
          "--no-progress", "--no-pyproject", "--json", str(out), *more])
    return json.loads(out.read_text())


# ------------------------------------------------------------------------------ compute
def test_compute_reaches_a_long_op(capsys, tmp_path):
    """A sum accumulated in bfloat16: the default (a float32 accumulator for the half formats)
    catches it; --compute bfloat16 declares it and it passes; the tolerance follows the
    declared format (it was the same whatever --compute said)."""
    rc, _ = _audit(capsys, "sum_bf16", "sum", "--dtypes", "bfloat16")
    assert rc == 1
    rc, cap = _audit(capsys, "sum_bf16", "sum", "--dtypes", "bfloat16", "--compute", "bfloat16")
    assert rc == 0, cap.out
    wide = _report(tmp_path, "sum_bf16", "sum", "--dtypes", "bfloat16", "--compute", "float64")
    narrow = _report(tmp_path, "sum_bf16", "sum", "--dtypes", "bfloat16", "--compute",
                     "bfloat16")
    assert wide["groups"][0]["tol_median_ulps"] < narrow["groups"][0]["tol_median_ulps"]
    assert narrow["groups"][0]["contract"] == {"compute": "bfloat16"}
    assert narrow["config"]["contract"] == {"compute": "bfloat16"}


# -------------------------------------------------------------------------------- flush
@pytest.mark.parametrize("kernel, op", [("add_tf", "add"), ("multiply_tf", "multiply"),
                                        ("exp_tf", "exp"), ("sum_tf", "sum")])
def test_a_tensorflow_style_kernel_audits_clean_with_flush_both(capsys, kernel, op):
    rc, cap = _audit(capsys, kernel, op, "--dtypes", "float32")
    assert rc == 1, cap.out  # the subnormals it flushes are caught
    rc, cap = _audit(capsys, kernel, op, "--dtypes", "float32", "--flush", "both")
    assert rc == 0, cap.out
    rc, cap = _audit(capsys, kernel, op, "--dtypes", "float32", "--set", "flush=both")
    assert rc == 0, cap.out


def test_flush_inputs_alone_does_not_cover_flushed_outputs(capsys):
    rc, _ = _audit(capsys, "multiply_tf", "multiply", "--dtypes", "float32", "--flush", "inputs")
    assert rc == 1


# ------------------------------------------------------------------- files, --set, config
def test_a_contract_file_with_a_per_op_table(capsys, tmp_path):
    f = tmp_path / "c.toml"
    f.write_text('flush = "both"\n[ops.sum]\ncompute = "bfloat16"\n')
    rc, cap = _audit(capsys, "sum_bf16", "sum", "--dtypes", "bfloat16", "--contract", str(f))
    assert rc == 0, cap.out
    # an explicit option wins over the file
    rc, _ = _audit(capsys, "sum_bf16", "sum", "--dtypes", "bfloat16", "--contract", str(f),
                   "--compute", "float32")
    assert rc == 1
    # --set wins over the file too
    rc, _ = _audit(capsys, "sum_bf16", "sum", "--dtypes", "bfloat16", "--contract", str(f),
                   "--set", "ops.sum.compute=float32")
    assert rc == 1


def test_pyproject_is_read_and_explicit_options_win(capsys, tmp_path, monkeypatch):
    (tmp_path / "pyproject.toml").write_text('[tool.exactref]\ncompute = "bfloat16"\n'
                                             'order = "pairwise"\n')
    sub = tmp_path / "src"
    sub.mkdir()
    monkeypatch.chdir(sub)  # the nearest pyproject.toml at or above the working directory
    argv = ["audit", "contract_kernels:sum_bf16", "--op", "sum", "--kinds", "same",
            "--dtypes", "bfloat16", "--no-progress"]
    assert main(argv + ["--set", "order=any"]) == 0, capsys.readouterr().out
    assert main(argv + ["--set", "order=any", "--compute", "float32"]) == 1
    assert main(argv + ["--no-pyproject"]) == 1
    capsys.readouterr()
    # the ambient table's fields apply to the ops that have them: add has no order
    argv = ["audit", "contract_kernels:add_tf", "--op", "add", "--kinds", "same", "--dtypes",
            "float32", "--no-progress", "--flush", "both"]
    assert main(argv) == 0, capsys.readouterr().err


@pytest.mark.parametrize("more, says", [
    (["--set", "order=pairwise"], "add has no order: it has no accumulation"),
    (["--set", "params.eps=float32"], "no scalar parameter 'eps'"),
    (["--set", "colour=blue"], "unknown contract field 'colour'"),
    (["--set", "flush"], "expected key=value"),
    (["--set", "ops.sum.order=sequential"], "[ops.sum] names an op this audit does not run"),
    (["--accuracy", "2"], "add has no accuracy"),
])
def test_a_dimension_the_op_cannot_honour_is_refused_by_name(capsys, more, says):
    rc, cap = _audit(capsys, "add_tf", "add", "--dtypes", "float32", *more)
    assert rc == 4
    assert says in cap.err, cap.err
    if "has no" in says and "parameter" not in says:
        assert "The contract dimensions add takes: compute, convert, flush" in cap.err


def test_a_contract_file_that_cannot_be_read(capsys, tmp_path):
    rc, cap = _audit(capsys, "add_tf", "add", "--contract", str(tmp_path / "none.toml"))
    assert rc == 4 and "cannot read the contract file" in cap.err
    bad = tmp_path / "bad.toml"
    bad.write_text("flush = \n")
    rc, cap = _audit(capsys, "add_tf", "add", "--contract", str(bad))
    assert rc == 4 and "not valid TOML" in cap.err


# --------------------------------------------------------------------------------- gemm
def gemm_ignores_beta(a, b, c, alpha=1, beta=1, trans_a=False, trans_b=False):
    """A gemm that adds c unscaled (beta taken as 1)."""
    import numpy as np

    A = np.asarray(a, np.float64)
    B = np.asarray(b, np.float64)
    A = A.T if trans_a else A
    B = B.T if trans_b else B
    return (alpha * (A @ B) + np.asarray(c, np.float64)).astype(np.asarray(a).dtype)


def test_op_gemm_audits_gemm(capsys, tmp_path):
    """gemm's kernel receives a, b, c and alpha, beta, trans_a, trans_b; a correct one passes,
    one that ignores beta fails (it audited nothing before: exit 5)."""
    kernel = tmp_path / "gk.py"
    kernel.write_text(subprocess.run([sys.executable, "-m", "exactref", "audit", "--template",
                                      "gemm"], capture_output=True, text=True,
                                     check=True).stdout)
    sys.path.insert(0, str(tmp_path))
    try:
        rc = main(["audit", "gk:kernel", "--op", "gemm", "--no-progress", "--no-pyproject"])
        out = capsys.readouterr().out
        assert rc == 0, out
        assert "trans_a=True" in out and "alpha=0.5" in out
    finally:
        sys.path.remove(str(tmp_path))
    rc = main(["audit", f"{__name__}:gemm_ignores_beta", "--op", "gemm", "--no-progress",
               "--no-pyproject", "--dtypes", "float32"])
    assert rc == 1, capsys.readouterr().out


# --------------------------------------------------------------------------- reproducers
def _reproducer(out: str) -> str:
    start = out.index("  reproducer:\n") + len("  reproducer:\n")
    block = []
    for line in out[start:].splitlines():
        if not line.startswith("    "):
            break
        block.append(line[4:])
    return "\n".join(block)


def _run_fresh(code: str):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(HERE), *filter(None, [os.environ.get("PYTHONPATH")])]))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, cwd=str(HERE), timeout=300)


@pytest.mark.parametrize("kernel, op, row", [
    ("softmax_row_bug", "softmax", "shape (1, 48)"),
    ("layer_norm_row_bug", "layer_norm", None),
    ("matmul_f16_products", "matmul", None),
])
def test_a_reproducer_carries_the_whole_row_and_fails_in_a_fresh_interpreter(capsys, kernel,
                                                                           op, row):
    rc, cap = _audit(capsys, kernel, op, "--dtypes", "float32", "--worst", "1")
    assert rc == 1, cap.out
    code = _reproducer(cap.out)
    assert f"er.{op}(" in code
    done = _run_fresh(code)
    assert done.returncode == 1, (code[:2000], done.stdout[-2000:], done.stderr[-2000:])
    assert "not covered" in done.stdout or "uncovered" in done.stdout or \
        "outside" in done.stdout, done.stdout[-1000:]
    if row is not None:  # the whole row: 48 values, not 1
        assert code.count("float.fromhex") >= 48
    if op == "matmul":  # a row of a and a column of b: 48 values each
        assert code.count("float.fromhex") == 96, code


def test_a_reproducer_declares_the_contract(capsys):
    rc, cap = _audit(capsys, "sum_bf16", "sum", "--dtypes", "bfloat16", "--compute", "float32",
                     "--worst", "1")
    assert rc == 1
    code = _reproducer(cap.out)
    assert "contract=er.Contract(compute='float32')" in code
    assert _run_fresh(code).returncode == 1


# ----------------------------------------------------------------------------- template
TEMPLATE_OPS = ["add", "divide", "clamp", "exp", "gelu", "sum", "var", "matmul", "gemm",
                "conv1d", "layer_norm", "group_norm", "softmax", "cross_entropy",
                "scaled_dot_product_attention", "quantize", "quantize_linear",
                "dequantize_linear"]


@pytest.mark.parametrize("op", TEMPLATE_OPS)
def test_every_template_audits_clean(op, tmp_path, capsys):
    assert main(["audit", "--template", op]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f'"""A {op} kernel') and "def kernel(" in text
    (tmp_path / f"tpl_{op}.py").write_text(text)
    sys.path.insert(0, str(tmp_path))
    try:
        more = ["--format", "mxfp8_e4m3"] if op == "quantize" else []
        rc = main(["audit", f"tpl_{op}:kernel", "--op", op, "--dtypes", "float32,bfloat16",
                   "--samples", "32", "--no-progress", "--no-pyproject", *more])
        assert rc == 0, capsys.readouterr().out
    finally:
        sys.path.remove(str(tmp_path))


def test_template_of_an_unknown_op(capsys):
    assert main(["audit", "--template", "softmx"]) == 4
    assert "close matches: softmax" in capsys.readouterr().err


def test_op_refuses_an_unknown_op_by_name_with_close_matches(capsys):
    assert main(["audit", "contract_kernels:add_tf", "--op", "gemmm", "--no-progress"]) == 4
    assert "gemm" in capsys.readouterr().err


# ---------------------------------------------------------------------- library targets
@pytest.mark.parametrize("more", [["--set", "order=sequential"], ["--compute", "float64"]])
def test_a_library_target_takes_the_declared_contract(tmp_path, more):
    """torch's sum under a declared order or accumulator: the tolerance follows (the
    equivalents' own keywords won over the declaration: recorded, and nothing changed)."""
    pytest.importorskip("torch")

    def tol(*extra):
        out = tmp_path / "t.json"
        # (torch accumulates in float32: declared float64, its sum fails, as it should)
        assert main(["audit", "torch", "--ops", "sum", "--dtypes", "float32", "--kinds",
                     "same", "--no-progress", "--no-pyproject", "--json", str(out),
                     *extra]) in (0, 1)
        (g,) = json.loads(out.read_text())["groups"]
        return g["tol_median_ulps"], g["contract"]

    default, none = tol()
    declared, contract = tol(*more)
    assert none == {} and declared < default
    assert contract[more[1].split("=")[0] if more[0] == "--set" else "compute"]

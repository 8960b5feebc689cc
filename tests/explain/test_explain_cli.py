"""``exactref explain MODULE:FUNCTION --op OP`` on kernel modules written to tmp_path."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from exactref.cli import main

KERNELS = textwrap.dedent('''
    import ml_dtypes
    import numpy as np


    def bf16_sum(x, axis=-1):
        """A float32 row sum with a bfloat16 accumulator: every add rounded into bfloat16."""
        out = np.empty(x.shape[0], x.dtype)
        for i, row in enumerate(x):
            acc = ml_dtypes.bfloat16(0.0)
            for v in row:
                acc = ml_dtypes.bfloat16(np.float32(acc) + np.float32(v))
            out[i] = acc
        return out


    def ftz_multiply(x, y):
        """A product whose subnormal outputs are flushed to zero (TensorFlow's CPU kernels)."""
        p = x * y
        tiny = np.finfo(p.dtype).smallest_normal
        return np.where(np.abs(p) < tiny, np.copysign(np.zeros_like(p), p), p)


    def multiply(x, y):
        return x * y


    def layer_norm(x, shape, weight, bias):
        """Computed in float64, rounded once (the call the audit's row groups make)."""
        w = x.astype(np.float64)
        mu = w.mean(axis=-1, keepdims=True)
        var = ((w - mu) ** 2).mean(axis=-1, keepdims=True)
        return (((w - mu) / np.sqrt(var + 1e-5)) * weight + bias).astype(x.dtype)


    def wrong(x, y):
        return x + y


    def broken(x, y):
        raise RuntimeError("no kernel here")
''')


@pytest.fixture
def kernels(tmp_path, monkeypatch):
    (tmp_path / "explain_kernels.py").write_text(KERNELS)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    yield "explain_kernels"
    sys.modules.pop("explain_kernels", None)


def test_bf16_sum_kernel(kernels, capsys):
    code = main(["explain", f"{kernels}:bf16_sum", "--op", "sum", "--shape", "4,256"])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "covered only if the sum accumulates in bfloat16: compute='bfloat16'" in out


def test_flushing_kernel_json(kernels, capsys):
    code = main(["explain", f"{kernels}:ftz_multiply", "--op", "multiply", "--dtypes",
                 "float32,bfloat16", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1 and data["exit"] == 1
    for fmt in ("float32", "bfloat16"):
        d = data["dtypes"][fmt]
        assert d["status"] == "other"
        assert d["best"] == {"flush": "outputs"}, d["findings"]


def test_correct_kernel_exits_0(kernels, capsys):
    code = main(["explain", f"{kernels}:multiply", "--op", "multiply", "--dtypes",
                 "float16,float32"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.count("covered by the default contract") == 2


def test_row_op_kernel_and_declared_contract(kernels, capsys):
    code = main(["explain", f"{kernels}:layer_norm", "--op", "layer_norm", "--shape", "4,256",
                 "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0, data
    d = data["dtypes"]["float32"]
    assert d["status"] == "default" and d["elements"] == 4 * 256
    # declared: it computes in float64; the search starts from there and still covers
    code = main(["explain", f"{kernels}:layer_norm", "--op", "layer_norm", "--shape", "4,256",
                 "--set", "compute=float64", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["dtypes"]["float32"]["contract"] == {"compute": "float64"}
    # the bfloat16 sum with its (true) sequential order declared: the search starts from
    # order='sequential' and still names the accumulator
    code = main(["explain", f"{kernels}:bf16_sum", "--op", "sum", "--shape", "4,128", "--set",
                 "order=sequential", "--json"])
    d = json.loads(capsys.readouterr().out)["dtypes"]["float32"]
    assert code == 1 and d["contract"] == {"order": "sequential"}
    assert d["covering"][0]["contract"]["compute"] == "bfloat16"


def test_wrong_kernel_exits_2(kernels, capsys):
    code = main(["explain", f"{kernels}:wrong", "--op", "multiply"])
    out = capsys.readouterr().out
    assert code == 2, out
    assert "no contract tried covers every element" in out


def test_usage_errors(kernels, capsys):
    assert main(["explain", f"{kernels}:broken", "--op", "multiply"]) == 3
    assert "raised" in capsys.readouterr().err
    assert main(["explain", f"{kernels}:multiply", "--op", "multiply", "--shape", "4,x"]) == 4
    assert "--shape" in capsys.readouterr().err
    assert main(["explain", f"{kernels}:multiply", "--op", "multiply", "--dtypes", "int32"]) == 4
    assert main(["explain", f"{kernels}:multiply", "--op", "no_such_op"]) == 4
    assert main(["explain", f"{kernels}:multiply"]) == 4  # --op is required
    assert main(["explain", "numpy", "--op", "multiply"]) == 4
    assert "module:function" in capsys.readouterr().err
    capsys.readouterr()

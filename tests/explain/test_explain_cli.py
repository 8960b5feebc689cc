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
    capsys.readouterr()

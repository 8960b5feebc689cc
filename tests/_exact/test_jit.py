"""exactref._exact._jit: lazily compiled functions, and a compiled function that calls another
(``needs=``) cached across processes."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from exactref._exact import _jit

_MODULE = textwrap.dedent('''
    from exactref._exact import _jit

    @_jit.jit
    def one(x):
        return x + 1

    @_jit.jit(needs=("one",))
    def loop(a, out):
        for i in range(a.size):
            out[i] = one(a[i])
''')


def test_python_twin_runs_without_numba(monkeypatch):
    monkeypatch.setenv("EXACTREF_NUMBA", "0")
    f = _jit.jit(lambda x: x * 2)
    assert f.compiled() is None and f(3) == 6


def test_a_function_calling_another_is_cached_across_processes(tmp_path):
    """Each process compiles a new signature of ``loop`` into the same cache index, whose keys
    hold no dispatcher type (a dispatcher passed as an argument put one there, which a later
    process once could not pickle again: numba's "underlying object has vanished", seen in
    the enclosures' settle loop)."""
    pytest.importorskip("numba", reason="numba is the optional extra 'exactref[fast]'")
    (tmp_path / "jitmod.py").write_text(_MODULE)
    for dtype in ("int64", "float64"):
        code = (f"import numpy as np, jitmod\n"
                f"a = np.arange(4, dtype=np.{dtype}); out = np.zeros(4, np.{dtype})\n"
                f"jitmod.loop(a, out); assert (out == a + 1).all(), out\n"
                f"assert jitmod.loop.compiled() is not None\n")
        done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
    assert list((tmp_path / "__pycache__").glob("jitmod.loop-*.nbi"))  # cached


def test_needs_binds_the_compiled_callee():
    pytest.importorskip("numba", reason="numba is the optional extra 'exactref[fast]'")
    one = _jit.jit(lambda x: x + 1)
    ns = {"one": one}
    exec("def loop(a, out):\n    for i in range(a.size):\n        out[i] = one(a[i])", ns)
    loop = _jit.jit(ns["loop"], needs=("one",))
    out = np.zeros(3)
    loop(np.arange(3.0), out)
    assert out.tolist() == [1.0, 2.0, 3.0]

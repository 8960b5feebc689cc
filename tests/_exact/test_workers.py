"""Worker processes only where asked for (exactref._exact._workers), in this process: the
settings and their precedence, the errors of bad settings, and the values of a shared
evaluation, bit for bit those of one process (the threshold lowered, the chunks submitted to
an executor of threads or to a pool of exactref's own). The scripts run in fresh interpreters
are in test_no_pool.py."""

from __future__ import annotations

import multiprocessing
from concurrent.futures import Executor, ThreadPoolExecutor

import numpy as np
import pytest

import exactref as er
from exactref._exact import _functions as kernel
from exactref._exact import _workers
from kernel_records import function

FIELDS = ("c1", "c2", "r", "E", "special", "zero", "zsign")


def _same(a, b) -> bool:
    """Every field equal, bit for bit (NaN where NaN, signs of zero included)."""
    return all(np.array_equal(_bits(getattr(a, f)), _bits(getattr(b, f))) for f in FIELDS)


def _bits(v):
    v = np.asarray(v)
    return v.view(np.uint64) if v.dtype == np.float64 else v


class Recording(Executor):
    """An executor that runs each chunk in the calling thread and records its size."""

    def __init__(self):
        self.sizes = []
        self._inner = ThreadPoolExecutor(1)

    def submit(self, fn, *args, **kwargs):
        self.sizes.append(args[1][0].size)
        return self._inner.submit(fn, *args, **kwargs)

    def shutdown(self, wait=True, **kwargs):
        self._inner.shutdown(wait=wait)


@pytest.fixture
def clean(monkeypatch):
    """No EXACTREF_WORKERS, no set_workers setting before or after; a low threshold and
    small chunks."""
    monkeypatch.delenv("EXACTREF_WORKERS", raising=False)
    monkeypatch.setattr(_workers, "PARALLEL_MIN", 64)
    monkeypatch.setattr(_workers, "CHUNK_MIN", 100)
    er.set_workers(None)
    yield
    er.set_workers(None)


def _inputs(n=3000, seed=3):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n) * 4
    x[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-310]
    return x


def test_by_default_nothing_is_asked_for(clean):
    assert _workers._current() is None
    before = multiprocessing.active_children()
    kernel.evaluate("exp", _inputs())
    assert multiprocessing.active_children() == before


# bits=53 (float64's calls) or a function without an enclosure: MPFR per element, shared;
# float32's calls are decided from enclosures (MPFR only for the few undecided)
@pytest.mark.parametrize("name,bits,params", [
    ("exp", 53, None), ("sinh", 53, None), ("gelu", 53, None),
    ("softplus", 8, {"beta": -0.75, "threshold": 5.0})])
def test_chunks_submitted_to_an_executor_give_the_serial_values(clean, name, bits, params):
    x = _inputs(2500 if name in ("exp", "sinh") else 600)
    serial = kernel.evaluate(function(name), x, bits=bits, params=params)
    ex = Recording()
    with er.workers(executor=ex):
        shared = kernel.evaluate(function(name), x, bits=bits, params=params)
    ex.shutdown()
    assert len(ex.sizes) > 1 and sum(ex.sizes) == np.unique(x.view(np.uint64)).size
    assert _same(serial, shared)


def test_two_operand_functions_are_shared_in_order(clean):
    rng = np.random.default_rng(5)
    x, y = np.abs(rng.standard_normal(1500)) * 3, rng.standard_normal(1500) * 4
    serial = kernel.evaluate(function("pow"), x, y)
    with ThreadPoolExecutor(3) as pool, er.workers(executor=pool):
        shared = kernel.evaluate(function("pow"), x, y)
    assert _same(serial, shared)


def test_below_the_threshold_nothing_is_submitted(clean, monkeypatch):
    monkeypatch.setattr(_workers, "PARALLEL_MIN", 10_000)
    ex = Recording()
    with er.workers(executor=ex):
        kernel.evaluate("exp", _inputs(3000))
    assert ex.sizes == []


def test_a_table_built_with_workers_is_the_serial_table(clean, monkeypatch, tmp_path):
    monkeypatch.setenv("EXACTREF_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(kernel, "_TABLES", {})
    serial = kernel.function_table("tanh", "float8_e4m3fn", disk=False).values
    monkeypatch.setattr(kernel, "_TABLES", {})
    ex = Recording()
    with er.workers(executor=ex):
        shared = kernel.function_table("tanh", "float8_e4m3fn", disk=False).values
    assert len(ex.sizes) > 1
    for f in ("mant", "e", "r", "special", "zero", "zsign"):
        assert np.array_equal(_bits(getattr(serial, f)), _bits(getattr(shared, f))), f


def test_precedence_block_then_set_workers_then_environment(clean, monkeypatch):
    monkeypatch.setenv("EXACTREF_WORKERS", "3")
    env = _workers._current()
    assert isinstance(env, _workers._Pool) and env.n == 3 and not env.started()
    ex = Recording()
    er.set_workers(executor=ex)
    assert _workers._current().executor() is ex
    with er.workers(1):
        assert _workers._current() is None
        with er.workers(executor=ex):
            assert _workers._current().executor() is ex
        assert _workers._current() is None
    er.set_workers(1)
    assert _workers._current() is None
    er.set_workers(None)
    assert _workers._current() is env  # the environment's pool, still not started
    monkeypatch.setenv("EXACTREF_WORKERS", "1")
    assert _workers._current() is None
    ex.shutdown()


@pytest.mark.parametrize("text", ["1", "0", " 1 "])
def test_exactref_workers_of_one_or_zero_is_none(clean, monkeypatch, text):
    monkeypatch.setenv("EXACTREF_WORKERS", text)
    assert _workers._current() is None


@pytest.mark.parametrize("text", ["two", "-1", "2.5"])
def test_a_bad_exactref_workers_is_a_clear_error(clean, monkeypatch, text):
    monkeypatch.setenv("EXACTREF_WORKERS", text)
    with pytest.raises(ValueError, match=r"EXACTREF_WORKERS=.*integer >= 1 .*unset it"):
        kernel.evaluate("exp", _inputs())


@pytest.mark.parametrize("n", [0, -2, 2.0, True, "2"])
def test_a_bad_number_of_workers_is_a_clear_error(clean, n):
    with pytest.raises(ValueError, match=r"set_workers: n is the number of worker processes"):
        er.set_workers(n)
    with pytest.raises(ValueError, match=r"workers: n is the number of worker processes"):
        with er.workers(n):
            pass


def test_bad_executors_are_clear_errors(clean):
    with pytest.raises(ValueError, match=r"executor must be a concurrent.futures.Executor"):
        er.set_workers(executor=print)
    with ThreadPoolExecutor(1) as pool:
        with pytest.raises(ValueError, match=r"not both"):
            er.set_workers(2, executor=pool)
    with pytest.raises(ValueError, match=r"workers: give n"):
        with er.workers():
            pass


def test_exactrefs_own_pool_gives_the_serial_values_and_is_shut_down(clean):
    """A real pool of two spawn workers (under pytest, whose main module has the guard)."""
    x = _inputs(3000)
    serial = kernel.evaluate("expm1", x, bits=53)
    before = len(multiprocessing.active_children())
    with er.workers(2):
        shared = kernel.evaluate("expm1", x, bits=53)
        assert len(multiprocessing.active_children()) == before + 2
    assert len(multiprocessing.active_children()) == before
    assert _same(serial, shared)

"""Shared pytest configuration: the ``--run-slow`` option, the hypothesis profile and the
session's cache of function tables.

Tests marked ``@pytest.mark.slow`` (exhaustive sweeps; the marker is declared in pyproject.toml)
are skipped unless pytest runs with ``--run-slow``.

The session writes exactref's function tables into a fresh temporary directory, removed at
the end, so a run neither depends on nor fills the user's ``~/.cache/exactref`` and takes the
time a new machine takes. Setting ``EXACTREF_CACHE_DIR`` keeps that directory instead (a warm
cache across runs). Subprocesses started by the tests inherit the variable.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest
from hypothesis import HealthCheck, settings

# No example database (it would write .hypothesis/ into the working tree) and no deadline: the
# oracles run MPFR and Fractions, whose timing varies with the exponents hypothesis picks.
# Under CI the examples are derandomized, so a landing never depends on a lucky draw; local
# runs keep exploring new examples.
settings.register_profile(
    "exactref",
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=bool(os.environ.get("CI")),
)
settings.load_profile("exactref")


#: EXACTREF_CACHE_DIR as the user set it (None: unset, the session makes its own, _OWN_CACHE)
_USER_CACHE = os.environ.get("EXACTREF_CACHE_DIR") or None
_OWN_CACHE = None


def pytest_configure(config):
    global _OWN_CACHE
    if _USER_CACHE or _OWN_CACHE:
        return
    _OWN_CACHE = tempfile.mkdtemp(prefix="exactref-tests-cache-")
    os.environ["EXACTREF_CACHE_DIR"] = _OWN_CACHE


def pytest_unconfigure(config):
    global _OWN_CACHE
    if _OWN_CACHE is not None:
        if os.environ.get("EXACTREF_CACHE_DIR") == _OWN_CACHE:
            del os.environ["EXACTREF_CACHE_DIR"]
        shutil.rmtree(_OWN_CACHE, ignore_errors=True)
        _OWN_CACHE = None


def pytest_report_header(config):
    return f"exactref cache: {os.environ.get('EXACTREF_CACHE_DIR')}" + (
        " (temporary, removed at the end)" if _OWN_CACHE else " (EXACTREF_CACHE_DIR)")


def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true", default=False,
                     help="run the tests marked slow (exhaustive sweeps of every value)")
    parser.addoption("--cpu-durations", metavar="PATH", default=None,
                     help="write each test's CPU seconds (this process and the children it "
                          "reaped; wall seconds too) to PATH as tab-separated lines: what "
                          "decides the default run's time on a busy machine")


_CPU_ROWS = []


def _cpu_now():
    import resource

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if not item.config.getoption("--cpu-durations"):
        yield
        return
    import time

    cpu, wall = _cpu_now(), time.perf_counter()
    yield
    _CPU_ROWS.append((item.nodeid, _cpu_now() - cpu, time.perf_counter() - wall))


def pytest_sessionfinish(session, exitstatus):
    path = session.config.getoption("--cpu-durations")
    if path:
        with open(path, "w") as f:
            f.write(f"# total cpu {_cpu_now():.1f} s, {len(_CPU_ROWS)} tests\n")
            f.writelines(f"{n}\t{c:.3f}\t{w:.3f}\n" for n, c, w in _CPU_ROWS)


#: Tests that run only with ``--run-slow``, by node id, with their CPU seconds: the costliest of
#: the default run with an empty cache (measured with --cpu-durations for issue 19), each with
#: a sibling that keeps running: the torch family's ops in complex64 (the same formulas, the
#: kernels' single-precision instances), numpy's Python scalars in complex64, the tanh-formula
#: gelu caught in float32, and the real matmul models against the simulated implementations
SLOW_NODES = {
    "tests/equivalents/test_torch_family.py::test_ternary[addcdiv-complex128]": 9.3,
    "tests/equivalents/test_torch_family.py::test_ternary[addcmul-complex128]": 6.6,
    "tests/equivalents/test_torch_family.py::test_unary[rsqrt-complex128]": 3.9,
    "tests/equivalents/test_torch_family.py::test_binary[divide-complex128]": 3.7,
    "tests/equivalents/test_torch_family.py::test_unary[sqrt-complex128]": 2.3,
    "tests/equivalents/test_numpy_family.py::test_python_scalars[complex128]": 3.2,
    "tests/arithmetic/test_functions_models.py::"
    "test_a_gelu_with_the_tanh_formula_is_caught_in_bfloat16": 4.8,
    "tests/linalg/test_linalg_properties.py::"
    "test_complex_matmul_model_covers_simulated_implementations": 5.2,
}


@pytest.fixture(scope="session")
def default_audit_output():
    """What the README's main command ``exactref audit`` (numpy, add and multiply, seed 0)
    prints, ``(exit code, lines)``: run once per session for the tests that compare the
    documents' samples with it (about 10 CPU seconds each time)."""
    import contextlib
    import io

    from exactref.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main(["audit", "--no-progress"])
    return rc, out.getvalue().splitlines()


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.nodeid in SLOW_NODES:
            item.add_marker(pytest.mark.slow)
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="slow: exhaustive sweep; run with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)

"""Shared pytest configuration: the ``--run-slow`` option and the hypothesis profile.

Tests marked ``@pytest.mark.slow`` (exhaustive sweeps; the marker is declared in pyproject.toml)
are skipped unless pytest runs with ``--run-slow``.
"""

from __future__ import annotations

import os

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


def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true", default=False,
                     help="run the tests marked slow (exhaustive sweeps of every value)")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--run-slow"):
        return
    skip = pytest.mark.skip(reason="slow: exhaustive sweep; run with --run-slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)

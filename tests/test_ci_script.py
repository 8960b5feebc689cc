"""``.ci/run`` runs what the README promises, and its fresh-venv step can fail: the README's
install and test commands, a fast subset whose files exist, an unmeasured library version an
error through its wrapper (``python -W`` cannot name exactref's warning class); and the test
session's own temporary cache of function tables (tests/conftest.py)."""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

import exactref
from exactref._exact import _functions

ROOT = pathlib.Path(__file__).resolve().parents[1]
CI = (ROOT / ".ci" / "run").read_text()
README = (ROOT / "README.md").read_text()


def _readme_commands():
    """The commands of the README's "Two commands on a fresh machine" (its sh blocks)."""
    section = README.split("## Two commands on a fresh machine", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)\n```", section, re.S)


def test_ci_runs_the_readme_test_command():
    commands = _readme_commands()
    assert len(commands) == 2, commands
    steps = [s.strip() for s in commands[1].split("&&")]
    assert steps[-1] == "python3 -m pytest -q"
    lines = [line.strip() for line in CI.splitlines()]
    for step in steps:  # each step of the README's test command, in .ci/run's main steps
        pip = step.replace("pip install", "python3 -m pip install --quiet")
        assert step in lines or pip in lines, step
    assert "exactref audit" in commands[0]
    assert '"$py" -c "$strict" audit' in CI  # the README's main command, in the fresh venv


def test_ci_fresh_subset_exists():
    subset = re.search(r"FRESH_TESTS=\((.*?)\)", CI, re.S).group(1).split()
    assert subset
    for path in subset:
        assert (ROOT / path).exists(), f".ci/run's FRESH_TESTS names {path}, which is gone"


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_ci_script_parses():
    subprocess.run(["bash", "-n", str(ROOT / ".ci" / "run")], check=True)
    bad = subprocess.run(["bash", str(ROOT / ".ci" / "run"), "nonsense"], capture_output=True,
                         text=True)
    assert bad.returncode == 2 and "usage" in bad.stderr


def _strict():
    return re.search(r"local strict='(.*?)'\n", CI, re.S).group(1)


@pytest.mark.skipif(not hasattr(exactref, "UnmeasuredVersionWarning"),
                    reason="exactref.UnmeasuredVersionWarning does not exist yet")
def test_strict_wrapper_fails_on_an_unmeasured_version(tmp_path):
    """The fresh-venv step's wrapper of exactref's CLI: an installed version none of the
    records was measured on (numpy 2.3 here, faked in the child's metadata) makes it fail
    with the warning, where the measured versions pass with nothing on stderr."""
    (tmp_path / "sitecustomize.py").write_text(  # the module's version and the metadata's
        "import importlib.metadata as m\n_v = m.version\n"
        "m.version = lambda name: '2.3.0' if name == 'numpy' else _v(name)\n"
        "import numpy\nnumpy.__version__ = '2.3.0'\n")
    args = [sys.executable, "-c", _strict(), "promotion", "explain", "float32", "int8",
            "--policy", "numpy"]
    ok = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0 and ok.stderr == "", ok.stderr
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(tmp_path)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    bad = subprocess.run(args, capture_output=True, text=True, timeout=300, env=env)
    assert bad.returncode != 0
    assert "UnmeasuredVersionWarning" in bad.stderr and "numpy 2.3.0" in bad.stderr


def test_session_cache_is_temporary(request):
    conftest = request.config.pluginmanager.get_plugin(str(ROOT / "tests" / "conftest.py"))
    assert conftest is not None
    if conftest._USER_CACHE:
        assert _functions.cache_dir() == conftest._USER_CACHE
        pytest.skip("EXACTREF_CACHE_DIR set by the user: the session keeps it")
    own = conftest._OWN_CACHE
    assert _functions.cache_dir() == own and os.path.isdir(own)
    home = os.path.join(os.path.expanduser("~"), ".cache")
    assert os.path.commonpath([own, home]) != home


def test_slow_nodes_name_tests_that_exist(request):
    """tests/conftest.py's SLOW_NODES (tests run only with --run-slow) name functions that are
    still there (a renamed one would silently run again by default, or never be checked)."""
    conftest = request.config.pluginmanager.get_plugin(str(ROOT / "tests" / "conftest.py"))
    assert conftest.SLOW_NODES
    for node in conftest.SLOW_NODES:
        path, name = node.split("::")
        assert f"def {name.split('[')[0]}(" in (ROOT / path).read_text(), node

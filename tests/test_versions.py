"""exactref._versions: recorded behaviour names its versions; an unmeasured installed version
gives one UnmeasuredVersionWarning that names what to re-record, and a run that makes the
warning an error (CI's fresh venv) fails."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import pytest

import exactref as er
from exactref import _versions as V

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def fresh(monkeypatch):
    """No warning given yet in this process, and a way to pretend a version is installed."""
    monkeypatch.setattr(V, "_WARNED", set())
    real = V.installed

    def pretend(**versions):
        monkeypatch.setattr(V, "installed", lambda lib: versions.get(lib, real(lib)))

    return pretend


def test_exported():
    assert er.UnmeasuredVersionWarning is V.UnmeasuredVersionWarning
    assert "UnmeasuredVersionWarning" in er.__all__
    assert issubclass(er.UnmeasuredVersionWarning, UserWarning)


def test_a_version_is_measured_by_major_minor():
    assert V.is_measured("2.4.9", ("2.4.6",))
    assert V.is_measured("2.13.0+cpu", ("2.13.0",))
    assert not V.is_measured("2.5.0", ("2.4.6",))
    assert not V.is_measured("3.4.6", ("2.4.6",))
    assert V.nearest("0.9.0", ("0.5.4", "0.6.0", "0.7.0")) == "0.7.0"
    assert V.nearest("0.4.1", ("0.5.4", "0.6.0", "0.7.0")) == "0.5.4"
    assert V.nearest("1.0.0", ("0.5.4", "0.7.0")) == "0.7.0"
    with pytest.raises(ValueError, match="cannot read a major.minor version from 'dev'"):
        V.minor("dev")


def test_every_record_names_versions_and_a_script():
    for key, rec in V.RECORDS.items():
        assert rec.measured and all(rec.measured.values()), key
        assert "scripts/record_" in rec.script, key
        for versions in rec.measured.values():
            for v in versions:
                V.minor(v)  # a readable version


def test_one_warning_naming_the_versions_and_the_script(fresh):
    fresh(ml_dtypes="0.9.0")
    with pytest.warns(er.UnmeasuredVersionWarning) as record:
        first = V.check("numpy-promotion", "ml_dtypes")
        again = V.check("numpy-promotion", "ml_dtypes")
    assert len(record) == 1 and first == again == str(record[0].message)
    text = first
    assert text.startswith("ml_dtypes 0.9.0 is installed")
    assert "measured on ml_dtypes 0.5.4, 0.6.0, 0.7.0 only" in text
    assert "what it measured on ml_dtypes 0.7.0" in text
    assert "python scripts/record_promotion_fixtures.py numpy" in text


def test_measured_or_absent_versions_are_silent(fresh):
    fresh(ml_dtypes="0.7.3", torch=None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert V.check("numpy-promotion", "ml_dtypes") is None
        assert V.check("torch", "torch") is None  # not installed: nothing to compare


def test_the_installed_versions_are_measured():
    """This machine's numpy and ml_dtypes are measured (else the suite would fail on the
    warning anyway): the records and the environment agree."""
    for lib in ("numpy", "ml_dtypes"):
        assert V.check("numpy-promotion", lib) is None, V.installed(lib)


def _strict(code: str) -> subprocess.CompletedProcess:
    """Run ``code`` with UnmeasuredVersionWarning an error, as CI's fresh venv does (python -W
    cannot name the class: Python reads -W before site-packages is importable)."""
    prelude = ("import sys, warnings\nimport exactref\n"
               "warnings.simplefilter('error', exactref.UnmeasuredVersionWarning)\n"
               "import exactref._versions as v\nreal = v.installed\n")
    env = dict(os.environ, EXACTREF_CACHE_DIR=os.environ.get("EXACTREF_CACHE_DIR", ""))
    env = {k: val for k, val in env.items() if val}
    return subprocess.run([sys.executable, "-c", prelude + code], capture_output=True,
                          text=True, cwd=ROOT, env=env, timeout=600)


def test_an_unmeasured_ml_dtypes_fails_the_strict_audit():
    """The README's main command, with the installed ml_dtypes pretended to be 0.9.0 and the
    warning an error: exit 1 and the one message, no traceback (what CI's fresh venv sees when
    a new ml_dtypes release comes out)."""
    out = _strict("v.installed = lambda lib: '0.9.0' if lib == 'ml_dtypes' else real(lib)\n"
                  "from exactref.cli import main\n"
                  "sys.exit(main(['audit', '--ops', 'add', '--dtypes', 'float16']))\n")
    assert out.returncode == 1, (out.returncode, out.stderr[-2000:])
    assert "Traceback" not in out.stderr, out.stderr
    assert out.stderr.count("ml_dtypes 0.9.0 is installed") == 1, out.stderr
    assert "scripts/record_promotion_fixtures.py numpy" in out.stderr


def test_measured_versions_pass_the_strict_audit():
    out = _strict("from exactref.cli import main\n"
                  "sys.exit(main(['audit', '--ops', 'add', '--dtypes', 'float16']))\n")
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stderr == ""


@pytest.mark.parametrize("module, library, version, script", [
    ("exactref.equivalents.torch", "torch", "2.99.0", "record_promotion_fixtures.py torch"),
    ("exactref.equivalents.jax", "jaxlib", "0.11.0", "record_jax_fixtures.py"),
    ("exactref.equivalents.numpy", "numpy", "2.7.1", "record_promotion_fixtures.py numpy"),
])
def test_the_equivalents_warn_on_first_use(module, library, version, script):
    """Importing an equivalents module checks the installed library (torch and jax are not
    imported for it)."""
    out = _strict(f"v.installed = lambda lib: {version!r} if lib == {library!r} else real(lib)\n"
                  f"try:\n    import {module}\n"
                  f"except exactref.UnmeasuredVersionWarning as exc:\n    print(exc)\n"
                  f"    sys.exit(7)\n"
                  f"print(sorted(m for m in ('torch', 'jax') if m in sys.modules))\n")
    assert out.returncode == 7, (out.stdout, out.stderr[-2000:])
    assert f"{library} {version} is installed" in out.stdout and script in out.stdout


def test_the_equivalents_do_not_import_their_library():
    out = _strict("import exactref.equivalents.torch, exactref.equivalents.jax\n"
                  "print(sorted(m for m in ('torch', 'jax') if m in sys.modules))\n")
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"


def test_cpu_features_are_the_kernel_path_flags():
    feats = V.cpu_features()
    assert isinstance(feats, frozenset)
    assert feats <= {"avx2", "avx512f", "avx512_fp16", "avx512_bf16", "amx_tile", "fma",
                     "asimd", "sve"}
    if os.path.exists("/proc/cpuinfo"):
        with open("/proc/cpuinfo") as f:
            flags = f.read().split()
        assert ("avx2" in feats) == ("avx2" in flags)

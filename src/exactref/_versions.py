"""Which library versions (and CPU features) each recorded library behaviour was measured on.

exactref models what libraries do: numpy's promotion with ml_dtypes' types (the numpy policy's
tables), torch's (``fixtures/torch.json``), jax's, and the departures from the exact answer that
the equivalents pin (``exactref.equivalents.numpy``, ``.torch``, ``.jax``). Each was measured on
some versions, and a new release may change it. :data:`RECORDS` says, for each, the versions it
was measured on and the script that measures it again. :func:`check` compares them with the
installed version and warns once per process with :class:`UnmeasuredVersionWarning` where the
installed version was not measured: the model may no longer be the library's.

A version is measured by (major, minor): a patch release of a measured minor is measured
(numpy 2.4.7 where 2.4.6 was measured), another minor is not.

>>> check("numpy-promotion", "ml_dtypes", installed_version="0.6.1") is None
True
>>> nearest("0.9.0", ("0.5.4", "0.6.0", "0.7.0"))
'0.7.0'

Turn the warning into an error to make a changed dependency fail (``.ci/run`` does). Python
reads ``-W`` and ``PYTHONWARNINGS`` before site-packages can be imported, so it cannot name
exactref's class there ("Invalid -W option ignored"); set the filter in the process, as
``.ci/run``'s wrapper of the CLI does::

    import sys, warnings
    import exactref
    warnings.simplefilter("error", exactref.UnmeasuredVersionWarning)
    from exactref.cli import main
    sys.exit(main(["audit"]))

(pytest's own ``-W error::exactref.UnmeasuredVersionWarning`` works: pytest imports it.)
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass

__all__ = ["UnmeasuredVersionWarning", "Record", "RECORDS", "check", "cpu_features", "installed",
           "is_measured", "minor", "minor_name", "nearest"]


class UnmeasuredVersionWarning(UserWarning):
    """The installed version of a library is not one a recorded behaviour was measured on."""


@dataclass(frozen=True)
class Record:
    """One recorded behaviour: what it is, the versions of each library it was measured on,
    the CPU features where its kernel paths matter, and the command that records it again."""

    what: str
    measured: dict  # library -> the versions measured (full version strings)
    script: str
    cpu: str = ""


#: Every recorded library behaviour, by key. The versions are those of the recording machines.
RECORDS = {
    "numpy-promotion": Record(
        "the numpy promotion policy's tables (numpy's ufunc loops with ml_dtypes' types)",
        {"numpy": ("2.4.6",), "ml_dtypes": ("0.5.4", "0.6.0", "0.7.0")},
        "python scripts/record_promotion_fixtures.py numpy"),
    "numpy-equivalents": Record(
        "exactref.equivalents.numpy (the ufunc loops' arithmetic and their departures)",
        {"numpy": ("2.4.6",), "ml_dtypes": ("0.6.0", "0.7.0")},
        "python scripts/record_promotion_fixtures.py numpy, then exactref audit numpy "
        "--samples 100000 and tests/equivalents/test_numpy*.py",
        cpu="x86-64 (numpy's float loops do not depend on the vector unit for + and x)"),
    "numpy-casts": Record(
        "exactref.equivalents.numpy.astype (numpy's and ml_dtypes' casts: ml_dtypes 0.7 "
        "changed 282 of the 1,225 pairs of formats)",
        {"numpy": ("2.4.6",), "ml_dtypes": ("0.6.0", "0.7.0")},
        "tests/equivalents/test_numpy_family.py -k cast with every pair of formats "
        "(--run-slow), then model the casts of the new version in "
        "exactref/equivalents/_numpy_cast.py (_ml_casts); scripts/record_promotion_fixtures.py "
        "records its promotion",
        cpu="x86-64 (the float to integer conversions are x86's cvtt)"),
    "torch": Record(
        "the torch promotion policy (fixtures/torch.json) and exactref.equivalents.torch (the "
        "CPU kernels' pinned departures)",
        {"torch": ("2.13.0",)},
        "python scripts/record_promotion_fixtures.py torch, then tests/promotion, "
        "tests/equivalents/test_torch*.py and exactref audit torch",
        cpu="x86-64 with AVX-512 (AVX-512 FP16, AMX); AVX2 paths where the tests say so"),
    "jax": Record(
        "the jax promotion policy (fixtures/jax.json, jax_x64.json) and "
        "exactref.equivalents.jax (XLA's CPU conversions and kernels)",
        {"jax": ("0.10.2",), "jaxlib": ("0.10.2",)},
        "python scripts/record_promotion_fixtures.py jax jax_x64 and python "
        "scripts/record_jax_fixtures.py, then tests/promotion, tests/equivalents/test_jax.py "
        "and exactref audit jax",
        cpu="x86-64"),
    "onnxruntime": Record(
        "the ONNX Runtime audit target's contracts and departures "
        "(exactref.ops._onnxruntime, its recorded outputs in tests/audit/fixtures/onnxruntime)",
        {"onnxruntime": ("1.32.0",), "onnx": ("1.23.2",)},
        "python scripts/record_onnxruntime_outputs.py, then "
        "tests/audit/test_onnxruntime.py and exactref audit onnxruntime",
        cpu="x86-64 with AVX2 and FMA (MLAS picks its kernels by the CPU's vector unit)"),
    "openvino": Record(
        "the OpenVINO audit target's contracts and departures (exactref.ops._openvino, its "
        "recorded outputs in tests/audit/fixtures/openvino)",
        {"openvino": ("2026.4.1",)},
        "python scripts/record_openvino_outputs.py, then tests/audit/test_openvino.py "
        "and exactref audit openvino",
        cpu="x86-64 with AVX2 and FMA (the CPU plugin's JIT kernels depend on the ISA)"),
    "tensorflow": Record(
        "the TensorFlow audit target's contracts and departures (exactref.ops._tensorflow, "
        "its recorded outputs in tests/audit/fixtures/tensorflow)",
        {"tensorflow": ("2.21.0",)},
        "python scripts/record_tensorflow_outputs.py, then "
        "tests/audit/test_tensorflow.py and exactref audit tensorflow",
        cpu="x86-64 with AVX2 and FMA (Eigen's packet math)"),
}

#: The (record, library, installed version) triples already warned about in this process.
_WARNED: set = set()


def minor(version: str) -> tuple:
    """(major, minor) of a version string: ``"2.13.0+cpu"`` -> (2, 13)."""
    nums = re.findall(r"\d+", str(version).split("+")[0])
    if len(nums) < 2:
        raise ValueError(f"cannot read a major.minor version from {version!r}; expected a "
                         f"version such as '2.4.6'")
    return int(nums[0]), int(nums[1])


def minor_name(version: str) -> str:
    """``"0.7.1"`` -> ``"0.7"``."""
    major, minor_ = minor(version)
    return f"{major}.{minor_}"


def is_measured(version: str, measured) -> bool:
    """Whether ``version`` is a patch release of a measured minor."""
    return minor(version) in {minor(m) for m in measured}


def nearest(version: str, measured) -> str:
    """The measured version nearest to ``version`` by (major, minor); the newer one on a tie."""
    key = minor(version)

    def distance(m):
        mm = minor(m)
        return (abs(mm[0] - key[0]), abs(mm[1] - key[1]) if mm[0] == key[0] else 0, [-x for x in mm])

    return min(measured, key=distance)


def installed(library: str) -> str | None:
    """The version of ``library`` in use: the imported module's ``__version__`` where it is
    imported already, else its distribution's metadata (nothing is imported); None where it
    is not installed."""
    import sys
    from importlib import metadata

    version = getattr(sys.modules.get(library), "__version__", None)
    if isinstance(version, str):
        return version
    try:
        return metadata.version(library)
    except metadata.PackageNotFoundError:
        return None


def cpu_features() -> frozenset:
    """The CPU features that choose kernel paths the records distinguish, as the OS reports
    them (Linux's /proc/cpuinfo flags: ``avx2``, ``avx512f``, ``avx512_fp16``, ``amx_tile``,
    ``fma``; on ARM ``asimd`` for NEON); empty where the OS does not say."""
    wanted = {"avx2", "avx512f", "avx512_fp16", "avx512_bf16", "amx_tile", "fma", "asimd",
              "sve"}
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.lower().startswith(("flags", "features")):
                    return frozenset(wanted & set(line.split(":", 1)[1].split()))
    except OSError:
        pass
    return frozenset()


def check(record: str, library: str, *, installed_version: str | None = None,
          stacklevel: int = 3) -> str | None:
    """Warn (once per process for each record, library and version) where the installed
    ``library`` was not measured for ``record``; return the warning's text, or None where
    the version was measured or the library is not installed."""
    rec = RECORDS[record]
    measured = rec.measured[library]
    version = installed(library) if installed_version is None else installed_version
    if version is None or is_measured(version, measured):
        return None
    text = (f"{library} {version} is installed, but {rec.what} was measured on {library} "
            f"{', '.join(measured)} only; exactref uses what it measured on {library} "
            f"{nearest(version, measured)}, which {library} {version} may no longer do. "
            f"Re-record it: {rec.script} (then rerun the tests), or install a measured "
            f"{library} version.")
    key = (record, library, version)
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(text, UnmeasuredVersionWarning, stacklevel=stacklevel)
    return text

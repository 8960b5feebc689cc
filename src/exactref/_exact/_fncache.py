"""The function tables on disk: the round-to-odd values at 55 bits of a function at every bit
pattern of a format of at most 16 bits, kept in a user cache directory (:func:`cache_dir`;
``EXACTREF_CACHE_DIR`` overrides it), stamped with exactref's version and the table layout: a
file from another version is rebuilt (private; :func:`._functions.function_table` builds and
reads them)."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass

import numpy as np

from ._engine import ExactArray
from ._mpfr import _Values

__all__ = ["TABLE_PRECISION", "TABLE_LAYOUT", "FunctionTable", "cache_dir", "table_formats", "version",
           "patterns", "path", "load", "save"]

#: The precision of the tables: round-to-odd at 55 bits serves every format of at most 53 bits.
TABLE_PRECISION = 55
#: The layout of the cached tables; bump it when the kernel or the layout changes.
TABLE_LAYOUT = 1


def cache_dir() -> str:
    """The directory of exactref's cached function tables: ``EXACTREF_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/exactref``, else ``~/.cache/exactref``."""
    env = os.environ.get("EXACTREF_CACHE_DIR")
    if env:
        return env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "exactref")


def version() -> str:
    from .. import __version__

    return f"{__version__}-layout{TABLE_LAYOUT}"


def table_formats() -> tuple:
    """The formats answered from tables: every float format of at most 16 bits with a numpy
    dtype (the P3109 formats, held as float64, are evaluated)."""
    from .._formats import FORMATS

    return tuple(f for f in FORMATS.values() if f.kind == "float" and f.bits <= 16
                 and f.encoding == "native")


def patterns(fmt):
    """Every bit pattern of ``fmt``'s storage (uint8 or uint16) and its value (float64)."""
    raw_t = np.uint16 if fmt.np_dtype.itemsize == 2 else np.uint8
    raw = np.arange(1 << (8 * fmt.np_dtype.itemsize), dtype=np.int64).astype(raw_t)
    with np.errstate(invalid="ignore", over="ignore"):
        return raw, raw.view(fmt.np_dtype).astype(np.float64)


@dataclass
class FunctionTable:
    """The round-to-odd values at 55 bits of one function at every bit pattern of a format:
    ``values`` (per pattern), the ``key`` (function and parameters) and the format."""

    key: str
    fmt: object
    values: _Values

    def lookup(self, patterns) -> _Values:
        return self.values.take(patterns.astype(np.int64))

    def exact(self) -> ExactArray:
        """Every pattern's value as an ExactArray (pattern order)."""
        return self.values.exact((self.values.mant.size,))


_TABLES: dict = {}

def path(key: str, fmt) -> str:
    safe = "".join(c if c.isalnum() or c in "-_.=" else "_" for c in key)
    return os.path.join(cache_dir(), "functions", version(), f"{safe}.{fmt.name}.npz")


def load(key: str, fmt) -> FunctionTable | None:
    file = path(key, fmt)
    try:
        with np.load(file, allow_pickle=False) as z:
            if str(z["version"]) != version() or str(z["key"]) != key or \
                    str(z["format"]) != fmt.name:
                return None
            v = _Values(z["mant"], z["e"].astype(np.int64), z["r"], z["special"], z["zero"],
                        z["zsign"], int(z["L"]))
    except (OSError, KeyError, ValueError):
        return None  # missing, unreadable or from another layout: rebuilt
    if v.mant.size != 1 << (8 * fmt.np_dtype.itemsize):
        return None
    return FunctionTable(key, fmt, v)


def save(table: FunctionTable) -> None:
    """Write atomically (a temporary file renamed), so concurrent writers never leave a torn
    file; a cache directory that cannot be written is skipped silently."""
    file = path(table.key, table.fmt)
    v = table.values
    tmp = None
    try:
        os.makedirs(os.path.dirname(file), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(file), suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            np.savez_compressed(f, version=version(), key=table.key, format=table.fmt.name,
                                mant=v.mant, e=v.e.astype(np.int32), r=v.r,
                                special=v.special, zero=v.zero, zsign=v.zsign, L=v.L)
        os.replace(tmp, file)
    except OSError:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)


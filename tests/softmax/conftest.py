"""The softmax tests share the arithmetic tests' rounding oracle (``functions_oracle``)."""

from __future__ import annotations

import pathlib
import sys

_ARITH = str(pathlib.Path(__file__).resolve().parents[1] / "arithmetic")
if _ARITH not in sys.path:
    sys.path.insert(0, _ARITH)

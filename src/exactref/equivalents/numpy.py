"""NumPy equivalents: references that cover what NumPy 2's ufuncs compute, ml_dtypes' types
included: every op of the registry NumPy has (``add`` ... ``greater_equal``, ``clamp`` for
``np.clip``, ``cast`` for ``astype``, the real functions), under the registry's names.

What NumPy does, measured on numpy 2.4 with ml_dtypes 0.5, 0.6 and 0.7 (another version gives
one :class:`~exactref.UnmeasuredVersionWarning` on import):

* **Result dtype**: the installed NumPy's own (``result_type(..., policy="numpy_installed")``
  calls the ufunc on one-element arrays), so a promotion change in a new NumPy or ml_dtypes
  release is the reference's too; it is NEP 50's with weak Python scalars, and the measured
  ``numpy`` policy gives the same (``tests/promotion`` compares them). Note that with ml_dtypes
  0.5 and 0.6 its types do not take part in NEP 50 (``bfloat16`` plus a Python float is
  float32), and with 0.7 they do (bfloat16).
* **Casts**: the operands are cast to the loop's dtype by NumPy's own casts (``astype``), the
  step before the arithmetic; a Python int that the dtype cannot hold raises OverflowError, as
  NumPy does. Those casts are NumPy's business, not the arithmetic's: an equivalent checks the
  arithmetic on the values the loop reads (and ``cast(x, to=...)`` audits the casts).
* **Arithmetic**: float32, float64 and the integers natively (integers wrap); float16 and every
  ml_dtypes float computed in float32 and rounded into the dtype, which is the correctly rounded
  result for a single + or x (float32 has at least 2p + 2 bits for all of them), with ml_dtypes'
  overflow rules (NaN for float8_e4m3fn, saturation for the float6 and float4 formats); complex
  products by the textbook formula ``(ac - bd) + (ad + bc)i``, a real operand becoming complex
  with an imaginary part +0 first, so ``(inf+0j) * 2.0`` is ``inf+nanj``; complex32 and
  bcomplex32 in complex64. bool add is a logical or, bool multiply a logical and.
* **The other loops** follow their C code step by step where it departs from the mathematical
  answer (``floor_divide`` is ``npy_divmod``, complex division Smith's algorithm, complex
  ``abs`` a SIMD formula, complex ``sqrt`` glibc's, ties of zeros in ``maximum`` and
  ``np.clip`` as each loop breaks them): the Result's reference stays the mathematical answer,
  and ``covers`` accepts what the loop gives.

>>> import numpy as np
>>> import exactref.equivalents.numpy as ern
>>> x = np.array([1.0, 2.0], dtype=np.float16)
>>> ern.add(x, 0.1).covers(np.add(x, 0.1)).all()
True
>>> a = np.array([float.fromhex("0x1.1745ecp+35")], dtype=np.float32)
>>> b = np.array([float.fromhex("0x1.2499p+12")], dtype=np.float32)
>>> r = ern.floor_divide(a, b)
>>> r.rounded.tolist(), np.floor_divide(a, b).tolist(), r.covers(np.floor_divide(a, b)).all()
([8006601.0], [8006600.0], True)
>>> y = np.array([1 + 2**-11 + 2**-40])
>>> c = ern.cast(y, to="float16")  # NumPy's own cast: rounded once
>>> c.rounded.tolist(), y.astype(np.float16).tolist(), c.covers(y.astype(np.float16)).all()
([1.0009765625], [1.0009765625], True)

(ml_dtypes 0.6 converts float64 to bfloat16 through float32, rounding twice: ``1 + 2**-8 +
2**-30`` becomes 1.0; ml_dtypes 0.7 rounds once, to ``1 + 2**-7``; ``cast(y, to="bfloat16")``
covers what the installed one gives.)

The equivalents of the elementwise family are built from the records
(:mod:`exactref.equivalents._family`): each record's numpy counterpart names its model in
:mod:`exactref.equivalents._numpy_ops` and the model's parameters; this module keeps what is
NumPy-wide (the versions measured, :func:`result_type`, :func:`cast`).
"""

from __future__ import annotations

from .. import _versions
from .._formats import Format
from ..ops import op_names
from . import _family, _numpy_functions
from ._common import operand
from ._numpy_complex import annex_g_recover
from ._numpy_loop import POLICY, cast
from ._numpy_ops import MODELS, astype

# the loops' arithmetic below was measured on these versions (exactref._versions)
_versions.check("numpy-equivalents", "numpy", stacklevel=2)
_versions.check("numpy-equivalents", "ml_dtypes", stacklevel=2)


def result_type(x, y, op: str = "add") -> Format:
    """NumPy's result dtype for ``op`` (a promotion op: "add", "multiply", ...) of ``x`` and
    ``y``."""
    from ..promotion import result_type as _rt

    X = operand(x, "x", numpy_scalars_are_python=False)
    Y = operand(y, "y", numpy_scalars_are_python=False)
    return _rt(X.promotion, Y.promotion, policy=POLICY, op=op)


#: One equivalent per record whose numpy counterpart names a model (the elementwise family).
_OPS = _family.build(_family.Library("numpy", MODELS), globals())

# the real functions NumPy has (exp ... tanh, arctan2, power): docs/functions.md
_FUNCTIONS = tuple(name for name in _numpy_functions.__all__ if name in op_names())
globals().update({name: getattr(_numpy_functions, name) for name in _FUNCTIONS})

__all__ = [*_OPS, *_FUNCTIONS, "result_type", "cast", "astype", "annex_g_recover"]

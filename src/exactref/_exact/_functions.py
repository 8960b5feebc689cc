"""Real functions (exp, log, tanh, erf, sigmoid, gelu, ...) at float64 inputs, as ExactArrays
that round like the exact function values into every format of at most 53 bits, in every mode.

The exact value of ``exp(x)`` is irrational for every float ``x != 0``, so, as for quotients and
roots, the engine never holds it: it holds a value that rounds the same way. That value is the
exact value **rounded to odd at P = bits + 2 bits** (55 for every format of at most 53 bits): by
the round-to-odd theorem, rounding it into any format of at most ``P - 2`` bits in any mode gives
the correct rounding of the exact value. Round-to-odd is truncation (round toward zero) with the
last bit set when anything was cut off.

How each value is obtained
--------------------------
* **MPFR's functions** (``exp``, ``exp2``, ``expm1``, ``log``, ``log2``, ``log10``, ``log1p``,
  ``sin``, ``cos``, ``tan``, ``sinh``, ``cosh``, ``tanh``, ``asin``, ``acos``, ``atan``,
  ``atan2``, ``erf``, ``erfc``, ``pow``) are correctly rounded in every mode, and return the
  ternary value (the sign of ``result - exact``; 0 exactly when the result is exact). One call at
  P bits rounding toward zero gives the truncation and whether it is exact, so the round-to-odd
  value is that truncation with its last bit set when the ternary value is not 0. MPFR runs
  Ziv's strategy inside: no loop is needed here. Exact cases come out exact by MPFR's own
  detection (``exp(0) = 1``, ``log2(2**k) = k``, ``log10(1000) = 3``, ``pow(4, 0.5) = 2``, ...).
* **Compositions** (``sigmoid``, ``silu``, ``gelu`` with erf or with tanh, ``softplus``,
  ``logit``, ``mish``) are evaluated in interval arithmetic on MPFR: every step rounded down
  for the lower end and up for the upper end (monotonicity decides which end of an argument
  feeds which), at a working precision W. When both ends truncate to the same P-bit number and
  neither is exact, the exact value lies strictly inside that cell and its round-to-odd value is
  decided; otherwise W doubles (Ziv's strategy). Exact values of the compositions
  (``sigmoid(0) = 1/2``, ``logit(1/2) = 0``, zeros at 0) are known in closed form and never
  reach the loop. Where the value is ``x`` (or 1) minus a relative amount below ``2**-(P+8)``
  (the tails of sigmoid, silu, gelu, softplus, mish), the value is written as ``x`` and the
  sign of the rest, which rounds exactly as the value does, without evaluating the tiny rest.
* Values beyond ``2**±1100`` round like any value beyond them into every format of at most 53
  bits (an overflow, or a value below half the smallest subnormal), so they are held as
  ``±2**±1100``: MPFR's own overflow and underflow never decide a rounding.

Special values follow IEEE 754-2019 §9.2 and C99 Annex F (F.9) for the functions they name, as
MPFR implements them: signed zeros kept by odd functions (``sin(-0) = -0``), ``exp(-inf) = +0``,
``log(±0) = -inf``, ``log(-1) = NaN``, ``tanh(±inf) = ±1``, ``atan2`` and ``pow``'s tables
(``pow(x, ±0) = 1`` even for a NaN ``x``, ``pow(-8, 1/3) = NaN``). The compositions take their
limits: ``sigmoid(-inf) = +0``, ``silu(-inf) = gelu(-inf) = mish(-inf) = -0``, ``logit(0) =
-inf``, NaN outside their domain; the ops' docstrings list them.

Tables
------
For an input format of at most 16 bits, :func:`function_table` holds the round-to-odd values at
55 bits of every bit pattern, built once per function (and parameters) and kept in memory and in
a user cache directory (:func:`cache_dir`; ``EXACTREF_CACHE_DIR`` overrides it), stamped with
exactref's version and the table layout: a file from another version is rebuilt. Evaluating an
array of such a format is then a lookup.

Records
-------
A function is its record, :class:`RealFunction` (``OpSpec.exact`` of its op): MPFR's function by
name (:func:`mpfr_function`; ``cbrt`` is ``mpfr_function("cbrt")``), or a composition of
:data:`COMPOSITIONS`, with its parameters, their check, its specials and its complex
counterpart. :func:`evaluate` and :func:`function_table` take the record (a string names MPFR's
function of that name); no table of names is searched.

Modules: :mod:`._mpfr` (values, intervals, Ziv), this one (records, compositions, evaluation,
tables), :mod:`._fncache` (the tables on disk), :mod:`._derivatives` (derivatives and pow's
partials), :mod:`._workers` (the worker processes).

Processes
---------
Everything here runs in the calling process: no pool, no thread is started behind the user's
back. Only where the user asks (``exactref.set_workers(n)``, ``with exactref.workers(n):``, an
``executor=`` of theirs, or ``EXACTREF_WORKERS``) are evaluations of at least
:data:`PARALLEL_MIN` distinct inputs, and table builds, cut into chunks for worker processes,
with the same values bit for bit: :mod:`._workers`.
"""


from __future__ import annotations

import functools
import math
import threading
from dataclasses import dataclass
from fractions import Fraction
from types import SimpleNamespace

import numpy as np

from . import _enclose, _fncache, _workers
from ._engine import ExactArray
from ._fncache import FunctionTable, cache_dir, table_formats
from ._mpfr import (
    _context,
    _from_binaries,
    _from_objects,
    _g,
    _Near,
    _unique_rows,
    _Values,
    _ziv,
)
from ._workers import PARALLEL_MIN

__all__ = ["COMPOSITIONS", "RealFunction", "mpfr_function", "evaluate", "function_table",
           "cache_dir", "table_formats", "FunctionTable", "PARALLEL_MIN", "TABLE_PRECISION"]

#: The precision of the tables: round-to-odd at 55 bits serves every format of at most 53 bits.
TABLE_PRECISION = _fncache.TABLE_PRECISION

# ================================================================== the compositions
# Each composition: ``scalar(x, P, params)`` for a finite float ``x`` gives an MPFR value (round-
# to-odd at P bits, via _decide), an exact float, or a _Near; the specials (NaN, ±inf) are
# tabled in ``specials``.

def _tail_threshold(P: int) -> float:
    """``t`` with ``exp(-t) < 2**-(P+8)``: beyond it, ``1 - sigmoid(t)`` and its kin are far
    below every rounding gap at P bits."""
    return (P + 9) * math.log(2.0)


def _sigmoid_iv(iv, x, params):
    X = iv.point(x)
    if x >= 0:  # 1 / (1 + exp(-x))
        e = iv.inc("exp", iv.neg(X))
        return iv.div(iv.point(1), iv.add(iv.point(1), e))
    e = iv.inc("exp", X)  # exp(x) / (1 + exp(x)): no cancellation for x < 0
    return iv.div(e, iv.add(iv.point(1), e))


def _sigmoid(x, P, params):
    if x == 0:
        return 0.5
    if x > _tail_threshold(P):
        return _Near(1.0, -1)
    return _ziv(_sigmoid_iv, (x,), P, params)


def _silu_iv(iv, x, params):
    return iv.mul(iv.point(x), _sigmoid_iv(iv, x, params))


def _silu(x, P, params):
    if x == 0:
        return x  # ±0
    if x > _tail_threshold(P):
        return _Near(x, -1)  # x * (1 - t), t < 2**-(P+8)
    return _ziv(_silu_iv, (x,), P, params)


def _gelu_iv(iv, x, params):
    """``(x / 2) * erfc(-x / sqrt(2))`` (no cancellation on either side)."""
    s2 = iv.inc("sqrt", iv.point(2))
    y = iv.div(iv.neg(iv.point(x)), s2)
    # Note: not ``x / 2`` in float64, which rounds where it is subnormal; halving in MPFR is exact
    return iv.mul(iv.mul(iv.point(x), iv.dec("erfc", y)), iv.point(0.5))


def _gelu(x, P, params):
    if x == 0:
        return x
    # erfc(z) <= exp(-z**2) for z >= 0, so 1 - gelu(x) / x = erfc(x/sqrt2)/2 < exp(-x**2 / 2)
    if x > math.sqrt(2 * _tail_threshold(P)):
        return _Near(x, -1)
    return _ziv(_gelu_iv, (x,), P, params)


def _gelu_tanh_z(iv, x):
    """``2 * sqrt(2/pi) * (x + 0.044715 x**3)``, enclosed."""
    X = iv.point(x)
    c = iv.inc("sqrt", iv.div(iv.point(8), iv.pi()))  # 2 sqrt(2/pi) = sqrt(8/pi)
    cube = iv.mul(iv.mul(X, X), X)
    inner = iv.add(X, iv.mul(iv.const("0.044715"), cube))
    return iv.mul(c, inner)


def _gelu_tanh_iv(iv, x, params):
    """``0.5 x (1 + tanh(u)) = x * sigmoid(2u)``, ``u = sqrt(2/pi) (x + 0.044715 x**3)``."""
    z = _gelu_tanh_z(iv, x)  # 2u, of x's sign
    if x > 0:
        s = iv.div(iv.point(1), iv.add(iv.point(1), iv.inc("exp", iv.neg(z))))
    else:
        e = iv.inc("exp", z)
        s = iv.div(e, iv.add(iv.point(1), e))
    return iv.mul(iv.point(x), s)


def _gelu_tanh(x, P, params):
    if x == 0:
        return x
    # 2u >= sqrt(8/pi) x > 1.59 x for x > 0: 1 - sigmoid(2u) < exp(-1.59 x)
    if x > _tail_threshold(P) / 1.59:
        return _Near(x, -1)
    return _ziv(_gelu_tanh_iv, (x,), P, params)


def _softplus_iv(iv, x, params):
    """``log1p(exp(beta x)) / beta``; ``beta x`` is exact at the working precision (>= 106)."""
    beta = params["beta"]
    u = _context(256, "Z").mul(x, beta)  # exact: two 53-bit factors
    lp = iv.inc("log1p", iv.inc("exp", iv.point(u)))
    return iv.div(lp, iv.point(beta))


def _softplus(x, P, params):
    beta, threshold = params["beta"], params["threshold"]
    u = Fraction(x) * Fraction(beta)
    # an infinite threshold has no Fraction: +inf is never passed, -inf always
    if threshold == -math.inf or (threshold != math.inf and u > Fraction(threshold)):
        return x  # torch returns the input where beta * x > threshold
    if u > 64:  # log1p(exp(u)) = u + log1p(exp(-u)), the rest below exp(-64) u**-1 relative
        # x + log1p(exp(-u)) / beta: the rest has x's sign (beta's), so it adds to |x|
        return _Near(x, 1)
    return _ziv(_softplus_iv, (x,), P, params)


def _logit_iv(iv, x, params):
    """``log(x) - log1p(-x)`` (each end outward)."""
    return iv.sub(iv.inc("log", iv.point(x)), iv.inc("log1p", iv.point(-x)))


def _logit(x, P, params):
    if x == 0.5:
        return 0.0
    if x == 0:
        return -math.inf
    if x == 1:
        return math.inf
    if not 0 < x < 1:
        return math.nan
    return _ziv(_logit_iv, (x,), P, params)


def _mish_iv(iv, x, params):
    """``x * tanh(log1p(e**x)) = x * g``, ``g = u(u + 2) / (u**2 + 2u + 2)``, ``u = e**x``
    (increasing in u); for x > 0, ``g = 1 - 2 / (u**2 + 2u + 2)``."""
    X = iv.point(x)
    u = iv.inc("exp", X)
    two = iv.point(2)
    w = iv.add(iv.add(iv.mul(u, u), iv.mul(two, u)), two)
    if x > 0:
        gv = iv.sub(iv.point(1), iv.div(two, w))
    else:
        gv = iv.div(iv.mul(u, iv.add(u, two)), w)
    return iv.mul(X, gv)


def _mish(x, P, params):
    if x == 0:
        return x
    if x > _tail_threshold(P) / 2 + 1:  # 1 - g = 2 / w < 2 e**(-2x)
        return _Near(x, -1)
    return _ziv(_mish_iv, (x,), P, params)


# ===================================================================== the records
@dataclass(frozen=True)
class RealFunction:
    """A real function of the kernel (an op's ``OpSpec.exact``): ``native`` names MPFR's (a
    method of gmpy2's context), else ``scalar(x, P, params)`` evaluates one finite input and
    ``specials`` gives the value (a float) at NaN, ±inf (keys ``"nan"``, ``"inf"``,
    ``"-inf"``). ``arity`` 1 or 2; ``params`` the kernel's parameters, ``check`` validates them
    (params -> params, raises ValueError); ``complex`` the function of complex operands
    (:class:`~._complex_functions.ComplexFunction`, None: real only); ``bind(op_params)`` the
    record and kernel parameters for an op's parameters where they choose the function
    (gelu's ``approximate``; None: this record, with the kernel's parameters taken from the
    op's)."""

    name: str
    native: str | None = None
    scalar: object = None
    specials: object = None
    arity: int = 1
    params: tuple = ()
    check: object = None
    complex: object = None
    bind: object = None

    def key(self, params=None) -> str:
        """The table's name: the function and its parameters (``softplus-beta=1.0-...``)."""
        if not self.params:
            return self.name
        return "-".join([self.name] + [f"{k}={params[k]!r}" for k in self.params])

    def kernel(self, op_params=None):
        """``(record, kernel params)`` for the op's parameters ``op_params``."""
        if self.bind is not None:
            return self.bind(dict(op_params or {}))
        if not self.params:
            return self, None
        return self, {k: op_params[k] for k in self.params}

    def checked(self, params) -> dict:
        """``params`` (the kernel's), complete and checked."""
        params = dict(params or {})
        missing = [p for p in self.params if p not in params]
        if missing:
            raise ValueError(f"{self.name} needs the parameters {', '.join(missing)}")
        params = {k: params[k] for k in self.params}
        return self.check(params) if self.check is not None else params


@functools.cache
def mpfr_function(name: str, arity: int = 1, complex=None) -> RealFunction:
    """MPFR's function ``name`` (a method of gmpy2's context: ``"exp"``, ``"cbrt"``, ...) as a
    record; ``complex``: its function of complex operands (MPC's of that name where a string,
    see :func:`~._complex_functions.mpc_function`)."""
    if isinstance(complex, str):
        from ._complex_functions import mpc_function

        complex = mpc_function(complex)
    return RealFunction(name, native=name, arity=arity, complex=complex)


def _specials_of(nan=math.nan, pinf=math.nan, ninf=math.nan):
    return {"nan": nan, "inf": pinf, "-inf": ninf}


def _softplus_specials(params):
    beta = params["beta"]
    # +inf: beta > 0 gives beta x = inf > threshold, the input; beta < 0: log1p(0) / beta = -0
    return _specials_of(pinf=math.inf if beta > 0 else -0.0,
                        ninf=0.0 if beta > 0 else -math.inf)


def _softplus_check(params):
    beta, threshold = float(params["beta"]), float(params["threshold"])
    if not (math.isfinite(beta) and beta != 0) or threshold != threshold:
        raise ValueError(f"softplus needs a finite nonzero beta and a threshold that is not NaN; "
                         f"got beta={params['beta']!r}, threshold={params['threshold']!r}")
    return {"beta": beta, "threshold": threshold}


_TANH_FORMULA = "tanh"  # gelu's approximate= value that picks the tanh formula


def _gelu_bind(op_params):
    """gelu's record for ``approximate``: the erf formula, or the tanh formula's own."""
    tanh = op_params.get("approximate") == _TANH_FORMULA
    return (COMPOSITIONS.gelu_tanh if tanh else COMPOSITIONS.gelu), None


_LIMITS = _specials_of(pinf=math.inf, ninf=-0.0)

#: The compositions, each a record (``OpSpec.exact`` of its op; ``gelu_tanh`` is gelu's with
#: ``approximate="tanh"``).
COMPOSITIONS = SimpleNamespace(
    sigmoid=RealFunction("sigmoid", scalar=_sigmoid, specials=_specials_of(pinf=1.0, ninf=0.0)),
    silu=RealFunction("silu", scalar=_silu, specials=_LIMITS),
    gelu=RealFunction("gelu", scalar=_gelu, specials=_LIMITS, bind=_gelu_bind),
    gelu_tanh=RealFunction("gelu_tanh", scalar=_gelu_tanh, specials=_LIMITS),
    softplus=RealFunction("softplus", scalar=_softplus, specials=_softplus_specials,
                          params=("beta", "threshold"), check=_softplus_check),
    logit=RealFunction("logit", scalar=_logit, specials=_specials_of()),
    mish=RealFunction("mish", scalar=_mish, specials=_LIMITS),
)


def _function(fn) -> RealFunction:
    """The record ``fn`` (a string: MPFR's function of that name)."""
    if isinstance(fn, RealFunction):
        return fn
    if isinstance(fn, str) and hasattr(_context(53, "Z"), fn):
        return mpfr_function(fn)
    raise ValueError(f"unknown function {fn!r}: pass the op's record "
                     f"(exactref.ops.get_op(name).exact) or the name of one of MPFR's functions")


# ===================================================================== evaluation
# ===================================================================== evaluation
def _evaluate_values(fn: RealFunction, args, P: int, params) -> _Values:
    """Values of ``fn`` at flat float64 arrays ``args`` (one per operand, equal lengths),
    every element computed (no deduplication)."""
    if fn.native is not None:
        g = _g()
        f = getattr(_context(P, "Z"), fn.native)
        tob = g.to_binary
        if fn.arity == 1:
            bins = [tob(f(v)) for v in args[0].tolist()]
        else:
            bins = [tob(f(a, b)) for a, b in zip(args[0].tolist(), args[1].tolist(),
                                                   strict=True)]
        # calls of at most 51 bits hold values beyond 2**±1000 as the enclosure lane does
        return _from_binaries(bins, P, hold_far=P <= 53)
    x = args[0]
    specials = fn.specials(params) if callable(fn.specials) else fn.specials
    results = []
    scalar = fn.scalar
    for v in x.tolist():
        if v != v:
            results.append(specials["nan"])
        elif math.isinf(v):
            results.append(specials["inf" if v > 0 else "-inf"])
        else:
            results.append(scalar(v, P, params))
    return _from_objects(results, P, hold_far=P <= 53)


def evaluate(fn, *args, bits: int = 53, params=None, formats=None) -> ExactArray:
    """The function ``fn`` (its record, or the name of MPFR's) at float64 inputs (arrays broadcast together) as an :class:`ExactArray` that
    rounds like the exact value into every format of at most ``bits`` bits (53: every format)
    in every rounding mode.

    ``formats``: the exactref formats the operands' values come from (one per operand, or
    None); a unary function of a format of at most 16 bits is answered from its table.

    >>> import numpy as np
    >>> from exactref._formats import FORMATS
    >>> from exactref._exact import Rounding
    >>> ex = evaluate("exp", np.array([0.0, 1.0, -np.inf]))
    >>> ex.round(FORMATS["float64"], Rounding.NEAREST_EVEN, "ieee")[0].tolist()
    [1.0, 2.718281828459045, 0.0]
    >>> ex.round(FORMATS["float32"], Rounding.TOWARD_ZERO, "ieee")[0].tolist()
    [1.0, 2.7182817459106445, 0.0]
    """
    fn = _function(fn)
    if len(args) != fn.arity:
        raise TypeError(f"{fn.name} takes {fn.arity} operand{'s' * (fn.arity > 1)}, got "
                        f"{len(args)}")
    if not 1 <= bits <= 61:
        raise ValueError(f"bits={bits}: the kernel serves formats of 1 to 61 bits")
    params = fn.checked(params)
    arrays = np.broadcast_arrays(*[np.asarray(a, dtype=np.float64) for a in args])
    shape = arrays[0].shape
    flat = [np.ascontiguousarray(a).reshape(-1) for a in arrays]
    n = flat[0].size
    if n == 0:
        return ExactArray.regular(shape, np.zeros(0))
    fmt = formats[0] if formats and fn.arity == 1 else None
    if fmt is not None and fmt in table_formats() and bits <= TABLE_PRECISION - 2:
        values = _lookup(fn, params, fmt, flat[0])
        if values is not None:
            return values.exact(shape)
    P = bits + 2
    if fn.arity == 1 and P <= 53:  # decided from float64 enclosures, MPFR where undecided
        got = _enclose.evaluate_enclosed(
            fn, flat[0], P, params, lambda xs: _evaluate_distinct(fn, [xs], P, params))
        if got is not None:
            return got.exact(shape)
    uniq, inv = _unique_rows(flat)
    values = _parallel_values(fn, uniq, P, params)
    return values.take(inv).exact(shape)


def _evaluate_distinct(fn: RealFunction, args, P: int, params) -> _Values:
    """:func:`_parallel_values` of the distinct operand tuples of ``args``, put back."""
    uniq, inv = _unique_rows(args)
    return _parallel_values(fn, uniq, P, params).take(inv)




# ==================================================================== over processes
def _parallel_values(fn: RealFunction, args, P: int, params) -> _Values:
    """:func:`_evaluate_values`, in this process unless the user asked for worker processes
    (:mod:`._workers`: ``set_workers``, ``with workers(...)``, ``EXACTREF_WORKERS``); then in
    chunks over them when there are at least :data:`PARALLEL_MIN` inputs, bit for bit the
    same values."""
    return _workers.shared(fn, args, P, params)


# ========================================================================== tables
_TABLES: dict = {}
_LOCK = threading.Lock()


def function_table(fn, fmt, params=None, *, disk: bool | None = None) -> FunctionTable:
    """The table of the function ``fn`` (its record, or the name of MPFR's) over every bit
    pattern of ``fmt`` (a float format of at most 16 bits): from memory, else the cache
    directory, else built (and saved there). ``disk``: read and write the cache directory
    (default: for functions without parameters, or with their default ones; a table of other
    parameters is kept in memory only)."""
    from .._formats import dtype as resolve

    fn = _function(fn)
    fmt = resolve(fmt)
    if fmt.kind != "float" or fmt.bits > 16:
        raise ValueError(f"tables are built for float formats of at most 16 bits, not "
                         f"{fmt.name}")
    if fn.arity != 1:
        raise ValueError(f"{fn.name} takes two operands: it has no table")
    params = fn.checked(params)
    key = fn.key(params)
    with _LOCK:
        hit = _TABLES.get((key, fmt.name))
    if hit is not None:
        return hit
    if disk is None:
        disk = not params or params == {"beta": 1.0, "threshold": 20.0}
    table = _fncache.load(key, fmt) if disk else None
    if table is None:
        raw, x = _fncache.patterns(fmt)
        uniq, inv = _unique_rows([x])
        values = _parallel_values(fn, uniq, TABLE_PRECISION, params).take(inv)
        table = FunctionTable(key, fmt, values)
        if disk:
            _fncache.save(table)
    with _LOCK:
        _TABLES[(key, fmt.name)] = table
    return table


def _lookup(fn: RealFunction, params, fmt, x) -> _Values | None:
    """Values of ``fn`` at ``x`` (float64 values of ``fmt``) from the table, or None where
    some value is not one of the format's (then the caller evaluates)."""
    raw_t = np.uint16 if fmt.np_dtype.itemsize == 2 else np.uint8
    with np.errstate(invalid="ignore", over="ignore"):
        stored = x.astype(fmt.np_dtype)
        back = stored.astype(np.float64)
    same = (back == x) & (np.signbit(back) == np.signbit(x)) | (np.isnan(back) & np.isnan(x))
    if not same.all():
        return None
    table = function_table(fn, fmt, params)
    return table.lookup(stored.view(raw_t))

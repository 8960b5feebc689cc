"""Complex functions (exp, log, sin, tanh, pow, ...) at complex inputs, each part as an ExactArray
that rounds like the exact part into every format of at most ``bits`` bits, in every mode
(private).

MPC (through gmpy2) rounds the real and the imaginary part of its results correctly and
separately, in a rounding mode per part, and reports each part's ternary value (the sign of
``result - exact``, 0 exactly when the part is exact). One evaluation at ``P = bits + 2`` bits
rounding both parts toward zero therefore gives each part rounded to odd, as for the real
functions (:mod:`._functions`): the truncation, with its last bit set where the ternary value
is not 0. Exact parts come out exact by MPC's own detection (``exp(0) = 1 + 0i``,
``log(1) = 0``, ``sin(x + 0i)`` has the imaginary part ``+0``).

``log2`` (MPC has none) is ``log(z) / log(2)`` in interval arithmetic: each part of ``log(z)``
enclosed by MPC's directed roundings, divided by ``log(2)``'s enclosure, at a working precision
that doubles until both ends truncate to one P-bit number (Ziv's strategy, as the real
compositions); exact parts of ``log(z)`` (``0``) stay exact.

Special values (infinities, NaN, signed zeros on the branch cuts) are MPC's, which follow ISO
C99 Annex G (G.6) for the functions it names: ``exp(-inf + yi) = +0 (cos y + i sin y)``,
``log(-0 + 0i) = -inf + pi i``, ``log(-1 - 0i) = -pi i``, ...
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from ._mpfr import _decide, _g, _put_mpfr, _Values

__all__ = ["COMPLEX", "ComplexFunction", "evaluate_complex", "mpc_function"]


@dataclass(frozen=True)
class ComplexFunction:
    """A function of complex operands (a real function record's ``complex``): ``mpc`` names
    MPC's (a gmpy2 function), or ``compute(z, P)`` gives each part ``(value, ternary)`` where
    MPC has none; ``arity`` 2: a power ``z ** w`` of two exact operands."""

    name: str
    mpc: str | None = None
    compute: object = None
    arity: int = 1


@functools.cache
def mpc_function(name: str) -> ComplexFunction:
    """MPC's function ``name`` (``"exp"``, ``"tanh"``, ...) as a record."""
    return ComplexFunction(name, mpc=name)

_W_MAX = 1 << 14  # an undecided log2 at this precision would be an exact case we missed


@functools.cache
def _ctx(prec: int, rnd: str):
    g = _g()
    mode = {"Z": g.RoundToZero, "D": g.RoundDown, "U": g.RoundUp}[rnd]
    return g.context(precision=prec, real_round=mode, imag_round=mode, round=mode)


def _put_part(out: _Values, i: int, value, rc: int, P: int) -> None:
    """One part (an MPFR value at ``P`` bits, rounded toward zero, of ternary value ``rc``)."""
    _put_mpfr(out, i, value, P, rc=rc)


def _native(fn: ComplexFunction, z, w, P: int):
    g = _g()
    with _ctx(P, "Z"):
        if fn.arity == 2:  # z and w are exact (53 bits): no rounding before the power
            r = z ** w
        else:
            r = getattr(g, fn.mpc)(z)
    return r, r.rc


def _log2_modulus(z):
    """``log2|z|`` where it is rational (an exact mpfr), else None. ``|z|**2 = a**2 + b**2`` is a
    power of two only when a part is zero and the other a power of two (``log2|z| = k``), or
    both parts have the magnitude ``2**k`` (``k + 1/2``): ``m**2 + n**2 = 2**j`` with odd ``m,
    n`` forces ``m = n = 1`` (odd squares are 1 mod 8)."""
    g = _g()
    a, b = abs(z.real), abs(z.imag)
    if g.is_zero(b):
        v, half = a, 0
    elif g.is_zero(a):
        v, half = b, 0
    elif a == b:
        v, half = a, 1
    else:
        return None
    if not g.is_finite(v) or g.is_zero(v):
        return None
    m, e = v.as_mantissa_exp()
    m = int(m)
    if m & (m - 1):
        return None
    return g.mpfr(int(e) + m.bit_length() - 1) + g.mpfr(half) / 2


def _log2(z, P: int):
    """``log(z) / log(2)``: per part ``(value, ternary)`` rounded toward zero at P bits."""
    g = _g()
    W = P + 24
    while True:
        with _ctx(W, "D"):
            lo = g.log(z)
            l2d = g.log(g.mpfr(2))
        with _ctx(W, "U"):
            hi = g.log(z)
            l2u = g.log(g.mpfr(2))
        parts = []
        for k, (a, b) in enumerate(((lo.real, hi.real), (lo.imag, hi.imag))):
            if a == b and g.is_zero(a):  # an exact zero part (log(1) = 0, log(x > 0) = x + 0i)
                parts.append((a, 0))
                continue
            if k == 0 and _log2_modulus(z) is not None:  # log2|z| rational: exact
                v = _ctx(P, "Z").plus(_log2_modulus(z))  # P bits, rounded to odd if need be
                parts.append((v, v.rc))
                continue
            if not (g.is_finite(a) and g.is_finite(b)):
                with _ctx(P, "Z"):  # inf / log 2 = inf, NaN stays NaN
                    q = g.log(z)
                parts.append(((q.real, q.imag)[k], 0))
                continue
            with _ctx(W, "D"):
                qlo = a / (l2u if a >= 0 else l2d)
            with _ctx(W, "U"):
                qhi = b / (l2d if b >= 0 else l2u)
            got = _decide(qlo, qhi, P)
            if got is None:
                parts = None
                break
            parts.append((got, got.rc))
        if parts is not None:
            return parts
        W *= 2
        if W > _W_MAX:
            raise AssertionError(f"complex log2 undecided at {W} bits: an exact case missed")


#: The complex functions MPC lacks, computed here (``log2``) or from the operands (``pow``).
COMPLEX = SimpleNamespace(log2=ComplexFunction("log2", compute=_log2),
                          pow=ComplexFunction("pow", arity=2))


def evaluate_complex(fn, re, im, re2=None, im2=None, *, bits: int = 53):
    """The complex function ``fn`` (its record, or the name of MPC's) at complex inputs ``re +
    i im`` (and ``re2 + i im2`` for a power), float64 arrays
    broadcast together: ``(real part, imaginary part)`` as ExactArrays rounding like the exact
    parts into every format of at most ``bits`` bits.

    >>> import numpy as np
    >>> from exactref._formats import FORMATS
    >>> from exactref._exact import Rounding
    >>> r, i = evaluate_complex("exp", np.array([0.0, 1.0]), np.array([0.0, 1.0]))
    >>> [p.round(FORMATS["float64"], Rounding.NEAREST_EVEN, "ieee")[0].tolist() for p in (r, i)]
    [[1.0, 1.4686939399158851], [0.0, 2.2873552871788423]]
    """
    if isinstance(fn, str):
        fn = mpc_function(fn)
    if not isinstance(fn, ComplexFunction) or (fn.mpc is not None and not hasattr(_g(), fn.mpc)):
        raise TypeError(f"{fn!r} of complex operands is not supported: pass a function "
                        f"record's complex counterpart (exactref.ops.get_op(name).exact.complex)")
    if not 1 <= bits <= 61:
        raise ValueError(f"bits={bits}: the kernel serves formats of 1 to 61 bits")
    binary = fn.arity == 2
    arrays = [re, im] + ([re2, im2] if binary else [])
    arrays = np.broadcast_arrays(*[np.asarray(a, dtype=np.float64) for a in arrays])
    shape = arrays[0].shape
    flat = [np.ascontiguousarray(a).reshape(-1) for a in arrays]
    keys = list(zip(*[a.view(np.uint64).tolist() for a in flat], strict=True))  # -0 != +0
    flat = [a.tolist() for a in flat]
    n = len(flat[0])
    P = bits + 2
    L = max(P, 53)
    outs = (_Values.empty(n, L), _Values.empty(n, L))
    g = _g()
    cache: dict = {}
    for i in range(n):
        key = keys[i]
        hit = cache.get(key)
        if hit is None:
            z = g.mpc(g.mpfr(flat[0][i]), g.mpfr(flat[1][i]))
            if fn.compute is not None:
                hit = fn.compute(z, P)
            else:
                w = g.mpc(g.mpfr(flat[2][i]), g.mpfr(flat[3][i])) if binary else None
                r, rc = _native(fn, z, w, P)
                hit = ((r.real, rc[0]), (r.imag, rc[1]))
            cache[key] = hit
        for out, (value, rc) in zip(outs, hit, strict=True):
            _put_part(out, i, value, rc, P)
    return outs[0].exact(shape), outs[1].exact(shape)

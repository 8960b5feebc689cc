"""Backward of the quotients, roots and selections: each gradient one exact value, rounded once.

``er.<op>.backward(*operands, grad)`` gives the gradient of every float or complex array operand:
the exact partial derivative of the exact function, times ``grad`` (conjugated where PyTorch's
convention for complex operands conjugates), summed over the copies broadcasting made of the
operand, rounded once into the operand's shape and format. A scalar, integer or bool operand
gets none (PyTorch's integer tensors cannot require one). The formulas are PyTorch's
(``tools/autograd/derivatives.yaml``); the values are not: PyTorch rounds every step.

Three kinds of exact value, by what the derivative is:

* **products** (``negative``, ``maximum``, ``minimum``, ``fmax``, ``fmin``, ``clamp``, real
  ``abs``): ``grad`` times -1, 1, 1/2 (a tie of ``maximum``/``minimum``) or ``sgn(x)``, and
  PyTorch's +0 where its formula masks; sums of products, as add and multiply
  (:func:`~exactref.arithmetic.basic.gradient`).
* **quotients** (``divide``, ``reciprocal``): per copy a quotient ``N / D`` of sums of products.
  An element of one copy is the engine's quotient kernel; an element of several copies is the
  rational sum of its quotients, rounded once (integer arithmetic: :func:`_quotient_sum`).
* **roots** (``sqrt``, ``rsqrt``, complex ``abs``, complex ``sqrt``): irrational, so rounded by
  :func:`~exactref._exact.decide` from exact comparisons with candidates ``c``. For
  ``v = N / sqrt(S)``: ``sign(v - c) = sign(v)`` where ``c`` has the other sign, else
  ``sign(v) * sign(N**2 - c**2 * S)``, a sum of products. The complex square root's parts are
  nested radicals, compared in Fractions (see :func:`_csqrt_compare`).

Special values and signs of zero are those of PyTorch's formula evaluated in IEEE arithmetic on
the operands' special values: ``sqrt`` at ±0 gives ±inf (NaN for a zero ``grad``), ``abs`` has
the subgradient 0 at ±0 and at NaN (PyTorch's ``sgn(NaN)`` is 0), a masked element is +0 whatever
``grad`` is. Complex specials follow the exact formula per part (``grad * y / |y|**2`` for
``divide``); the complex ``abs`` at 0 gives ``grad * (+0)`` and +0, at a non-finite operand NaN
parts (as PyTorch); the complex ``sqrt`` at 0, or with a non-finite operand or ``grad``, NaN
parts (PyTorch: ``inf + nanj`` or ``nan + nanj``, by its complex division's path).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .._exact import (
    ExactArray,
    ExactPart,
    Rounding,
    decide,
    isqrt_scaled,
    quotient,
    signs,
    sum_of_products,
)
from .._formats import dtype as resolve_dtype
from .._operands import broadcast_shapes, prepare, resolve_mode_rule, to_array
from .._result import Gradients, Result
from ._elementwise import OpTypeError, operand_parts, with_backward
from ._formulas import Part, conj, mul_parts, neg, square_sum, terms_of, times_parts
from .basic import _copies, gradient
from .division import _check_mode, divide, reciprocal
from .roots import rsqrt, sqrt
from .selection import abs as abs_
from .selection import clamp, fmax, fmin, maximum, minimum, negative

__all__: list[str] = []  # attaches er.<op>.backward; nothing to import from here

_NE = Rounding.NEAREST_EVEN
_DIFFERENTIABLE = ("float", "complex")
_BLOCK = 4096  # elements per exact comparison of products of up to six factors


# ------------------------------------------------------------------------------- a pass
class _Pass:
    """One backward pass: the operands and ``grad`` prepared, the output's shape, every
    operand's parts ``[re, im]`` (engine Operands) and how each gradient is rounded."""

    def __init__(self, op, operands, grad, dtype, rounding, overflow):
        self.op = op
        self.ops = {n: None if v is None else prepare(v, n) for n, v in operands.items()}
        given = [o for o in self.ops.values() if o is not None]
        self.shape = tuple(broadcast_shapes(given))
        G = prepare(grad, "grad")
        if G.kind != "array" or tuple(G.shape) != self.shape:
            raise ValueError(
                f"grad must have the output's shape {self.shape}, got "
                f"{G.shape if G.kind == 'array' else 'a scalar'}; pass one gradient element per "
                f"output element")
        if G.array.dtype.kind not in _DIFFERENTIABLE:
            raise TypeError(f"grad is {G.array.dtype.name}; a gradient is a float or complex "
                            f"array (convert it with er.cast)")
        self.dtype = None if dtype is None else resolve_dtype(dtype)
        self.complex = G.is_complex or any(o.is_complex for o in given) or (
            self.dtype is not None and self.dtype.kind == "complex")
        self.G = operand_parts(G, self.complex)
        self.parts = {n: operand_parts(o, self.complex) for n, o in self.ops.items()
                      if o is not None}
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self.rounding, self.overflow = rounding, overflow
        if not any(self.target(n) for n in self.ops):
            kinds = ", ".join(f"{n} is " + (o.array.dtype.name if o.kind == "array" else
                                            "a scalar") for n, o in self.ops.items()
                              if o is not None)
            raise TypeError(f"{op}.backward: no operand takes a gradient ({kinds}); gradients "
                            f"are taken for float and complex arrays, as PyTorch requires: pass "
                            f"er.asarray(..., 'float64') or floats (2.0, not 2)")

    def target(self, name):
        """``(operand, format, mode, rule)`` of an operand that gets a gradient, else None."""
        o = self.ops.get(name)
        if o is None or o.kind != "array" or o.array.dtype.kind not in _DIFFERENTIABLE:
            return None
        fmt = self.dtype or o.array.dtype
        mode, rule = resolve_mode_rule(self.rounding, self.overflow, fmt)
        return o, fmt, mode, rule

    def flat(self, op) -> np.ndarray:
        """Float64 values of an operand part broadcast to the output, flattened."""
        return np.broadcast_to(op.f64, self.shape).reshape(self.size).astype(np.float64)

    # ------------------------------------------------------------------ the three kinds
    def products(self, name, chain) -> Result | None:
        """The sum over copies of the product of ``chain`` (operand parts, conjugated
        already): :func:`~exactref.arithmetic.basic.gradient`."""
        t = self.target(name)
        if t is None:
            return None
        o, fmt, mode, rule = t
        return gradient(self.op, chain, o, self.shape, fmt, mode, rule, self.complex)

    def selected(self, name, keep, coef=None) -> Result | None:
        """``grad * coef`` where ``keep`` (flat, of the output), PyTorch's +0 elsewhere."""
        keep = np.asarray(keep, dtype=bool).reshape(self.shape)
        chain = [[None if p is None else _where_zero(p, keep, self.shape) for p in self.G]]
        if coef is not None:
            c = np.where(keep, np.asarray(coef, dtype=np.float64).reshape(self.shape), 1.0)
            chain.append([ExactPart.from_float64(c), None])
        return self.products(name, chain)

    def quotients(self, name, nums, den: Part) -> Result | None:
        """Per part, the sum over copies of ``nums[part] / den`` (Parts over the operands):
        one copy by the quotient kernel, several as exact rationals."""
        t = self.target(name)
        if t is None:
            return None
        o, fmt, mode, rule = t
        copies = _copies(o.shape, self.shape)
        size, k = copies.shape
        single = k == 1 and len(o.shape) == len(self.shape)
        pos = copies.reshape(-1)
        den_t = _take_terms(terms_of(den), self.shape, pos)
        exacts = []
        for num in nums[:2 if fmt.kind == "complex" else 1]:
            if k == 0 or size == 0:  # no copies: the empty sum, +0
                exacts.append(ExactArray.zeros((size,)))
                continue
            num_t = _take_terms(terms_of(num), self.shape, pos)
            q = quotient(num_t, den_t, (pos.size,))
            exacts.append(_sum_copies(q, num_t, den_t, size, k, single))
        return self.rounded(o, fmt, mode, rule, exacts)

    def rounded(self, o, fmt, mode, rule, exacts) -> Result:
        """A Result from exact values (one ExactArray per part, of the operand's size)."""
        comp = fmt.component
        values = [np.asarray(ex.round(comp, mode, rule)[0]).reshape(o.shape) for ex in exacts]
        return Result(to_array(values, fmt, o.shape), [[v] for v in values],
                      op=f"{self.op}.backward", models=["exact"])

    def zeros(self, name) -> Result | None:
        """+0 of the operand's shape and format (a gradient PyTorch defines as zeros)."""
        t = self.target(name)
        if t is None:
            return None
        o, fmt, mode, rule = t
        size = int(np.prod(o.shape, dtype=np.int64))
        nparts = 2 if fmt.kind == "complex" else 1
        return self.rounded(o, fmt, mode, rule, [ExactArray.zeros((size,))] * nparts)


def _where_zero(op: ExactPart, keep, shape) -> ExactPart:
    """``op`` broadcast to ``shape``, with +0 where ``keep`` is False."""
    if op._comps is None:  # float64 values
        out = ExactPart.from_float64(np.where(keep, np.broadcast_to(op.f64, shape), 0.0))
        out.in_range = op.in_range
        return out
    comps = [(np.where(keep, np.broadcast_to(m, shape), 0.0),
              np.where(keep, np.broadcast_to(e, shape), 0)) for m, e in op.comps]
    f64 = None if op.f64 is None else np.where(keep, np.broadcast_to(op.f64, shape), 0.0)
    return ExactPart(comps, np.where(keep, np.broadcast_to(op.shadow, shape), 0.0), f64)


def _take_terms(terms, shape, pos):
    """Terms of operands broadcast to ``shape``, at the flat positions ``pos``."""
    return [tuple(op.broadcast(shape).take(pos) for op in t) for t in terms]


def _value(terms, j: int) -> Fraction:
    """The exact value of element ``j`` of flat terms of finite operands."""
    m, e = _dyadic(terms, j)
    return Fraction(m) * Fraction(2) ** e


def _dyadic(terms, j: int):
    """The exact value of element ``j`` of flat terms of finite operands as ``(m, e)``, the
    integer ``m`` times ``2**e`` (Python integers: no gcd, no Fraction)."""
    total, low = 0, None
    for t in terms:
        pm, pe = 1, 0
        for op in t:
            if op.f64 is not None:
                fm, fe = math.frexp(float(op.f64[j] if np.ndim(op.f64) else op.f64))
                pm, pe = pm * int(fm * 2.0**53), pe + fe - 53
            else:
                v = op.exact(j)
                pm, pe = pm * v.numerator, pe - (v.denominator.bit_length() - 1)
        if low is None:
            total, low = pm, pe
        elif pe >= low:
            total += pm << (pe - low)
        else:
            total, low = (total << (low - pe)) + pm, pe
    return total, low or 0


def _ratio(num, den, j: int):
    """``N / D`` at element ``j`` as an unreduced pair of integers ``(p, q)``."""
    (nm, ne), (dm, de) = _dyadic(num, j), _dyadic(den, j)
    return (nm << (ne - de), dm) if ne >= de else (nm, dm << (de - ne))


def _sgn(v) -> int:
    return (v > 0) - (v < 0)


# --------------------------------------------------------------------- sums of quotients
def _sum_copies(q: ExactArray, num, den, size: int, k: int, single: bool) -> ExactArray:
    """The sums of ``k`` quotients per element (``q`` element-major, ``size * k``) with IEEE
    754's rules: NaN or opposite infinities give NaN, an infinity wins, and the sum starts from
    +0 as PyTorch's sums do (an exact zero is +0, or -0 toward -inf: IEEE's sum rule, unless
    every term is +0). One copy of an operand with the output's dimensions is the quotient
    itself, its own sign of zero. Several copies cost ``k`` integer divisions of about 300
    bits per element (:func:`_quotient_sum`); a sum on a rounding boundary, or cancelling to
    far below its terms, costs ``O(k)`` exact rational additions of integers up to about
    ``53 k`` bits (106 k for ``grad_y``), and a gcd of that size."""
    if k == 1:
        if not single:  # -0 + the leading +0: the sum rule
            q.zsign = np.where(q.zsign > 0, 1, 0).astype(np.int8)
        return q
    sp = q.special.reshape(size, k)
    pinf, ninf = (sp == np.inf).any(axis=1), (sp == -np.inf).any(axis=1)
    nan = np.isnan(sp).any(axis=1) | (pinf & ninf)
    inf = ~nan & (pinf | ninf)
    regular = (~q.zero & (q.special == 0)).reshape(size, k)
    plus = (q.zero & (q.zsign > 0)).reshape(size, k)
    special = np.where(nan, np.nan, np.where(inf, np.where(pinf, np.inf, -np.inf), 0.0))
    zero = ~nan & ~inf & ~regular.any(axis=1)
    zsign = np.where(zero & plus.all(axis=1), 1, 0).astype(np.int8)
    out = ExactArray.regular((size,), np.zeros(size), special=special, zero=zero, zsign=zsign)
    for i in np.flatnonzero(~nan & ~inf & regular.any(axis=1)):
        s = _quotient_sum([_ratio(num, den, int(j)) for j in np.flatnonzero(regular[i]) + i * k])
        if s == 0:
            out.zero[i], out.zsign[i] = True, 0
        else:
            out.hard[int(i)] = s
    return out


def _quotient_sum(pairs) -> Fraction:
    """The sum of rationals ``p / q`` (pairs of integers), or a value that rounds like it into
    every format of at most 53 bits in every mode.

    First a filter: each quotient floored in units ``2**-s`` (the largest about ``2**(117 +
    log2 k)`` units) gives ``A <= sum < A + k`` (``A`` itself where every division is exact).
    Where that interval lies in one binade and holds no point of the grid of 54 significant
    bits there (every value and midpoint of every such format, subnormal or not, is one), the
    sum and ``A + 1/2`` round alike. Otherwise (an exact cancellation, a sum on a grid point
    such as ``1/3 + 2/3``) the exact rational sum: :func:`_rational_sum`."""
    k = len(pairs)
    pairs = [(-p, -q) if q < 0 else (p, q) for p, q in pairs]
    s = 117 + k.bit_length() - max(p.bit_length() - q.bit_length() for p, q in pairs)
    A, exact = 0, True
    for p, q in pairs:
        a, r = divmod(p << s, q) if s >= 0 else divmod(p, q << -s)
        A, exact = A + a, exact and r == 0
    if exact:
        return _dyadic_fraction(A, s)
    lo, hi = (A, A + k) if A >= 0 else (-(A + k), -A)  # the magnitude lies in (lo, hi)
    b = lo.bit_length() - 1
    if A < 0 < A + k or b < 53 or hi > 1 << (b + 1):
        return _rational_sum(pairs)
    g = 1 << (b - 53)
    if (lo // g + 1) * g < hi:
        return _rational_sum(pairs)
    return _dyadic_fraction(2 * A + 1, s + 1)


def _dyadic_fraction(m: int, s: int) -> Fraction:
    """``m * 2**-s``."""
    return Fraction(m, 1 << s) if s >= 0 else Fraction(m << -s)


def _rational_sum(pairs) -> Fraction:
    """The exact sum of rationals ``p / q`` (pairs of integers), pairwise on unreduced
    numerators and denominators (one gcd at the end): ``log2(k)`` rounds of products that
    double in size."""
    while len(pairs) > 1:
        nxt = [(a * d + c * b, b * d) for (a, b), (c, d) in zip(pairs[::2], pairs[1::2],
                                                                strict=False)]
        if len(pairs) % 2:
            nxt.append(pairs[-1])
        pairs = nxt
    return Fraction(*pairs[0])


# ------------------------------------------------------------------------------ roots
def _shadow(v):
    """The IEEE sign shadow of float64 values: ±1 for finite nonzero, else the value."""
    v = np.asarray(v, dtype=np.float64)
    return np.where(np.isfinite(v) & (v != 0), np.sign(v), v)


def _over_root(num, rad, shadow, approx) -> ExactArray:
    """``v = N / sqrt(S)`` per element, ``N`` and ``S > 0`` sums of products over flat
    operands (terms), where ``shadow`` (float64) is finite and nonzero; elsewhere ``shadow``
    is the value: NaN, ±inf, or a zero with its sign. ``approx(idx)`` gives float64
    approximations ``(t, E)`` of ``v``, a few ulps off at most."""
    n = shadow.size
    finite = np.isfinite(shadow)
    zero = finite & (shadow == 0)
    ex = ExactArray.regular((n,), np.zeros(n), special=np.where(finite, 0.0, shadow),
                            zero=zero, zsign=np.where(np.signbit(shadow), -1, 1))
    idx = np.flatnonzero(finite & (shadow != 0))
    if not idx.size:
        return ex
    N = [tuple(op.take(idx) for op in t) for t in num]
    S = [tuple(op.take(idx) for op in t) for t in rad]
    sv = np.sign(shadow[idx]).astype(np.int8)

    def compare(j, parts, E):
        # v - c has v's sign where c has the other; else sign(v) * sign(N^2 - c^2 S)
        out = np.empty(j.size, dtype=np.int8)
        for start in range(0, j.size, _BLOCK):  # blocks: the products' pieces stay in cache
            b = slice(start, start + _BLOCK)
            jb, pb, Eb = j[b], [p[b] for p in parts], E[b]
            sign = np.sign(pb[0])
            c = ExactPart([(p, Eb) for p in pb], sign)
            nc = ExactPart([(-p, Eb) for p in pb], -sign)
            Nj = [tuple(op.take(jb) for op in t) for t in N]
            Sj = [tuple(op.take(jb) for op in t) for t in S]
            terms = [a + b for a in Nj for b in Nj] + [(nc, c) + s for s in Sj]
            mag = signs(sum_of_products(terms, (jb.size,)))
            out[b] = np.where(sign.astype(np.int8) == sv[jb], sv[jb] * mag, sv[jb])
        return out

    def fallback(j):
        t, E = _root_approximation([_value(N, int(i)) ** 2 / _value(S, int(i)) for i in j])
        return t * sv[j], E

    with np.errstate(all="ignore"):
        t, E = approx(idx)
    t, E = np.array(t, dtype=np.float64), np.array(E, dtype=np.int64)
    bad = np.flatnonzero(~(np.isfinite(t) & (t != 0)))
    if bad.size:
        t[bad], E[bad] = fallback(bad)
    c1, c2, r, E = decide(t, E, compare, fallback=fallback)
    ex.c1[idx], ex.c2[idx], ex.r[idx], ex.E[idx] = c1, c2, r, E
    return ex


def _root_approximation(squares):
    """``(t, E)`` with ``t * 2**E`` within an ulp of ``sqrt(q)`` for positive Fractions ``q``
    (integer square roots of about 130 bits)."""
    t = np.empty(len(squares))
    E = np.empty(len(squares), dtype=np.int64)
    for k, q in enumerate(squares):
        s, half = isqrt_scaled(q, 130)
        m, ee = math.frexp(float(s))
        t[k], E[k] = 2 * m, ee - 1 - half
    return t, E


def _scaled(v):
    """``(m, e)`` with ``v = m * 2**e`` and ``1/2 <= |m| < 1`` (0 for 0)."""
    m, e = np.frexp(v)
    return m, e.astype(np.int64)


def _even_scaled(x):
    """``(m, e)`` with ``x = m * 2**e``, ``e`` even and ``1/2 <= m < 2``."""
    m, e = _scaled(x)
    odd = (e & 1).astype(bool)
    return np.where(odd, m * 2.0, m), e - odd


# ------------------------------------------------------------------- complex square root
def _sign_root_sum(x: Fraction, y: Fraction, R: Fraction) -> int:
    """``sign(x + y * sqrt(R))``, ``R >= 0``, exactly."""
    sx, sy = _sgn(x), (_sgn(y) if R else 0)
    if sy == 0:
        return sx
    if sx in (0, sy):
        return sy
    return sx * _sgn(x * x - y * y * R)


def _sign_over_root(N: Fraction, S: Fraction, c: Fraction) -> int:
    """``sign(N / sqrt(S) - c)``, ``S > 0``, exactly."""
    sN, sc = _sgn(N), _sgn(c)
    if sN != sc:
        return 1 if sN > sc else -1
    if sN == 0:
        return 0
    return sN * _sgn(N * N - c * c * S)


def _csqrt_compare(a, b, bneg, gr, gi, part: int, c: Fraction) -> int:
    """``sign(v - c)`` for a part of ``v = g / (2 conj(s))``, ``s = sqrt(a + bi) = u + vi``
    (``z != 0``; Fractions).

    With ``b = 0 < -a``, ``s = ±i sqrt(-a)`` and each part is ``N / sqrt(-4a)``. Otherwise
    ``u > 0`` and ``2uv = b``, ``2u^2 = rho + a`` (``rho = |z|``), so with ``p + qi = g z``
    the real part is ``(pu + qv) / (2 rho^2)`` (the imaginary ``(qu - pv) / (2 rho^2)``) and,
    multiplied by ``2u * 2 rho^2 > 0``, ``v - c`` has the sign of ``L - gamma u`` with
    ``L = alpha + beta rho``, ``alpha = pa + qb``, ``beta = p``, ``gamma = 4 c rho^2``. Where
    ``L`` and ``gamma u`` share a sign, ``L^2 - gamma^2 u^2 = X + Y rho`` decides it: two
    radicals, each removed by one squaring (:func:`_sign_root_sum`)."""
    R = a * a + b * b
    if b == 0 and a < 0:
        sigma = -1 if bneg else 1
        N = -sigma * gi if part == 0 else sigma * gr
        return _sign_over_root(N, -4 * a, c)
    p, q = gr * a - gi * b, gi * a + gr * b
    P, Q = (p, q) if part == 0 else (q, -p)
    alpha, beta, gamma = P * a + Q * b, P, 4 * c * R
    sL, sR = _sign_root_sum(alpha, beta, R), _sgn(gamma)
    if sL != sR:
        return 1 if sL > sR else -1
    if sL == 0:
        return 0
    X = alpha * alpha + beta * beta * R - gamma * gamma * a / 2
    Y = 2 * alpha * beta - gamma * gamma / 2
    return sL * _sign_root_sum(X, Y, R)


def _bisect(cmp, s: int):
    """``(t, E)`` within an ulp of a nonzero ``v`` of sign ``s``, from its exact comparison
    ``cmp(c) = sign(v - c)`` alone: the binade by galloping, then 52 halvings."""
    def at_least(c):  # |v| >= c
        return s * cmp(s * c) >= 0

    two = Fraction(2)
    e, step = 0, 1
    if at_least(Fraction(1)):
        while at_least(two ** (e + step)):
            e, step = e + step, _gallop(step)
        lo, hi = e, e + step
    else:
        while not at_least(two ** (e - step)):
            e, step = e - step, _gallop(step)
        lo, hi = e - step, e
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if at_least(two ** mid) else (lo, mid)
    m_lo, m_hi = 2**52, 2**53
    while m_hi - m_lo > 1:
        mid = (m_lo + m_hi) // 2
        m_lo, m_hi = (mid, m_hi) if at_least(mid * two ** (lo - 52)) else (m_lo, mid)
    return s * m_lo / 2.0**52, lo


def _gallop(step: int) -> int:
    if step > 2**16:  # the values here lie within 2**±4000
        raise ArithmeticError("exactref: a comparison did not bound its value (an exactref "
                              "bug); please report the inputs")
    return step * 2


def _complex_sqrt_grad(gr, gi, a, b) -> list:
    """The parts of ``g / (2 conj(sqrt(z)))`` per element (float64 flat arrays), each exact
    (rounded by :func:`decide` with :func:`_csqrt_compare`, in Fractions: slow, one to two
    milliseconds an element). A zero or non-finite ``z`` or ``g`` gives NaN parts."""
    n = a.size
    special = ~(np.isfinite(a) & np.isfinite(b) & np.isfinite(gr) & np.isfinite(gi)) | (
        (a == 0) & (b == 0))
    idx = np.flatnonzero(~special)
    F = [(Fraction(float(a[i])), Fraction(float(b[i])), bool(np.signbit(b[i])),
          Fraction(float(gr[i])), Fraction(float(gi[i]))) for i in idx]
    with np.errstate(all="ignore"):
        ea = np.maximum(_scaled(a[idx])[1], _scaled(b[idx])[1])
        h = ea // 2
        z = np.ldexp(a[idx], -2 * h) + 1j * np.ldexp(b[idx], -2 * h)
        eg = np.maximum(_scaled(gr[idx])[1], _scaled(gi[idx])[1])
        g = np.ldexp(gr[idx], -eg) + 1j * np.ldexp(gi[idx], -eg)
        approx = g / (2 * np.conj(np.sqrt(z)))
    out = []
    for part in (0, 1):
        ex = ExactArray.regular((n,), np.zeros(n), special=np.where(special, np.nan, 0.0))
        sv = np.array([_csqrt_compare(*f[:3], *f[3:], part, Fraction(0)) for f in F],
                      dtype=np.int8)
        ex.zero[idx[sv == 0]] = True
        ex.zsign[idx[sv == 0]] = 0  # an exact zero is a sum's: +0, -0 toward -inf
        keep = np.flatnonzero(sv != 0)
        sub = [F[k] for k in keep]

        def cmp_at(k, c, part=part, sub=sub):
            return _csqrt_compare(*sub[k][:3], *sub[k][3:], part, c)

        def compare(j, parts, E, cmp_at=cmp_at):
            res = np.empty(j.size, dtype=np.int8)
            for m, k in enumerate(j):
                c = sum((Fraction(float(p[m])) for p in parts), Fraction(0))
                res[m] = cmp_at(int(k), c * Fraction(2) ** int(E[m]))
            return res

        def fallback(j, cmp_at=cmp_at, sv=sv[keep]):
            pairs = [_bisect(lambda c, k=int(k): cmp_at(k, c), int(sv[k])) for k in j]
            return np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])

        if keep.size:
            t = (approx.real if part == 0 else approx.imag)[keep].copy()
            E = (eg - h)[keep].copy()
            bad = np.flatnonzero(~np.isfinite(t) | (t == 0) | (np.sign(t) != sv[keep]))
            if bad.size:
                t[bad], E[bad] = fallback(bad)
            c1, c2, r, E = decide(t, E, compare, fallback=fallback)
            at = idx[keep]
            ex.c1[at], ex.c2[at], ex.r[at], ex.E[at] = c1, c2, r, E
        out.append(ex)
    return out


# ------------------------------------------------------------------------------ helpers
def _order(a: ExactPart, b: ExactPart, shape):
    """``(sign(a - b), unordered)`` per element of ``shape`` (flat), exactly: -0 equals +0,
    equal infinities are equal, NaN is unordered."""
    n = int(np.prod(shape, dtype=np.int64))
    A, B = a.broadcast(shape), b.broadcast(shape)
    sa = np.broadcast_to(np.asarray(A.shadow, dtype=np.float64), (n,))
    sb = np.broadcast_to(np.asarray(B.shadow, dtype=np.float64), (n,))
    unordered = np.isnan(sa) | np.isnan(sb)
    inf = (np.isinf(sa) | np.isinf(sb)) & ~unordered
    finite = ~unordered & ~inf
    s = np.zeros(n, dtype=np.int8)
    if finite.any():
        idx = np.flatnonzero(finite)
        d = sum_of_products([(A.take(idx),), (neg(B.take(idx)),)], (idx.size,))
        s[idx] = signs(d)
    with np.errstate(invalid="ignore"):
        s[inf] = np.nan_to_num(np.sign(sa[inf] - sb[inf])).astype(np.int8)
    return s, unordered


def _result(*grads, **more) -> Gradients:
    return Gradients(grads[0], grads[1] if len(grads) > 1 else None, **more)


def _neg_parts(P):
    return [neg(p) for p in P]


def _fourth(Y) -> Part:
    """``|y|**4`` as a sum of products."""
    sq = square_sum(Y).terms
    return Part([s + t for s in sq for t in sq])


# ----------------------------------------------------------------------------- negative
def _negative_backward(x, grad, *, dtype=None, rounding=_NE, overflow=None) -> Gradients:
    """Gradient of ``negative(x)``: ``grad_x = -grad`` (PyTorch: ``grad.neg()``), exact (a zero
    ``grad`` gives the other zero).

    >>> import exactref as er
    >>> er.negative.backward(er.asarray([1.0, 2.0], "float32"),
    ...                      er.asarray([0.5, -0.0], "float32")).rounded.tolist()
    [-0.5, 0.0]
    """
    bw = _Pass("negative", {"x": x}, grad, dtype, rounding, overflow)
    minus = [ExactPart.from_scalar(-1.0), None]
    return _result(bw.products("x", [bw.G, minus]))


# ---------------------------------------------------------------- maximum, minimum, ...
def _minmax_backward(op, larger: bool):
    def backward(x, y, grad, *, dtype=None, rounding=_NE, overflow=None) -> Gradients:
        bw = _Pass(op, {"x": x, "y": y}, grad, dtype, rounding, overflow)
        s, unordered = _order(bw.parts["x"][0], bw.parts["y"][0], bw.shape)
        tie = ~unordered & (s == 0)
        coef = np.where(tie, 0.5, 1.0)
        win = s > 0 if larger else s < 0  # x wins outright (s is 0 where unordered: a NaN
        lose = s < 0 if larger else s > 0  # gives both operands the whole grad)
        return _result(bw.selected("x", ~lose, coef), bw.selected("y", ~win, coef))

    word = "larger" if larger else "smaller"
    backward.__name__ = f"_{op}_backward"
    backward.__doc__ = f"""Gradients of ``{op}(x, y)``, as PyTorch's formula: the {word} operand
    gets ``grad``, the other +0; at a tie (equal values, -0 and +0 included) each gets
    ``grad / 2``; where either is NaN both get ``grad``. Each summed over its copies and
    rounded once (``grad / 2`` of a subnormal rounds, once).

    >>> import exactref as er
    >>> g = er.{op}.backward(er.asarray([1.0, 0.0, 3.0], "float32"),
    ...                     er.asarray([1.0, -0.0, 2.0], "float32"),
    ...                     er.asarray([1.0, 1.0, 1.0], "float32"))
    >>> g.rounded.grad_x.tolist(), g.rounded.grad_y.tolist()
    {([0.5, 0.5, 1.0], [0.5, 0.5, 0.0]) if larger else ([0.5, 0.5, 0.0], [0.5, 0.5, 1.0])}
    """
    return backward


def _fminmax_backward(op, larger: bool):
    def backward(x, y, grad, *, dtype=None, rounding=_NE, overflow=None) -> Gradients:
        bw = _Pass(op, {"x": x, "y": y}, grad, dtype, rounding, overflow)
        s, unordered = _order(bw.parts["x"][0], bw.parts["y"][0], bw.shape)
        ynan = np.isnan(np.broadcast_to(np.asarray(bw.parts["y"][0].broadcast(bw.shape).shadow,
                                                   dtype=np.float64), (bw.size,)))
        to_x = (~unordered & ((s >= 0) if larger else (s <= 0))) | ynan
        return _result(bw.selected("x", to_x), bw.selected("y", ~to_x))

    rel = ">=" if larger else "<="
    backward.__name__ = f"_{op}_backward"
    backward.__doc__ = f"""Gradients of ``{op}(x, y)``, as PyTorch's formula: ``x`` gets ``grad``
    where ``x {rel} y`` or ``y`` is NaN, ``y`` gets it everywhere else (a tie goes to ``x``
    whole, not halved as in ``{'maximum' if larger else 'minimum'}``); the other gets +0. Each
    summed over its copies and rounded once.

    >>> import exactref as er
    >>> g = er.{op}.backward(er.asarray([1.0, float("nan")], "float32"),
    ...                     er.asarray([1.0, 2.0], "float32"), er.asarray([1.0, 1.0], "float32"))
    >>> g.rounded.grad_x.tolist(), g.rounded.grad_y.tolist()
    ([1.0, 0.0], [0.0, 1.0])
    """
    return backward


_maximum_backward = _minmax_backward("maximum", True)
_minimum_backward = _minmax_backward("minimum", False)
_fmax_backward = _fminmax_backward("fmax", True)
_fmin_backward = _fminmax_backward("fmin", False)


# ------------------------------------------------------------------------------- clamp
def _clamp_backward(x, min=None, max=None, grad=None, *, dtype=None, rounding=_NE,
                    overflow=None) -> Gradients:
    """Gradients of ``clamp(x, min, max)``, as PyTorch's ``clamp_backward`` and
    ``clamp_backward_min_max``: ``x`` gets ``grad`` where ``min <= x <= max`` (both bounds
    inclusive; a missing bound is no condition), ``min`` where ``x < min < max`` (``x < min``
    without ``max``), ``max`` where ``x > max`` or ``max < min``; each gets +0 elsewhere, and a
    NaN anywhere in a comparison makes it false. So with ``min == max`` and ``x`` below
    them, nobody gets ``grad``, as in PyTorch. Array bounds are summed over their copies; a scalar
    bound gets no gradient. The Result's ``grad_y`` is ``grad_min`` (also ``.grad_min``), and
    ``.grad_max`` is its own.

    Note: the comparisons are exact; PyTorch compares a Python-scalar bound after converting it
    to ``x``'s dtype (``clamp(float16(0.1), min=0.1)`` passes ``grad`` there, not here).

    >>> import exactref as er
    >>> x = er.asarray([-1.0, 0.0, 0.5, 1.0, 2.0], "float32")
    >>> g = er.clamp.backward(x, 0.0, 1.0, er.asarray([1.0] * 5, "float32"))
    >>> g.rounded.tolist()
    [0.0, 1.0, 1.0, 1.0, 0.0]
    """
    if grad is None:
        raise TypeError("clamp.backward(x, min, max, grad) needs grad")
    if min is None and max is None:
        raise TypeError("clamp.backward needs min or max (or both), as clamp does")
    bw = _Pass("clamp", {"x": x, "min": min, "max": max}, grad, dtype, rounding, overflow)
    X = bw.parts["x"][0]
    to_x = np.ones(bw.size, dtype=bool)
    to_min = to_max = None
    if min is not None:
        s, un = _order(X, bw.parts["min"][0], bw.shape)
        to_x &= ~un & (s >= 0)
        to_min = ~un & (s < 0)
    if max is not None:
        s, un = _order(X, bw.parts["max"][0], bw.shape)
        to_x &= ~un & (s <= 0)
        to_max = ~un & (s > 0)
    if min is not None and max is not None:
        s, un = _order(bw.parts["min"][0], bw.parts["max"][0], bw.shape)
        to_min &= ~un & (s < 0)
        to_max |= ~un & (s > 0)
    g_min = bw.selected("min", to_min) if to_min is not None else None
    g_max = bw.selected("max", to_max) if to_max is not None else None
    res = Gradients(grad_x=bw.selected("x", to_x), grad_min=g_min, grad_max=g_max)
    res.grad_y = g_min  # clamp's second operand is min
    return res


# --------------------------------------------------------------------------------- abs
def _abs_backward(x, grad, *, dtype=None, rounding=_NE, overflow=None) -> Gradients:
    """Gradient of ``abs(x)``: ``grad * sgn(x)`` (PyTorch's formula).

    Real ``x``: ``grad * sign(x)``, exact; ``sign(±0) = +0`` (the subgradient 0, so ``grad = inf``
    there gives NaN) and ``sign(NaN) = 0``, as PyTorch's ``sgn``. Complex ``x``: ``grad * x /
    |x|``, each part ``grad * re / sqrt(re^2 + im^2)`` irrational: rounded once by exact
    comparisons (``sign(v - c)`` from ``(grad re)^2 - c^2 (re^2 + im^2)``). At ``x = 0`` it is
    ``grad * (+0)`` and +0; at a non-finite ``x``, NaN parts (as PyTorch).

    >>> import exactref as er
    >>> er.abs.backward(er.asarray([-2.0, 0.0, 3.0], "float32"),
    ...                 er.asarray([1.0, 1.0, 1.0], "float32")).rounded.tolist()
    [-1.0, 0.0, 1.0]
    >>> er.abs.backward(er.asarray([3 + 4j], "complex64"),
    ...                 er.asarray([1.0], "float32")).rounded.tolist()
    [(0.6000000238418579+0.800000011920929j)]
    """
    bw = _Pass("abs", {"x": x}, grad, dtype, rounding, overflow)
    t = bw.target("x")
    if t is None:
        return _result(None)
    o, fmt, mode, rule = t
    X = bw.parts["x"]
    if not o.is_complex:
        sgn = np.sign(np.nan_to_num(bw.flat(X[0]), nan=0.0)) + 0.0  # +0 at ±0 and NaN
        return _result(bw.selected("x", np.ones(bw.size, dtype=bool), sgn))
    g = bw.flat(bw.G[0])
    a, b = bw.flat(X[0]), bw.flat(X[1])
    finite = np.isfinite(a) & np.isfinite(b)
    origin = finite & (a == 0) & (b == 0)
    gs = _shadow(g)
    rho = [(X[0], X[0]), (X[1], X[1])]
    flat_g = bw.G[0].broadcast(bw.shape)
    exacts = []
    with np.errstate(invalid="ignore"):
        for k, (p, op) in enumerate(((a, X[0]), (b, X[1]))):
            shadow = gs * _shadow(p)
            shadow = np.where(origin, gs * 0.0 if k == 0 else np.where(np.isfinite(g), 0.0,
                                                                        np.nan), shadow)
            shadow = np.where(finite, shadow, np.nan)

            def approx(idx, p=p):
                mg, eg = _scaled(g[idx])
                mp, ep = _scaled(p[idx])
                top = np.maximum(_scaled(a[idx])[1], _scaled(b[idx])[1])
                r = np.hypot(np.ldexp(a[idx], -top), np.ldexp(b[idx], -top))
                return mg * mp / r, eg + ep - top

            num = [(flat_g, op.broadcast(bw.shape))]
            rad = [tuple(f.broadcast(bw.shape) for f in t) for t in rho]
            exacts.append(_over_root(num, rad, shadow, approx))
    nparts = 2 if fmt.kind == "complex" else 1
    return _result(bw.rounded(o, fmt, mode, rule, exacts[:nparts]))


# ------------------------------------------------------------------------------ divide
def _divide_backward(x, y, grad, *, rounding_mode=None, dtype=None, rounding=_NE,
                     overflow=None) -> Gradients:
    """Gradients of ``divide(x, y)``: ``grad_x = grad / conj(y)`` and ``grad_y = -grad *
    conj(x / y) / conj(y)`` (PyTorch: ``-grad * ((x / y) / y).conj()``), each summed over the
    copies of its operand and rounded once.

    Real operands: per copy the quotients ``grad / y`` and ``-grad x / (y y)``; complex: their
    parts, ``grad y / |y|^2`` and ``-grad conj(x) y^2 / |y|^4``. An element of one copy is one
    quotient of sums of products (the engine's kernel, vectorized); an element that sums ``k``
    copies is the rational sum of its ``k`` quotients, rounded once: ``k`` integer divisions
    in Python (a few microseconds a copy), exact rational arithmetic on integers of up to about
    ``106 k`` bits where the sum lies on a rounding boundary or cancels. Specials follow IEEE arithmetic on these quotients, which for real
    operands are PyTorch's: ``y = ±0`` gives ±inf, ``0 / 0`` and ``inf / inf`` NaN.
    ``rounding_mode`` ``"floor"`` or ``"trunc"``: zero gradients (+0), as PyTorch's.

    >>> import exactref as er
    >>> g = er.divide.backward(er.asarray([1.0, 3.0], "float32"), er.asarray([3.0, -2.0], "float32"),
    ...                        er.asarray([1.0, 1.0], "float32"))
    >>> g.rounded.grad_x.tolist(), g.rounded.grad_y.tolist()
    ([0.3333333432674408, -0.5], [-0.1111111119389534, -0.75])
    """
    _check_mode(rounding_mode)
    bw = _Pass("divide", {"x": x, "y": y}, grad, dtype, rounding, overflow)
    if rounding_mode is not None:
        return _result(bw.zeros("x"), bw.zeros("y"))
    X, Y, G = bw.parts["x"], bw.parts["y"], bw.G
    if bw.complex:
        num_x, den_x = mul_parts(G, Y, True), square_sum(Y)
        num_y = times_parts(times_parts(mul_parts(_neg_parts(G), conj(X), True), Y, True), Y,
                            True)
        den_y = _fourth(Y)
    else:
        num_x, den_x = [Part([(G[0],)])], Part([(Y[0],)])
        num_y, den_y = [Part([(neg(G[0]), X[0])])], Part([(Y[0], Y[0])])
    return _result(bw.quotients("x", num_x, den_x), bw.quotients("y", num_y, den_y))


def _reciprocal_backward(x, grad, *, dtype=None, rounding=_NE, overflow=None) -> Gradients:
    """Gradient of ``reciprocal(x)``: ``-grad * conj(1/x)^2 = -grad / conj(x)^2`` (PyTorch:
    ``-grad * (r * r).conj()``, ``r = 1/x`` rounded), one quotient rounded once: real
    ``-grad / (x x)``, complex ``-grad x^2 / |x|^4`` per part. ``x = ±0`` gives ``-sign(grad)
    inf``, ``x = ±inf`` a zero of ``-grad``'s sign.

    >>> import exactref as er
    >>> er.reciprocal.backward(er.asarray([3.0, -0.0], "float32"),
    ...                        er.asarray([1.0, 1.0], "float32")).rounded.tolist()
    [-0.1111111119389534, -inf]
    """
    bw = _Pass("reciprocal", {"x": x}, grad, dtype, rounding, overflow)
    X, G = bw.parts["x"], bw.G
    if bw.complex:
        num = times_parts(mul_parts(_neg_parts(G), X, True), X, True)
        den = _fourth(X)
    else:
        num, den = [Part([(neg(G[0]),)])], Part([(X[0], X[0])])
    return _result(bw.quotients("x", num, den))


# ------------------------------------------------------------------------ sqrt, rsqrt
def _sqrt_backward(x, grad, *, dtype=None, rounding=_NE, overflow=None) -> Gradients:
    """Gradient of ``sqrt(x)``: ``grad / (2 conj(sqrt(x)))`` (PyTorch's formula, with the
    square root rounded first), exact and rounded once.

    Real ``x``: ``v = grad / sqrt(4x)``, rounded by exact comparisons with candidates ``c`` of
    ``v``'s sign: ``v > c`` exactly when ``grad^2 > 4 c^2 x`` (for ``c > 0``). Specials as
    PyTorch's: ``x = ±0`` gives ``±sign(grad) inf`` (NaN for a zero ``grad``), ``x = +inf`` a
    zero of ``grad``'s sign, ``x < 0`` NaN. Complex ``x``: each part of ``grad sqrt(x) /
    (2|x|)``, a nested radical, compared exactly in Fractions (slow: one to two milliseconds an
    element); ``x = 0`` or a non-finite ``x`` or ``grad`` give NaN parts.

    >>> import exactref as er
    >>> er.sqrt.backward(er.asarray([4.0, 2.0, 0.0], "float32"),
    ...                  er.asarray([1.0, 1.0, 1.0], "float32")).rounded.tolist()
    [0.25, 0.3535533845424652, inf]
    """
    bw = _Pass("sqrt", {"x": x}, grad, dtype, rounding, overflow)
    t = bw.target("x")
    if t is None:
        return _result(None)
    o, fmt, mode, rule = t
    X, G = bw.parts["x"], bw.G
    if o.is_complex:
        exacts = _complex_sqrt_grad(bw.flat(G[0]), bw.flat(G[1]), bw.flat(X[0]),
                                    bw.flat(X[1]))
        return _result(bw.rounded(o, fmt, mode, rule, exacts[:2 if fmt.kind == "complex"
                                                             else 1]))
    g, xv = bw.flat(G[0]), bw.flat(X[0])
    with np.errstate(all="ignore"):
        shadow = _shadow(g) / (2 * np.sqrt(_shadow(xv)))

    def approx(idx):
        mg, eg = _scaled(g[idx])
        mx, ex = _even_scaled(xv[idx])
        return mg / (2 * np.sqrt(mx)), eg - ex // 2

    four = ExactPart.from_scalar(4.0).broadcast(bw.shape)
    fg, fx = G[0].broadcast(bw.shape), X[0].broadcast(bw.shape)
    ex = _over_root([(fg,)], [(four, fx)], shadow, approx)
    return _result(bw.rounded(o, fmt, mode, rule, [ex] + [ExactArray.zeros((bw.size,))] * (
        fmt.kind == "complex")))


def _rsqrt_backward(x, grad, *, dtype=None, rounding=_NE, overflow=None) -> Gradients:
    """Gradient of ``rsqrt(x)``: ``-grad * rsqrt(x)^3 / 2 = -grad / (2 x sqrt(x))`` (PyTorch:
    ``-0.5 * grad * r.pow(3)``, ``r`` rounded first), exact and rounded once: ``v = -grad /
    sqrt(4 x^3)``, decided by exact comparisons (``v > c > 0`` exactly when ``grad < 0`` and
    ``grad^2 > 4 c^2 x^3``). Specials as PyTorch's: ``x = +0`` gives ``-sign(grad) inf``,
    ``x = -0`` ``+sign(grad) inf`` (``rsqrt(-0) = -inf``), ``x = +inf`` a zero of ``-grad``'s
    sign, ``x < 0`` NaN. Complex operands are not supported (nor is their ``rsqrt``).

    >>> import exactref as er
    >>> er.rsqrt.backward(er.asarray([4.0, 2.0], "float32"),
    ...                   er.asarray([1.0, 1.0], "float32")).rounded.tolist()
    [-0.0625, -0.1767766922712326]
    """
    bw = _Pass("rsqrt", {"x": x}, grad, dtype, rounding, overflow)
    t = bw.target("x")
    if t is None:
        return _result(None)
    o, fmt, mode, rule = t
    if bw.complex:
        raise OpTypeError("rsqrt.backward does not take complex operands (nor does rsqrt); "
                          "differentiate sqrt, then reciprocal")
    X, G = bw.parts["x"], bw.G
    g, xv = bw.flat(G[0]), bw.flat(X[0])
    with np.errstate(all="ignore"):
        shadow = -0.5 * _shadow(g) * (1.0 / np.sqrt(_shadow(xv))) ** 3

    def approx(idx):
        mg, eg = _scaled(g[idx])
        mx, ex = _even_scaled(xv[idx])
        return -mg / (2 * mx * np.sqrt(mx)), eg - 3 * (ex // 2)

    four = ExactPart.from_scalar(4.0).broadcast(bw.shape)
    fg, fx = G[0].broadcast(bw.shape), X[0].broadcast(bw.shape)
    ex = _over_root([(neg(fg),)], [(four, fx, fx, fx)], shadow, approx)
    return _result(bw.rounded(o, fmt, mode, rule, [ex]))


with_backward(divide, _divide_backward)
with_backward(reciprocal, _reciprocal_backward)
with_backward(sqrt, _sqrt_backward)
with_backward(rsqrt, _rsqrt_backward)
with_backward(abs_, _abs_backward)
with_backward(negative, _negative_backward)
with_backward(maximum, _maximum_backward)
with_backward(minimum, _minimum_backward)
with_backward(fmax, _fmax_backward)
with_backward(fmin, _fmin_backward)
with_backward(clamp, _clamp_backward)

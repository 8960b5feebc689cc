"""Where each real function is hard (its record's ``audit_inputs``): the regions the audit's
corpus draws from, built from a format's edges in 160-bit MPFR arithmetic (private; the
declarations of :mod:`.functions` use them)."""

from __future__ import annotations

from ..ops import Region

__all__ = ["ONE", "PI_HALVES", "SMALL", "SUBNORMAL", "atan2_pairs", "both", "mp_gelu",
           "mp_gelu_tanh", "mp_gelu_u", "mp_logit", "mp_mish", "mp_silu", "near", "pow_pairs",
           "span", "underflow"]


class _Edges:
    """The real numbers a format's hard regions are made of, as 160-bit MPFR numbers (``m`` is
    gmpy2): its largest finite value, smallest normal and subnormal, half the subnormal (below
    it a result rounds to zero), and the tail below 1 under which ``1 - tail`` rounds to 1."""

    def __init__(self, m, c):
        self.m, self.p = m, c.precision
        self.max, self.normal = m.mpfr(c.max_finite), m.exp2(c.emin)
        self.sub = m.exp2(c.emin - c.precision + 1)
        self.zero, self.tail = self.sub / 2, m.exp2(-c.precision - 1)

    def solve(self, f, y, lo, hi):
        """The x in [lo, hi] where the monotone ``f(x) = y``, by bisection."""
        lo, hi, up = self.m.mpfr(lo), self.m.mpfr(hi), f(self.m.mpfr(hi)) > f(self.m.mpfr(lo))
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if (f(mid) < y) == up else (lo, mid)
        return lo


def _at(points):
    """A region's ``at``: ``points(m, e)`` (gmpy2 and the format's :class:`_Edges`) as
    float64, each number or row rounded to nearest from 160 bits."""

    def at(c):
        import gmpy2

        with gmpy2.context(gmpy2.get_context(), precision=160, emin=-2**20, emax=2**20):
            return [tuple(map(float, r)) if isinstance(r, tuple) else float(r)
                    for r in points(gmpy2, _Edges(gmpy2, c))]

    return at


def _near(name, points, ulps=4):
    return Region(name, _at(points), "near", ulps)


def _span(name, points):
    return Region(name, _at(points), "span")


def _both(xs):
    """``xs`` and their negations."""
    return list(xs) + [-x for x in xs]


def _pi_convergents(m, e):
    """Huge floats nearest multiples of pi/2 (their sine, cosine or tangent almost zero or a
    pole): for 2**j at every scale, ``h 2**j`` with ``h / k`` the last convergent of (pi/2) /
    2**j's continued fraction whose numerator ``h`` is below ``2**p``."""
    top = int(m.log2(e.max)) - e.p + 1
    out = []
    with m.context(m.get_context(), precision=2 * (e.p + max(top, 0)) + 64):
        for j in range(0, max(top, 0) + 1, max(1, top // 16)):
            x, h0, h1, best = m.const_pi() / 2 / m.exp2(j), 1, 0, 0
            while True:
                a = int(m.floor(x))
                h0, h1 = a * h0 + h1, h0
                if h0 >= 2**e.p or x == a:
                    break
                best, x = h0, 1 / (x - a)
            out += [m.mpfr(best) * m.exp2(j)] if best else []
    return _both(out)


_SMALL = _span("small arguments", lambda m, e: [(m.exp2(-e.p - 2), m.exp2(2 - e.p // 2)),
                                                (-m.exp2(-e.p - 2), -m.exp2(2 - e.p // 2))])
_SUBNORMAL = _span("subnormal arguments", lambda m, e: [(e.sub, e.normal),
                                                       (-e.sub, -e.normal)])
_ONE = (_near("one", lambda m, e: [m.mpfr(1)]),
        _span("around one", lambda m, e: [(1 - m.exp2(-e.p // 2), 1 + m.exp2(-e.p // 2))]))
_PI_HALVES = (_near("multiples of pi/2", lambda m, e: _both([k * m.const_pi() / 2 for k in
                                                              range(1, 17)])),
              _near("huge, near multiples of pi/2", _pi_convergents))


def _underflow(name, inverse, lo=None, hi=None):
    """The regions where ``f``'s result underflows, given ``inverse(m, e, t)``: the x where
    ``f(x) = t``, at the half subnormal (zero below), the subnormal and the smallest normal,
    and the subnormal results between."""
    return (_near(name, lambda m, e: [inverse(m, e, t) for t in (e.zero, e.sub, e.normal)]),
            _span(f"{name}: subnormal results", lambda m, e: [(inverse(m, e, e.zero),
                                                               inverse(m, e, e.normal))]))


def _logit(m, t):
    return m.log(t / (1 - t))


def _silu(m, x):
    return x / (1 + m.exp(-x))


def _gelu(m, x):
    return x * m.erfc(-x / m.sqrt(2)) / 2


def _gelu_u(m, x):
    return m.sqrt(2 / m.const_pi()) * (x + m.mpfr("0.044715") * x**3)


def _gelu_tanh(m, x):  # 0.5 x (1 + tanh(u)) = x sigmoid(2u), without cancellation
    return x / (1 + m.exp(-2 * _gelu_u(m, x)))


def _mish(m, x):
    return x * m.tanh(m.log1p(m.exp(x)))


def _atan2_pairs(m, e):
    """(y, x): one operand tiny beside the other (angles near 0, pi/2 and pi), and angles that
    underflow."""
    rows = []
    for r in (m.mpfr(1), m.mpfr(1.5), e.max / 4, e.normal * 2**e.p):
        for t in (m.exp2(1 - e.p), m.exp2(-1 - e.p), m.exp2(-2 * e.p)):
            rows += [(t * r, r), (t * r, -r), (-t * r, -r), (r, t * r), (-r, t * r)]
    return rows + [(3 * e.sub, m.mpfr(1.5)), (e.normal, m.exp2(e.p)), (-e.normal, m.mpfr(3))]


def _pow_pairs(m, e, integral):
    """(x, y): powers that overflow, underflow to zero, to a subnormal or to the smallest
    normal, for a few bases (near 1 too); ``integral``: the exponents floor and ceil of those,
    the bases of both signs."""
    rows = []
    for b in (2, 3, 10, 0.5, 1.5, 1 + m.exp2(-e.p // 2), 1 - m.exp2(-e.p // 2)):
        b = m.mpfr(b)
        for t in (e.max, e.zero, e.sub, e.normal):
            y = m.log(t) / m.log(b)
            rows += [(b, m.floor(y)), (b, m.ceil(y)), (-b, m.floor(y)), (-b, m.ceil(y))] if \
                integral else [(b, y)]
    return rows


# the names the declarations use
near, span, both, underflow = _near, _span, _both, _underflow
SMALL, SUBNORMAL, ONE, PI_HALVES = _SMALL, _SUBNORMAL, _ONE, _PI_HALVES
# (the real functions in MPFR, named apart from the ops)
mp_logit, mp_silu, mp_gelu, mp_gelu_u = _logit, _silu, _gelu, _gelu_u
mp_gelu_tanh, mp_mish = _gelu_tanh, _mish
atan2_pairs, pow_pairs = _atan2_pairs, _pow_pairs

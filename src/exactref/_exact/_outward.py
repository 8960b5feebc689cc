"""Outward float64 arithmetic: the one toolbox every rigorous float64 bound in exactref uses.

A bound evaluated in float64 is only a bound once each operation's rounding is accounted
for. This module holds the pieces, each rounded outward: the float64 neighbours
(:func:`up`, :func:`down`), Higham's ``gamma_k`` (:func:`gamma_up`), factors ``(1 +- u)**k``
kept apart from 1 (:func:`pow1p_m1_up`, :func:`pow1p_up`, :func:`pow1m_dn`,
:func:`compose_up`, :func:`inflate`, :func:`deflate`), and the slack policy
(:func:`slack_up`, :func:`slack_dn`: a margin proportional to the float64 operations a bound
took). :data:`MARGIN` is the older blanket margin, named here once: ``margin_up(x)`` is
``x (1 + 2**-40)``, which some enclosures still apply (bit for bit as before); new code counts
its operations with :func:`slack_up` instead.
"""

from __future__ import annotations

import numpy as np

__all__ = ["U64", "MARGIN", "up", "down", "gamma_up", "pow1p_m1_up", "pow1p_up", "pow1m_dn",
           "compose_up", "inflate", "deflate", "slack_up", "slack_dn", "margin_up"]

# ------------------------------------------------------------ rigorous float64 evaluation
# The bounds are evaluated in float64. Slack policy: a bound computed by ``m`` float64
# operations rounded to nearest (+, *, / and sqrt of nonnegative operands: relative error at
# most U64 each; count 4 for a libm call, exp, log or log1p, whose error is under 1 ulp) is
# within a factor ``(1 +- U64)**m`` of the exact expression, so the exact value is at most
# ``computed / (1 - U64)**m <= computed (1 + 2 m U64)`` (for ``m U64 <= 1/2``), which
# :func:`slack_up` returns rounded up. A subtraction is evaluated with one end rounded
# outward (``down(a - up(b))``), never through this factor. Factors ``(1 + u)**k`` are
# never evaluated as written: ``1 + 2**-53`` is 1 in float64, so ``(1 + 2**-53)**k == 1``
# for every k; :func:`pow1p_m1_up` keeps the small part apart.

#: float64's unit roundoff: the relative error of one float64 operation rounded to nearest
U64 = 2.0 ** -53


def up(x):
    """The next float64 above ``x``: an upper bound of a value ``x`` is a rounding to nearest
    of (a rounded-to-nearest float64 is below its next float64 neighbour up).

    >>> up(1.0) == 1 + 2.0**-52
    True
    """
    return _scalar(np.nextafter(x, np.inf))


def _scalar(v):
    """A 0-d result as a Python float (arrays unchanged)."""
    return float(v) if np.ndim(v) == 0 else v


def down(x):
    """The next float64 below ``x`` (a lower bound of the value ``x`` is a rounding of).

    >>> down(1.0) == 1 - 2.0**-53
    True
    """
    return _scalar(np.nextafter(x, -np.inf))


def _times_up(k, u):
    """``k u`` rounded up: exact for counts ``k < 2**53`` and powers of two ``u`` (units of
    roundoff are), else the next float64 up (either may be an array)."""
    ku = k * u
    if np.all(np.frexp(u)[0] == 0.5) and np.all(np.asarray(k) < 2.0**53) and np.all(
            (ku == 0) | (np.abs(ku) >= 2.0**-1022)):
        return ku
    return up(ku)


def gamma_up(k, u):
    """An upper bound of Higham's ``gamma_k = k u / (1 - k u)`` (inf where ``k u >= 1``), the
    bound of ``|prod (1 + d_i)**(+-1) - 1|`` over ``k`` roundings ``|d_i| <= u`` (Higham,
    *Accuracy and Stability of Numerical Algorithms*, Lemma 3.1). ``k``: a count or an array
    of them. Three float64 operations, each rounded outward.

    >>> from fractions import Fraction
    >>> u = 2.0**-53
    >>> Fraction(float(gamma_up(3, u))) >= Fraction(3, 2**53 - 3)
    True
    >>> float(gamma_up(3, u)) / (3 * u)  # a few float64 ulps above 3u, not 2**-40 above it
    1.0000000000000007
    >>> float(gamma_up(2**53, u))
    inf
    """
    k = np.asarray(k, dtype=np.float64)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        ku = _times_up(k, u)
        den = down(1 - ku)
        g = np.where(ku < 1, up(ku / np.where(den > 0, den, 1.0)), np.inf)
        g = np.where(k > 0, g, 0.0)
    return _scalar(g)


def pow1p_m1_up(u, k):
    """An upper bound of ``(1 + u)**k - 1`` (``u >= 0``, ``k >= 0``, an integer or not): at
    most ``e**(k u) - 1 <= k u / (1 - k u) = gamma_k``, which :func:`gamma_up` rounds up. The
    small part alone: ``(1 + 2**-53)**k - 1`` evaluated in float64 is 0 for every ``k``.
    Where ``k u`` nears or passes 1, ``e**(k u) - 1`` (by ``expm1``, with its margin) is the
    smaller bound, and finite.

    >>> u = 2.0**-53
    >>> (1 + u) ** 9000 - 1  # the float64 evaluation this replaces
    0.0
    >>> float(pow1p_m1_up(u, 9000)) / (9000 * u) < 1 + 2.0**-40
    True
    >>> pow1p_m1_up(2.0**-24, 2**25) < 6.4  # e**2 - 1 = 6.389...
    True
    """
    k = np.asarray(k, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        # e**x - 1 for x = k u rounded up; expm1 is within an ulp (2 U64), so 2 operations
        big = slack_up(np.expm1(_times_up(k, u)), 2)
    return _scalar(np.fmin(gamma_up(k, u), big))


def pow1p_up(u, k):
    """An upper bound of ``(1 + u)**k``: ``1 + pow1p_m1_up(u, k)`` rounded up. Where the
    factor multiplies a bound, ``inflate(x, pow1p_m1_up(u, k))`` keeps more of it.

    >>> pow1p_up(2.0**-53, 3) > 1
    True
    """
    return up(1 + pow1p_m1_up(u, k))


def pow1m_dn(u, k):
    """A lower bound of ``(1 - u)**k`` (``0 <= u <= 1``, ``k >= 0``): ``1 - k u`` (Bernoulli's
    inequality), rounded down, and 0 where that is negative.

    >>> 1 - 5 * 2.0**-53 <= pow1m_dn(2.0**-53, 4) <= 1 - 4 * 2.0**-53
    True
    """
    k = np.asarray(k, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        v = np.maximum(down(1 - _times_up(k, u)), 0.0)
    return _scalar(v)


def compose_up(*ds):
    """An upper bound of ``prod (1 + d_i) - 1`` for ``d_i >= 0`` (arrays or floats), folded as
    ``a + b + a b`` (3 operations each, rounded up): ``1 + d`` is never formed.

    >>> compose_up(2.0**-53, 2.0**-53) >= 2 * 2.0**-53
    True
    """
    out = 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        for d in ds:
            out = slack_up(out + d + out * d, 3)
    return _scalar(out)


def inflate(x, d):
    """An upper bound of ``x (1 + d)`` for ``x, d >= 0`` (arrays): ``x + x d``, each step
    rounded up, so a ``d`` far below float64's ulp still counts.

    >>> inflate(1.0, 2.0**-60) > 1
    True
    """
    with np.errstate(over="ignore", invalid="ignore"):
        return up(x + up(x * d))


def deflate(x, d):
    """A lower bound of ``x (1 - d)`` for ``x, d >= 0``: ``x - x d`` rounded down.

    >>> deflate(1.0, 2.0**-60) < 1
    True
    """
    with np.errstate(over="ignore", invalid="ignore"):
        return down(x - up(x * d))


def slack_up(x, ops: int):
    """An upper bound of the exact value of an expression of nonnegative terms that float64
    evaluated as ``x`` by ``ops`` operations rounded to nearest: ``x (1 + 2 ops U64)``,
    rounded up (the slack policy above: a margin proportional to the operations, not a
    blanket ``2**-40``).

    >>> (slack_up(1.0, 10) - 1) / 2.0**-53  # 20 float64 ulps of 2**-53, one more rounding
    22.0
    """
    with np.errstate(over="ignore", invalid="ignore"):
        return up(x * (1 + ops * 2.0 ** -52))


def slack_dn(x, ops: int):
    """A lower bound of the exact value of an expression of nonnegative terms that float64
    evaluated as ``x`` by ``ops`` operations rounded to nearest: ``x (1 - 2 ops U64)``,
    rounded down (for ``x >= 0``).

    >>> slack_dn(1.0, 1) < 1
    True
    """
    with np.errstate(over="ignore", invalid="ignore"):
        return down(x * (1 - ops * 2.0 ** -52))


#: The blanket relative margin some float64 enclosures apply (``margin_up``); the slack policy
#: (:func:`slack_up`) replaces it where the operations are counted.
MARGIN = 2.0 ** -40


def margin_up(x):
    """``x (1 + MARGIN)``, evaluated as written (one float64 multiply), for enclosures that
    take the blanket margin.

    >>> margin_up(1.0) == 1 + 2.0**-40
    True
    """
    return x * (1 + MARGIN)

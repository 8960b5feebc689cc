"""Softmax, log-softmax and logsumexp of rows of float64 values, as ExactArrays that round like the
exact values into every format of at most ``bits`` bits, in every mode (private).

For a row ``x`` with largest finite entry ``m`` and ``S = sum_j e**(x_j - m)``:

* ``softmax_i = e**(x_i - m) / S``;
* ``logsumexp = m + log(S) = m + log1p(T)``, ``T = S - 1`` (the entries equal to ``m``
  contribute exactly 1 each: no cancellation in ``S - 1``);
* ``log_softmax_i = (x_i - m) - log(S)``: both terms are <= 0, no cancellation.

Each value is enclosed in interval arithmetic on MPFR (:class:`._mpfr._Iv`'s contexts):
``e**(x_j - m)`` rounded down, its upper end the next number above where MPFR says the result
was inexact (one exponential per distinct ``x_j - m``, shared by every row that has it and by
every output of a row), ``S``'s ends by MPFR's correctly rounded sums (``fsum``) rounded down
and up, quotients and logarithms outward, at a working precision ``W = P + 24`` that doubles
(for the rows left undecided, Ziv's strategy) until each value's round-to-odd at ``P = bits + 2``
bits is decided (:func:`._mpfr._decide`). The differences ``x_j - m`` are exact: float64
where TwoSum says so, else in MPFR at 2200 bits.

Exact values (they would never decide, so they are found first)
--------------------------------------------------------------
By the Lindemann-Weierstrass theorem (Baker's form: for distinct algebraic ``a_1 .. a_n`` the
numbers ``e**a_1 .. e**a_n`` are linearly independent over the algebraic numbers), a sum
``sum_k c_k e**(a_k)`` with distinct rationals ``a_k`` and nonzero rational ``c_k`` is never 0
and, unless it is the single term ``c e**0``, never rational. Group the row's finite entries by
value (the ``-inf`` entries contribute nothing: ``e**-inf = 0``):

* ``softmax_i = 1 / sum_j e**(x_j - x_i)``: the sum has the term ``n_0 e**0`` (the entries equal
  to ``x_i``) and a term ``n_a e**a`` (``n_a >= 1``) for every other value: it is rational only
  when no finite entry differs from ``x_i``, and then it is ``1/k``, ``k`` the number of finite
  entries. The ``-inf`` entries' values are exactly ``+0``.
* ``logsumexp = r`` rational would mean ``e**r - sum_a n_a e**a = 0``: impossible unless the
  terms cancel, that is ``r`` is the only value and its count is 1: the row has exactly one
  entry above ``-inf``, and logsumexp is that entry.
* ``log_softmax_i = x_i - logsumexp`` is rational exactly when logsumexp is: one finite entry,
  whose value is ``0`` (``+0``); the ``-inf`` entries give ``-inf``.

Every other value is irrational and Ziv's loop ends; a row still undecided at ``2**15`` bits is
an exact case this argument missed, and raises an AssertionError naming it.

Special rows (NaN propagates; see docs/softmax.md for PyTorch's, which differ where its formula
gives NaN by accident):

* a NaN entry: every output NaN;
* every entry ``-inf`` (or no entry): softmax and log_softmax NaN (0/0: no limit), logsumexp
  ``-inf`` (``log 0``);
* ``+inf`` entries: logsumexp ``+inf``; softmax and log_softmax take their limit where it
  exists: one ``+inf`` entry gives 1 (log_softmax ``+0``) there and ``+0`` (``-inf``)
  elsewhere; two or more ``+inf`` entries have no limit (it depends on how they grow): NaN.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ._mpfr import (
    _W0,
    _W_MAX,
    _context,
    _decide_strict,
    _from_objects,
    _g,
    _round_fraction,
    _Values,
)

__all__ = ["OPS", "LOGSUMEXP", "LOG_SOFTMAX", "LongRow", "Normalization", "RowExps", "SOFTMAX",
           "evaluate_rows"]

_NAN, _INF = math.nan, math.inf


@dataclass
class RowExps:
    """What the tolerance models read, per row of ``(M, K)`` inputs: ``m`` the largest finite
    entry (``-inf`` where none), ``lo``/``hi`` float64 bounds of ``e**(x_j - m)`` (0 for
    ``-inf`` entries; NaN in rows that are special: a NaN or ``+inf`` entry, or no finite
    one), ``regular`` the rows that are not special."""

    m: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    regular: np.ndarray


def _unique_rows(X):
    """Distinct rows (by bit pattern) and the inverse index."""
    M, K = X.shape
    if M <= 1 or K == 0:
        return X, np.arange(M)
    v = np.ascontiguousarray(X).view(np.dtype((np.void, 8 * K))).reshape(M)
    _, first, inv = np.unique(v, return_index=True, return_inverse=True)
    return X[first], inv.reshape(-1)


def _exact_differences(x, m):
    """``x - m`` per element (1-D float64 arrays, finite): float64 where exact (TwoSum's error
    is 0), else None (the caller takes MPFR's exact difference)."""
    with np.errstate(over="ignore", invalid="ignore"):
        s = x - m
        bb = s - x
        err = (x - (s - bb)) + (-m - bb)
    return s, np.isfinite(s) & (err == 0)


class _Exps:
    """``e**d`` enclosed at ``W`` bits for the distinct exact differences ``d``: ``lo`` rounded
    down, ``hi`` the next number above where ``lo`` is inexact."""

    def __init__(self, W):
        self.W = W
        self.D, self.U = _context(W, "D"), _context(W, "U")

    def pair(self, d):
        lo = self.D.exp(d)
        return lo, (lo if lo.rc == 0 else self.D.next_above(lo))

    def pairs(self, ds):
        """``(lows, highs)`` for a list of differences (``e**d`` is exact only at ``d = 0``)."""
        los = list(map(self.D.exp, ds))
        his = list(map(self.D.next_above, los))
        for i, lo in enumerate(los):
            if lo.rc == 0:
                his[i] = lo
        return los, his


def _log_sum(D, U, ds, elo, ehi, count_max):
    """``log S = log1p(T)``: the entries equal to m contribute exactly 1 each."""
    rest = [i for i, d in enumerate(ds) if d != 0]
    extra = count_max - 1
    tlo = D.fsum([extra] + [elo[i] for i in rest])
    thi = U.fsum([extra] + [ehi[i] for i in rest])
    return D.log1p(tlo), U.log1p(thi)


def _softmax_from(D, U, m, ds, elo, ehi, a, b):  # a, b: S's ends
    return [D.div(v, b) for v in elo], [U.div(v, a) for v in ehi]


def _log_softmax_from(D, U, m, ds, elo, ehi, a, b):  # a, b: log S's ends
    return [D.sub(d, b) for d in ds], [U.sub(d, a) for d in ds]


def _logsumexp_from(D, U, m, ds, elo, ehi, a, b):  # a, b: log S's ends
    return [D.add(m, a)], [U.add(m, b)]


def _softmax_exact(fin, m):
    return [Fraction(1, fin.size)] * fin.size if np.all(fin == m) else None


def _logsumexp_exact(fin, m):
    return [float(m)] if fin.size == 1 else None


def _log_softmax_exact(fin, m):
    return [0.0] if fin.size == 1 else None


@dataclass(frozen=True)
class Normalization:
    """One op of the kernel, declared: ``per_element`` (a value per entry, else per row),
    ``masked`` the value at a ``-inf`` entry of a regular row, ``at_inf`` at the one ``+inf``
    entry of a row (per row: the row's value), ``empty`` where no entry is finite, ``exact``
    the closed form where the value is rational (the finite entries and their max -> values,
    or None), ``row_exact`` the same from a row's summary (the count of finite entries, whether
    they are all equal, their max -> the one value of every finite entry, or None: for a row
    read in blocks), ``log_sum`` whether the value is formed from ``log S`` (else from the
    row's sum ``S = sum e**(x_j - m)``), ``from_sum`` the enclosures from that row quantity's
    ends; :meth:`ends` the enclosures of a whole row at a working precision."""

    name: str
    per_element: bool
    masked: float
    at_inf: float
    empty: float
    exact: object
    row_exact: object
    log_sum: bool
    from_sum: object

    def ends(self, D, U, m, ds, elo, ehi, count_max):
        a, b = _log_sum(D, U, ds, elo, ehi, count_max) if self.log_sum else \
            (D.fsum(elo), U.fsum(ehi))
        return self.from_sum(D, U, m, ds, elo, ehi, a, b)


#: the three ops of the kernel (each op's registry record holds its own as ``exact``)
SOFTMAX = Normalization("softmax", True, 0.0, 1.0, _NAN, _softmax_exact,
                        lambda n, equal, m: Fraction(1, n) if equal else None, False,
                        _softmax_from)
LOG_SOFTMAX = Normalization("log_softmax", True, -_INF, 0.0, _NAN, _log_softmax_exact,
                            lambda n, equal, m: 0.0 if n == 1 else None, True,
                            _log_softmax_from)
LOGSUMEXP = Normalization("logsumexp", False, 0.0, _INF, -_INF, _logsumexp_exact,
                          lambda n, equal, m: float(m) if n == 1 else None, True,
                          _logsumexp_from)
OPS = {n.name: n for n in (SOFTMAX, LOG_SOFTMAX, LOGSUMEXP)}


def _row_ends(fn, W, m, ds, elo, ehi, count_max):
    """One row's enclosures at working precision ``W``: lists of lower and upper ends (one per
    finite entry; one for logsumexp), ``ds`` the exact differences ``x_j - m`` of the finite
    entries, ``elo``/``ehi`` their exponentials' ends, ``count_max`` how many equal ``m``."""
    return fn.ends(_context(W, "D"), _context(W, "U"), m, ds, elo, ehi, count_max)


def _row_values(fn, W, P, m, ds, elo, ehi, count_max):
    """One row's round-to-odd values at ``W`` (a list; None where undecided). Every value
    here is irrational, so it lies strictly inside its enclosure: an end that is a P-bit
    number (1/S of a row whose other terms are far below, m + log1p(tiny)) decides too."""
    los, his = _row_ends(fn, W, m, ds, elo, ehi, count_max)
    return [_decide_strict(a, b, P) for a, b in zip(los, his, strict=True)]


def _parse(values):
    """``(regular, negative, exponent, limb)`` of MPFR values of at most 64 bits, from gmpy2's
    binary format (see :func:`._mpfr._from_binaries`): ``value = limb * 2**(exponent -
    64)``; ``regular`` False for zeros, specials and any other layout."""
    g = _g()
    bins = [g.to_binary(v) for v in values]
    n = len(bins)
    lens = np.fromiter(map(len, bins), dtype=np.int64, count=n)
    good = lens == 20
    if good.all():
        joined = b"".join(bins)
    else:
        joined = b"".join(b if len(b) == 20 else bytes(20) for b in bins)
    buf = np.frombuffer(joined, dtype=np.uint8).reshape(n, 20)
    flags = buf[:, 1]
    regular = good & ((flags & 0x45) == 0x41)
    expmag = np.ascontiguousarray(buf[:, 8:12]).view("<u4").reshape(-1).astype(np.int64)
    limb = np.ascontiguousarray(buf[:, 12:20]).view("<u8").reshape(-1)
    exponent = np.where(flags & 0x20, -expmag, expmag)
    return regular, (flags & 0x02) != 0, exponent, limb


def _decide_batch(los, his, P):
    """Round-to-odd values at ``P`` bits of values strictly inside ``(lo, hi)`` (MPFR values
    of at most 64 bits), vectorized: ``(decided, negative, N, e)`` with ``value`` rounding like
    ``±N * 2**e``; the undecided (and the far, zero or special) are left to
    :func:`_decide_strict`."""
    ra, na, ea, la = _parse(los)
    rb, nb, eb, lb = _parse(his)
    cut = np.uint64(64 - P)
    ta, tb = la >> cut, lb >> cut
    mask = np.uint64((1 << (64 - P)) - 1)
    decided = ra & rb & (na == nb) & (ea == eb) & (ta == tb) & ((la & mask) != 0) & (
        (lb & mask) != 0) & (np.abs(ea) < 1000)
    N = (ta | np.uint64(1)).astype(np.int64)
    return decided, na, N, ea - P


def _put_decided(values, at, los, his, W: int, P: int, L: int):
    """Store in ``values`` (at the positions ``at``) the round-to-odd value at ``P`` bits of
    every enclosure ``[los[i], his[i]]`` that float64 decides (only at ``W <= 64`` bits), as
    mantissas of ``L`` bits; return the mask of those decided (the rest go to MPFR)."""
    if W > 64:
        return np.zeros(len(los), bool)
    decided, neg, N, e = _decide_batch(los, his, P)
    if decided.any():
        pos = at[decided]
        mant = N[decided] << np.int64(L - P)
        values.mant[pos] = np.where(neg[decided], -mant, mant)
        values.e[pos] = e[decided] - (L - P)
    return decided


def _special_row(fn, x):
    """The values of a row with a NaN or +inf entry or no finite one (a list of floats), else
    None."""
    n = x.size if fn.per_element else 1
    if np.isnan(x).any():
        return [_NAN] * n
    pinf = x == _INF
    if pinf.any():
        if not fn.per_element:
            return [fn.at_inf]
        if np.count_nonzero(pinf) > 1:
            return [_NAN] * n  # no limit
        return [fn.at_inf if p else fn.masked for p in pinf.tolist()]
    if not np.isfinite(x).any():  # every entry -inf, or none
        return [fn.empty] * n
    return None


def _exact_row(fn, x, m):
    """The values of a row whose results are rational (see the module's docstring), else
    None: values for the finite entries only (``-inf`` entries are placed by the caller)."""
    return fn.exact(x[np.isfinite(x)], m)


def evaluate_rows(X, op: str, bits: int = 53, want_exps: bool = False):
    """``op`` (``"softmax"``, ``"log_softmax"``: one value per element; ``"logsumexp"``: one per
    row) of the rows of float64 ``X (M, K)`` as an ExactArray of shape ``(M, K)`` or ``(M,)``
    that rounds like the exact values into every format of at most ``bits`` bits in every
    mode; with ``want_exps``, also the :class:`RowExps` the tolerance models read.

    >>> from exactref._formats import FORMATS
    >>> from exactref._exact import Rounding
    >>> ex = evaluate_rows(np.array([[1.0, 2.0, 3.0], [0.5, 0.5, -np.inf]]), "softmax")
    >>> ex.round(FORMATS["float32"], Rounding.NEAREST_EVEN, "ieee")[0].tolist()
    [0.09003057330846786, 0.2447284758090973, 0.6652409434318542, 0.5, 0.5, 0.0]
    """
    try:
        fn = OPS[op]
    except KeyError:
        raise ValueError(f"unknown op {op!r}; expected one of {', '.join(OPS)}") from None
    X = np.asarray(X, dtype=np.float64)
    M, K = X.shape
    P = bits + 2
    per_row = fn.per_element
    Xu, inv = _unique_rows(X)
    Mu = Xu.shape[0]
    with np.errstate(invalid="ignore"):
        fin = np.isfinite(Xu)
        mu = np.where(fin, Xu, -np.inf).max(axis=1) if K else np.full(Mu, -np.inf)
    results: list = [None] * Mu  # per distinct row: list of values (finite entries or all)
    full = [False] * Mu  # whether results[r] covers every entry (special rows)
    todo = []
    for r in range(Mu):
        x = Xu[r]
        sp = _special_row(fn, x)
        if sp is not None:
            results[r], full[r] = sp, True
            continue
        ex = _exact_row(fn, x, mu[r])
        if ex is not None:
            results[r] = ex
        else:
            todo.append(r)
    # the exact differences x_j - m of the rows left, and one exponential per distinct one
    exps_lo = np.full((Mu, K), np.nan)
    exps_hi = np.full((Mu, K), np.nan)
    regular = np.array([not f for f in full], dtype=bool)
    n_out = K if per_row else 1
    L = max(P, 53)
    values = _Values.empty(Mu * n_out, L)
    slow_idx, slow_obj = [], []  # positions answered by objects (specials, exact, fallbacks)
    if todo:
        rows = np.array(todo)
        Xt = Xu[rows]
        ft = np.isfinite(Xt)
        mt = np.broadcast_to(mu[rows][:, None], Xt.shape)
        s, ok = _exact_differences(np.where(ft, Xt, 0.0), np.where(ft, mt, 0.0))
        ok &= ft
        W = P + _W0
        ex = _Exps(W)
        distinct, where = np.unique(s[ok], return_inverse=True)
        plo, phi = ex.pairs(distinct.tolist())
        owner = np.full(Xt.shape, -1, dtype=np.int64)
        owner[ok] = where.reshape(-1)
        Z = _context(2200, "Z")
        rows_ds, rows_e = [], []
        for a, r in enumerate(todo):
            cols = np.flatnonzero(ft[a])
            own = owner[a, cols]
            if (own >= 0).all():  # every difference exact in float64 (the usual case)
                ds = s[a, cols].tolist()
                q = own.tolist()
                elo, ehi = [plo[i] for i in q], [phi[i] for i in q]
            else:
                m = float(mu[r])
                ds, elo, ehi = [], [], []
                for j, i in zip(cols.tolist(), own.tolist(), strict=True):
                    if i >= 0:
                        ds.append(float(s[a, j]))
                        lo, hi = plo[i], phi[i]
                    else:  # x_j - m not exact in float64
                        d = Z.sub(float(Xt[a, j]), m)
                        ds.append(d)
                        lo, hi = ex.pair(d)
                    elo.append(lo)
                    ehi.append(hi)
            rows_ds.append(ds)
            rows_e.append((elo, ehi))
            if want_exps:
                exps_lo[r] = 0.0
                exps_hi[r] = 0.0
                if (own >= 0).all():  # the distinct values' bounds, converted once below
                    continue
                lo = np.array(list(map(float, elo)))
                hi = np.array(list(map(float, ehi)))
                exps_lo[r, cols] = np.maximum(np.nextafter(lo, -np.inf), 0.0)
                exps_hi[r, cols] = np.nextafter(hi, np.inf)
        if want_exps and len(plo):
            dlo = np.maximum(np.nextafter(np.array(list(map(float, plo))), -np.inf), 0.0)
            dhi = np.nextafter(np.array(list(map(float, phi))), np.inf)
            for a, r in enumerate(todo):
                cols = np.flatnonzero(ft[a])
                own = owner[a, cols]
                if (own >= 0).all():
                    exps_lo[r, cols] = dlo[own]
                    exps_hi[r, cols] = dhi[own]
        # the first pass, every row at once: the ends, then one vectorized decision
        all_lo, all_hi, pos, owner_row = [], [], [], []
        for a, r in enumerate(todo):
            ds = rows_ds[a]
            elo, ehi = rows_e[a]
            cm = sum(1 for d in ds if d == 0)
            los, his = _row_ends(fn, W, float(mu[r]), ds, elo, ehi, cm)
            all_lo.extend(los)
            all_hi.extend(his)
            if per_row:
                pos.append(r * n_out + np.flatnonzero(ft[a]))
                if not ft[a].all():  # -inf entries: softmax +0, log_softmax -inf
                    neg = r * n_out + np.flatnonzero(~ft[a])
                    if fn.masked == 0:
                        values.zero[neg] = True
                    else:
                        values.special[neg] = fn.masked
            else:
                pos.append(np.array([r]))
            owner_row.append(np.full(len(los), a))
        pos = np.concatenate(pos)
        owner_row = np.concatenate(owner_row)
        decided = _put_decided(values, pos, all_lo, all_hi, W, P, L)
        retry = set()
        for i in np.flatnonzero(~decided).tolist():
            got = _decide_strict(all_lo[i], all_hi[i], P)
            if got is None:
                retry.add(int(owner_row[i]))
            else:
                slow_idx.append(int(pos[i]))
                slow_obj.append(got)
        for a in sorted(retry):  # Ziv: the rows left undecided, at twice the precision
            r = todo[a]
            ds = rows_ds[a]
            cm = sum(1 for d in ds if d == 0)
            Ww = 2 * W
            while True:
                if Ww > _W_MAX:
                    raise AssertionError(
                        f"exactref could not decide {op} of the row {_row_text(Xu[r])} with "
                        f"{_W_MAX} bits: an exact case the Lindemann-Weierstrass argument "
                        f"missed; please report it")
                vals = _row_values(fn, Ww, P, float(mu[r]), ds, *_Exps(Ww).pairs(ds), cm)
                if all(v is not None for v in vals):
                    break
                Ww *= 2
            at = (r * n_out + np.flatnonzero(ft[a])) if per_row else [r]
            slow_idx.extend(int(i) for i in at)
            slow_obj.extend(vals)
    for r in range(Mu):
        vals = results[r]
        if vals is None:
            continue
        if full[r] or not per_row:
            at = range(r * n_out, r * n_out + len(vals))
            row = vals
        else:  # an exact row: values of its finite entries, the -inf ones +0 or -inf
            fr = np.isfinite(Xu[r])
            it = iter(vals)
            row = [next(it) if f else fn.masked for f in fr.tolist()]
            at = range(r * n_out, (r + 1) * n_out)
        slow_idx.extend(at)
        slow_obj.extend(_as_object(v, P) for v in row)
        if want_exps and not full[r]:
            _exact_exps(Xu[r], mu[r], exps_lo, exps_hi, r, P)
    if slow_idx:
        values.put(np.array(slow_idx, dtype=np.int64), _from_objects(slow_obj, P))
    idx = (inv[:, None] * n_out + np.arange(n_out)[None, :]).reshape(-1)
    exact = values.take(idx).exact((M, K) if per_row else (M,))
    if not want_exps:
        return exact
    return exact, RowExps(mu[inv], exps_lo[inv], exps_hi[inv], regular[inv])


def _row_text(x) -> str:
    """A row for a message: every entry where there are at most 16, else the first 16."""
    items = x.tolist()
    if len(items) <= 16:
        return repr(items)
    return "[" + ", ".join(map(repr, items[:16])) + f", ... ({len(items)} entries)]"


def _exact_exps(x, m, lo_out, hi_out, r, P):
    """float64 bounds of ``e**(x_j - m)`` for a row answered in closed form."""
    W = P + _W0
    ex = _Exps(W)
    Z = _context(2200, "Z")
    lo_out[r] = 0.0
    hi_out[r] = 0.0
    for j, v in enumerate(x.tolist()):
        if math.isfinite(v):
            a, b = ex.pair(Z.sub(v, float(m)))
            lo_out[r, j] = max(float(np.nextafter(float(a), -np.inf)), 0.0)
            hi_out[r, j] = float(np.nextafter(float(b), np.inf))


def _as_object(v, P):
    """A value as :func:`._mpfr._from_objects` takes it."""
    if isinstance(v, Fraction):
        return _round_fraction(v, P)
    return v


# ------------------------------------------------------------------------------ long rows
class LongRow:
    """One row of ``op`` too long for its MPFR values to be held at once: the values of
    :func:`evaluate_rows` (the same round-to-odd at ``bits + 2`` bits, so the same roundings
    in every mode), computed block by block of at most ``block`` columns.

    Two passes over the row: :meth:`exps` yields each block's float64 bounds of
    ``e**(x_j - m)`` (what the tolerance models read) and adds the block's exponentials into
    the row's sums, enclosed at the first working precision (each block's ``fsum`` rounded
    outward, then the blocks' sums: an enclosure of ``S`` as rigorous as one ``fsum``, if a
    little wider); :meth:`values` yields each block's values, its exponentials computed again.
    A value left undecided takes Ziv's strategy as in :func:`evaluate_rows`: the row's sums at
    twice the precision (one more pass), then its own enclosure. Memory: one block's MPFR
    values at a time, plus the row's float64 entries (held by the caller).

    >>> x = np.array([1.0, 2.0, 3.0, 0.5, 0.5, -np.inf])
    >>> row = LongRow(x, "softmax", 24, block=2)
    >>> bounds = [(s, e) for s, e, lo, hi in row.exps()]
    >>> parts = [ex for s, e, ex, lo, hi in row.values()]
    >>> from exactref._formats import FORMATS
    >>> from exactref._exact import Rounding
    >>> got = np.concatenate([p.round(FORMATS["float32"], Rounding.NEAREST_EVEN, "ieee")[0]
    ...                       for p in parts])
    >>> want = evaluate_rows(x[None], "softmax", 24).round(
    ...     FORMATS["float32"], Rounding.NEAREST_EVEN, "ieee")[0]
    >>> bounds, bool(np.array_equal(got, want))
    ([(0, 2), (2, 4), (4, 6)], True)
    """

    def __init__(self, x, op: str, bits: int, block: int):
        self.fn = OPS[op]
        self.x = x = np.asarray(x).reshape(-1)  # its own dtype: blocks are converted
        self.K = K = x.size
        self.P = bits + 2
        self.W = self.P + _W0
        self.spans = [(s, min(s + block, K)) for s in range(0, K, max(int(block), 1))]
        m, nan, pinf, nfin, low = -_INF, False, 0, 0, _INF
        with np.errstate(invalid="ignore"):
            for s, e in self.spans:  # the row's facts, a block at a time
                xb = np.asarray(x[s:e], dtype=np.float64)
                fin = np.isfinite(xb)
                nan = nan or bool(np.isnan(xb).any())
                pinf += int(np.count_nonzero(xb == _INF))
                k = int(np.count_nonzero(fin))
                if k:
                    nfin += k
                    m = max(m, float(xb[fin].max()))
                    low = min(low, float(xb[fin].min()))
        self.m, self.nfin = m, nfin
        self.special = nan or pinf > 0 or nfin == 0
        self._nan, self._pinf = nan, pinf
        self.exact = None if self.special else self.fn.row_exact(nfin, low == m, m)
        self.regular = not self.special
        self._sums = {}  # working precision -> the row's partial sums (lo, hi, rest lo, hi)
        self._count_max = 0
        self._summed = False

    # ------------------------------------------------------------------ one block's terms
    def _block(self, s, e, W):
        """``(cols, ds, elo, ehi)`` of the finite entries of columns ``s:e``: the exact
        differences ``x_j - m`` (floats, or MPFR values where float64 cannot hold them) and
        their exponentials' ends at ``W`` bits (as :func:`evaluate_rows` forms them)."""
        xb = np.asarray(self.x[s:e], dtype=np.float64)
        ft = np.isfinite(xb)
        cols = np.flatnonzero(ft)
        m = self.m
        d, ok = _exact_differences(np.where(ft, xb, 0.0), np.where(ft, m, 0.0))
        ok = ok[cols]
        ex = _Exps(W)
        if ok.all():
            ds = d[cols].tolist()
            distinct, where = np.unique(d[cols], return_inverse=True)
            plo, phi = ex.pairs(distinct.tolist())
            q = where.reshape(-1).tolist()
            return cols, ds, [plo[i] for i in q], [phi[i] for i in q]
        Z = _context(2200, "Z")
        ds, elo, ehi = [], [], []
        for j, good in zip(cols.tolist(), ok.tolist(), strict=True):
            dj = float(d[j]) if good else Z.sub(float(xb[j]), m)
            lo, hi = ex.pair(dj)
            ds.append(dj)
            elo.append(lo)
            ehi.append(hi)
        return cols, ds, elo, ehi

    def _add_sums(self, W, ds, elo, ehi):
        D, U = _context(W, "D"), _context(W, "U")
        sl, su, tl, tu = self._sums.setdefault(W, ([], [], [], []))
        rest = [i for i, d in enumerate(ds) if d != 0]
        if not self.fn.log_sum:
            sl.append(D.fsum(elo))
            su.append(U.fsum(ehi))
        else:  # T = S - 1: the entries equal to m add 1 each, counted apart
            tl.append(D.fsum([elo[i] for i in rest]))
            tu.append(U.fsum([ehi[i] for i in rest]))
        return len(ds) - len(rest)

    def _row_sums(self, W):
        """The row's enclosures at ``W``: ``(slo, shi)`` of ``S`` (softmax) or ``(llo, lhi)``
        of ``log S = log1p(T)`` (the logarithmic ops), one more pass where not yet summed."""
        if W not in self._sums:
            for s, e in self.spans:
                self._add_sums(W, *self._block(s, e, W)[1:])
        sl, su, tl, tu = self._sums[W]
        D, U = _context(W, "D"), _context(W, "U")
        if not self.fn.log_sum:
            return D.fsum(sl), U.fsum(su)
        extra = self._count_max - 1
        return D.log1p(D.fsum([extra] + tl)), U.log1p(U.fsum([extra] + tu))

    def _ends(self, W, ds, elo, ehi):
        D, U = _context(W, "D"), _context(W, "U")
        a, b = self._row_sums(W)
        return self.fn.from_sum(D, U, self.m, ds, elo, ehi, a, b)

    # ---------------------------------------------------------------------- the passes
    def exps(self):
        """The first pass: ``(start, stop, lo, hi)`` per block, float64 bounds of
        ``e**(x_j - m)`` (0 at ``-inf`` entries; NaN in a special row), as
        :class:`RowExps` holds them."""
        for s, e in self.spans:
            lo = np.full(e - s, np.nan)
            hi = np.full(e - s, np.nan)
            if not self.special:
                cols, ds, elo, ehi = self._block(s, e, self.W)
                if self.exact is None and not self._summed:
                    self._count_max += self._add_sums(self.W, ds, elo, ehi)
                _bounds64(lo, hi, cols, elo, ehi)
            yield s, e, lo, hi
        self._summed = True

    def values(self):
        """The second pass (after :meth:`exps`): ``(start, stop, ExactArray, lo, hi)`` per
        block, ``lo``/``hi`` as :meth:`exps` yields them (logsumexp: one block ``(0, 1, ...)``
        of the row's one value, with empty bounds)."""
        if not self._summed:
            raise RuntimeError("LongRow.values() needs the first pass, exps(), run through")
        if not self.fn.per_element:
            yield 0, 1, self._lse(), np.zeros(0), np.zeros(0)
            return
        for s, e in self.spans:
            yield (s, e, *self._block_values(s, e))

    def _lse(self):
        P = self.P
        if self.special:
            v = _special_row(self.fn, np.array([_NAN] if self._nan else [_INF] if self._pinf
                                               else [-_INF]))
            return _from_objects([v[0]], P).exact((1,))
        if self.exact is not None:
            return _from_objects([_as_object(self.exact, P)], P).exact((1,))
        W = self.W
        while True:
            los, his = self._ends(W, [], [], [])
            got = _decide_strict(los[0], his[0], P)
            if got is not None:
                return _from_objects([got], P).exact((1,))
            W = self._next_w(W)

    def _next_w(self, W):
        W *= 2
        if W > _W_MAX:
            raise AssertionError(
                f"exactref could not decide {self.fn.name} of the row "
                f"{_row_text(self.x)} with {_W_MAX} bits: an exact case the "
                f"Lindemann-Weierstrass argument missed; please report it")
        return W

    def _block_values(self, s, e):
        fn, P = self.fn, self.P
        L = max(P, 53)
        n = e - s
        xb = np.asarray(self.x[s:e], dtype=np.float64)
        lo, hi = np.full(n, np.nan), np.full(n, np.nan)
        if self.special:
            if self._nan or self._pinf > 1:
                vals = [_NAN] * n
            elif self._pinf:
                vals = [fn.at_inf if v == _INF else fn.masked for v in xb.tolist()]
            else:
                vals = [fn.empty] * n
            return _from_objects(vals, P).exact((n,)), lo, hi
        fin = np.isfinite(xb)
        cols, ds, elo, ehi = self._block(s, e, self.W)
        _bounds64(lo, hi, cols, elo, ehi)
        if self.exact is not None:
            v = _as_object(self.exact, P)
            vals = [v if f else fn.masked for f in fin.tolist()]
            return _from_objects(vals, P).exact((n,)), lo, hi
        values = _Values.empty(n, L)
        neg = np.flatnonzero(~fin)
        if neg.size:  # -inf entries: softmax +0, log_softmax -inf
            if fn.masked == 0:
                values.zero[neg] = True
            else:
                values.special[neg] = fn.masked
        los, his = self._ends(self.W, ds, elo, ehi)
        decided = _put_decided(values, cols, los, his, self.W, P, L)
        slow_idx, slow_obj = [], []
        for i in np.flatnonzero(~decided).tolist():
            got = _decide_strict(los[i], his[i], P)
            W = self.W
            while got is None:  # Ziv: the row's sums and this value at twice the precision
                W = self._next_w(W)
                elo_w, ehi_w = _Exps(W).pair(ds[i])
                a, b = self._ends(W, [ds[i]], [elo_w], [ehi_w])
                got = _decide_strict(a[0], b[0], P)
            slow_idx.append(int(cols[i]))
            slow_obj.append(got)
        if slow_idx:
            values.put(np.array(slow_idx, dtype=np.int64), _from_objects(slow_obj, P))
        return values.exact((n,)), lo, hi


def _bounds64(lo, hi, cols, elo, ehi):
    """Fill ``lo``/``hi`` (a block's float64 bounds of ``e**(x_j - m)``) as
    :func:`evaluate_rows` forms them: 0 at the ``-inf`` entries, the MPFR ends converted and
    stepped outward at the finite ones (``cols``)."""
    lo[:] = 0.0
    hi[:] = 0.0
    if len(cols):
        lo[cols] = np.maximum(np.nextafter(np.array(list(map(float, elo))), -np.inf), 0.0)
        hi[cols] = np.nextafter(np.array(list(map(float, ehi))), np.inf)

"""Accumulation orders of the long sums: one grammar, one parser, and the per-term rounding
depth of every order (docs/reductions.md, "Accumulation orders").

A long sum's bound (Higham, *Accuracy and Stability of Numerical Algorithms*, ch. 4) needs, per
term, the number ``d`` of accumulator roundings the term passes on its way to the result: the
computed sum is ``sum_l t_l prod_{j <= d_l} (1 + delta_j)``, within ``sum_l gamma_{d_l} |t_l|`` of
the exact one. An addition to an exact zero (an accumulator's initial value) is exact and is not
counted. The orders (strings, so that a TOML file or a command line carries them):

===================  ======================================================  =================
order                what the kernel does                                    depth ``D(k)``
===================  ======================================================  =================
``"any"``            any order, any tree                                     ``k - 1``
``"sequential"``     left to right (term ``l``, 1-based:                     ``k - 1``
                     ``k - max(l, 2) + 1``)
``"pairwise"``       a binary tree of depth ``ceil(log2 k)``                 ``ceil(log2 k)``
``"blocked(b)"``     blocks of ``b`` terms, each summed in sequence, the     ``min(b, k) - 1 +
                     block sums in a binary tree                             ceil(log2 ceil(k/b))``
``"split_k(s)"``     ``s`` slices, each summed in sequence, the slice sums   ``ceil(k/s) - 1 +
                     combined in any order                                   min(s, k) - 1``
``"tree(f)"``        fan-in ``f``: each node sums its (at most ``f``)        ``(f - 1) L``, ``L``
                     children in sequence                                    the least with
                                                                             ``f**L >= k``
``"library"``        the orders of the mainstream libraries (below)          their maximum
===================  ======================================================  =================

``"library"`` (the default) is the maximum, for each ``k``, of the depths of the orders these
implementations use for a reduction over contiguous elements (each simulated below, step by
step, by the function that gives its depth; the tests run the same functions on float32 data):

* NumPy ``pairwise_sum`` (``numpy/_core/src/umath/loops_utils.h.src``): fewer than 8 terms in
  sequence; up to 128 terms in 8 interleaved accumulators, combined as a tree of three levels,
  then the ``n % 8`` rest in sequence; above 128 terms the two halves (the first rounded down to
  a multiple of 8) recursively, added. The reduction adds that to the output's initial value
  (``io1 += pairwise_sum``), and a buffered reduction (a cast) does so per buffer of 8192
  elements. :func:`numpy_depth`.
* PyTorch CPU ``cascade_sum`` (``aten/src/ATen/native/cpu/SumKernel.cpp``): ``row_sum`` with
  ``ilp_factor = 4`` interleaved vector accumulators, each a four-level cascade
  (``multi_row_sum``: ``level_step = 2**max(4, ceil(log2 n) // 4)``), the rest of the vectors
  into the first, the four combined in sequence; then the scalar tail and the vector's lanes in
  sequence into one scalar. Lane widths 4 (NEON, 128 bits), 8 (AVX2, and the 256-bit default),
  16 (AVX-512), and the scalar path (``scalar_inner_sum``) for short or strided rows; 16-bit
  inputs load two elements per float lane (``InnerSumCastLoadPolicy``: one rounding more). A
  single output over more than ``GRAIN_SIZE = 32768`` elements is split across threads in chunks
  of at least 32768, whose sums are added in sequence. :func:`torch_cpu_depth`.
* PyTorch CUDA ``Reduce.cuh`` (``gpu_reduce_kernel``, ``setReduceConfig``): each thread
  accumulates its inputs (every ``step_input``-th) in ``vt0 = 4`` interleaved accumulators (or
  ``input_vec_size`` of them, 4 or 8, on the vectorized path, with an unaligned head and a tail
  in the first), combined in sequence; then ``block_x_reduce`` (a tree over ``block.x``),
  ``block_y_reduce`` (a tree over ``block.y``) and ``global_reduce`` (the last block reads the
  other blocks' partials in sequence, then the two trees). Every launch configuration the
  heuristic can choose for ``k`` inputs per output (any number of outputs) is enumerated.
  :func:`torch_cuda_depth`.
* Triton ``tl.sum`` over a block holding the row (the row padded to a power of two ``B``, as in
  Triton's softmax and layer-norm tutorials and Inductor's persistent reductions): each thread
  sums its elements in sequence, then a butterfly over the lanes of a warp and a tree over the
  warps. :func:`triton_depth`.

For the sums of products (``matmul``, ``gemm``, ``dot``, ``linear``, ``conv``) ``"library"`` is
``k - 1``, the depth of ``"any"``: BLAS microkernels (BLIS, OpenBLAS, oneDNN's brgemm, MKL) keep
each output element in a register and add its ``k`` products in sequence along K (a K-blocked
kernel adds each block's partial sum to C in sequence), CUTLASS and cuBLAS threads run their
FMA chains along K, and split-K kernels combine shorter chains: none exceeds ``k - 1``, and the
sequential K loop reaches it. :func:`gemm_depth`.

Not covered by ``"library"`` (declare them): NumPy's reductions along an axis that is not the
fast one in memory (``np.sum(x, axis=0)`` on a C-ordered ``x`` adds the rows in sequence:
``order="sequential"``); Triton or Inductor kernels that loop over a row in blocks of ``r``
lanes (``order="split_k(r)"`` or ``"any"``).
"""

from __future__ import annotations

import functools
import math
import re

import numpy as np

__all__ = ["Order", "parse_order", "ORDER_GRAMMAR", "ORDER_NAMES", "library_depth",
           "gemm_depth", "numpy_depth", "torch_cpu_depth", "torch_cuda_depth", "triton_depth",
           "torch_cascade_sum", "torch_cuda_sum", "triton_tree_sum", "LIBRARY_ORDERS"]

#: the plain order names (the parameterised ones are ``blocked(b)``, ``split_k(s)``, ``tree(f)``)
ORDER_NAMES = ("library", "any", "pairwise", "sequential")
#: what :func:`parse_order` accepts, for error messages
ORDER_GRAMMAR = ("'library' (the default: the orders NumPy, PyTorch CPU and CUDA and Triton "
                 "use), 'any', 'sequential', 'pairwise', 'blocked(b)' (blocks of b terms in "
                 "sequence, the block sums pairwise), 'split_k(s)' (s slices in sequence, "
                 "combined in any order) or 'tree(f)' (fan-in f, each node in sequence); b, s "
                 "and f positive integers (f >= 2)")
_PARAM = re.compile(r"^\s*(blocked|split_k|tree)\s*\(\s*(\d+)\s*\)\s*$")


def _ceil_log2(n: int) -> int:
    return (int(n) - 1).bit_length() if n > 1 else 0


class Order(str):
    """A parsed accumulation order: a ``str`` (its canonical text, so it compares, prints and
    travels as the string the caller wrote) with :meth:`depth` and :meth:`depths`.

    >>> from exactref.linalg._orders import parse_order
    >>> o = parse_order("blocked(32)")
    >>> o, o.kind, o.param, o.depth(1024)
    ('blocked(32)', 'blocked', 32, 36)
    >>> parse_order("pairwise").depth(1024), parse_order("any").depth(1024)
    (10, 1023)
    """

    __slots__ = ()

    @property
    def kind(self) -> str:
        m = _PARAM.match(self)
        return m.group(1) if m else str(self)

    @property
    def param(self):
        m = _PARAM.match(self)
        return int(m.group(2)) if m else None

    def depth(self, k: int, products: bool = False) -> int:
        """The most accumulator roundings a term of a ``k``-term sum passes in this order (the
        last rounding included; an addition to an exact zero not counted). ``products``: the
        terms are products (the matmul family, whose ``"library"`` order is :func:`gemm_depth`)."""
        k = int(k)
        if k <= 1:
            return 0
        kind, p = self.kind, self.param
        if kind in ("any", "sequential"):
            return k - 1
        if kind == "pairwise":
            return _ceil_log2(k)
        if kind == "blocked":
            return min(p, k) - 1 + _ceil_log2(-(-k // p))
        if kind == "split_k":
            return -(-k // p) - 1 + min(p, k) - 1
        if kind == "tree":
            levels, span = 0, 1
            while span < k:
                span *= p
                levels += 1
            return (p - 1) * levels
        return gemm_depth(k) if products else library_depth(k)

    def depths(self, k: int, products: bool = False) -> np.ndarray:
        """Per term (1-based position ``l``), the most roundings it passes: ``k - max(l, 2) +
        1`` in sequence, :meth:`depth` for every term in the other orders."""
        k = int(k)
        if self.kind == "sequential" and k > 1:
            idx = np.arange(1, k + 1)
            return k - np.maximum(idx, 2) + 1
        return np.full(max(k, 0), self.depth(k, products), dtype=np.int64)

    @property
    def positional(self) -> bool:
        """Whether the depth depends on the term's position (a per-term bound)."""
        return self.kind == "sequential"


def parse_order(order, op: str = "") -> Order:
    """The :class:`Order` ``order`` names (an Order or a string of :data:`ORDER_GRAMMAR`);
    anything else raises a ValueError that quotes the grammar.

    >>> parse_order(" split_k( 4 ) ")
    'split_k(4)'
    >>> try:
    ...     parse_order("tree(1)")
    ... except ValueError as e:
    ...     print(str(e)[:74])
    order='tree(1)' is not an accumulation order: a tree needs a fan-in of at
    """
    head = f"{op}: " if op else ""
    if isinstance(order, Order):
        return order
    if not isinstance(order, str):
        raise ValueError(f"{head}order={order!r} ({type(order).__name__}) is not an "
                         f"accumulation order; expected {ORDER_GRAMMAR}")
    text = order.strip()
    if text in ORDER_NAMES:
        return Order(text)
    m = _PARAM.match(text)
    if m:
        kind, p = m.group(1), int(m.group(2))
        if p < 1 or (kind == "tree" and p < 2):
            why = ("a tree needs a fan-in of at least 2" if kind == "tree"
                   else f"{kind} needs a positive size")
            raise ValueError(f"{head}order={order!r} is not an accumulation order: {why}; "
                             f"expected {ORDER_GRAMMAR}")
        return Order(f"{kind}({p})")
    raise ValueError(f"{head}order={order!r} is not an accumulation order; expected "
                     f"{ORDER_GRAMMAR}")


# ------------------------------------------------------------------------ depth arithmetic
# The simulators below run a library's order on "accumulators" through ``add(a, b)`` and
# ``zero(shape)``; with the depth algebra (an int array, -1 for an exact zero: 0 + x and x + 0
# are exact, otherwise the depth is max + 1) they give the depth of every term, with numpy
# float32 arithmetic (IEEE, correctly rounded) they give the library's result.

def _dadd(a, b):
    a = np.asarray(a)
    b = np.asarray(b)
    return np.where(a < 0, b, np.where(b < 0, a, np.maximum(a, b) + 1))


def _dzero(shape):
    return np.full(shape, -1, dtype=np.int64)


class _Depths:
    """The depth algebra over ``k`` leaves of depth 0."""

    add = staticmethod(_dadd)
    zero = staticmethod(_dzero)

    def __init__(self, k):
        self.k = k

    def leaf(self, idx):
        return np.zeros(np.shape(idx), dtype=np.int64)


class FloatAlgebra:
    """Float arithmetic of one format (numpy float32 or float64: IEEE, round to nearest even)
    over the leaves ``x`` (already in that format)."""

    def __init__(self, x, dtype=np.float32):
        self.x = np.asarray(x, dtype=dtype)
        self.k = self.x.size
        self.dtype = dtype

    def add(self, a, b):
        return (np.asarray(a, self.dtype) + np.asarray(b, self.dtype)).astype(self.dtype)

    def zero(self, shape):
        return np.zeros(shape, dtype=self.dtype)

    def leaf(self, idx):
        return self.x[np.asarray(idx)]


# ---------------------------------------------------------------------------------- NumPy
@functools.cache
def _np_pairwise(n: int) -> int:
    """Depth of ``pairwise_sum`` on ``n`` terms (loops_utils.h.src)."""
    if n <= 1:
        return 0
    if n < 8:  # res = -0.0; res += a[i]: the first addition exact
        return n - 1
    if n <= 128:  # 8 accumulators of n // 8 terms, a 3-level tree, then the rest in sequence
        return (n // 8 - 1) + 3 + n % 8
    n2 = n // 2
    n2 -= n2 % 8
    return 1 + max(_np_pairwise(n2), _np_pairwise(n - n2))


@functools.cache
def _np_pairwise_max(n: int) -> int:
    """``max(_np_pairwise(m) for m <= n)`` (pairwise_sum's depth is not monotone in n)."""
    return max(_np_pairwise(m) for m in range(1, n + 1)) if n > 0 else 0


#: NumPy's ufunc buffer (np.getbufsize()): a buffered reduction calls the loop per buffer
NUMPY_BUFSIZE = 8192


def numpy_depth(k: int) -> int:
    """Depth of ``np.add.reduce`` along the fast axis: ``io1 += pairwise_sum(...)`` with the
    output starting from the first element or from 0 (either), once per buffer of 8192 elements
    when the reduction is buffered."""
    k = int(k)
    if k <= 1:
        return 0
    d = max(_np_pairwise(k), 1 + _np_pairwise(k - 1))
    if k > NUMPY_BUFSIZE:  # buffered: chunks added to the output in sequence
        d = max(d, 1 + -(-k // NUMPY_BUFSIZE) + _np_pairwise_max(NUMPY_BUFSIZE))
    return d


# ---------------------------------------------------------------------------- PyTorch CPU
def _multi_row_sum(alg, load, size, shape):
    """SumKernel.cpp ``multi_row_sum``: ``load(i)`` gives row ``i`` (``nrows`` accumulators of
    ``shape``), summed in a four-level cascade."""
    levels = 4
    power = max(4, _ceil_log2(size) // levels)
    step = 1 << power
    mask = step - 1
    acc = [alg.zero(shape) for _ in range(levels)]
    i = 0
    while i + step <= size:
        for _ in range(step):
            acc[0] = alg.add(acc[0], load(i))
            i += 1
        for j in range(1, levels):
            acc[j] = alg.add(acc[j], acc[j - 1])
            acc[j - 1] = alg.zero(shape)
            if i & (mask << (j * power)):
                break
    while i < size:
        acc[0] = alg.add(acc[0], load(i))
        i += 1
    for j in range(1, levels):
        acc[0] = alg.add(acc[0], acc[j])
    return acc[0]


def _row_sum(alg, load, size, lanes):
    """SumKernel.cpp ``row_sum`` (``ilp_factor = 4``): ``load(i)`` gives element (or vector)
    ``i`` as an array of ``lanes``."""
    ilp = 4
    n = size // ilp

    def rows(i):  # row i of the (-1, 4) view: accumulators k = 0..3 side by side
        return np.concatenate([np.atleast_1d(load(i * ilp + c)) for c in range(ilp)])

    part = _multi_row_sum(alg, rows, n, (ilp * lanes,)) if n else alg.zero((ilp * lanes,))
    part = [part[c * lanes:(c + 1) * lanes] for c in range(ilp)]
    for i in range(n * ilp, size):
        part[0] = alg.add(part[0], load(i))
    for c in range(1, ilp):
        part[0] = alg.add(part[0], part[c])
    return part[0]


def torch_cascade_sum(alg, k, width=8, pairs=None):
    """PyTorch CPU's ``cascade_sum`` of one contiguous row of ``k`` elements (``alg.leaf(i)``),
    accumulated through ``alg``: ``width`` lanes per vector (0: the scalar path), ``pairs``:
    how a 16-bit vector load folds two elements into a float lane (``"neighbours"``: Half's
    ``load_reduce_vec``, ``"halves"``: BFloat16's ``first + second``; None for float inputs).
    Returns the sum (0-d for floats, the term depth for the depth algebra)."""
    if width == 0 or k < width * (2 if pairs else 1):  # scalar_inner_sum
        res = _row_sum(alg, lambda i: np.atleast_1d(alg.leaf(i)), k, 1)
        return alg.add(alg.zero((1,)), res)[0]
    numel = width * (2 if pairs else 1)
    vec_size = k // numel
    lanes = np.arange(width)

    def vec(i):
        base = i * numel
        if pairs is None:
            return alg.leaf(base + lanes)
        if pairs == "neighbours":
            a, b = base + 2 * lanes, base + 2 * lanes + 1
        else:
            a, b = base + lanes, base + width + lanes
        return alg.add(alg.add(alg.zero((width,)), alg.leaf(a)), alg.leaf(b))

    acc = _row_sum(alg, vec, vec_size, width)
    final = alg.zero((1,))
    for i in range(vec_size * numel, k):
        final = alg.add(final, np.atleast_1d(alg.leaf(i)))
    for lane in range(width):
        final = alg.add(final, acc[lane:lane + 1])
    return final[0]


#: PyTorch's ``at::internal::GRAIN_SIZE``
TORCH_GRAIN = 32768
#: the lane widths and 16-bit load foldings of PyTorch CPU's float accumulation
TORCH_CPU_VARIANTS = ((0, None), (4, None), (8, None), (16, None), (4, "neighbours"),
                      (8, "neighbours"), (16, "neighbours"), (8, "halves"), (16, "halves"),
                      (2, None))


def _iadd(a: int, b: int) -> int:
    """The depth algebra on Python ints (-1: an exact zero)."""
    return b if a < 0 else a if b < 0 else max(a, b) + 1


def _multi_row_depth(size: int, leaf: int) -> int:
    """:func:`_multi_row_sum`'s depth in closed steps (every accumulator alike; leaves of depth
    ``leaf``): the inner loop of ``step`` additions is one step here."""
    levels = 4
    power = max(4, _ceil_log2(size) // levels)
    step = 1 << power
    mask = step - 1

    def run(a, n):  # n leaves added in sequence to accumulator a
        if n <= 0:
            return a
        first = leaf if a < 0 else _iadd(a, leaf)
        return first + (n - 1) if n > 1 else first

    acc = [-1] * levels
    i = 0
    while i + step <= size:
        acc[0] = run(acc[0], step)
        i += step
        for j in range(1, levels):
            acc[j] = _iadd(acc[j], acc[j - 1])
            acc[j - 1] = -1
            if i & (mask << (j * power)):
                break
    acc[0] = run(acc[0], size - i)
    for j in range(1, levels):
        acc[0] = _iadd(acc[0], acc[j])
    return acc[0]


def _cascade_depth_fast(k: int, width: int, pairs) -> int:
    """:func:`torch_cascade_sum`'s depth in integer steps (the tests check it equals the
    simulation on the depth algebra)."""
    def row_sum(size, leaf):
        n = size // 4
        part = _multi_row_depth(n, leaf) if n else -1
        first = part
        for _ in range(n * 4, size):
            first = _iadd(first, leaf)
        for _ in range(1, 4):
            first = _iadd(first, part)
        return first

    if width == 0 or k < width * (2 if pairs else 1):
        return max(row_sum(k, 0), 0)
    numel = width * (2 if pairs else 1)
    vec_size = k // numel
    acc = row_sum(vec_size, 1 if pairs else 0)
    final = -1
    for _ in range(vec_size * numel, k):
        final = _iadd(final, 0)
    for _ in range(width):
        final = _iadd(final, acc)
    return max(final, 0)


@functools.cache
def _cascade_depth(k: int) -> int:
    return max(_cascade_depth_fast(k, w, p) for w, p in TORCH_CPU_VARIANTS)


def _cascade_bound(k: int) -> int:
    """A bound of :func:`_cascade_depth` nondecreasing in ``k``, in O(1) (for rows too long to
    simulate): with ``n <= k`` rows of a cascade of step ``2**max(4, ceil(log2 n) // 4)`` (at
    most ``max(16, (2n)**(1/4))``), each of the four levels takes at most ``step`` additions but
    the last, ``ceil(n / step**3) <= 8 n**(1/4)``; plus the rest and the combination of the
    ``ilp_factor`` accumulators (9), the pair fold (1), the scalar tail and the 16 lanes (48)."""
    root = max(1.0, float(k) ** 0.25)
    step = max(16.0, (2.0 * k) ** 0.25)
    return int(math.ceil(1 + 4 * step + 8 * root + 9 + 48))


#: rows above this many elements take :func:`_cascade_bound` for their thread chunks
CASCADE_SIMULATED = 1 << 22


@functools.cache
def torch_cpu_depth(k: int) -> int:
    """Depth of PyTorch CPU's ``cascade_sum`` over ``k`` contiguous elements (every lane width
    and load variant, and the two-pass split of a long single-output row across threads)."""
    k = int(k)
    if k <= 1:
        return 0
    if k > CASCADE_SIMULATED:  # t <= ceil(k / GRAIN) chunks, each within the bound
        return _cascade_bound(k) + -(-k // TORCH_GRAIN)
    d = _cascade_depth(k)
    if k > TORCH_GRAIN:  # parallel_reduce's two_pass_reduction: t chunks, added in sequence
        for t in range(2, -(-k // TORCH_GRAIN) + 1):
            size = -(-k // t)
            last = k - (t - 1) * size
            sizes = {size} | ({last} if last > 0 else set())
            d = max(d, max(_cascade_depth(s) for s in sizes) + t)
    return d


# --------------------------------------------------------------------------- PyTorch CUDA
def _last_pow2(n: int) -> int:
    return 1 << (max(int(n), 1).bit_length() - 1)


#: ``input_vec_size`` of the vectorized path: ``vt0 = 4`` (float32, float64), 8 for the 16-bit
#: inputs
CUDA_INPUT_VEC = (4, 8)


def _thread_depth(v: int) -> int:
    """Depth of one thread's accumulation of ``v`` inputs: ``vt0 = 4`` interleaved accumulators
    combined in sequence (``thread_reduce_impl``), or ``V`` of them (2 to 8) with an unaligned
    head and a tail of at most ``V - 1`` each in the first (the vectorized path, ``V`` in
    :data:`CUDA_INPUT_VEC`)."""
    if v <= 1:
        return 0
    best = -(-v // 4) - 1 + 3
    for vec in CUDA_INPUT_VEC:
        best = max(best, (vec - 1) + -(-v // vec) + (vec - 1) - 1 + (vec - 1))
    return min(best, v - 1) if v > 0 else 0


@functools.cache
def torch_cuda_depth(k: int) -> int:
    """Depth of ``gpu_reduce_kernel`` (Reduce.cuh) for ``k`` contiguous inputs per output, the
    most over every configuration ``setReduceConfig`` picks (the number of outputs enters
    through ``block.y``'s power of two and the global-reduce limit of 4096 outputs)."""
    k = int(k)
    if k <= 1:
        return 0
    mnt = 512
    warp = 32
    dim0 = _last_pow2(k) if k < mnt else mnt
    best = 0
    for dim1 in [1 << i for i in range(10)]:
        for few_outputs in (True, False):
            bw = min(dim0, warp)
            bh = min(dim1, mnt // bw)
            bw = min(dim0, mnt // bh)
            step = bw
            v = -(-k // step)
            ysplit = v >= bh * 16 or v >= 256
            if ysplit:
                step *= bh
                v = -(-k // step)
            ctas = 1
            if ysplit and v >= 256 and few_outputs:
                ctas = min(-(-v // 16), 65535)
                step *= ctas
                v = -(-k // step)
            d = _thread_depth(v)
            tree = _ceil_log2(bw) + (_ceil_log2(bh) if ysplit else 0)
            d += tree
            if ctas > 1:  # the last block reads the partials in sequence, then both trees
                d += -(-ctas // (bw * (bh if ysplit else 1))) + tree
            best = max(best, d + 1)  # + 1: accumulate into the output (sub-iterators)
    return min(best, k - 1)


def torch_cuda_sum(alg, k, block_x=32, vt0=4):
    """One row of ``gpu_reduce_kernel`` (Reduce.cuh, ``thread_reduce_impl`` and
    ``block_x_reduce``) with ``block_x`` lanes along it (a power of two): lane ``t`` reads
    ``t, t + block_x, ...`` into ``vt0`` accumulators in turn (``value_list[i]``), combines them
    in sequence, then the lanes meet in shared memory (offsets ``block_x / 2`` down to 32) and
    in the warp shuffle (offsets 1, 2, 4, ... below 32: lane ``i`` takes lane ``i + offset``)."""
    lanes = np.arange(block_x)
    acc = [alg.zero((block_x,)) for _ in range(vt0)]
    idx = lanes.copy()
    while (idx < k).any():
        for i in range(vt0):
            at = idx + i * block_x
            ok = at < k
            vals = alg.leaf(np.minimum(at, k - 1))
            acc[i] = np.where(ok, alg.add(acc[i], vals), acc[i])
        idx = idx + vt0 * block_x
    value = acc[0]
    for i in range(1, vt0):
        value = alg.add(value, acc[i])
    dim = block_x
    if dim > 32:
        offset = dim // 2
        while offset >= 32:
            top = value[:offset]
            value = np.concatenate([alg.add(top, value[offset:2 * offset]), value[offset:]])
            offset //= 2
        dim = 32
    offset = 1
    while offset < dim:  # lane i += lane i + offset (the lanes past the end keep theirs)
        shifted = np.concatenate([value[offset:dim], value[dim - offset:dim]])
        value = np.concatenate([alg.add(value[:dim], shifted)[:dim], value[dim:]])
        offset <<= 1
    return value[0]


# --------------------------------------------------------------------------------- Triton
def triton_tree_sum(alg, k, num_warps=1):
    """``tl.sum`` of a row of ``k`` elements held in one block of ``B = next_pow2(k)`` (the
    padding masked to 0): thread ``t`` of ``32 num_warps`` holds elements ``t, t + T, ...``
    summed in sequence, then a butterfly over the 32 lanes and a tree over the warps."""
    B = 1 << _ceil_log2(max(k, 1))
    T = 32 * num_warps
    width = min(B, T)

    def leaf(i):
        i = np.asarray(i)
        vals = alg.leaf(np.minimum(i, k - 1))
        return np.where(i < k, vals, alg.zero(np.shape(i)))

    acc = alg.zero((width,))
    for j in range(-(-B // width)):
        idx = j * width + np.arange(width)
        acc = alg.add(acc, leaf(idx))
    while acc.shape[0] > 1:  # a butterfly pairs lane i with lane i + half: a tree
        half = acc.shape[0] // 2
        acc = alg.add(acc[:half], acc[half:2 * half])
    return acc[0]


#: the most elements of a ``tl.sum``'s block one thread holds (Triton's tutorials scale
#: ``num_warps`` with the block, 32 warps at most; a wider row is looped: ``split_k``)
TRITON_PER_THREAD = 32


@functools.cache
def triton_depth(k: int) -> int:
    """Depth of Triton's ``tl.sum`` over a row of ``k`` (every ``num_warps`` from 1 to 32): the
    padded block's elements per thread in sequence, then ``log2`` of the threads."""
    k = int(k)
    if k <= 1 or k > 32 * 32 * TRITON_PER_THREAD:  # wider rows: looped kernels (split_k)
        return 0
    B = 1 << _ceil_log2(k)
    best = 0
    for w in (1, 2, 4, 8, 16, 32):
        width = min(B, 32 * w)
        per = -(-B // width)
        if per > TRITON_PER_THREAD and w < 32:
            continue  # a block this wide runs with more warps
        best = max(best, per - 1 + _ceil_log2(width))
    return min(best, k - 1)


# ---------------------------------------------------------------------------------- GEMM
def gemm_depth(k: int) -> int:
    """The sums of products' ``"library"`` depth: ``k - 1`` (BLAS microkernels' sequential K
    loop; K-blocking and split-K never exceed it)."""
    return max(int(k) - 1, 0)


#: the cited libraries' depth functions of ``"library"`` for sums (name, function)
LIBRARY_ORDERS = (("numpy pairwise_sum", numpy_depth), ("torch CPU cascade_sum", torch_cpu_depth),
                  ("torch CUDA Reduce.cuh", torch_cuda_depth), ("triton tl.sum", triton_depth))


@functools.lru_cache(maxsize=4096)
def library_depth(k: int) -> int:
    """``"library"``'s depth for a ``k``-term sum: the most over :data:`LIBRARY_ORDERS`.

    >>> [library_depth(k) for k in (2, 8, 128, 1024, 4096)]
    [1, 7, 25, 36, 46]
    """
    k = int(k)
    if k <= 1:
        return 0
    return min(max(f(k) for _, f in LIBRARY_ORDERS), k - 1)

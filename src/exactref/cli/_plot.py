"""``--plot``: the error histogram in ulps per op and result format, one panel per op.

matplotlib is an optional extra (``pip install 'exactref[plot]'``); :func:`require_matplotlib`
is called before the audit runs, so a missing matplotlib is a usage error, not a lost audit.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["plot_report", "require_matplotlib", "plot_formats"]

_MISSING = "--plot needs matplotlib, which is not installed: pip install 'exactref[plot]'"
#: the smallest share the colour scale tells apart from the next (shares are on a log scale)
_FLOOR = 1e-4


def require_matplotlib():
    """``matplotlib.pyplot`` on the Agg backend (no display needed), or an ImportError that
    says how to install it."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError(_MISSING) from None
    return plt


def plot_formats() -> dict:
    """The file formats ``--plot`` writes, by extension (those of matplotlib's canvas)."""
    require_matplotlib()
    from matplotlib.backend_bases import FigureCanvasBase

    return FigureCanvasBase.get_supported_filetypes()


def plot_report(report, path: str, max_ops: int = 60) -> None:
    """Write a PNG: one panel per op (the first ``max_ops`` in the audit's order), a heatmap
    of its result formats (rows) by the buckets of the error histogram (columns: exact, then
    (0, 0.5], (0.5, 1], (1, 2], ... ulps of the result format, past 1024, non-finite
    mismatches); each cell is the share of the format's outputs in that bucket, written in
    percent, and each row names the largest error. Groups that compared no outputs (rejected,
    unsupported, raised) are not drawn."""
    plt = require_matplotlib()
    from matplotlib.colors import LogNorm

    from ..audit import BUCKETS

    by_op: dict = {}
    for op, dt, _, h in report.accuracy():
        by_op.setdefault(op, []).append((dt, h))
    ops = list(by_op)[:max_ops]
    env = report.environment
    title = (f"exactref audit {env['target']}: {report.passed} passed, {report.failed} failed\n"
             f"share of the outputs by distance from the exact rounding, in ulps of the result "
             f"format")
    if not ops:  # nothing compared: say so in the picture rather than fail
        fig, ax = plt.subplots(figsize=(8, 2), layout="constrained")
        ax.axis("off")
        ax.text(0.5, 0.5, "no group compared outputs (every one raised, was rejected or is "
                          "unsupported)", ha="center", va="center", fontsize=9)
        ax.set_title(title, fontsize=9)
        fig.savefig(path, dpi=110)
        plt.close(fig)
        return
    ncols = 1 if len(ops) == 1 else 2 if len(ops) <= 6 else 3
    nrows = math.ceil(len(ops) / ncols)
    # each row of panels is as tall as its tallest panel's formats
    tallest = [max(len(by_op[op]) for op in ops[r * ncols:(r + 1) * ncols])
               for r in range(nrows)]
    heights = [n * 0.2 + 1.1 for n in tallest]
    fig, axes = plt.subplots(nrows, ncols, figsize=(max(6.4 * ncols, 8), sum(heights) + 1.0),
                             gridspec_kw={"height_ratios": heights}, squeeze=False,
                             layout="constrained")
    norm = LogNorm(vmin=_FLOOR, vmax=1.0)
    image = None
    for k, ax in enumerate(axes.flat):
        if k >= len(ops):
            ax.axis("off")
            continue
        op = ops[k]
        rows = by_op[op]
        counts = np.array([h.counts for _, h in rows], dtype=float)
        share = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
        image = ax.imshow(np.ma.masked_equal(np.maximum(share, _FLOOR * (share > 0)), 0),
                          norm=norm, cmap="viridis", aspect="auto", interpolation="nearest")
        ax.set_facecolor("white")
        if share.size <= 400:  # the percentages, where they still fit
            for (i, j), s in np.ndenumerate(share):
                if s > 0:
                    ax.text(j, i, f"{100 * s:.3g}", ha="center", va="center", fontsize=5,
                            color="white" if s < 0.1 else "black")
        ax.set_xticks(range(len(BUCKETS)))
        ax.set_xticklabels(BUCKETS, rotation=60, fontsize=6)
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels([f"{dt} (max {h.max_ulps:.3g})" for dt, h in rows], fontsize=6)
        ax.set_ylim(tallest[k // ncols] - 0.5, -0.5)  # rows as tall as in the other panels
        ax.set_title(op, fontsize=8)
    fig.colorbar(image, ax=axes.ravel().tolist(), shrink=0.6, label="share of the outputs")
    more = f" (the first {max_ops} of {len(by_op)} ops)" if len(by_op) > len(ops) else ""
    fig.suptitle(title + more, fontsize=9)
    fig.savefig(path, dpi=110)
    plt.close(fig)

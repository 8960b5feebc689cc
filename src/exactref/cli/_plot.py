"""``--plot``: the error distribution in ulps per op and input formats, with the allowed band.

matplotlib is an optional extra (``pip install exactref[plot]``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["plot_report"]


def plot_report(report, path: str, max_groups: int = 40) -> None:
    """Write a PNG: one row per group (worst first), each element's error (actual - exact
    rounding, in ulps of the output format) as a dot, and the band modelled implementations
    may reach as a grey bar; uncovered groups in red."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError(
            "--plot needs matplotlib: pip install 'exactref[plot]'") from None
    groups = [g for g in report.groups if g.cases and (g.ulps or g.band)]
    groups.sort(key=lambda g: (g.status != "fail", -g.max_ulps, g.key))
    groups = groups[:max_groups]
    height = max(2.5, 0.32 * len(groups) + 1.2)
    fig, ax = plt.subplots(figsize=(10, height))
    rng = np.random.default_rng(0)
    for row, g in enumerate(groups):
        y = len(groups) - 1 - row
        if g.band:
            lo, hi = g.band
            width = max(hi - lo, 0.6)  # a band of zero width still shows
            ax.barh(y, width, left=(lo + hi) / 2 - width / 2, height=0.7, color="0.8", zorder=1)
        errs = np.asarray(g.ulps, dtype=float)
        if errs.size:
            errs = np.clip(errs, -64, 64)
            jitter = rng.uniform(-0.25, 0.25, errs.size)
            color = "tab:red" if g.status == "fail" else "tab:blue"
            ax.scatter(errs, y + jitter, s=6, color=color, alpha=0.5, zorder=2, linewidths=0)
    ax.set_yticks(range(len(groups)))
    ax.set_yticklabels([g.key for g in reversed(groups)], fontsize=7)
    ax.axvline(0, color="0.4", linewidth=0.8)
    ax.set_xlabel("actual - exact rounding (ulps of the output format; clipped to ±64)")
    env = report.environment
    ax.set_title(f"exactref audit {env['target']}: errors (dots) and allowed band (grey); "
                 f"{report.passed} passed, {report.failed} failed", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)

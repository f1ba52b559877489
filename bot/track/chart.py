"""The burndown chart: remaining sites per area, stacked, over the first-parent history (PNG and SVG).

Uses matplotlib's object API on the Agg canvas (never pyplot), so no display or global state is involved.
The files are deterministic: the same points give the same bytes (no date in the SVG, fixed SVG element ids),
so an unchanged status rewrites an unchanged file and a dashboard pushed into a branch commits nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path

from matplotlib import rc_context
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from bot.track.history import Point

# fixed colours per area position (matplotlib's tab10), so a chart reads the same run after run
AREA_COLORS = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
)
TOTAL_COLOR = "#000000"
# SVG ids (clip paths, glyphs) are hashes salted with a random uuid unless this is set
SVG_HASH_SALT = "pg-bot burndown"
# no creation date in the SVG (or a PDF); the PNG has none by default
NO_DATE: dict[str, str | None] = {"Date": None}


def area_colors(names: Sequence[str]) -> dict[str, str]:
    return {name: AREA_COLORS[i % len(AREA_COLORS)] for i, name in enumerate(names)}


def _date(ts: int) -> str:
    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%d")


def burndown_figure(points: Sequence[Point], titles: Mapping[str, str]) -> Figure:
    """Remaining sites per area (stacked) against commit position; dates are tick labels, since commit dates
    along the first-parent line need not grow."""
    if not points:
        raise ValueError("no commits to draw")
    names = list(titles) or list(points[0].areas)
    colors = area_colors(names)
    xs = list(range(len(points)))
    fig = Figure(figsize=(11, 5), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    drawn = [(name, [p.areas.get(name, {}).get("remaining", 0) for p in points]) for name in names]
    drawn = [(name, ys) for name, ys in drawn if any(ys)]  # an area with nothing left ever gets no band
    if drawn:
        # stacked bands: equal counts in two areas would hide one line behind the other
        ax.stackplot(xs, *(ys for _, ys in drawn), step="post", colors=[colors[n] for n, _ in drawn],
                     labels=[titles.get(n, n) for n, _ in drawn], edgecolor="white", linewidth=0.5)
    ax.plot(xs, [p.remaining for p in points], drawstyle="steps-post", linewidth=1.5, color=TOTAL_COLOR,
            label="Total")
    ticks = sorted({round(i * (len(points) - 1) / 7) for i in range(8)}) if len(points) > 1 else [0]
    ax.set_xticks(ticks, [f"{_date(points[i].time)}\n{points[i].sha[:7]}" for i in ticks], fontsize=8)
    ax.set_xlim(0, max(1, len(points) - 1))
    ax.set_ylim(bottom=0)
    ax.set_ylabel("remaining sites")
    ax.set_xlabel(f"first-parent commits ({len(points)})")
    ax.set_title("pg-bot burndown: hand-rolled process-group guards left, per area")
    ax.grid(True, alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    # top band first, as stacked; outside the axes so it never covers data
    ax.legend(handles[::-1], labels[::-1], loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    return fig


def write_chart(points: Sequence[Point], titles: Mapping[str, str], *paths: Path) -> list[Path]:
    """Draw once, save in each format its suffix names (.png, .svg)."""
    fig = burndown_figure(points, titles)
    with rc_context({"svg.hashsalt": SVG_HASH_SALT}):
        for path in paths:
            fmt = path.suffix.lstrip(".").lower() or "png"
            fig.savefig(path, format=fmt, metadata=NO_DATE if fmt in ("svg", "pdf") else None)
    return list(paths)

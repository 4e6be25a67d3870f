"""What every plot of a replay shares: time buckets and their bands, one legend, the colors,
the resources drawn, and matplotlib itself.

matplotlib is imported here only, with the Agg backend selected before pyplot loads, so
plotting works on servers without a display and never touches a user's GUI setup. Figures are
closed after saving: a long session that plots many comparisons does not accumulate them.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from quotactor.sim.models.result import SimulationResult
from quotactor.sim.models.usage import Series, combined
from quotactor.sim.models.utilization import resource_names

__all__ = ["DAY", "HOUR", "Legend", "MAX_RESOURCES", "OTHERS", "OTHER_COLOR", "TOP_SERIES",
           "bucket_width", "bucketed", "draw_band", "integer_ticks", "plotted_resources",
           "pyplot", "save_figure", "series_colors", "spread", "top_series", "with_legend",
           "x_label"]

TOP_SERIES = 8
"""Series a figure shows by name; the rest are summed into one "others" series."""
OTHERS = "others"
MAX_RESOURCES = 4
"""Resources a figure draws (vcore, memory, then the others by name)."""
DAY = 86400.0
HOUR = 3600.0
_BUCKETS = 150
_LOW, _HIGH = 0.1, 0.9
_BAND = "p10-p90 of the time in each bucket"
OTHER_COLOR = "tab:gray"


def _pieces(times: Sequence[float], values: Sequence[float], start: float, end: float,
            width: float, count: int) -> Iterator[tuple[int, float, float]]:
    """(bucket, value, seconds it held within the bucket) of a step function."""
    for i, value in enumerate(values):
        left = max(times[i], start)
        right = min(times[i + 1] if i + 1 < len(times) else end, end)
        if right <= left:
            continue  # a value that held for no time
        first = min(int((left - start) // width), count - 1)
        last = min(int((right - start) // width), count - 1)
        for b in range(first, last + 1):
            held = min(right, start + (b + 1) * width) - max(left, start + b * width)
            if held > 0:
                yield b, value, held


def _starts(start: float, end: float, width: float) -> list[float]:
    return [start + b * width for b in range(max(1, math.ceil((end - start) / width)))]


def _length(starts: Sequence[float], b: int, end: float, width: float) -> float:
    """Seconds bucket `b` covers (the last one may be cut short by `end`)."""
    return min(width, max(end - starts[b], 1e-9))


def bucketed(times: Sequence[float], values: Sequence[float], start: float, end: float,
             width: float) -> tuple[list[float], list[float], list[float]]:
    """A step function (`values[i]` from `times[i]`) as buckets of `width` seconds from
    `start`: (bucket starts, time-weighted means, maxima); before its first point the
    function is 0."""
    starts = _starts(start, end, width)
    sums = [0.0] * len(starts)
    tops = [0.0] * len(starts)
    for b, value, held in _pieces(times, values, start, end, width, len(starts)):
        sums[b] += value * held
        tops[b] = max(tops[b], value)
    means = [sums[b] / _length(starts, b, end, width) for b in range(len(starts))]
    return starts, means, tops


def spread(times: Sequence[float], values: Sequence[float], start: float, end: float,
           width: float, low: float = _LOW, high: float = _HIGH,
           ) -> tuple[list[float], list[float], list[float], list[float]]:
    """(bucket starts, time-weighted means, `low` and `high` time-weighted percentiles) of a
    step function bucketed as `bucketed` does: within each bucket, the value held for at
    least a `low` share of the time and the one not exceeded for a `high` share."""
    starts = _starts(start, end, width)
    held_values: list[list[tuple[float, float]]] = [[] for _ in starts]
    for b, value, held in _pieces(times, values, start, end, width, len(starts)):
        held_values[b].append((value, held))
    means: list[float] = []
    lows: list[float] = []
    highs: list[float] = []
    for b, pieces in enumerate(held_values):
        length = _length(starts, b, end, width)
        covered = sum(held for _, held in pieces)
        if covered < length:
            pieces.append((0.0, length - covered))  # before the first point
        pieces.sort()
        means.append(sum(v * h for v, h in pieces) / length)
        lows.append(_quantile(pieces, low * length))
        highs.append(_quantile(pieces, high * length))
    return starts, means, lows, highs


def _quantile(pieces: Sequence[tuple[float, float]], seconds: float) -> float:
    """The value of sorted `pieces` at which `seconds` of time are reached."""
    reached = 0.0
    for value, held in pieces:
        reached += held
        if reached >= seconds - 1e-9:
            return value
    return pieces[-1][0]


def bucket_width(span: float) -> tuple[float, str]:
    """An hour, six hours or a day: whichever gives at most ~150 buckets."""
    for width, name in ((HOUR, "hour"), (6 * HOUR, "6 hours"), (DAY, "day")):
        if span / width <= _BUCKETS:
            return width, name
    return DAY * math.ceil(span / DAY / _BUCKETS), "days"


def x_label(span: tuple[float, float]) -> str:
    return (f"days since the first submission (line: mean per {bucket_width(span[1] - span[0])[1]}"
            f"; band: {_BAND})")


def draw_band(ax: Any, times: Sequence[float], values: Sequence[float], span: tuple[float, float],
          color: str, label: str, *, band: bool = True, style: str = "-") -> None:
    """The bucket means as a step line labelled `label`, over the p10-p90 band."""
    start, end = span
    width, _ = bucket_width(end - start)
    starts, means, lows, highs = spread(times, values, start, end, width)
    days = [(t - start) / DAY for t in starts] + [(end - start) / DAY]
    if band:
        ax.fill_between(days, [*lows, lows[-1]], [*highs, highs[-1]], step="post",
                        color=color, alpha=0.22, linewidth=0)
    ax.step(days, [*means, means[-1]], where="post", color=color, linewidth=1.0,
            linestyle=style, label=label)


class Legend:
    """One legend per figure: entries collected from every axis, each label once, placed
    right of the axes (outside the data)."""

    def __init__(self) -> None:
        self.entries: dict[str, Any] = {}

    def add(self, label: str, handle: Any) -> None:
        self.entries.setdefault(label, handle)

    def collect(self, ax: Any) -> None:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if not label.startswith("_"):
                self.add(label, handle)

    def band(self, color: str = "tab:blue") -> None:
        from matplotlib.patches import Patch

        self.add(_BAND, Patch(color=color, alpha=0.22, linewidth=0))

    def place(self, fig: Any) -> None:
        if self.entries:
            fig.legend(list(self.entries.values()), list(self.entries),
                       loc="outside right upper", fontsize=7, frameon=False)


def integer_ticks(ax: Any) -> None:
    from matplotlib.ticker import MaxNLocator

    ax.yaxis.set_major_locator(MaxNLocator(integer=True))


def pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def series_colors() -> list[str]:
    """One color per named series (`TOP_SERIES`); grey is kept for the others."""
    return [f"tab:{c}" for c in ("blue", "orange", "green", "red", "purple", "brown", "pink",
                                 "olive", "cyan")][:TOP_SERIES]


def plotted_resources(result: SimulationResult) -> tuple[str, ...]:
    """The resources figures draw: those jobs ask for that the cluster offers."""
    capacity = result.cluster.capacity
    names = [n for n in resource_names(result, workload_only=True) if capacity.get(n, 0) > 0]
    return tuple(names[:MAX_RESOURCES]) or (result.primary_resource,)


def _size(series: Series, result: SimulationResult, resources: Sequence[str]) -> float:
    """How much of the cluster a series held over the run, summed over `resources`."""
    total = 0.0
    for name in resources:
        capacity = result.cluster.capacity.get(name, 0)
        if capacity:
            total += series.integral(name, result.end_time) / capacity
    return total


def top_series(series: Mapping[str, Series], result: SimulationResult, resources: Sequence[str],
         count: int = TOP_SERIES) -> tuple[list[str], Series | None]:
    """The `count` largest series by name (largest first) and the rest summed (None when
    nothing is left over)."""
    ranked = sorted(series, key=lambda n: (-_size(series[n], result, resources), n))
    rest = ranked[count:]
    others = combined(series[rest[0]].kind, OTHERS, (series[n] for n in rest)) if rest else None
    return ranked[:count], others


def with_legend(fig: Any, legend: Legend) -> Any:
    """The figure with its one legend right of the axes (the constrained layout makes room
    for it)."""
    legend.place(fig)
    return fig


def save_figure(fig: Any, path: Path) -> Path:
    fig.savefig(path, dpi=110, bbox_inches="tight")
    pyplot().close(fig)
    return path

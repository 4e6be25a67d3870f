"""PNG plots of a sweep: every headline figure against each parameter, and a Pareto front.

Figures are drawn with matplotlib's object API on the Agg canvas, never through pyplot, so
plotting touches no global state (no backend switch, no figure registry to leak into).

- `vs-<parameter>.png`: one panel per figure that varies in the sweep; each point is a dot,
  the line joins the median at each value (the other parameters vary within a value). Values
  are placed in the order the sweep file lists them, `none` for null.
- `pareto-<x>-<y>.png`: each point, and per workload the points no other point beats on both
  figures (the Pareto front), joined and labelled with their parameter values.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from quotactor.sweep.headline import Figure
from quotactor.sweep.spec import Parameter

__all__ = ["pareto_front", "plot_pareto", "plot_parameters"]

_COLUMNS = 4
_COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")
Row = Mapping[str, Any]


def _figure(width: float, height: float) -> Any:
    from matplotlib.figure import Figure as MplFigure

    return MplFigure(figsize=(width, height), dpi=100, layout="constrained")


def _scale(figure: Figure, values: Sequence[float]) -> tuple[float, str]:
    """Divisor and axis label for `figure`: times in minutes, hours or days."""
    if figure.unit != "s":
        return 1.0, figure.label
    top = max(values, default=0.0)
    for size, name in ((86400.0, "days"), (3600.0, "hours"), (60.0, "minutes")):
        if top >= 2 * size:
            return size, f"{figure.label} ({name})"
    return 1.0, f"{figure.label} (seconds)"


def _label(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"{value:g}" if isinstance(value, float) else str(value)


def plot_parameters(rows: Sequence[Row], parameters: Sequence[Parameter],
                    figures: Sequence[Figure], directory: Path) -> list[Path]:
    """One PNG per parameter that takes more than one value among `rows` (a value whose
    combinations were all invalid has no point to show)."""
    written: list[Path] = []
    varying = [f for f in figures
               if len({row.get(f.name) for row in rows if row.get(f.name) is not None}) > 1]
    workloads = sorted({row["workload"] for row in rows})
    for parameter in parameters:
        if len({_label(row[parameter.name]) for row in rows}) < 2 or not varying:
            continue
        positions = {_label(v): i for i, v in enumerate(parameter.values)}
        count = len(varying)
        columns = min(_COLUMNS, count)
        lines = math.ceil(count / columns)
        fig = _figure(3.4 * columns, 2.6 * lines + 0.6)
        axes = fig.subplots(lines, columns, squeeze=False)
        for slot, figure in enumerate(varying):
            ax = axes[slot // columns][slot % columns]
            present = [float(r[figure.name]) for r in rows if r.get(figure.name) is not None]
            scale, ylabel = _scale(figure, present)
            for number, workload in enumerate(workloads):
                colour = _COLOURS[number % len(_COLOURS)]
                by_value: dict[int, list[float]] = {}
                for row in rows:
                    value = row.get(figure.name)
                    if row["workload"] != workload or value is None:
                        continue
                    by_value.setdefault(positions[_label(row[parameter.name])], []).append(
                        float(value) / scale)
                xs = sorted(by_value)
                ax.scatter([x for x in xs for _ in by_value[x]],
                           [y for x in xs for y in by_value[x]], s=12, alpha=0.45,
                           color=colour, linewidths=0)
                ax.plot(xs, [statistics.median(by_value[x]) for x in xs], color=colour,
                        linewidth=1.4, marker="o", markersize=3,
                        label=workload if len(workloads) > 1 and slot == 0 else None)
            ax.set_xticks(range(len(parameter.values)),
                          [_label(v) for v in parameter.values], fontsize=8)
            ax.set_title(ylabel, fontsize=9)
            ax.tick_params(axis="y", labelsize=8)
            ax.grid(True, alpha=0.3)
            if figure.unit == "jobs":
                ax.yaxis.get_major_locator().set_params(integer=True)
        for slot in range(count, lines * columns):
            axes[slot // columns][slot % columns].set_visible(False)
        fig.suptitle(f"headline figures against {parameter.name} "
                     f"({parameter.binding.describe()}); dots: points, line: median",
                     fontsize=10)
        if len(workloads) > 1:
            fig.legend(loc="outside lower center", ncols=min(len(workloads), 4), fontsize=8)
        path = directory / f"vs-{parameter.name}.png"
        fig.savefig(path)
        written.append(path)
    return written


def pareto_front(rows: Sequence[Row], x: Figure, y: Figure) -> list[Row]:
    """The rows no other row beats on both figures (ties kept), sorted by `x`."""
    def key(row: Row) -> tuple[float, float]:
        a, b = float(row[x.name]), float(row[y.name])
        return (a if x.lower_is_better else -a, b if y.lower_is_better else -b)

    usable = [r for r in rows if r.get(x.name) is not None and r.get(y.name) is not None]
    front: list[Row] = []
    best = math.inf
    for row in sorted(usable, key=lambda r: (*key(r), r["point"])):
        if key(row)[1] < best or (front and key(row) == key(front[-1])):
            front.append(row)
            best = min(best, key(row)[1])
    return front


def plot_pareto(rows: Sequence[Row], parameters: Sequence[Parameter], x: Figure, y: Figure,
                directory: Path) -> Path | None:
    """The points, the front joined; front points marked `#n` (points at the same place share
    a mark) and listed with their parameter values beside the plot, so labels never cover one
    another or the data."""
    usable = [r for r in rows if r.get(x.name) is not None and r.get(y.name) is not None]
    if not usable:
        return None
    xscale, xlabel = _scale(x, [float(r[x.name]) for r in usable])
    yscale, ylabel = _scale(y, [float(r[y.name]) for r in usable])
    fig = _figure(12.5, 6.5)
    ax, side = fig.subplots(1, 2, width_ratios=[2.3, 1.2])
    side.axis("off")
    listing: list[tuple[str, str]] = []
    workloads = sorted({r["workload"] for r in usable})
    for number, workload in enumerate(workloads):
        colour = _COLOURS[number % len(_COLOURS)]
        mine = [r for r in usable if r["workload"] == workload]
        ax.scatter([float(r[x.name]) / xscale for r in mine],
                   [float(r[y.name]) / yscale for r in mine], s=18, color=colour, alpha=0.35,
                   linewidths=0, label=f"{workload}: all points")
        front = pareto_front(mine, x, y)
        places: dict[tuple[float, float], list[Row]] = {}
        for row in front:
            places.setdefault((float(row[x.name]) / xscale, float(row[y.name]) / yscale),
                              []).append(row)
        ax.plot([p[0] for p in places], [p[1] for p in places], color=colour, marker="o",
                markersize=5, linewidth=1.2, label=f"{workload}: Pareto front")
        if len(workloads) > 1:
            listing.append((workload, colour))
        for place, ((px, py), group) in enumerate(places.items()):
            mark = ",".join(f"#{r['point']}" for r in group)
            ax.annotate(mark, (px, py), xytext=(5, 6 if place % 2 == 0 else -11),
                        textcoords="offset points", fontsize=7, color=colour)
            for row in group:
                values = " ".join(f"{p.name}={_label(row[p.name])}" for p in parameters)
                listing.append((f"#{row['point']}  {values}", colour))
    side.set_title("Pareto front, best " + x.label + " first", fontsize=9, loc="left")
    shown = listing[:40]
    for line, (text, colour) in enumerate(shown):
        side.text(0.0, 1.0 - (line + 1) / 42, text, fontsize=7, color=colour,
                  transform=side.transAxes, family="monospace")
    if len(listing) > len(shown):
        side.text(0.0, 0.0, f"... {len(listing) - len(shown)} more", fontsize=7,
                  transform=side.transAxes)
    ax.set_xlabel(f"{xlabel} ({'lower' if x.lower_is_better else 'higher'} is better)")
    ax.set_ylabel(f"{ylabel} ({'lower' if y.lower_is_better else 'higher'} is better)")
    ax.grid(True, alpha=0.3)
    ax.set_title(f"Pareto front: {x.label} vs {y.label}", fontsize=10)
    ax.legend(loc="best", fontsize=8)
    path = directory / f"pareto-{x.name}-{y.name}.png"
    fig.savefig(path)
    return path

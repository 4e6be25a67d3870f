"""The per-quota-group plot of the elastic and tree models: used against runtime, min, max.

Runtime is what a group may use at each moment (its min plus what it borrowed, or less when
it lent): where used touches runtime the group was held back, where runtime drops below used
its jobs were revoked. Used is drawn as a mean line with a p10-p90 band per bucket and
runtime as its bucket mean, like the other usage plots; one column per resource the jobs ask
for, one row per quota group (the largest, then the others summed).
"""

from __future__ import annotations

from typing import Any

from quotactor.core.resources import Resource
from quotactor.sim.fmt import axis_unit, short_name
from quotactor.sim.models.result import QuotaTrack, SimulationResult
from quotactor.sim.models.usage import Series, combined
from quotactor.sim.reports.canvas import (
    DAY,
    OTHERS,
    TOP_SERIES,
    Legend,
    bucket_width,
    bucketed,
    draw_band,
    plotted_resources,
    pyplot,
    with_legend,
    x_label,
)

__all__ = ["QUOTAS_PNG", "quota_figure"]

QUOTAS_PNG = "quota-groups.png"


def _steps(name: str, times: tuple[float, ...], values: tuple[Resource, ...]) -> Series:
    return Series("queue", name, times, values, (0,) * len(times))


def quota_figure(result: SimulationResult) -> Any:
    """One row per quota group (the `TOP_SERIES` largest by use, then the others with
    their used and runtime summed), one column per resource."""
    plt = pyplot()
    resources = plotted_resources(result)
    span = (result.start_time, result.end_time)
    capacity = result.cluster.capacity

    def size(track: QuotaTrack) -> float:
        used = _steps(track.name, track.times, track.used)
        return sum(used.integral(r, result.end_time) / capacity[r]
                   for r in resources if capacity.get(r, 0))

    ranked = sorted(result.quota_tracks, key=lambda t: (-size(t), t.name))
    rows: list[tuple[str, Series, Series, QuotaTrack | None]] = [
        (f"quota {t.name}", _steps(t.name, t.times, t.used), _steps(t.name, t.times, t.runtime),
         t) for t in ranked[:TOP_SERIES]]
    rest = ranked[TOP_SERIES:]
    if rest:
        rows.append((f"{OTHERS} ({len(rest)} quota groups, summed)",
                     combined("queue", OTHERS, (_steps(t.name, t.times, t.used) for t in rest)),
                     combined("queue", OTHERS,
                              (_steps(t.name, t.times, t.runtime) for t in rest)), None))
    fig, axes = plt.subplots(max(1, len(rows)), len(resources),
                             figsize=(max(11.0, 4.6 * len(resources) + 1.5),
                                      1.8 * max(1, len(rows)) + 0.9),
                             squeeze=False, sharex=True, layout="constrained")
    legend = Legend()
    for r, (title, used, runtime, track) in enumerate(rows):
        for c, resource in enumerate(resources):
            _panel(axes[r][c], title, used, runtime, track, resource, span)
            legend.collect(axes[r][c])
    legend.band()
    fig.supxlabel(x_label(span), fontsize=8)
    fig.suptitle(f"{result.label}: per quota group ({result.model} model): used against "
                 "runtime, min and max", fontsize=10)
    return with_legend(fig, legend)


def _panel(axis: Any, title: str, used: Series, runtime: Series, track: QuotaTrack | None,
           resource: str, span: tuple[float, float]) -> None:
    start, end = span
    bounds = [track.min.get(resource, 0), track.max.get(resource, 0)] if track else []
    largest = max([used.peak().get(resource, 0), *bounds])
    scale, unit = axis_unit(resource, largest)
    draw_band(axis, used.times, [v.get(resource, 0) / scale for v in used.values], span,
          "tab:blue", "used (mean per bucket)")
    width, _ = bucket_width(end - start)
    starts, means, _ = bucketed(runtime.times, [v.get(resource, 0) / scale
                                                for v in runtime.values], start, end, width)
    days = [(t - start) / DAY for t in starts] + [(end - start) / DAY]
    axis.step(days, [*means, means[-1]], where="post", color="tab:green", linewidth=1.2,
              linestyle=(0, (3, 2)), label="runtime (mean per bucket)")
    if track is not None:
        for bound, style, name in ((track.min, "--", "min"), (track.max, ":", "max")):
            if resource in bound:
                axis.axhline(bound[resource] / scale, color="tab:red", linestyle=style,
                             linewidth=1.0, label=name)
    axis.set_title(f"{title}: {short_name(resource)}", fontsize=8)
    axis.set_ylabel(unit, fontsize=7)
    axis.set_ylim(bottom=0)
    axis.tick_params(labelsize=7)

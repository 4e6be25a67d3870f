"""The per-quota-group plot of the elastic and tree models: used against runtime, min, max.

Runtime is what a group may use at each moment (its min plus what it borrowed, or less when
it lent): where used touches runtime the group was held back, where runtime drops below used
its jobs were revoked. Used is drawn as a mean line with a p10-p90 band per bucket and
runtime as its bucket mean, like the other usage plots; one column per resource the jobs ask
for, one row per quota group (the largest, then the others summed).

Kueue's ClusterQueues get a figure of their own (`CLUSTER_QUEUES_PNG`): one panel per
ClusterQueue on the primary resource, its used (mean line and band), borrowed and lent (bucket
means) against its nominal quota, the most it could hold and its cohort's total quota.
"""

from __future__ import annotations

from typing import Any

from quotactor.core.resources import Resource
from quotactor.sim.fmt import axis_unit, quantity, short_name
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

__all__ = ["CLUSTER_QUEUES_PNG", "QUOTAS_PNG", "cluster_queue_figure", "quota_figure"]

QUOTAS_PNG = "quota-groups.png"
CLUSTER_QUEUES_PNG = "cluster-queues.png"


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
    bounds = [track.min.get(resource, 0), track.max.get(resource, 0)] if track else []
    largest = max([used.peak().get(resource, 0), *bounds])
    scale, unit = axis_unit(resource, largest)
    draw_band(axis, used.times, [v.get(resource, 0) / scale for v in used.values], span,
          "tab:blue", "used (mean per bucket)")
    _mean_line(axis, runtime.times, [v.get(resource, 0) / scale for v in runtime.values], span,
               "tab:green", (0, (3, 2)), "runtime (mean per bucket)")
    if track is not None:
        for bound, style, name in ((track.min, "--", "min"), (track.max, ":", "max")):
            if resource in bound:
                axis.axhline(bound[resource] / scale, color="tab:red", linestyle=style,
                             linewidth=1.0, label=name)
    axis.set_title(f"{title}: {short_name(resource)}", fontsize=8)
    axis.set_ylabel(unit, fontsize=7)
    axis.set_ylim(bottom=0)
    axis.tick_params(labelsize=7)


def _mean_line(axis: Any, times: tuple[float, ...], values: list[float],
               span: tuple[float, float], color: str, style: Any, label: str) -> None:
    """A step function's bucket means as a step line."""
    start, end = span
    width, _ = bucket_width(end - start)
    starts, means, _ = bucketed(times, values, start, end, width)
    days = [(t - start) / DAY for t in starts] + [(end - start) / DAY]
    axis.step(days, [*means, means[-1]], where="post", color=color, linewidth=1.2,
              linestyle=style, label=label)


def cluster_queue_figure(result: SimulationResult) -> Any:
    """One panel per ClusterQueue (by name; two columns beyond two queues) on the primary
    resource: used, borrowed and lent over time against its nominal quota, the most it could
    hold and its cohort's total quota."""
    plt = pyplot()
    resource = result.primary_resource
    span = (result.start_time, result.end_time)
    tracks = sorted(result.quota_tracks, key=lambda t: t.name)
    columns = 1 if len(tracks) <= 2 else 2
    rows = max(1, -(-len(tracks) // columns))
    fig, axes = plt.subplots(rows, columns, figsize=(11.0, 2.3 * rows + 1.0), squeeze=False,
                             sharex=True, layout="constrained")
    legend = Legend()
    for index, track in enumerate(tracks):
        axis = axes[index // columns][index % columns]
        _cluster_queue_panel(axis, track, resource, span)
        legend.collect(axis)
    for index in range(len(tracks), rows * columns):
        axes[index // columns][index % columns].set_visible(False)
    legend.band()
    fig.supxlabel(x_label(span), fontsize=8)
    fig.suptitle(f"{result.label}: per ClusterQueue: used, borrowed and lent against nominal "
                 "quota", fontsize=10)
    return with_legend(fig, legend)


def _cluster_queue_panel(axis: Any, track: QuotaTrack, resource: str,
                         span: tuple[float, float]) -> None:
    nominal = track.min.get(resource, 0)
    most = track.max.get(resource, 0)
    cohort = track.cohort_quota.get(resource, 0)
    peak = max((v.get(resource, 0) for v in track.used), default=0)
    scale, unit = axis_unit(resource, max(nominal, most, cohort, peak))
    draw_band(axis, track.times, [v.get(resource, 0) / scale for v in track.used], span,
              "tab:blue", "used (mean per bucket)")
    for values, color, style, label in (
            (track.borrowed, "tab:orange", "-", "borrowed (mean per bucket)"),
            (track.lent, "tab:purple", (0, (3, 2)), "lent (mean per bucket, attributed)")):
        if values:
            _mean_line(axis, track.times, [v.get(resource, 0) / scale for v in values], span,
                       color, style, label)
    for bound, color, style, label in (
            (nominal, "tab:red", "--", "nominal quota"),
            (most, "tab:red", ":", "max (nominal + what it may borrow)"),
            (cohort, "tab:gray", "-.", "cohort's total quota")):
        if bound:
            axis.axhline(bound / scale, color=color, linestyle=style, linewidth=1.0,
                         label=label)
    figures = [f"nominal {quantity(resource, nominal)}"]
    if most:
        figures.append(f"max {quantity(resource, most)}")
    if cohort:
        figures.append(f"cohort {quantity(resource, cohort)}")
    axis.set_title(f"ClusterQueue {track.name}: {', '.join(figures)} {unit}", fontsize=8)
    axis.set_ylabel(unit, fontsize=7)
    axis.set_ylim(0, max(nominal, most, cohort, peak, 1) / scale * 1.08)
    axis.tick_params(labelsize=7)

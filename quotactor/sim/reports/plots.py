"""PNG plots of a replay: utilization and its split, usage against limits, waits, held time.

Every figure stays readable however many users, groups or queues a trace has: it shows the
`TOP_SERIES` largest and one "others" series for the rest, and has one legend, outside the
data. Time series are bucketed (an hour, six hours or a day, ~150 buckets): the line is the
time-weighted mean of each bucket and the band the 10th to 90th percentile of the time within
it, how the value spread over the bucket (the maximum sits at the top in nearly every bucket
of a busy cluster and says little). Usage is drawn for every resource the jobs ask for, in
human units: cores, Gi, GPUs.

The drawing they share (buckets, bands, the legend, matplotlib) lives in `canvas`; the
per-quota-group figure of the elastic and tree models in `quota_plot`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from quotactor.sim.fmt import axis_unit, duration, percent, quantity, short_name
from quotactor.sim.models.limits import LimitLine, tightest
from quotactor.sim.models.result import SimulationResult
from quotactor.sim.models.usage import Series, combined
from quotactor.sim.models.utilization import ResourceUse, busy_series, resource_use
from quotactor.sim.reports.canvas import (
    DAY,
    HOUR,
    OTHER_COLOR,
    OTHERS,
    TOP_SERIES,
    Legend,
    bucket_width,
    bucketed,
    draw_band,
    integer_ticks,
    plotted_resources,
    pyplot,
    save_figure,
    series_colors,
    spread,
    top_series,
    with_legend,
    x_label,
)
from quotactor.sim.reports.quota_plot import (
    CLUSTER_QUEUES_PNG,
    QUOTAS_PNG,
    cluster_queue_figure,
    quota_figure,
)

__all__ = ["COMPARE_PNG", "GROUPS_PNG", "HELD_PNG", "OTHERS", "QUEUES_PNG", "TOP_SERIES",
           "USERS_PNG", "UTILIZATION_PNG", "WAITS_PNG", "bucketed", "figures", "plot_all",
           "plot_comparison", "spread", "top_held_users"]

GROUPS_PNG = "usage-groups.png"
USERS_PNG = "usage-top-users.png"
WAITS_PNG = "wait-times.png"
UTILIZATION_PNG = "utilization.png"
QUEUES_PNG = "queues.png"
HELD_PNG = "held-back-users.png"
COMPARE_PNG = "comparison.png"
# -- usage against limits -------------------------------------------------------------------

def _usage_panel(ax: Any, series: Series | None, limits: Sequence[LimitLine], resource: str,
                 capacity: int, span: tuple[float, float], title: str,
                 legend: Legend) -> None:
    """One resource of one user or group: usage with its tightest limit (dashed) and the
    cluster (dotted); running jobs on a right axis when an application limit applies."""
    line = tightest(limits, resource)
    largest = max([series.peak().get(resource, 0) if series is not None else 0,
                   line.resources[resource] if line is not None else 0])
    scale, unit = axis_unit(resource, largest or capacity)
    if series is not None:
        draw_band(ax, series.times, [v.get(resource, 0) / scale for v in series.values], span,
              "tab:blue", "usage (mean per bucket)")
    where = ""
    if line is not None:
        limit = line.resources[resource]
        ax.axhline(limit / scale, color="tab:red", linestyle="--", linewidth=1.0,
                   label="tightest limit on the queue path")
        where = f", limit {quantity(resource, limit)} at {line.path}"
    top = max(largest, 1) * 1.2
    if capacity <= top:
        ax.axhline(capacity / scale, color="grey", linestyle=":", linewidth=0.8,
                   label="cluster")
    ax.set_ylim(0, top / scale)
    ax.set_title(f"{title}: {short_name(resource)}{where}", fontsize=8)
    ax.set_ylabel(unit, fontsize=7)
    ax.tick_params(labelsize=7)
    legend.collect(ax)
    apps = [x for x in limits if x.applications]
    if apps and series is not None:
        cap = min(apps, key=lambda x: (x.applications, x.path))
        right = ax.twinx()
        draw_band(right, series.times, [float(c) for c in series.running], span, "tab:orange",
              "running jobs (mean per bucket)")
        right.axhline(cap.applications, color="tab:orange", linestyle="--", linewidth=1.0,
                      label="maxApplications")
        right.set_ylim(0, max(cap.applications, max(series.running)) * 1.25 + 0.5)
        right.set_ylabel("running jobs", fontsize=7)
        right.tick_params(labelsize=7)
        integer_ticks(right)
        legend.collect(right)


def _usage_grid(names: Sequence[str], series: Mapping[str, Series], others: Series | None,
                limits: Mapping[str, tuple[LimitLine, ...]], result: SimulationResult,
                heading: str, kind: str) -> Any:
    """One row per name (and one for the others), one column per resource."""
    plt = pyplot()
    resources = plotted_resources(result)
    rows: list[tuple[str, Series | None, Sequence[LimitLine]]] = [
        (f"{kind} {n}", series.get(n), limits.get(n, ())) for n in names]
    if others is not None:
        rows.append((f"{OTHERS} (summed)", others, ()))
    rows = rows or [(f"no {kind}", None, ())]
    span = (result.start_time, result.end_time)
    fig, axes = plt.subplots(len(rows), len(resources),
                             figsize=(max(11.0, 4.6 * len(resources) + 1.5),
                                      1.8 * len(rows) + 0.9),
                             squeeze=False, sharex=True, layout="constrained")
    legend = Legend()
    for r, (title, values, lines) in enumerate(rows):
        for c, resource in enumerate(resources):
            _usage_panel(axes[r][c], values, lines, resource,
                         result.cluster.capacity.get(resource, 0), span, title, legend)
    legend.band()
    fig.supxlabel(x_label(span), fontsize=8)
    fig.suptitle(heading, fontsize=10)
    return with_legend(fig, legend)


def _waits(result: SimulationResult) -> Any:
    """Histogram of waits, and their distribution per group (the largest groups by jobs
    started, the rest as one)."""
    plt = pyplot()
    fig, (hist, cdf) = plt.subplots(1, 2, figsize=(11, 4), layout="constrained")
    by_group: dict[str, list[float]] = {}
    for outcome in result.outcomes:
        if outcome.wait is not None:
            by_group.setdefault(outcome.group or "(none)", []).append(outcome.wait)
    everyone = sorted(w for waits in by_group.values() for w in waits)
    top = max(everyone[-1] if everyone else 1.0, 1.0)
    edges = [0.0] + [10 ** (k / 4) for k in range(0, math.ceil(4 * math.log10(top)) + 2)]
    waited = [w for w in everyone if w > 0]
    hist.hist([max(w, 1.0) for w in waited], bins=edges[1:], color="tab:blue")
    hist.set_xscale("log")
    hist.set_xlabel("wait (log scale)", fontsize=8)
    hist.set_ylabel("jobs", fontsize=8)
    hist.set_title(f"waits of the {len(waited)} jobs that waited "
                   f"({len(everyone) - len(waited)} started at once)", fontsize=9)
    ranked = sorted(by_group, key=lambda g: (-len(by_group[g]), g))
    shown = [(g, by_group[g], color) for g, color in zip(ranked, series_colors(), strict=False)]
    rest = sorted(w for g in ranked[len(shown):] for w in by_group[g])
    if rest:
        shown.append((f"{OTHERS} ({len(ranked) - len(shown)} groups)", rest, OTHER_COLOR))
    for group, waits, color in shown:
        waits.sort()
        shares = [(i + 1) / len(waits) for i in range(len(waits))]
        cdf.step([max(w, 1.0) for w in waits], shares, where="post", color=color,
                 label=f"{group} ({len(waits)} jobs)")
    cdf.set_xscale("log")
    cdf.set_xlabel("wait (log scale; 0 shown as 1s)", fontsize=8)
    cdf.set_ylabel("share of started jobs", fontsize=8)
    cdf.set_title("wait-time distribution per group (most jobs first)", fontsize=9)
    for ax in (hist, cdf):
        ax.tick_params(labelsize=7)
        _duration_ticks(ax)
    fig.suptitle(f"{result.label}: wait times", fontsize=10)
    legend = Legend()
    legend.collect(cdf)
    return with_legend(fig, legend)


def _duration_ticks(ax: Any) -> None:
    """x ticks of a log axis of seconds at 1s, 10s, 1m, 10m, 1h, 1d, 10d, 100d."""
    from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator

    marks = ((1.0, "1s"), (10.0, "10s"), (60.0, "1m"), (600.0, "10m"), (HOUR, "1h"),
             (DAY, "1d"), (10 * DAY, "10d"), (100 * DAY, "100d"), (1000 * DAY, "1000d"))
    ax.xaxis.set_major_locator(FixedLocator([m for m, _ in marks]))
    ax.xaxis.set_major_formatter(FixedFormatter([t for _, t in marks]))
    ax.xaxis.set_minor_locator(NullLocator())


def top_held_users(result: SimulationResult, count: int) -> list[str]:
    """The users whose jobs were held back longest by limits or full nodes (ties by name)."""
    held = {u.name: sum(u.held.values()) for u in result.users}
    return [n for n in sorted(held, key=lambda n: (-held[n], n)) if held[n] > 0][:count]


# -- utilization ----------------------------------------------------------------------------

def _timeline_panels(axes: Sequence[Any], result: SimulationResult, resources: Sequence[str],
                     color: str, label: str, span: tuple[float, float]) -> None:
    """Per resource the share of the cluster held and busy, then running and pending jobs."""
    total = result.total_series
    busy = busy_series(result)
    for ax, resource in zip(axes, resources, strict=False):
        capacity = float(result.cluster.capacity.get(resource, 0)) or 1.0
        draw_band(ax, total.times, [100.0 * v.get(resource, 0) / capacity for v in total.values],
              span, color, f"{label}held by allocations (mean per bucket)")
        draw_band(ax, busy.times, [100.0 * v.get(resource, 0) / capacity for v in busy.values],
              span, color, f"{label}busy: completed runs (mean per bucket)", band=False,
              style="--")
    running, pending = axes[len(resources)], axes[len(resources) + 1]
    draw_band(running, total.times, [float(r) for r in total.running], span, color, "_running")
    points = result.pending_series or ((result.start_time, 0),)
    draw_band(pending, [t for t, _ in points], [float(n) for _, n in points], span, color,
          "_pending")


def _split_title(use: ResourceUse) -> str:
    return (f"busy {percent(use.busy_share)}, lost {percent(use.lost_share)}, "
            f"reserved/idle {percent(use.reserved_share)} of {quantity(use.name, use.capacity)}"
            f" {use.name}")


def _utilization(results: Sequence[SimulationResult], title: str) -> Any:
    """Per resource the share of the cluster held by allocations and busy (the split of
    capacity x span in each panel's title), then running and pending jobs."""
    plt = pyplot()
    first = results[0]
    resources = plotted_resources(first)
    span = (first.start_time, max(r.end_time for r in results))
    panels = len(resources) + 2
    fig, axes = plt.subplots(panels, 1, figsize=(11, 2.1 * panels + 0.8), sharex=True,
                             layout="constrained")
    colors = ("tab:blue", "tab:orange")
    names = ("A: ", "B: ") if len(results) > 1 else ("",)
    for result, color, name in zip(results, colors, names, strict=False):
        _timeline_panels(axes, result, resources, color, name, span)
    uses = [{u.name: u for u in resource_use(r)} for r in results]
    for ax, resource in zip(axes, resources, strict=False):
        ax.set_ylabel(f"{short_name(resource)} (% of cluster)", fontsize=8)
        ax.set_ylim(0, 105)
        ax.set_title("; ".join(f"{n}{_split_title(u[resource])}"
                               for n, u in zip(names, uses, strict=False)), fontsize=8)
    axes[-2].set_ylabel("running jobs", fontsize=8)
    axes[-1].set_ylabel("pending jobs", fontsize=8)
    legend = Legend()
    for ax in axes:
        ax.tick_params(labelsize=7)
        legend.collect(ax)
    for ax in axes[-2:]:
        ax.set_ylim(0, max(1.0, ax.get_ylim()[1]))  # all zero: 0..1, not 0..0.054
        integer_ticks(ax)
    legend.band(colors[0] if len(results) == 1 else OTHER_COLOR)
    axes[-1].set_xlabel(x_label(span), fontsize=8)
    fig.suptitle(title, fontsize=10)
    return with_legend(fig, legend)


def _queues(result: SimulationResult) -> Any:
    """Each queue's share of the cluster over time per resource, and its running jobs,
    stacked (the largest queues, then the others as one)."""
    plt = pyplot()
    resources = plotted_resources(result)
    span = (result.start_time, result.end_time)
    start, end = span
    width, _ = bucket_width(end - start)
    names, others = top_series(result.queue_series, result, resources)
    stacked = [(n, result.queue_series[n], c) for n, c in zip(names, series_colors(), strict=False)]
    if others is not None:
        stacked.append((f"{OTHERS} ({len(result.queue_series) - len(names)} queues)", others,
                        OTHER_COLOR))
    fig, axes = plt.subplots(len(resources) + 1, 1, figsize=(11, 2.2 * len(resources) + 3),
                             sharex=True, squeeze=False, layout="constrained")
    axes = [row[0] for row in axes]
    columns: list[tuple[str, Callable[[Series], list[float]]]] = [
        (r, _share_of(result, r)) for r in resources]
    columns.append(("running jobs", lambda s: [float(x) for x in s.running]))
    for ax, (what, values) in zip(axes, columns, strict=True):
        days: list[float] = []
        layers: list[list[float]] = []
        for _, series, _ in stacked:
            starts, means, _, _ = spread(series.times, values(series), start, end, width)
            days = [(t - start) / DAY for t in starts] + [(end - start) / DAY]
            layers.append([*means, means[-1]])
        if layers:
            ax.stackplot(days, layers, labels=[n for n, _, _ in stacked],
                         colors=[c for _, _, c in stacked], step="post", alpha=0.8)
        ax.set_ylabel(what if what == "running jobs"
                      else f"{short_name(what)} (% of cluster)", fontsize=8)
        ax.set_ylim(bottom=0)
        ax.tick_params(labelsize=7)
    integer_ticks(axes[-1])
    axes[-1].set_xlabel(f"days since the first submission (stacked means per "
                        f"{bucket_width(end - start)[1]})", fontsize=8)
    fig.suptitle(f"{result.label}: usage per queue (largest first)", fontsize=10)
    legend = Legend()
    legend.collect(axes[0])
    return with_legend(fig, legend)


def _share_of(result: SimulationResult, resource: str) -> Callable[[Series], list[float]]:
    capacity = float(result.cluster.capacity.get(resource, 0)) or 1.0
    return lambda s: [100.0 * v.get(resource, 0) / capacity for v in s.values]


_HELD_COLORS = {"user": "tab:red", "group": "tab:purple", "queue": "tab:orange",
                "node": "tab:grey"}


def _held_label(kind: str, quota_group: str) -> str:
    """What held jobs back, as the legend says it (the quota models wait on quota groups)."""
    if kind == "node":
        return "full nodes" if not quota_group else "full cluster"
    if kind == "queue" and quota_group:
        return quota_group
    return f"{kind} limit"


def _held_users(result: SimulationResult, count: int) -> Any:
    """The users held back longest: one bar per obstacle that held them, on a log scale of
    time summed over their jobs, so an hour shows beside three months."""
    plt = pyplot()
    names = top_held_users(result, count)
    stats = {u.name: u for u in result.users}
    fig, ax = plt.subplots(figsize=(10, 0.45 * max(len(names), 3) + 1.4),
                           layout="constrained")
    quota = f"{result.model} quota group" if result.quota_tracks else ""
    kinds = [k for k in _HELD_COLORS if any(stats[n].held.get(k, 0.0) > 0 for n in names)]
    height = 0.8 / max(len(kinds), 1)
    everything = [s for n in names for s in stats[n].held.values() if s > 0]
    floor = 10 ** math.floor(math.log10(min(everything))) if everything else 1.0
    for index, kind in enumerate(kinds):
        seconds = [stats[n].held.get(kind, 0.0) for n in names]
        rows = [r - 0.4 + height * (index + 0.5) for r in range(len(names))]
        ax.barh(rows, [max(s - floor, 0.0) if s > 0 else 0.0 for s in seconds], left=floor,
                height=height, color=_HELD_COLORS[kind], label=_held_label(kind, quota))
    for row, name in enumerate(names):
        total = sum(stats[name].held.values())
        ax.text(total * 1.15, row, f"{duration(total)} in all", va="center", fontsize=7)
    ax.set_yticks(range(len(names)), names, fontsize=7)
    ax.invert_yaxis()
    if names:
        ax.set_xscale("log")
        ax.set_xlim(floor, max(sum(stats[n].held.values()) for n in names) * 4)
        _duration_ticks(ax)
    ax.set_xlabel("time held back, summed over the user's jobs (log scale)", fontsize=8)
    ax.tick_params(labelsize=7)
    if not names:
        ax.text(0.5, 0.5, "no job was held back", ha="center", va="center",
                transform=ax.transAxes)
    fig.suptitle(f"{result.label}: the {len(names)} users held back longest", fontsize=10)
    legend = Legend()
    legend.collect(ax)
    return with_legend(fig, legend)


def plot_comparison(a: SimulationResult, b: SimulationResult, out_dir: Path) -> Path:
    """Both runs' utilization, running and pending jobs overlaid."""
    return save_figure(_utilization([a, b], f"A = {a.label} (blue) vs B = {b.label} (orange)"),
                 out_dir / COMPARE_PNG)


def figures(result: SimulationResult, users: int = 6) -> Iterator[tuple[str, Any]]:
    """Each figure of `result` with its file name, built one at a time (the caller saves
    and closes it)."""
    resources = plotted_resources(result)
    units = ", ".join(short_name(r) for r in resources)
    if result.quota_tracks:

        yield QUOTAS_PNG, quota_figure(result)
    if result.quota_tracks and result.model == "kueue":
        yield CLUSTER_QUEUES_PNG, cluster_queue_figure(result)
    yield UTILIZATION_PNG, _utilization(
        [result], f"{result.label}: cluster utilization, running and pending jobs")
    yield QUEUES_PNG, _queues(result)
    yield HELD_PNG, _held_users(result, max(users, 10))
    against = ("(quota bounds in quota-groups.png)" if result.quota_tracks
               else "against group limits")
    groups, other_groups = top_series(result.group_series, result, resources)
    yield GROUPS_PNG, _usage_grid(
        groups, result.group_series, other_groups, result.group_limits, result,
        f"{result.label}: {units} usage of the {len(groups)} largest groups {against}",
        "group")
    held = top_held_users(result, users) or sorted(result.user_series)[:users]
    rest = [result.user_series[n] for n in result.user_series if n not in held]
    yield USERS_PNG, _usage_grid(
        held, result.user_series, combined("user", OTHERS, rest) if rest else None,
        result.user_limits, result,
        f"{result.label}: {units} usage of the {len(held)} users held back longest, against "
        "their limits", "user")
    yield WAITS_PNG, _waits(result)


def plot_all(result: SimulationResult, out_dir: Path, users: int = 6) -> list[Path]:
    """Write the plots into `out_dir`; returns their paths."""
    return [save_figure(fig, out_dir / name) for name, fig in figures(result, users)]

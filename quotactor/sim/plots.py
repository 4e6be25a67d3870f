"""PNG plots of a replay: usage against limits over time, and how long jobs waited.

matplotlib is imported here only, with the Agg backend selected before pyplot loads, so
plotting works on servers without a display and never touches a user's GUI setup. Figures are
closed after saving: a long session that plots many comparisons does not accumulate them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from quotactor.sim.fmt import quantity
from quotactor.sim.limits import LimitLine, tightest
from quotactor.sim.result import SimulationResult
from quotactor.sim.usage import Series

__all__ = ["COMPARE_PNG", "GROUPS_PNG", "HELD_PNG", "QUEUES_PNG", "USERS_PNG",
           "UTILIZATION_PNG", "WAITS_PNG", "bucketed", "plot_all", "plot_comparison",
           "top_held_users"]

GROUPS_PNG = "usage-groups.png"
USERS_PNG = "usage-top-users.png"
WAITS_PNG = "wait-times.png"
UTILIZATION_PNG = "utilization.png"
QUEUES_PNG = "queues.png"
HELD_PNG = "held-back-users.png"
COMPARE_PNG = "comparison.png"
_DAY = 86400.0
_HOUR = 3600.0
_BUCKETS = 150


def bucketed(times: Sequence[float], values: Sequence[float], start: float, end: float,
             width: float) -> tuple[list[float], list[float], list[float]]:
    """A step function (`values[i]` from `times[i]`) as buckets of `width` seconds from
    `start`: (bucket starts, time-weighted means, maxima). Over 92 days a raw step plot is a
    wall of spikes; a mean line with a max band reads at a glance."""
    count = max(1, math.ceil((end - start) / width))
    sums = [0.0] * count
    tops = [0.0] * count
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
                sums[b] += value * held
                tops[b] = max(tops[b], value)
    starts = [start + b * width for b in range(count)]
    means = [sums[b] / min(width, max(end - starts[b], 1e-9)) for b in range(count)]
    return starts, means, tops


def _bucket_width(span: float) -> tuple[float, str]:
    """An hour, six hours or a day: whichever gives at most ~150 buckets."""
    for width, name in ((_HOUR, "hour"), (6 * _HOUR, "6 hours"), (_DAY, "day")):
        if span / width <= _BUCKETS:
            return width, name
    return _DAY * math.ceil(span / _DAY / _BUCKETS), "days"


def _band(ax: Any, times: Sequence[float], values: Sequence[float], span: tuple[float, float],
          color: str, label: str, width: float) -> None:
    start, end = span
    starts, means, tops = bucketed(times, values, start, end, width)
    days = [(t - start) / _DAY for t in starts] + [(end - start) / _DAY]
    means, tops = [*means, means[-1]], [*tops, tops[-1]]
    ax.fill_between(days, means, tops, step="post", color=color, alpha=0.25, linewidth=0)
    ax.step(days, means, where="post", color=color, linewidth=1.0, label=label)


def _legend_outside(ax: Any, handles: Any = None, labels: Any = None) -> None:
    if handles is None:
        handles, labels = ax.get_legend_handles_labels()
    ax.legend(handles, labels, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              borderaxespad=0.0, frameon=False)


def _integer_ticks(ax: Any) -> None:
    from matplotlib.ticker import MaxNLocator

    ax.yaxis.set_major_locator(MaxNLocator(integer=True))


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _unit(resource: str) -> tuple[float, str]:
    if resource == "vcore":
        return 1000.0, "vcores"
    if resource == "memory":
        return float(2**30), "memory (GiB)"
    return 1.0, resource


def _panel(ax: Any, series: Series | None, limits: Sequence[LimitLine], resource: str,
           capacity: float, title: str, span: tuple[float, float]) -> None:
    """Usage (left axis) and running jobs (right axis, only when an application limit
    applies), each with its tightest limit as a dashed line."""
    scale, label = _unit(resource)
    start, end = span
    times: list[float] = []
    width, _ = _bucket_width(end - start)
    if series is not None and series.times:
        times = list(series.times)
        _band(ax, times, [v.get(resource, 0) / scale for v in series.values], span,
              "tab:blue", "usage (mean, band to max)", width)
    line = tightest(limits, resource)
    if line is not None:
        ax.axhline(line.resources[resource] / scale, color="tab:red", linestyle="--",
                   linewidth=1.0, label=f"{resource} limit at {line.path}")
    ax.axhline(capacity / scale, color="grey", linestyle=":", linewidth=0.8, label="cluster")
    ax.set_title(title, fontsize=9)
    ax.set_ylabel(label, fontsize=8)
    ax.set_ylim(bottom=0)
    ax.tick_params(labelsize=7)
    handles, labels = ax.get_legend_handles_labels()
    apps = [x for x in limits if x.applications]
    if apps and series is not None and times:
        cap = min(apps, key=lambda x: (x.applications, x.path))
        right = ax.twinx()
        counts = list(series.running)
        _band(right, times, [float(c) for c in counts], span, "tab:orange",
              "running jobs (mean, band to max)", width)
        right.axhline(cap.applications, color="tab:orange", linestyle="--", linewidth=1.0,
                      label=f"maxApplications at {cap.path}")
        right.set_ylim(0, max(cap.applications, max(counts)) * 1.25 + 0.5)
        right.set_ylabel("running jobs", fontsize=8)
        right.tick_params(labelsize=7)
        _integer_ticks(right)
        more_handles, more_labels = right.get_legend_handles_labels()
        handles, labels = handles + more_handles, labels + more_labels
    ax.legend(handles, labels, fontsize=6, loc="upper left", bbox_to_anchor=(1.08, 1.0),
              borderaxespad=0.0, frameon=False)


def _usage_grid(path: Path, names: Sequence[str], series: Mapping[str, Series],
                limits: Mapping[str, tuple[LimitLine, ...]], resource: str, capacity: float,
                span: tuple[float, float], heading: str, kind: str) -> Path:
    plt = _pyplot()
    columns = 1  # legends sit right of each panel, off the data
    rows = max(1, len(names))
    fig, axes = plt.subplots(rows, columns, figsize=(11, 1.9 * rows + 0.9),
                             squeeze=False, sharex=True)
    for index, name in enumerate(names):
        ax = axes[index // columns][index % columns]
        _panel(ax, series.get(name), limits.get(name, ()), resource, capacity,
               f"{kind} {name}", span)
    for index in range(len(names), rows * columns):
        axes[index // columns][index % columns].set_visible(False)
    bucket = _bucket_width(span[1] - span[0])[1]
    for ax in axes[-1]:
        ax.set_xlabel(f"days since the first submission (mean per {bucket}, band up to the "
                      "maximum)", fontsize=8)
    fig.suptitle(heading, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _waits(path: Path, result: SimulationResult) -> Path:
    plt = _pyplot()
    fig, (hist, cdf) = plt.subplots(1, 2, figsize=(11, 4))
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
    hist.set_xlabel("wait (seconds, log scale)", fontsize=8)
    hist.set_ylabel("jobs", fontsize=8)
    hist.set_title(f"waits of the {len(waited)} jobs that waited "
                   f"({len(everyone) - len(waited)} started at once)", fontsize=9)
    for group, waits in sorted(by_group.items()):
        waits.sort()
        shares = [(i + 1) / len(waits) for i in range(len(waits))]
        cdf.step([max(w, 1.0) for w in waits], shares, where="post", label=group)
    cdf.set_xscale("log")
    cdf.set_xlabel("wait (seconds, log scale; 0 shown as 1)", fontsize=8)
    cdf.set_ylabel("share of started jobs", fontsize=8)
    cdf.set_title("wait-time distribution per group", fontsize=9)
    cdf.legend(fontsize=7)
    for ax in (hist, cdf):
        ax.tick_params(labelsize=7)
    fig.suptitle(f"{result.label}: wait times", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def top_held_users(result: SimulationResult, count: int) -> list[str]:
    """The users whose jobs were held back longest by limits or full nodes (ties by name)."""
    held = {u.name: sum(u.held.values()) for u in result.users}
    return [n for n in sorted(held, key=lambda n: (-held[n], n)) if held[n] > 0][:count]


def _timeline_panels(axes: Sequence[Any], result: SimulationResult, color: str,
                     label: str, width: float, span: tuple[float, float]) -> None:
    """Utilization (%), then running and pending jobs, as hourly/daily mean lines with max
    bands, on `axes` (three axes sharing x)."""
    resource = result.primary_resource
    capacity = float(result.cluster.capacity.get(resource, 0)) or 1.0
    total = result.total_series
    used = [100.0 * v.get(resource, 0) / capacity for v in total.values]
    _band(axes[0], total.times, used, span, color, label, width)
    _band(axes[1], total.times, [float(r) for r in total.running], span, color, label, width)
    pending = result.pending_series or ((result.start_time, 0),)
    _band(axes[2], [t for t, _ in pending], [float(n) for _, n in pending], span, color,
          label, width)


def _utilization(path: Path, results: Sequence[SimulationResult], title: str) -> Path:
    plt = _pyplot()
    first = results[0]
    span = (first.start_time, max(r.end_time for r in results))
    width, width_name = _bucket_width(span[1] - span[0])
    fig, axes = plt.subplots(3, 1, figsize=(11, 7), sharex=True)
    for result, color in zip(results, ("tab:blue", "tab:orange"), strict=False):
        _timeline_panels(axes, result, color, result.label, width, span)
    resource = first.primary_resource
    axes[0].set_ylabel(f"{resource} in use (% of cluster)", fontsize=8)
    axes[0].set_ylim(0, 105)
    axes[1].set_ylabel("running jobs", fontsize=8)
    axes[2].set_ylabel("pending jobs", fontsize=8)
    for ax in axes:
        ax.set_ylim(bottom=0)
        ax.tick_params(labelsize=7)
        _legend_outside(ax)
    for ax in axes[1:]:
        ax.set_ylim(0, max(1.0, ax.get_ylim()[1]))  # all zero: 0..1, not 0..0.054
        _integer_ticks(ax)
    axes[-1].set_xlabel(f"days since the first submission (line: mean per {width_name}; "
                        "band: up to the maximum)", fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _queues(path: Path, result: SimulationResult) -> Path:
    """Each queue's share of the cluster over time, and its running jobs."""
    plt = _pyplot()
    resource = result.primary_resource
    capacity = float(result.cluster.capacity.get(resource, 0)) or 1.0
    span = (result.start_time, result.end_time)
    width, width_name = _bucket_width(span[1] - span[0])
    names = sorted(result.queue_series)
    fig, axes = plt.subplots(2, 1, figsize=(11, 5.5), sharex=True)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for index, name in enumerate(names):
        series = result.queue_series[name]
        color = colors[index % len(colors)]
        _band(axes[0], series.times,
              [100.0 * v.get(resource, 0) / capacity for v in series.values], span, color,
              name, width)
        _band(axes[1], series.times, [float(r) for r in series.running], span, color, name,
              width)
    axes[0].set_ylabel(f"{resource} (% of cluster)", fontsize=8)
    axes[1].set_ylabel("running jobs", fontsize=8)
    _integer_ticks(axes[1])
    for ax in axes:
        ax.set_ylim(bottom=0)
        ax.tick_params(labelsize=7)
        _legend_outside(ax)
    axes[-1].set_xlabel(f"days since the first submission (line: mean per {width_name}; "
                        "band: up to the maximum)", fontsize=8)
    fig.suptitle(f"{result.label}: usage per queue", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


_HELD_COLORS = {"user": "tab:red", "group": "tab:purple", "queue": "tab:orange",
                "node": "tab:grey"}


def _held_label(kind: str, quota_group: str) -> str:
    """What held jobs back, as the legend says it (the quota models wait on quota groups)."""
    if kind == "node":
        return "full nodes" if not quota_group else "full cluster"
    if kind == "queue" and quota_group:
        return quota_group
    return f"{kind} limit"


def _held_users(path: Path, result: SimulationResult, count: int) -> Path:
    """The users held back longest, as bars split by what held them (days, summed)."""
    plt = _pyplot()
    names = top_held_users(result, count)
    stats = {u.name: u for u in result.users}
    fig, ax = plt.subplots(figsize=(10, 0.35 * max(len(names), 3) + 1.4))
    left = [0.0] * len(names)
    for kind, color in _HELD_COLORS.items():
        days = [stats[n].held.get(kind, 0.0) / _DAY for n in names]
        ax.barh(range(len(names)), days, left=left, color=color, label=_held_label(
            kind, f"{result.model} quota group" if result.quota_tracks else ""))
        left = [a + b for a, b in zip(left, days, strict=True)]
    ax.set_yticks(range(len(names)), names, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("time held back, days summed over the user's jobs", fontsize=8)
    ax.tick_params(labelsize=7)
    _legend_outside(ax)
    if not names:
        ax.text(0.5, 0.5, "no job was held back", ha="center", va="center",
                transform=ax.transAxes)
    ax.set_title(f"{result.label}: the {len(names)} users held back longest", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_comparison(a: SimulationResult, b: SimulationResult, out_dir: Path) -> Path:
    """Both runs' utilization, running and pending jobs overlaid."""
    return _utilization(out_dir / COMPARE_PNG, [a, b],
                        f"A = {a.label} (blue) vs B = {b.label} (orange)")


def plot_all(result: SimulationResult, out_dir: Path, users: int = 6) -> list[Path]:
    """Write the plots into `out_dir`; returns their paths."""
    resource = result.primary_resource
    capacity = float(result.cluster.capacity.get(resource, 0))
    groups = sorted(result.group_series)
    span = (result.start_time, result.end_time)
    against = ("(quota bounds in quota-groups.png)" if result.quota_tracks
               else "against group limits")
    heading = (f"{result.label}: {resource} usage per group {against} "
               f"(cluster {quantity(resource, capacity)})")
    held = top_held_users(result, users) or sorted(result.user_series)[:users]
    quotas: list[Path] = []
    if result.quota_tracks:
        from quotactor.sim.quota_plot import plot_quotas

        quotas.append(plot_quotas(result, out_dir))
    return [*quotas,
        _utilization(out_dir / UTILIZATION_PNG, [result],
                     f"{result.label}: cluster utilization, running and pending jobs"),
        _queues(out_dir / QUEUES_PNG, result),
        _held_users(out_dir / HELD_PNG, result, max(users, 10)),
        _usage_grid(out_dir / GROUPS_PNG, groups, result.group_series, result.group_limits,
                    resource, capacity, span, heading, "group"),
        _usage_grid(out_dir / USERS_PNG, held, result.user_series,
                    result.user_limits, resource, capacity, span,
                    f"{result.label}: {resource} usage of the {len(held)} users held back "
                    f"longest, against their limits", "user"),
        _waits(out_dir / WAITS_PNG, result),
    ]

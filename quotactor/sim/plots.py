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

__all__ = ["GROUPS_PNG", "USERS_PNG", "WAITS_PNG", "plot_all"]

GROUPS_PNG = "usage-groups.png"
USERS_PNG = "usage-top-users.png"
WAITS_PNG = "wait-times.png"
_DAY = 86400.0


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
    if series is not None and series.times:
        times = [(t - start) / _DAY for t in series.times] + [(end - start) / _DAY]
        values = [v.get(resource, 0) / scale for v in series.values]
        values.append(values[-1])
        ax.step(times, values, where="post", linewidth=0.7, color="tab:blue", label="usage")
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
        counts = [*series.running, series.running[-1]]
        right.step(times, counts, where="post", linewidth=0.6, color="tab:orange",
                   alpha=0.8, label="running jobs")
        right.axhline(cap.applications, color="tab:orange", linestyle="--", linewidth=1.0,
                      label=f"maxApplications at {cap.path}")
        right.set_ylim(0, max(cap.applications, max(counts)) * 1.25 + 0.5)
        right.set_ylabel("running jobs", fontsize=8)
        right.tick_params(labelsize=7)
        more_handles, more_labels = right.get_legend_handles_labels()
        handles, labels = handles + more_handles, labels + more_labels
    ax.legend(handles, labels, fontsize=6, loc="upper left")


def _usage_grid(path: Path, names: Sequence[str], series: Mapping[str, Series],
                limits: Mapping[str, tuple[LimitLine, ...]], resource: str, capacity: float,
                span: tuple[float, float], heading: str, kind: str) -> Path:
    plt = _pyplot()
    columns = 1 if len(names) <= 3 else 2
    rows = max(1, math.ceil(len(names) / columns))
    fig, axes = plt.subplots(rows, columns, figsize=(11 if columns > 1 else 10, 2.2 * rows + 0.8),
                             squeeze=False, sharex=True)
    for index, name in enumerate(names):
        ax = axes[index // columns][index % columns]
        _panel(ax, series.get(name), limits.get(name, ()), resource, capacity,
               f"{kind} {name}", span)
    for index in range(len(names), rows * columns):
        axes[index // columns][index % columns].set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("days since the first submission", fontsize=8)
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


def top_users(result: SimulationResult, count: int) -> list[str]:
    """The users who used most of the primary resource over the run (ties by name)."""
    resource = result.primary_resource
    weight = {name: s.integral(resource, result.end_time)
              for name, s in result.user_series.items()}
    return sorted(weight, key=lambda n: (-weight[n], n))[:count]


def plot_all(result: SimulationResult, out_dir: Path, users: int = 6) -> list[Path]:
    """Write the three plots into `out_dir`; returns their paths."""
    resource = result.primary_resource
    capacity = float(result.cluster.capacity.get(resource, 0))
    groups = sorted(result.group_series)
    span = (result.start_time, result.end_time)
    heading = (f"{result.label}: {resource} usage per group against group limits "
               f"(cluster {quantity(resource, capacity)})")
    paths = [
        _usage_grid(out_dir / GROUPS_PNG, groups, result.group_series, result.group_limits,
                    resource, capacity, span, heading, "group"),
        _usage_grid(out_dir / USERS_PNG, top_users(result, users), result.user_series,
                    result.user_limits, resource, capacity, span,
                    f"{result.label}: {resource} usage of the top {users} users against "
                    f"their limits", "user"),
        _waits(out_dir / WAITS_PNG, result),
    ]
    return paths

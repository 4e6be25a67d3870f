"""The text summary `simulate` and `demo` print: who waited, how long, and which limit held
them back. Users are many in real traces, so the table lists those who waited most and says
how many more are in the report."""

from __future__ import annotations

from collections.abc import Sequence

from quotactor.core.resources import Resource
from quotactor.sim.fmt import (
    duration,
    ordered,
    percent,
    quantity,
    render_table,
    short_name,
)
from quotactor.sim.inputs.cluster import ClusterSpec
from quotactor.sim.models.result import SimulationResult
from quotactor.sim.models.stats import EntityStats, highest, lowest
from quotactor.sim.models.utilization import ResourceUse, class_use, resource_names, resource_use
from quotactor.sim.reports.whatif import WhatIf, analyse

__all__ = ["cluster_text", "format_summary", "stats_rows"]

_HEADER = ("JOBS", "DONE", "REJ", "NEVER", "MEAN WAIT", "P95 WAIT", "HELD:USER", "HELD:GROUP",
           "HELD:QUEUE", "HELD:NODE")


def _held_total(stats: EntityStats) -> float:
    return sum(stats.held.values())


def stats_rows(rows: Sequence[EntityStats], resources: Sequence[str]) -> list[list[str]]:
    """Table rows of `rows`: counts, waits, held time per obstacle, the peak of each of
    `resources` in human units."""
    return [[
        s.name, str(s.jobs), str(s.completed), str(s.rejected), str(s.never_started),
        duration(s.mean_wait), duration(s.p95_wait),
        duration(s.held.get("user", 0.0)), duration(s.held.get("group", 0.0)),
        duration(s.held.get("queue", 0.0)), duration(s.held.get("node", 0.0)),
        *(quantity(r, s.peak.get(r, 0)) for r in resources),
    ] for s in rows]


def cluster_text(cluster: ClusterSpec) -> str:
    """`128 nodes, 128 vcore, 1Ti memory`: the node count and the capacity in human units."""
    count = len(cluster.nodes)
    return f"{count} node{'s' if count != 1 else ''}, {_ordered_text(cluster.capacity)}"


def _ordered_text(resources: Resource) -> str:
    """`64 vcore, 256Gi memory, 8 nvidia.com/gpu`: vcore and memory first."""
    return ", ".join(f"{quantity(n, resources[n])} {n}" for n in ordered(resources))


def format_summary(result: SimulationResult, max_users: int = 15) -> str:
    """The summary block; `max_users` 0 lists every user. Peaks are shown for every
    resource the jobs ask for, utilization for every resource the jobs or the cluster name."""
    asked = resource_names(result, workload_only=True)
    peaks = tuple(f"PEAK {short_name(r).upper()}" for r in asked)
    workload = result.workload
    perf = result.performance
    span = duration(result.end_time - result.start_time)
    lines = [
        f"{result.label}: {len(workload.jobs)} jobs, {len(workload.users)} users, "
        f"{len(workload.groups)} groups from {workload.source}",
        f"cluster: {cluster_text(result.cluster)}; virtual time {span}; "
        f"replayed in {perf.wall_seconds:.1f}s ({perf.cycles} cycles, {perf.decisions} "
        f"decisions, {perf.decisions_per_second:,.0f}/s)",
    ]
    if result.placement:
        lines.append(f"placement of parallel jobs: {result.placement}")
    if workload.bad_lines:
        lines.append(f"skipped {workload.bad_lines} bad input lines (first: "
                     f"{workload.problems[0]})")
    lines.append("")
    lines.append(render_table(("GROUP", *_HEADER, *peaks),
                              stats_rows([*result.groups, result.everybody], asked)))
    users = sorted(result.users, key=lambda s: (-_held_total(s), -(s.mean_wait or 0), s.name))
    shown = users if max_users <= 0 else users[:max_users]
    lines.append("")
    lines.append(render_table(("USER", *_HEADER, *peaks), stats_rows(shown, asked)))
    if len(shown) < len(users):
        lines.append(f"... {len(users) - len(shown)} more users (held back least) in the report")
    if result.quota_tracks:
        lines.append(f"HELD:QUEUE = time jobs waited for their quota group's runtime "
                     f"({result.model} model), HELD:NODE for a full cluster, summed over jobs")
    else:
        lines.append("HELD:* = time jobs were held back by a user, group or queue limit, or "
                     "by full nodes, summed over the jobs")
    uses = resource_use(result)
    what_if = analyse(result)
    lines += _what_if(what_if)
    lines += _resources(uses)
    lines += _node_classes(result)
    lines += _quota_groups(result, asked)
    lines += _headline(what_if, uses, result.primary_resource)
    leftover = {k: v for k, v in result.leftover.items() if v}
    if leftover:
        lines.append("")
        lines.append(f"WARNING: usage left in trackers after the replay: {leftover}")
    return "\n".join(lines)


def _resources(uses: Sequence[ResourceUse]) -> list[str]:
    """Per resource: capacity, peak, and where capacity x span went."""
    rows = [[u.name, quantity(u.name, u.capacity), quantity(u.name, u.peak),
             percent(u.busy_share), percent(u.lost_share), percent(u.reserved_share)]
            for u in uses]
    return ["", render_table(("RESOURCE", "CAPACITY", "PEAK USED", "BUSY", "LOST",
                              "RESERVED/IDLE"), rows),
            "BUSY = work of the completed runs, LOST = runs preempted later, RESERVED/IDLE =",
            "held by allocations that did no work; shares of capacity x virtual time"]


def _node_classes(result: SimulationResult) -> list[str]:
    """Per node class (nodes of the same capacity), when the cluster has more than one."""
    rows = class_use(result)
    if len(rows) < 2:
        return []
    names = resource_names(result)
    recorded = any(shares for _, shares in rows)
    header = ["NODE CLASS", "NODES", "EACH", "CAPACITY"]
    if recorded:
        header += [f"{short_name(n).upper()} USED" for n in names]
    table = []
    for node_class, shares in rows:
        row = [node_class.name, str(len(node_class.node_ids)),
               _ordered_text(node_class.per_node), _ordered_text(node_class.capacity)]
        if recorded:
            row += [percent(shares[n]) if n in shares else "-" for n in names]
        table.append(row)
    note = ("USED = share of the class's capacity x virtual time held by allocations"
            if recorded else "usage per node class was not recorded by this replay")
    return ["", render_table(header, table), note]


def _quota_groups(result: SimulationResult, resources: Sequence[str]) -> list[str]:
    """Per quota group and resource: its bounds, how far it borrowed, how far it lent, its
    victims."""
    if not result.quota_tracks:
        return []
    victims = result.preemptions.by_queue
    rows = []
    for t in result.quota_tracks:
        peak_used, low, high = highest(t.used), lowest(t.runtime), highest(t.runtime)
        for r in resources:
            if not any(r in x for x in (t.min, t.max, peak_used, high)):
                continue
            rows.append([t.name, r, quantity(r, t.min.get(r, None)),
                         quantity(r, t.max.get(r, None)), quantity(r, peak_used.get(r, 0)),
                         quantity(r, low.get(r, 0)), quantity(r, high.get(r, 0)),
                         str(victims.get(t.name, 0))])
    return ["", render_table(("QUOTA GROUP", "RESOURCE", "MIN", "MAX", "PEAK USED",
                              "RUNTIME LOW", "RUNTIME HIGH", "REVOKED"), rows)]


def _ratio(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _what_if(w: WhatIf, causes: int = 6, owners: int = 6) -> list[str]:
    """Why jobs did not run, who held them back, and per queue."""
    lines: list[str] = []
    for title, found in (("never started", w.never_causes), ("rejected", w.rejected_causes)):
        if not found:
            continue
        total = sum(n for _, n in found)
        lines += ["", f"{total} job{'s' if total != 1 else ''} {title}:"]
        lines += [f"  {n:>6}  {cause}" for cause, n in found[:causes]]
        if len(found) > causes:
            rest = sum(n for _, n in found[causes:])
            lines.append(f"  {rest:>6}  ({len(found) - causes} other causes, in the report)")
    if w.held_by:
        lines += ["", "held back most by (time summed over jobs, jobs held):"]
        lines += [f"  {duration(seconds):>7}  {jobs:>6} jobs  {owner}"
                  for owner, seconds, jobs in w.held_by[:owners]]
    if w.queues:
        lines += ["", render_table(
            ("QUEUE", "JOBS", "DONE", "MEAN WAIT", "P95 WAIT", "HELD", "UTILIZATION"),
            [[q.path, str(q.jobs), str(q.completed), duration(q.mean_wait),
              duration(q.p95_wait), duration(q.held), f"{q.utilization:.0%}"]
             for q in w.queues])]
    return lines


def _headline(w: WhatIf, uses: Sequence[ResourceUse], primary: str) -> list[str]:
    """The run's overall figures, utilization (busy) first."""
    split = next((u for u in uses if u.name == primary), None)
    wasted = (f" (lost {percent(split.lost_share)}, reserved/idle "
              f"{percent(split.reserved_share)})" if split is not None else "")
    others = ", ".join(f"{u.name} {percent(u.busy_share)}" for u in uses if u.name != primary)
    if others:
        wasted += f", {others} busy"
    p = w.preemptions
    preempted = (f"; preemptions {p.victims} ({p.work_lost_core_hours:.1f} core-hours lost), "
                 f"reservations {p.reservations} ({p.reserved_node_hours:.1f} node-hours)"
                 if p.victims or p.reservations else "")
    return ["", f"utilization {w.utilization:.0%} busy {primary}{wasted}; fairness (Jain, "
              f"service share) users {_ratio(w.fairness_users)}, groups "
              f"{_ratio(w.fairness_groups)}; bounded slowdown mean "
              f"{_ratio(w.mean_slowdown, 1)}, p95 {_ratio(w.p95_slowdown, 1)}"
              f"{preempted}"]

"""The text summary `simulate` and `demo` print: who waited, how long, and which limit held
them back. Users are many in real traces, so the table lists those who waited most and says
how many more are in the report."""

from __future__ import annotations

from collections.abc import Sequence

from quotactor.sim.fmt import duration, quantity, render_table
from quotactor.sim.result import SimulationResult
from quotactor.sim.stats import EntityStats
from quotactor.sim.whatif import WhatIf, analyse

__all__ = ["format_summary", "stats_rows"]

_HEADER = ("JOBS", "DONE", "REJ", "NEVER", "MEAN WAIT", "P95 WAIT", "HELD:USER", "HELD:GROUP",
           "HELD:QUEUE", "HELD:NODE")


def _held_total(stats: EntityStats) -> float:
    return sum(stats.held.values())


def stats_rows(rows: Sequence[EntityStats], resource: str) -> list[list[str]]:
    return [[
        s.name, str(s.jobs), str(s.completed), str(s.rejected), str(s.never_started),
        duration(s.mean_wait), duration(s.p95_wait),
        duration(s.held.get("user", 0.0)), duration(s.held.get("group", 0.0)),
        duration(s.held.get("queue", 0.0)), duration(s.held.get("node", 0.0)),
        quantity(resource, s.peak.get(resource, 0)),
    ] for s in rows]


def format_summary(result: SimulationResult, max_users: int = 15) -> str:
    """The summary block; `max_users` 0 lists every user."""
    resource = result.primary_resource
    peak = f"PEAK {resource.upper()}"
    workload = result.workload
    perf = result.performance
    span = duration(result.end_time - result.start_time)
    lines = [
        f"{result.label}: {len(workload.jobs)} jobs, {len(workload.users)} users, "
        f"{len(workload.groups)} groups from {workload.source}",
        f"cluster: {result.cluster.describe()}; virtual time {span}; "
        f"replayed in {perf.wall_seconds:.1f}s ({perf.cycles} cycles, {perf.decisions} "
        f"decisions, {perf.decisions_per_second:,.0f}/s)",
    ]
    if workload.bad_lines:
        lines.append(f"skipped {workload.bad_lines} bad input lines (first: "
                     f"{workload.problems[0]})")
    lines.append("")
    lines.append(render_table(("GROUP", *_HEADER, peak),
                              stats_rows([*result.groups, result.everybody], resource)))
    users = sorted(result.users, key=lambda s: (-_held_total(s), -(s.mean_wait or 0), s.name))
    shown = users if max_users <= 0 else users[:max_users]
    lines.append("")
    lines.append(render_table(("USER", *_HEADER, peak), stats_rows(shown, resource)))
    if len(shown) < len(users):
        lines.append(f"... {len(users) - len(shown)} more users (held back least) in the report")
    if result.quota_tracks:
        lines.append(f"HELD:QUEUE = time jobs waited for their quota group's runtime "
                     f"({result.model} model), HELD:NODE for a full cluster, summed over jobs")
    else:
        lines.append("HELD:* = time jobs were held back by a user, group or queue limit, or "
                     "by full nodes, summed over the jobs")
    lines += _what_if(analyse(result))
    lines += _quota_groups(result, resource)
    leftover = {k: v for k, v in result.leftover.items() if v}
    if leftover:
        lines.append("")
        lines.append(f"WARNING: usage left in trackers after the replay: {leftover}")
    return "\n".join(lines)


def _quota_groups(result: SimulationResult, resource: str) -> list[str]:
    """Per quota group: its bounds, how far it borrowed, how far it lent, its victims."""
    if not result.quota_tracks:
        return []
    victims = result.preemptions.by_queue
    rows = [[
        t.name, quantity(resource, t.min.get(resource, 0)),
        quantity(resource, t.max.get(resource, 0)),
        quantity(resource, max(u.get(resource, 0) for u in t.used)),
        quantity(resource, min(r.get(resource, 0) for r in t.runtime)),
        quantity(resource, max(r.get(resource, 0) for r in t.runtime)),
        str(victims.get(t.name, 0)),
    ] for t in result.quota_tracks]
    return ["", render_table(("QUOTA GROUP", "MIN", "MAX", "PEAK USED", "RUNTIME LOW",
                              "RUNTIME HIGH", "REVOKED"), rows)]


def _ratio(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _what_if(w: WhatIf, causes: int = 6, owners: int = 6) -> list[str]:
    """Why jobs did not run, who held them back, per queue, and the run's overall figures."""
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
    p = w.preemptions
    preempted = (f"; preemptions {p.victims} ({p.work_lost_core_hours:.1f} core-hours lost), "
                 f"reservations {p.reservations} ({p.reserved_node_hours:.1f} node-hours)"
                 if p.victims or p.reservations else "")
    lines += ["", f"utilization {w.utilization:.0%}; fairness (Jain, service share) users "
              f"{_ratio(w.fairness_users)}, groups {_ratio(w.fairness_groups)}; bounded "
              f"slowdown mean {_ratio(w.mean_slowdown, 1)}, p95 {_ratio(w.p95_slowdown, 1)}"
              f"{preempted}"]
    return lines

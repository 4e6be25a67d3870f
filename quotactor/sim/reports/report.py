"""The JSON report and the per-job CSV a replay leaves in its output directory.

The report holds what a reader needs to judge a configuration without rerunning it: the
figures per user and group, the limits that applied, peaks per queue, the jobs that never
ran, every resource's capacity, peak and utilization split (and per node class when the
nodes differ), and the credit due to the trace's contributor. Keys follow YuniKorn's
camelCase. Quantities are in base units, named per resource under `units` (vcore in
millicores, memory in bytes); the `...Text` fields repeat them in human units.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from quotactor.core.resources import Resource
from quotactor.sim.fmt import ordered, quantity, unit_of
from quotactor.sim.models.limits import LimitLine
from quotactor.sim.models.result import SimulationResult
from quotactor.sim.models.stats import EntityStats, highest, lowest
from quotactor.sim.models.utilization import ResourceUse, class_use, resource_names, resource_use
from quotactor.sim.reports.citation import acknowledgement
from quotactor.sim.reports.whatif import WhatIf, analyse

__all__ = ["JOBS_FILE", "REPORT_FILE", "build_report", "stats_json", "what_if_json",
           "write_jobs_csv", "write_report"]

REPORT_FILE = "report.json"
JOBS_FILE = "jobs.csv"
_HELD_KEYS = {"user": "userLimit", "group": "groupLimit", "queue": "queueLimit",
              "node": "noNode"}


def _seconds(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def stats_json(stats: EntityStats, limits: tuple[LimitLine, ...] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": stats.name,
        "jobs": stats.jobs,
        "completed": stats.completed,
        "rejected": stats.rejected,
        "neverStarted": stats.never_started,
        "meanWaitSeconds": _seconds(stats.mean_wait),
        "p95WaitSeconds": _seconds(stats.p95_wait),
        "maxWaitSeconds": _seconds(stats.max_wait),
        "heldSeconds": {_HELD_KEYS[k]: round(v, 3) for k, v in stats.held.items()},
        "peakUsage": stats.peak.to_dict(),
        "peakRunningJobs": stats.peak_running,
    }
    if limits:
        out["limits"] = [line.to_json() for line in limits]
    return out


def build_report(result: SimulationResult) -> dict[str, Any]:
    """The report as a JSON-ready dict; everything but `performance` is deterministic."""
    workload = result.workload
    unfinished = [o for o in result.outcomes if o.state.value != "completed"]
    report: dict[str, Any] = {
        "label": result.label,
        "model": result.model,
        **({"placement": result.placement} if result.placement else {}),
        "config": result.config_source,
        "workload": {
            "source": workload.source,
            "jobs": len(workload.jobs),
            "users": len(workload.users),
            "groups": len(workload.groups),
            "badLines": workload.bad_lines,
            "problems": [str(p) for p in workload.problems],
        },
        "units": {name: unit_of(name) for name in resource_names(result)},
        "cluster": _cluster_json(result),
        "virtualSeconds": round(result.end_time - result.start_time, 3),
        "totals": stats_json(result.everybody),
        "groups": [stats_json(g, result.group_limits.get(g.name, ())) for g in result.groups],
        "users": [stats_json(u, result.user_limits.get(u.name, ())) for u in result.users],
        "queues": [{"queuePath": name, "peakUsage": series.peak().to_dict(),
                    "peakRunningJobs": series.peak_running()}
                   for name, series in sorted(result.queue_series.items())],
        "notCompleted": [{"jobId": o.job_id, "user": o.user, "state": o.state.value,
                          "reason": o.reason} for o in unfinished[:100]],
        "leftoverUsage": {k: v.to_dict() for k, v in sorted(result.leftover.items())},
        **what_if_json(analyse(result)),
    }
    uses = resource_use(result)
    primary = next((u for u in uses if u.name == result.primary_resource), None)
    if primary is not None:
        report["utilizationSplit"] = {"resource": primary.name, **_use_json(primary)["utilization"]}
    report["resources"] = [_use_json(u) for u in uses]
    credit = acknowledgement(workload.header, workload.source)
    if credit:
        report["acknowledgement"] = credit
    if result.quota_tracks:
        report["quotaGroups"] = [
            {"name": t.name, "min": t.min.to_dict(), "max": t.max.to_dict(),
             "peakUsed": highest(t.used).to_dict(), "peakRuntime": highest(t.runtime).to_dict(),
             "lowestRuntime": lowest(t.runtime).to_dict()}
            for t in result.quota_tracks]
    report["performance"] = result.performance.to_json()
    return report


def what_if_json(w: WhatIf) -> dict[str, Any]:
    """The derived figures: causes, obstacles, queues, fairness, slowdown, preemptions."""
    return {
        "neverStartedCauses": [{"cause": c, "jobs": n} for c, n in w.never_causes],
        "rejectedCauses": [{"cause": c, "jobs": n} for c, n in w.rejected_causes],
        "heldBy": [{"obstacle": o, "seconds": round(t, 3), "jobs": n}
                   for o, t, n in w.held_by],
        "queueFigures": [{"queuePath": q.path, "jobs": q.jobs, "completed": q.completed,
                          "meanWaitSeconds": _seconds(q.mean_wait),
                          "p95WaitSeconds": _seconds(q.p95_wait),
                          "heldSeconds": round(q.held, 3),
                          "utilization": round(q.utilization, 4)} for q in w.queues],
        "utilization": round(w.utilization, 4),
        "fairness": {"users": _round(w.fairness_users), "groups": _round(w.fairness_groups)},
        "boundedSlowdown": {"mean": _round(w.mean_slowdown), "p95": _round(w.p95_slowdown)},
        "preemptions": w.preemptions.to_json(),
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _text(resources: Resource) -> dict[str, str]:
    return {n: quantity(n, resources[n]) for n in ordered(resources)}


def _cluster_json(result: SimulationResult) -> dict[str, Any]:
    """Nodes and capacity (base units and human text); per node class when nodes differ."""
    cluster = result.cluster
    out: dict[str, Any] = {"nodes": len(cluster.nodes), "capacity": cluster.capacity.to_dict(),
                           "capacityText": _text(cluster.capacity)}
    classes = class_use(result)
    if len(classes) > 1:
        out["nodeClasses"] = [
            {"name": c.name, "nodes": len(c.node_ids), "perNode": c.per_node.to_dict(),
             "perNodeText": _text(c.per_node), "capacity": c.capacity.to_dict(),
             "utilization": {n: round(v, 4) for n, v in shares.items()}}
            for c, shares in classes]
    return out


def _use_json(use: ResourceUse) -> dict[str, Any]:
    """One resource's capacity, peak and split (shares of capacity x span, and the
    quantity-seconds behind them in the resource's base unit)."""
    return {"name": use.name, "unit": unit_of(use.name), "capacity": use.capacity,
            "capacityText": quantity(use.name, use.capacity), "peakUsed": use.peak,
            "peakUsedText": quantity(use.name, use.peak),
            "utilization": {"busy": round(use.busy_share, 4),
                            "lost": round(use.lost_share, 4),
                            "reservedIdle": round(use.reserved_share, 4),
                            "allocated": round(use.allocated_share, 4)},
            "quantitySeconds": {"busy": round(use.busy, 3), "lost": round(use.lost, 3),
                                "reservedIdle": round(use.reserved, 3),
                                "allocated": round(use.allocated, 3)}}


def write_report(result: SimulationResult, out_dir: Path) -> Path:
    path = out_dir / REPORT_FILE
    path.write_text(json.dumps(build_report(result), indent=2) + "\n", encoding="utf-8")
    return path


_WORK_UNITS = {"vcore": ("core", 1000), "memory": ("gib", 2**30)}
"""Work lost is written per resource in these units times seconds (others as counted)."""


def write_jobs_csv(result: SimulationResult, out_dir: Path) -> Path:
    """One row per job: its fate, its runs, its waits, and the time each obstacle held it
    back.

    `first_start` is when the job first ran, `final_start` and `end` bound the run that
    completed (empty unless it completed), so `end - final_start` is the job's duration.
    `wait` is `final_start - submit` (lost runs included); `total_wait` the time between
    submission and `end` the job was not running; `restarts` how often it ran again after
    losing a run. `lost_seconds` is the time its lost runs ran and `work_lost_<unit>_seconds`
    that time times the job's size, per resource the workload asks for (vcore in cores,
    memory in GiB). `runs` lists every run as `start-end`, separated by `;`: the runs of all
    jobs together never hold more than the cluster.
    """
    names = sorted({n for job in result.workload.jobs for n in job.total},
                   key=lambda n: (n not in _WORK_UNITS, n))
    units = [_WORK_UNITS.get(n, (n, 1)) for n in names]
    path = out_dir / JOBS_FILE
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["job_id", "user", "group", "queue", "state", "submit", "first_start",
                         "final_start", "end", "wait", "restarts", "total_wait",
                         "lost_seconds", *(f"work_lost_{unit}_seconds" for unit, _ in units),
                         "runs", "held_user", "held_group", "held_queue", "held_node",
                         "reason"])
        for o in result.outcomes:
            writer.writerow([o.job_id, o.user, o.group or "", o.queue, o.state.value,
                             _cell(o.submit), _cell(o.first_start), _cell(o.start),
                             _cell(o.end), _cell(o.wait), o.restarts, _cell(o.total_wait),
                             _cell(o.lost_seconds),
                             *(_cell(o.work_lost.get(n, 0.0) / scale)
                               for n, (_, scale) in zip(names, units, strict=True)),
                             ";".join(f"{_cell(a)}-{_cell(b)}" for a, b in o.runs),
                             *(_cell(o.held.get(k, 0.0)) for k in _HELD_KEYS), o.reason])
    return path


def _cell(value: float | None) -> str:
    """Plain seconds (`7500000`, `12.5`), never `7.5e+06`: spreadsheets and awk read them."""
    if value is None:
        return ""
    return f"{value:.3f}".rstrip("0").rstrip(".") or "0"

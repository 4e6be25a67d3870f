"""The figures that answer "what if": why jobs did not run, which limits held jobs back and
for how long, how each queue fared, how fair the run was, and how much jobs were slowed.

Everything here is derived from a finished `SimulationResult`, so reports, plots, comparisons
and `--check` read the same numbers.

Fairness is Jain's index, (sum x)^2 / (n * sum x^2), over the *service share* x of each user
(or group): the resource-seconds its jobs ran divided by the resource-seconds they were in the
system (waiting or running), jobs that never started counting as waiting until given up. It is
1 when every user got the same share of its demand served promptly, and falls towards 1/n when
a few users wait while others run. Bounded slowdown is (wait + run) / max(run, 10 s), at least
1, the usual measure for parallel-job schedulers: short jobs do not dominate it.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from quotactor.sim.models.outcomes import JobOutcome, JobState
from quotactor.sim.models.preemptions import PreemptionStats
from quotactor.sim.models.result import SimulationResult
from quotactor.sim.models.stats import percentile
from quotactor.sim.models.utilization import busy_work

__all__ = ["BOUND_SECONDS", "QueueFigures", "WhatIf", "analyse", "jain"]

BOUND_SECONDS = 10.0


@dataclass(frozen=True, slots=True)
class QueueFigures:
    """One queue: its jobs, their waits and held time, and its share of the cluster."""

    path: str
    jobs: int
    completed: int
    mean_wait: float | None
    p95_wait: float | None
    held: float
    utilization: float
    """Mean share of the cluster's primary resource the queue used over the run."""


@dataclass(frozen=True, slots=True)
class WhatIf:
    """The derived figures of one run."""

    never_causes: tuple[tuple[str, int], ...]
    rejected_causes: tuple[tuple[str, int], ...]
    held_by: tuple[tuple[str, float, int], ...]
    """Obstacle, seconds held, jobs held: most first."""
    queues: tuple[QueueFigures, ...]
    utilization: float
    """The busy share of the primary resource: completed work / (capacity x span)."""
    fairness_users: float | None
    fairness_groups: float | None
    mean_slowdown: float | None
    p95_slowdown: float | None
    preemptions: PreemptionStats
    """Victims the scheduler took back, the work they lost, and time held by reservations."""


def jain(values: Sequence[float]) -> float | None:
    """Jain's fairness index of `values` (None when there is nothing to judge)."""
    if not values:
        return None
    total = sum(values)
    squares = sum(v * v for v in values)
    if squares == 0:
        return 1.0
    return total * total / (len(values) * squares)


def _size(result: SimulationResult) -> dict[str, float]:
    resource = result.primary_resource
    return {job.job_id: float(job.total.get(resource, 0)) or 1.0
            for job in result.workload.jobs}


def _service_shares(outcomes: Iterable[JobOutcome], size: dict[str, float],
                    key: str) -> list[float]:
    served: defaultdict[str, float] = defaultdict(float)
    present: defaultdict[str, float] = defaultdict(float)
    for o in outcomes:
        if o.state is JobState.REJECTED:
            continue
        name = o.user if key == "user" else (o.group or "(none)")
        weight = size.get(o.job_id, 1.0)
        if o.state is JobState.COMPLETED and o.start is not None and o.end is not None:
            served[name] += weight * (o.end - o.start)
            present[name] += weight * (o.end - o.submit)
        else:
            end = o.end if o.end is not None else o.submit + sum(o.held.values())
            present[name] += weight * max(end - o.submit, 0.0)
    return [served[n] / present[n] for n in sorted(present) if present[n] > 0]


def _slowdowns(outcomes: Iterable[JobOutcome]) -> list[float]:
    out = []
    for o in outcomes:
        if o.state is JobState.COMPLETED and o.start is not None and o.end is not None:
            run = o.end - o.start
            out.append(max(1.0, (o.end - o.submit) / max(run, BOUND_SECONDS)))
    return sorted(out)


def _queues(result: SimulationResult) -> tuple[QueueFigures, ...]:
    resource = result.primary_resource
    capacity = float(result.cluster.capacity.get(resource, 0))
    span = max(result.end_time - result.start_time, 1e-9)
    by_queue: defaultdict[str, list[JobOutcome]] = defaultdict(list)
    for o in result.outcomes:
        if o.queue:
            by_queue[o.queue].append(o)
    rows = []
    for path in sorted(set(by_queue) | set(result.queue_series)):
        outcomes = by_queue.get(path, [])
        waits = sorted(o.wait for o in outcomes if o.wait is not None)
        series = result.queue_series.get(path)
        used = series.integral(resource, result.end_time) if series is not None else 0.0
        rows.append(QueueFigures(
            path, len(outcomes), sum(o.state is JobState.COMPLETED for o in outcomes),
            sum(waits) / len(waits) if waits else None, percentile(waits, 0.95),
            sum(sum(o.held.values()) for o in outcomes),
            used / (capacity * span) if capacity else 0.0))
    return tuple(rows)


def analyse(result: SimulationResult) -> WhatIf:
    """Every derived figure of `result`."""
    never = Counter(o.cause or o.reason for o in result.outcomes
                    if o.state is JobState.NEVER_STARTED)
    rejected = Counter(o.cause or o.reason for o in result.outcomes
                       if o.state is JobState.REJECTED)
    held_seconds: defaultdict[str, float] = defaultdict(float)
    held_jobs: Counter[str] = Counter()
    for o in result.outcomes:
        for owner, seconds in o.held_by.items():
            held_seconds[owner] += seconds
            held_jobs[owner] += 1
    held_by = tuple(sorted(((k, v, held_jobs[k]) for k, v in held_seconds.items()),
                           key=lambda t: (-t[1], t[0])))
    resource = result.primary_resource
    capacity = float(result.cluster.capacity.get(resource, 0))
    span = max(result.end_time - result.start_time, 1e-9)
    busy = busy_work(result).get(resource, 0.0)
    size = _size(result)
    slowdowns = _slowdowns(result.outcomes)
    return WhatIf(
        never_causes=tuple(sorted(never.items(), key=lambda t: (-t[1], t[0]))),
        rejected_causes=tuple(sorted(rejected.items(), key=lambda t: (-t[1], t[0]))),
        held_by=held_by,
        queues=_queues(result),
        utilization=busy / (capacity * span) if capacity else 0.0,
        fairness_users=jain(_service_shares(result.outcomes, size, "user")),
        fairness_groups=jain(_service_shares(result.outcomes, size, "group")),
        mean_slowdown=sum(slowdowns) / len(slowdowns) if slowdowns else None,
        p95_slowdown=percentile(slowdowns, 0.95),
        preemptions=result.preemptions,
    )

"""The adapter from one replay's result to the sweep's headline figures: the only module of the
sweep that reads a `SimulationResult`.

The replay's report is being reworked (waits by percentile, held time by cause, utilization,
fairness, preemptions); until it carries those figures they are computed here from the job
outcomes and usage series the result gives today. When the report has them, this module is
re-pointed at it and `FIGURES_VERSION` bumped, which makes every stored sweep result stale.

Definitions (times in the workload's seconds, a job's size is its total of the primary
resource, vcore when jobs ask for it):
- waits: start minus submit over the jobs that started, nearest-rank percentiles (always a
  wait some job had);
- held_*: the time jobs were held back by a user, group or queue limit or by full nodes,
  summed over jobs;
- utilization: used resource-seconds over capacity times the virtual span;
- fairness_users / fairness_groups: Jain's index (1 = perfectly even, 1/n = one party gets
  everything) over each party's share of demand served: resource-seconds run over
  resource-seconds spent in the system (waiting or running); a job that never started counts
  as waiting until the replay ended; rejected jobs are left out;
- mean_bounded_slowdown: (wait + run) / max(run, 10 s), at least 1, over completed jobs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from quotactor.sim import JobState, SimulationResult

__all__ = ["FIGURES_VERSION", "Figure", "figures_for", "headline", "jain"]

FIGURES_VERSION = 1
Value = float | int | None
_SLOWDOWN_FLOOR = 10.0


@dataclass(frozen=True, slots=True)
class Figure:
    """A headline figure: its column name, its unit, and whether lower is better."""

    name: str
    unit: str
    lower_is_better: bool
    label: str


_COMMON = (
    Figure("jobs", "jobs", False, "jobs"),
    Figure("completed", "jobs", False, "jobs completed"),
    Figure("rejected", "jobs", True, "jobs rejected"),
    Figure("never", "jobs", True, "jobs never started"),
    Figure("mean_wait", "s", True, "mean wait"),
    Figure("p50_wait", "s", True, "median wait"),
    Figure("p90_wait", "s", True, "90th percentile wait"),
    Figure("p95_wait", "s", True, "95th percentile wait"),
    Figure("p99_wait", "s", True, "99th percentile wait"),
    Figure("max_wait", "s", True, "longest wait"),
    Figure("held_user", "s", True, "held by user limits"),
    Figure("held_group", "s", True, "held by group limits"),
    Figure("held_queue", "s", True, "held by queue limits"),
    Figure("held_node", "s", True, "held by full nodes"),
    Figure("utilization", "share", False, "utilization"),
    Figure("fairness_users", "index", False, "fairness over users (Jain)"),
    Figure("fairness_groups", "index", False, "fairness over groups (Jain)"),
    Figure("mean_bounded_slowdown", "ratio", True, "mean bounded slowdown"),
    Figure("makespan", "s", True, "virtual span"),
)
_BY_MODEL = {"yunikorn": _COMMON}
"""The YuniKorn replay has no preemption yet; models that do will add a `preemptions` figure."""


def figures_for(model: str) -> tuple[Figure, ...]:
    return _BY_MODEL[model]


def headline(result: SimulationResult, model: str = "yunikorn") -> dict[str, Value]:
    """The headline figures of `result`, keyed and ordered as `figures_for(model)`."""
    resource = result.primary_resource
    sizes = {job.job_id: job.total.get(resource, 0) for job in result.workload.jobs}
    waits = sorted(o.wait for o in result.outcomes if o.wait is not None)
    held = result.everybody.held
    span = result.end_time - result.start_time
    capacity = result.cluster.capacity.get(resource, 0)
    used = result.total_series.integral(resource, result.end_time)
    served: dict[tuple[str, str], float] = {}
    present: dict[tuple[str, str], float] = {}
    slowdowns: list[float] = []
    for outcome in result.outcomes:
        if outcome.state is JobState.REJECTED:
            continue
        size = sizes.get(outcome.job_id, 0)
        if outcome.start is not None and outcome.end is not None:
            run = outcome.end - outcome.start
            stay = outcome.end - outcome.submit
            slowdowns.append(max(1.0, stay / max(run, _SLOWDOWN_FLOOR)))
        else:
            run, stay = 0.0, result.end_time - outcome.submit
        for party in (("user", outcome.user), ("group", outcome.group or "(none)")):
            served[party] = served.get(party, 0.0) + run * size
            present[party] = present.get(party, 0.0) + stay * size
    shares = {party: served[party] / present[party] for party in present if present[party] > 0}
    figures: dict[str, Value] = {
        "jobs": result.everybody.jobs,
        "completed": result.everybody.completed,
        "rejected": result.everybody.rejected,
        "never": result.everybody.never_started,
        "mean_wait": _round(sum(waits) / len(waits)) if waits else None,
        "p50_wait": _percentile(waits, 0.50),
        "p90_wait": _percentile(waits, 0.90),
        "p95_wait": _percentile(waits, 0.95),
        "p99_wait": _percentile(waits, 0.99),
        "max_wait": _round(waits[-1]) if waits else None,
        "held_user": _round(held.get("user", 0.0)),
        "held_group": _round(held.get("group", 0.0)),
        "held_queue": _round(held.get("queue", 0.0)),
        "held_node": _round(held.get("node", 0.0)),
        "utilization": _round(used / (capacity * span)) if capacity and span > 0 else None,
        "fairness_users": _round(jain(v for (kind, _), v in shares.items() if kind == "user")),
        "fairness_groups": _round(jain(v for (kind, _), v in shares.items()
                                       if kind == "group")),
        "mean_bounded_slowdown": _round(sum(slowdowns) / len(slowdowns)) if slowdowns
        else None,
        "makespan": _round(span),
    }
    return {figure.name: figures[figure.name] for figure in figures_for(model)}


def jain(values: Iterable[float]) -> float | None:
    """Jain's fairness index (sum x)^2 / (n * sum x^2); None for no values, 1 when all are 0."""
    xs = list(values)
    if not xs:
        return None
    square = sum(x * x for x in xs)
    return 1.0 if square == 0 else sum(xs) ** 2 / (len(xs) * square)


def _percentile(values: list[float], share: float) -> float | None:
    if not values:
        return None
    return _round(values[max(1, math.ceil(share * len(values))) - 1])


def _round(value: float | None) -> float | None:
    """Six decimals: the same in every process, and short in CSV and JSON."""
    return None if value is None else round(value, 6)


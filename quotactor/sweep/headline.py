"""The adapter from one replay's result to the sweep's headline figures: the only module of the
sweep that reads a `SimulationResult`.

A row shows the replay's own figures, never a second definition of them: every field a
`quotactor simulate --check` knows (`quotactor.sim.reports.checks.run_figures`, built on
`quotactor.sim.reports.whatif.analyse`) under the same name and with the same unrounded value, so a
constraint and a check over one config and workload give the same answer. The row adds what
the report has but no check names: wait percentiles besides the 95th (the report's own
nearest-rank `percentile`), the preemption costs of `PreemptionStats`, and the virtual span.

Changing what a figure means or which figures a row has bumps `FIGURES_VERSION`, which makes
every stored sweep result stale (its points replay again).
"""

from __future__ import annotations

from dataclasses import dataclass

from quotactor.sim import SimulationResult
from quotactor.sim.models.stats import percentile
from quotactor.sim.reports.checks import run_figures
from quotactor.sim.reports.whatif import analyse, jain

__all__ = ["FIGURES_VERSION", "Figure", "figures_for", "headline", "jain"]

FIGURES_VERSION = 2
Value = float | int | None


@dataclass(frozen=True, slots=True)
class Figure:
    """A headline figure: its column name, its unit, and whether lower is better."""

    name: str
    unit: str
    lower_is_better: bool
    label: str


_FIGURES = (
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
    Figure("held", "s", True, "held back, all causes"),
    Figure("held_user", "s", True, "held by user limits"),
    Figure("held_group", "s", True, "held by group limits"),
    Figure("held_queue", "s", True, "held by queue limits"),
    Figure("held_node", "s", True, "held by full nodes"),
    Figure("utilization", "share", False, "utilization"),
    Figure("fairness_users", "index", False, "fairness over users (Jain)"),
    Figure("fairness_groups", "index", False, "fairness over groups (Jain)"),
    Figure("mean_slowdown", "ratio", True, "mean bounded slowdown"),
    Figure("p95_slowdown", "ratio", True, "95th percentile bounded slowdown"),
    Figure("preemptions", "jobs", True, "preemption victims"),
    Figure("work_lost_core_hours", "core-h", True, "work lost to preemption"),
    Figure("reservations", "count", True, "reservations made"),
    Figure("reserved_node_hours", "node-h", True, "node time held by reservations"),
    Figure("makespan", "s", True, "virtual span"),
)
_PREEMPTION = frozenset({"preemptions", "work_lost_core_hours", "reservations",
                         "reserved_node_hours"})
_WITHOUT_PREEMPTION = tuple(f for f in _FIGURES if f.name not in _PREEMPTION)
_PREEMPTING = frozenset({"yunikorn", "elastic", "quotatree", "kueue"})
"""Models whose replay preempts (elastic, quota-tree and Kueue replays revoke borrowed room,
counted as preemptions); any other's rows leave those figures out."""
_COUNTS = frozenset({"jobs", "completed", "rejected", "never", "preemptions", "reservations"})


def figures_for(model: str) -> tuple[Figure, ...]:
    """The figures of a row for `model`, in column order."""
    return _FIGURES if model in _PREEMPTING else _WITHOUT_PREEMPTION


def headline(result: SimulationResult, model: str = "yunikorn") -> dict[str, Value]:
    """The headline figures of `result`, keyed and ordered as `figures_for(model)`."""
    what_if = analyse(result)
    figures: dict[str, Value] = dict(run_figures(result, what_if))
    waits = sorted(o.wait for o in result.outcomes if o.wait is not None)
    stats = what_if.preemptions
    figures.update({
        "p50_wait": percentile(waits, 0.50),
        "p90_wait": percentile(waits, 0.90),
        "p99_wait": percentile(waits, 0.99),
        "work_lost_core_hours": stats.work_lost_core_hours,
        "reservations": stats.reservations,
        "reserved_node_hours": stats.reserved_node_hours,
        "makespan": result.end_time - result.start_time,
    })
    row = {f.name: figures[f.name] for f in figures_for(model)}
    return {name: int(value) if name in _COUNTS and value is not None else value
            for name, value in row.items()}


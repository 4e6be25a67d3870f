"""How a job's tasks become the scheduler's asks.

A rigid parallel job of 32 processors could be 32 one-vcore asks, or fewer, larger asks that
each fill a node. Packing tasks onto as few nodes as they fit (`dense`, the default) is what
MPI launchers do with ranks per node; it also means far fewer allocations, and so far fewer
tracker round trips, per job. `none` keeps one ask per task.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from quotactor.core.resources import Resource
from quotactor.sim.inputs.jobs import Job

__all__ = ["AskPlan", "Packing", "plan_asks"]

Packing = Literal["dense", "none"]


@dataclass(frozen=True, slots=True)
class AskPlan:
    """One ask the job will add: its key and its size."""

    key: str
    resource: Resource


def _per_node(task: Resource, node: Resource) -> int:
    """How many tasks of size `task` fit on a node of size `node` (0 if not even one)."""
    counts = [node.get(name, 0) // quantity for name, quantity in task.items() if quantity > 0]
    return min(counts) if counts else 0


def plan_asks(job: Job, largest_node: Resource, packing: Packing = "dense") -> tuple[AskPlan, ...]:
    """The asks of `job`: per task group, tasks grouped `per node` at a time when dense.

    A task too big for any node stays one ask per task; the scheduler will report that no
    node fits it.
    """
    plans: list[AskPlan] = []
    for group in job.task_groups:
        per_ask = 1
        if packing == "dense":
            per_ask = max(1, _per_node(group.resources, largest_node))
        left = group.count
        index = 0
        sizes: dict[int, Resource] = {}  # one size object for all the asks alike
        while left > 0:
            take = min(per_ask, left)
            size = sizes.get(take)
            if size is None:
                size = sizes[take] = group.resources.scaled(take)
            plans.append(AskPlan(f"{job.job_id}-{group.name}-{index}", size))
            left -= take
            index += 1
    return tuple(plans)

"""Where a replay's capacity went, per resource and per node class.

Every resource the workload asks for or the cluster offers is accounted for, in
quantity-seconds (base units times seconds: millicore-seconds for vcore, byte-seconds for
memory, GPU-seconds):

- *busy*: the work of the runs that counted, the final run of every completed job (its total
  times its duration). Work done is the sum of runtime times size, so with nothing lost the
  busy share is exactly completed work / (capacity x span);
- *lost*: the runs later preempted or revoked (`PreemptionStats.work_lost`);
- *reserved/idle*: capacity that allocations held without doing work, what the usage
  timeline integrates beyond busy and lost (tasks of jobs placed in part, placeholders).

The headline utilization is the busy share of the primary resource.

A cluster whose nodes differ is reported per node class: the nodes that offer the same
capacity form one class, named after their node ids (`gpu` for `gpu-001` ... `gpu-008`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from quotactor.core.resources import Resource
from quotactor.sim.fmt import ordered
from quotactor.sim.inputs.cluster import ClusterSpec
from quotactor.sim.models.outcomes import JobState
from quotactor.sim.models.result import SimulationResult
from quotactor.sim.models.usage import Series, accumulated

__all__ = ["NodeClass", "ResourceUse", "busy_series", "busy_work", "class_use", "node_class_of",
           "node_classes", "resource_names", "resource_use"]

_NUMBERED = re.compile(r"-\d+$")


@dataclass(frozen=True, slots=True)
class ResourceUse:
    """One resource over a run: its capacity, its peak, and its quantity-seconds by use."""

    name: str
    capacity: int
    span: float
    peak: int
    allocated: float
    """The usage timeline's integral: everything allocations held."""
    busy: float
    lost: float

    @property
    def reserved(self) -> float:
        """Held without doing work (never negative: float rounding is clipped)."""
        return max(0.0, self.allocated - self.busy - self.lost)

    def share(self, quantity_seconds: float) -> float:
        """`quantity_seconds` as a share of capacity x span (0 without either)."""
        room = self.capacity * self.span
        return quantity_seconds / room if room > 0 else 0.0

    @property
    def busy_share(self) -> float:
        return self.share(self.busy)

    @property
    def lost_share(self) -> float:
        return self.share(self.lost)

    @property
    def reserved_share(self) -> float:
        return self.share(self.reserved)

    @property
    def allocated_share(self) -> float:
        return self.share(self.allocated)


@dataclass(frozen=True, slots=True)
class NodeClass:
    """Nodes that offer the same capacity, in cluster order."""

    name: str
    node_ids: tuple[str, ...]
    per_node: Resource

    @property
    def capacity(self) -> Resource:
        return self.per_node.scaled(len(self.node_ids))


def resource_names(result: SimulationResult, *, workload_only: bool = False) -> tuple[str, ...]:
    """The resources jobs ask for and (unless `workload_only`) the cluster offers: vcore,
    memory, then the others by name."""
    names = {n for job in result.workload.jobs for g in job.task_groups for n in g.resources}
    if not workload_only:
        names.update(result.cluster.capacity)
    return ordered(names)


def busy_work(result: SimulationResult) -> dict[str, float]:
    """Quantity-seconds per resource of the final runs of completed jobs."""
    completed = {o.job_id for o in result.outcomes if o.state is JobState.COMPLETED}
    work: dict[str, float] = {}
    for job in result.workload.jobs:
        if job.job_id in completed:
            for name, quantity in job.total.items():
                work[name] = work.get(name, 0.0) + quantity * job.duration
    return work


def busy_series(result: SimulationResult) -> Series:
    """The final runs of completed jobs over time: what `busy_work` integrates."""
    jobs = {job.job_id: job for job in result.workload.jobs}
    changes: dict[float, tuple[Resource, int]] = {}
    for outcome in result.outcomes:
        if outcome.state is not JobState.COMPLETED or outcome.end is None:
            continue
        job = jobs[outcome.job_id]
        total = job.total
        for when, delta, apps in ((outcome.end - job.duration, total, 1),
                                  (outcome.end, -total, -1)):
            before, running = changes.get(when, (Resource(), 0))
            changes[when] = (before + delta, running + apps)
    return accumulated("cluster", "busy", changes)


def resource_use(result: SimulationResult) -> tuple[ResourceUse, ...]:
    """Capacity, peak and the busy / lost / reserved split of every resource."""
    span = max(result.end_time - result.start_time, 0.0)
    busy = busy_work(result)
    lost = result.preemptions.work_lost
    total = result.total_series
    peak = total.peak()
    return tuple(ResourceUse(
        name, result.cluster.capacity.get(name, 0), span, peak.get(name, 0),
        total.integral(name, result.end_time), busy.get(name, 0.0), lost.get(name, 0.0))
        for name in resource_names(result))


def node_classes(cluster: ClusterSpec) -> tuple[NodeClass, ...]:
    """The cluster's nodes grouped by capacity, in the order each class first appears."""
    members: dict[Resource, list[str]] = {}
    for node in cluster.nodes:
        members.setdefault(node.capacity, []).append(node.node_id)
    classes: list[NodeClass] = []
    taken: set[str] = set()
    for capacity, ids in members.items():
        base = "+".join(dict.fromkeys(_NUMBERED.sub("", i) for i in ids))
        name, suffix = base, 2
        while name in taken:
            name, suffix = f"{base}#{suffix}", suffix + 1
        taken.add(name)
        classes.append(NodeClass(name, tuple(ids), capacity))
    return tuple(classes)


def node_class_of(cluster: ClusterSpec) -> dict[str, str]:
    """Node id -> class name, for a usage timeline to record per class; empty when every
    node is alike (the cluster's own figures say it all)."""
    classes = node_classes(cluster)
    if len(classes) < 2:
        return {}
    return {node_id: c.name for c in classes for node_id in c.node_ids}


def class_use(result: SimulationResult,
              names: Iterable[str] | None = None) -> list[tuple[NodeClass, dict[str, float]]]:
    """Per node class, its allocated share of its own capacity per resource over the run
    (empty mappings when the replay did not record usage per class)."""
    span = max(result.end_time - result.start_time, 0.0)
    wanted = tuple(names) if names is not None else resource_names(result)
    rows: list[tuple[NodeClass, dict[str, float]]] = []
    for node_class in node_classes(result.cluster):
        used = result.node_class_series.get(node_class.name)
        shares: dict[str, float] = {}
        if used is not None:
            for name in wanted:
                room = node_class.capacity.get(name, 0) * span
                if room > 0:
                    shares[name] = used.integral(name, result.end_time) / room
        rows.append((node_class, shares))
    return rows

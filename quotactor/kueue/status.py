"""Read-only views of the engine: per workload, per ClusterQueue, per Cohort.

`borrowed` is Kueue's own figure (usage above nominal quota). Kueue reports no `lent`
figure; the one here is quotactor's attribution: what the ClusterQueues of a cohort tree
borrow in total is charged to the lenders in proportion to the quota each leaves idle and may
lend (its unused nominal quota, capped by its lending limit; a Cohort's own quota counts as a
lender too), never more than a lender has idle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from quotactor.elastic.quantity import format_quantity
from quotactor.kueue.api import FlavorResource
from quotactor.kueue.cluster import Admission, Cluster
from quotactor.kueue.tree import Node

__all__ = [
    "ClusterQueueUsage", "CohortResource", "CohortUsage", "ResourceUsage", "WorkloadStatus",
    "cluster_queue_usage", "cohort_usage",
]


@dataclass(frozen=True, slots=True)
class WorkloadStatus:
    key: str
    state: str
    cluster_queue: str | None
    priority: int
    admission: Admission | None
    message: str
    preemptions: int

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"workload": self.key, "state": self.state,
                               "clusterQueue": self.cluster_queue, "priority": self.priority,
                               "message": self.message, "preemptions": self.preemptions}
        if self.admission is not None:
            out["podSetAssignments"] = [
                {"name": p.name, "count": p.count, "flavors": dict(p.flavors)}
                for p in self.admission.pod_sets]
        return out


@dataclass(frozen=True, slots=True)
class ResourceUsage:
    flavor: str
    resource: str
    nominal: int
    borrowing_limit: int | None
    lending_limit: int | None
    used: int
    borrowed: int
    lent: int

    def to_dict(self) -> dict[str, Any]:
        def q(value: int | None) -> str | None:
            return None if value is None else format_quantity(self.resource, value)
        return {"flavor": self.flavor, "resource": self.resource, "nominalQuota": q(self.nominal),
                "borrowingLimit": q(self.borrowing_limit), "lendingLimit": q(self.lending_limit),
                "used": q(self.used), "borrowed": q(self.borrowed), "lent": q(self.lent)}


@dataclass(frozen=True, slots=True)
class ClusterQueueUsage:
    name: str
    cohort: str | None
    pending: int
    admitted: int
    resources: tuple[ResourceUsage, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "cohort": self.cohort, "pendingWorkloads": self.pending,
                "admittedWorkloads": self.admitted,
                "resources": [r.to_dict() for r in self.resources]}


@dataclass(frozen=True, slots=True)
class CohortResource:
    """One `(flavor, resource)` of a cohort: its own quota, the nominal quota of its whole
    subtree, what the subtree's ClusterQueues use, and what the subtree borrows from the
    cohort's parent."""

    flavor: str
    resource: str
    own_quota: int
    subtree_quota: int
    used: int
    borrowed: int

    def to_dict(self) -> dict[str, Any]:
        q = format_quantity
        return {"flavor": self.flavor, "resource": self.resource,
                "nominalQuota": q(self.resource, self.own_quota),
                "subtreeQuota": q(self.resource, self.subtree_quota),
                "used": q(self.resource, self.used), "borrowed": q(self.resource, self.borrowed)}


@dataclass(frozen=True, slots=True)
class CohortUsage:
    name: str
    parent: str | None
    cluster_queues: tuple[str, ...]
    cohorts: tuple[str, ...]
    resources: tuple[CohortResource, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "parent": self.parent,
                "clusterQueues": list(self.cluster_queues), "cohorts": list(self.cohorts),
                "resources": [r.to_dict() for r in self.resources]}


def _nodes_below(node: Node) -> list[Node]:
    found = [node]
    for child in node.child_cohorts:
        found.extend(_nodes_below(child))
    found.extend(node.child_cqs)
    return found


def _idle(node: Node, fr: FlavorResource) -> int:
    quota = node.quotas.get(fr)
    if quota is None:
        return 0
    if node.is_cohort:
        return quota.nominal
    idle = max(0, quota.nominal - node.usage.get(fr, 0))
    return idle if quota.lending_limit is None else min(idle, quota.lending_limit)


def _lent(node: Node, fr: FlavorResource) -> int:
    if node.parent is None:
        return 0
    members = _nodes_below(node.root())
    borrowed = sum(max(0, n.usage.get(fr, 0) - n.nominal(fr)) for n in members
                   if not n.is_cohort)
    pool = sum(_idle(n, fr) for n in members)
    mine = _idle(node, fr)
    if borrowed <= 0 or pool <= 0:
        return 0
    return min(mine, borrowed * mine // pool)


def cluster_queue_usage(cluster: Cluster, name: str, pending: int) -> ClusterQueueUsage:
    spec = cluster.cluster_queues[name]
    node = cluster.node(name)
    rows = []
    for group in spec.resource_groups:
        for flavor in group.flavors:
            for quota in flavor.resources:
                fr = (flavor.name, quota.name)
                used = node.usage.get(fr, 0)
                rows.append(ResourceUsage(
                    flavor.name, quota.name, quota.nominal, quota.borrowing_limit,
                    quota.lending_limit, used, max(0, used - quota.nominal), _lent(node, fr)))
    return ClusterQueueUsage(name, spec.cohort, pending, len(cluster.admitted.get(name, {})),
                             tuple(rows))


def cohort_usage(cluster: Cluster, name: str) -> CohortUsage:
    node = cluster.cohort_nodes[name]
    members = _nodes_below(node)
    frs = sorted({fr for n in members for fr in n.quotas})
    rows = []
    for fr in frs:
        total = sum(n.nominal(fr) for n in members)
        used = sum(n.usage.get(fr, 0) for n in members if not n.is_cohort)
        borrowed = (max(0, node.usage.get(fr, 0) - node.subtree.get(fr, 0))
                    if node.parent is not None else 0)
        rows.append(CohortResource(fr[0], fr[1], node.nominal(fr), total, used, borrowed))
    return CohortUsage(name, node.parent.name if node.parent else None,
                       tuple(sorted(n.name for n in node.child_cqs)),
                       tuple(sorted(n.name for n in node.child_cohorts)), tuple(rows))

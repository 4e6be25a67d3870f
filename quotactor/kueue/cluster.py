"""What admission reads: the applied objects, the quota tree built from them, and the
workloads holding quota (Kueue's cache and its snapshot in one).

`Cluster` does not decide anything: the flavor assigner, the preemptor and the manager do, on
it. Its tree always matches its objects and admitted workloads: `rebuild` after any object
change, `charge`/`release` for every workload that gains or loses quota.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from quotactor.kueue.api import (
    ClusterQueue,
    Cohort,
    FlavorResource,
    LocalQueue,
    ResourceFlavor,
    ResourceGroup,
    Workload,
    WorkloadPriorityClass,
)
from quotactor.kueue.tree import Node, Quota, add_usage, recompute, remove_usage

__all__ = ["NAMESPACE_NAME_LABEL", "Admission", "Cluster", "PodSetAdmission", "Record"]

NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


@dataclass(frozen=True, slots=True)
class PodSetAdmission:
    """The flavor each resource of one pod set was given."""

    name: str
    count: int
    flavors: tuple[tuple[str, str], ...]

    def flavor_of(self, resource: str) -> str | None:
        return next((f for r, f in self.flavors if r == resource), None)


@dataclass(frozen=True, slots=True)
class Admission:
    """Where and how a workload was admitted: its ClusterQueue, each pod set's flavors and
    the quota it holds per `(flavor, resource)`."""

    cluster_queue: str
    pod_sets: tuple[PodSetAdmission, ...]
    usage: tuple[tuple[FlavorResource, int], ...]

    def usage_map(self) -> dict[FlavorResource, int]:
        return dict(self.usage)


@dataclass(slots=True)
class Record:
    """A submitted workload and what the engine knows of it (mutable; owned by the engine).

    `order` is its place in its ClusterQueue (higher priority first, then older);
    `admitted_at` is when it got quota (victims are chosen most recent first).
    """

    workload: Workload
    seq: int
    priority: int
    cluster_queue: str | None = None
    admission: Admission | None = None
    usage: dict[FlavorResource, int] = field(default_factory=dict)
    admitted_at: float = 0.0
    inadmissible: bool = False
    message: str = ""
    preemptions: int = 0

    @property
    def key(self) -> str:
        return self.workload.key

    @property
    def order(self) -> tuple[int, float, int]:
        return (-self.priority, self.workload.created, self.seq)

    def uses_any(self, frs: set[FlavorResource] | frozenset[FlavorResource]) -> bool:
        return any(fr in frs for fr in self.usage)


def _quotas(groups: tuple[ResourceGroup, ...]) -> dict[FlavorResource, Quota]:
    quotas: dict[FlavorResource, Quota] = {}
    for group in groups:
        for flavor in group.flavors:
            for quota in flavor.resources:
                quotas[(flavor.name, quota.name)] = Quota(
                    quota.nominal, quota.borrowing_limit, quota.lending_limit)
    return quotas


class Cluster:
    """The objects applied so far, the quota tree and the admitted workloads."""

    def __init__(self, fair_sharing: bool = False) -> None:
        self.fair_sharing = fair_sharing
        self.flavors: dict[str, ResourceFlavor] = {}
        self.cluster_queues: dict[str, ClusterQueue] = {}
        self.cohorts: dict[str, Cohort] = {}
        self.local_queues: dict[tuple[str, str], LocalQueue] = {}
        self.priority_classes: dict[str, WorkloadPriorityClass] = {}
        self.namespaces: dict[str, dict[str, str]] = {}
        self.nodes: dict[str, Node] = {}
        self.cohort_nodes: dict[str, Node] = {}
        self.admitted: dict[str, dict[str, Record]] = {}

    # -- the tree ----------------------------------------------------------------------

    def rebuild(self) -> None:
        """Rebuild the tree from the objects, keeping every admitted workload's charge.

        A cohort named by a ClusterQueue or as a parent without a Cohort object is an
        implicit one: no quota, no parent. The objects must form no cycle (validated when
        applied)."""
        cohort_nodes: dict[str, Node] = {}

        def cohort_node(name: str) -> Node:
            node = cohort_nodes.get(name)
            if node is None:
                spec = self.cohorts.get(name)
                node = Node(name, True, _quotas(spec.resource_groups) if spec else {},
                            spec.fair_weight if spec else 1.0)
                cohort_nodes[name] = node
                if spec is not None and spec.parent:
                    parent = cohort_node(spec.parent)
                    node.parent = parent
                    parent.child_cohorts.append(node)
            return node

        for name in sorted(self.cohorts):
            cohort_node(name)
        nodes: dict[str, Node] = {}
        for name in sorted(self.cluster_queues):
            spec = self.cluster_queues[name]
            node = Node(name, False, _quotas(spec.resource_groups), spec.fair_weight)
            for record in self.admitted.get(name, {}).values():
                for fr, amount in record.usage.items():
                    node.usage[fr] = node.usage.get(fr, 0) + amount
            if spec.cohort:
                parent = cohort_node(spec.cohort)
                node.parent = parent
                parent.child_cqs.append(node)
            nodes[name] = node
        for cohort in cohort_nodes.values():
            cohort.child_cohorts.sort(key=lambda n: n.name)
        for cohort in cohort_nodes.values():
            if cohort.parent is None:
                recompute(cohort)
        for node in nodes.values():
            if node.parent is None:
                recompute(node)
        self.nodes = nodes
        self.cohort_nodes = cohort_nodes

    def node(self, cluster_queue: str) -> Node:
        return self.nodes[cluster_queue]

    def charge(self, record: Record) -> None:
        """Add `record`'s usage to its ClusterQueue and the cohorts above it."""
        assert record.cluster_queue is not None
        node = self.nodes[record.cluster_queue]
        for fr, amount in record.usage.items():
            add_usage(node, fr, amount)

    def release(self, record: Record) -> None:
        """Undo `charge`."""
        assert record.cluster_queue is not None
        node = self.nodes[record.cluster_queue]
        for fr, amount in record.usage.items():
            remove_usage(node, fr, amount)

    @contextmanager
    def without(self, records: list[Record]) -> Iterator[None]:
        """The tree as if `records` held no quota, restored on exit."""
        for record in records:
            self.release(record)
        try:
            yield
        finally:
            for record in reversed(records):
                self.charge(record)

    @contextmanager
    def adding(self, cluster_queue: str, usage: dict[FlavorResource, int]) -> Iterator[None]:
        """The tree as if `usage` were charged to `cluster_queue`, restored on exit."""
        node = self.nodes[cluster_queue]
        for fr, amount in usage.items():
            add_usage(node, fr, amount)
        try:
            yield
        finally:
            for fr, amount in usage.items():
                remove_usage(node, fr, amount)

    # -- reads -------------------------------------------------------------------------

    def workloads_in(self, cluster_queue: str) -> list[Record]:
        return list(self.admitted.get(cluster_queue, {}).values())

    def namespace_labels(self, namespace: str) -> dict[str, str]:
        """A namespace's labels, with the name label Kubernetes sets on every namespace."""
        labels = dict(self.namespaces.get(namespace, {}))
        labels[NAMESPACE_NAME_LABEL] = namespace
        return labels

    def priority_of(self, workload: Workload) -> int:
        if workload.priority is not None:
            return workload.priority
        if workload.priority_class is not None:
            found = self.priority_classes.get(workload.priority_class)
            if found is not None:
                return found.value
        return 0

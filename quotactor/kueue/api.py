"""Kueue's API objects (`kueue.x-k8s.io/v1beta1`) as immutable values.

Quantities are integers in engine units: `cpu` in millicores, every other resource in whole
units (Kueue compares `MilliValue()` for cpu and `Value()` otherwise). The objects hold what
admission reads; status fields, admission checks, topology and multikueue are not modelled.
Construct them directly or with `quotactor.kueue.loader`; the engine validates each one with
Kueue's webhook rules (`quotactor.kueue.validation`) when it is applied.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final, TypeVar

__all__ = [
    "ANY", "BEST_EFFORT_FIFO", "BORROW", "DEFAULT_POD_SET", "LOWER_OR_NEWER_EQUAL_PRIORITY",
    "LOWER_PRIORITY", "MAY_STOP_SEARCH", "NEVER", "PREEMPT", "STRICT_FIFO", "TRY_NEXT_FLAVOR",
    "BorrowWithinCohort", "ClusterQueue", "Cohort", "FlavorFungibility", "FlavorQuotas",
    "FlavorResource", "LabelRequirement", "LabelSelector", "LocalQueue", "PodSet", "Preemption",
    "ResourceFlavor", "ResourceGroup", "ResourceQuota", "Taint", "Toleration", "Workload",
    "WorkloadPriorityClass", "frozen_map",
]

FlavorResource = tuple[str, str]
"""A `(flavor, resource)` pair: the unit every quota and usage is kept in."""

STRICT_FIFO: Final = "StrictFIFO"
BEST_EFFORT_FIFO: Final = "BestEffortFIFO"
NEVER: Final = "Never"
ANY: Final = "Any"
LOWER_PRIORITY: Final = "LowerPriority"
LOWER_OR_NEWER_EQUAL_PRIORITY: Final = "LowerOrNewerEqualPriority"
MAY_STOP_SEARCH: Final = "MayStopSearch"
TRY_NEXT_FLAVOR: Final = "TryNextFlavor"
BORROW: Final = "Borrow"
PREEMPT: Final = "Preempt"
DEFAULT_POD_SET: Final = "main"

V = TypeVar("V")
_EMPTY: Mapping[str, str] = MappingProxyType({})


def frozen_map(values: Mapping[str, V] | None) -> Mapping[str, V]:
    """A read-only copy of `values` (so that a caller editing its dict changes nothing)."""
    return MappingProxyType(dict(values or {}))


class _Value:
    """Base of the immutable API values: copying one (as a checkpoint does) shares it."""

    __slots__ = ()

    def __copy__(self) -> _Value:
        return self

    def __deepcopy__(self, memo: dict[int, object]) -> _Value:
        return self


@dataclass(frozen=True, slots=True)
class ResourceQuota(_Value):
    """One resource of one flavor: `nominalQuota` and the optional limits (None: unlimited)."""

    name: str
    nominal: int
    borrowing_limit: int | None = None
    lending_limit: int | None = None


@dataclass(frozen=True, slots=True)
class FlavorQuotas(_Value):
    """A flavor's quotas, one per covered resource, in the group's `coveredResources` order."""

    name: str
    resources: tuple[ResourceQuota, ...]


@dataclass(frozen=True, slots=True)
class ResourceGroup(_Value):
    """Resources that are always assigned one flavor together; `flavors` in preference order."""

    covered_resources: tuple[str, ...]
    flavors: tuple[FlavorQuotas, ...]


@dataclass(frozen=True, slots=True)
class BorrowWithinCohort(_Value):
    """`preemption.borrowWithinCohort`: may a borrowing workload preempt in the cohort."""

    policy: str = NEVER
    max_priority_threshold: int | None = None


@dataclass(frozen=True, slots=True)
class Preemption(_Value):
    """`spec.preemption` of a ClusterQueue (Kueue's defaults: no preemption at all)."""

    within_cluster_queue: str = NEVER
    reclaim_within_cohort: str = NEVER
    borrow_within_cohort: BorrowWithinCohort | None = None


@dataclass(frozen=True, slots=True)
class FlavorFungibility(_Value):
    """`spec.flavorFungibility`: when to look past a flavor that needs borrowing or preemption.

    `Borrow` and `Preempt` are accepted as Kueue's deprecated spellings of `MayStopSearch`.
    """

    when_can_borrow: str = MAY_STOP_SEARCH
    when_can_preempt: str = TRY_NEXT_FLAVOR
    preference: str | None = None


@dataclass(frozen=True, slots=True)
class LabelRequirement(_Value):
    """One `matchExpressions` entry: `operator` is In, NotIn, Exists or DoesNotExist."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.operator == "In":
            return labels.get(self.key) in self.values
        if self.operator == "NotIn":
            return labels.get(self.key) not in self.values
        if self.operator == "Exists":
            return self.key in labels
        return self.key not in labels


@dataclass(frozen=True, slots=True)
class LabelSelector(_Value):
    """A Kubernetes label selector; the empty selector matches every namespace."""

    match_labels: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    match_expressions: tuple[LabelRequirement, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        return (all(labels.get(k) == v for k, v in self.match_labels.items())
                and all(r.matches(labels) for r in self.match_expressions))


@dataclass(frozen=True, slots=True)
class ClusterQueue(_Value):
    """A ClusterQueue.

    `namespace_selector` None selects no namespace (Kueue's reading of a missing selector);
    the default here is the empty selector, which selects every namespace. `fair_weight` is
    `spec.fairSharing.weight` (only read when fair sharing is on).
    """

    name: str
    resource_groups: tuple[ResourceGroup, ...] = ()
    cohort: str | None = None
    queueing_strategy: str = BEST_EFFORT_FIFO
    namespace_selector: LabelSelector | None = field(default_factory=LabelSelector)
    preemption: Preemption = field(default_factory=Preemption)
    flavor_fungibility: FlavorFungibility = field(default_factory=FlavorFungibility)
    fair_weight: float = 1.0

    def quota(self, flavor: str, resource: str) -> ResourceQuota | None:
        for group in self.resource_groups:
            for quotas in group.flavors:
                if quotas.name == flavor:
                    return next((q for q in quotas.resources if q.name == resource), None)
        return None


@dataclass(frozen=True, slots=True)
class Cohort(_Value):
    """A Cohort object: a node of the cohort tree, with quota of its own (lent to its
    subtree) and, when it has a parent, limits on what the subtree borrows and lends."""

    name: str
    parent: str | None = None
    resource_groups: tuple[ResourceGroup, ...] = ()
    fair_weight: float = 1.0


@dataclass(frozen=True, slots=True)
class LocalQueue(_Value):
    """Points a namespace's workloads at a ClusterQueue."""

    namespace: str
    name: str
    cluster_queue: str


@dataclass(frozen=True, slots=True)
class Taint(_Value):
    key: str
    value: str = ""
    effect: str = "NoSchedule"


@dataclass(frozen=True, slots=True)
class Toleration(_Value):
    """A pod toleration; `key` empty with `Exists` tolerates everything."""

    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""

    def tolerates(self, taint: Taint) -> bool:
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        return self.value == taint.value


@dataclass(frozen=True, slots=True)
class ResourceFlavor(_Value):
    """A ResourceFlavor: node labels a pod set's node selector is matched against, taints a
    pod set must tolerate (unless the flavor's own tolerations cover them)."""

    name: str
    node_labels: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    node_taints: tuple[Taint, ...] = ()
    tolerations: tuple[Toleration, ...] = ()


@dataclass(frozen=True, slots=True)
class WorkloadPriorityClass(_Value):
    name: str
    value: int


@dataclass(frozen=True, slots=True)
class PodSet(_Value):
    """`count` pods, each requesting `requests` (engine units); the node selector and
    tolerations decide which flavors the pod set may use."""

    name: str = DEFAULT_POD_SET
    count: int = 1
    requests: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    node_selector: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    tolerations: tuple[Toleration, ...] = ()

    def total(self) -> dict[str, int]:
        """The pod set's requests times its count."""
        return {name: value * self.count for name, value in self.requests.items()}


@dataclass(frozen=True, slots=True)
class Workload(_Value):
    """A Workload waiting in (or admitted through) `namespace/queue_name`.

    Its priority is `priority` when given, else the named `WorkloadPriorityClass`'s value,
    else 0. `created` orders workloads of equal priority (earlier first), as Kueue's
    creation timestamp does; the engine breaks ties by submission order.
    """

    name: str
    queue_name: str
    pod_sets: tuple[PodSet, ...]
    namespace: str = "default"
    priority_class: str | None = None
    priority: int | None = None
    created: float = 0.0

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

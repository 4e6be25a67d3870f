"""Builders for the Kueue tests (the `k` fixture), in the spirit of Kueue's own test
wrappers: quantities are Kubernetes strings, a ClusterQueue is one call."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import SimpleNamespace
from typing import Any

import pytest

from quotactor.elastic.quantity import parse_quantity
from quotactor.kueue import (
    BorrowWithinCohort,
    ClusterQueue,
    Cohort,
    FlavorFungibility,
    FlavorQuotas,
    KueueManager,
    KueueService,
    LocalQueue,
    PodSet,
    Preemption,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    Toleration,
    Workload,
)
from quotactor.kueue.cluster import Record
from quotactor.kueue.preemption import (
    LESS_THAN_INITIAL_SHARE,
    LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,
    get_targets,
)

Quantity = str | int
Limits = Quantity | tuple[Quantity, Quantity | None] | tuple[
    Quantity, Quantity | None, Quantity | None]


def q(resource: str, value: Quantity) -> int:
    return parse_quantity(resource, value)


def fq(flavor: str, resources: Mapping[str, Limits] | None = None,
       **named: Limits) -> FlavorQuotas:
    """A flavor's quotas: `cpu="6"` (nominal), `cpu=("6", "6")` (and borrowing limit) or
    `cpu=("6", None, "4")` (and lending limit)."""
    quotas = []
    for resource, limits in {**(resources or {}), **named}.items():
        parts = limits if isinstance(limits, tuple) else (limits,)
        nominal = q(resource, parts[0])
        borrowing = q(resource, parts[1]) if len(parts) > 1 and parts[1] is not None else None
        lending = q(resource, parts[2]) if len(parts) > 2 and parts[2] is not None else None
        quotas.append(ResourceQuota(resource, nominal, borrowing, lending))
    return FlavorQuotas(flavor, tuple(quotas))


def rg(*flavors: FlavorQuotas) -> ResourceGroup:
    return ResourceGroup(tuple(r.name for r in flavors[0].resources), flavors)


def cq(name: str, *groups: ResourceGroup, cohort: str | None = None, within: str = "Never",
       reclaim: str = "Never", borrow: str | None = None, threshold: int | None = None,
       when_borrow: str = "MayStopSearch", when_preempt: str = "TryNextFlavor",
       preference: str | None = None, strategy: str = "BestEffortFIFO",
       weight: float = 1.0) -> ClusterQueue:
    bwc = BorrowWithinCohort(borrow, threshold) if borrow is not None else None
    return ClusterQueue(
        name, groups, cohort=cohort, queueing_strategy=strategy,
        preemption=Preemption(within, reclaim, bwc),
        flavor_fungibility=FlavorFungibility(when_borrow, when_preempt, preference),
        fair_weight=weight)


def pod_set(count: int = 1, name: str = "main", node_selector: Mapping[str, str] | None = None,
            requests: Mapping[str, Quantity] | None = None,
            tolerations: tuple[Toleration, ...] = (), **named: Quantity) -> PodSet:
    per_pod = {r: q(r, v) for r, v in {**(requests or {}), **named}.items()}
    return PodSet(name, count, per_pod, dict(node_selector or {}), tolerations)


def wl(name: str, *pod_sets: PodSet, queue: str = "q", priority: int = 0,
       created: float = 0.0, namespace: str = "default", **requests: Quantity) -> Workload:
    """A workload; without pod sets, one pod requesting `requests`."""
    sets = pod_sets or (pod_set(1, **requests),)
    return Workload(name, queue, tuple(sets), namespace, priority=priority, created=created)


def manager(*queues: ClusterQueue, cohorts: tuple[Cohort, ...] = (),
            flavors: tuple[str, ...] = ("default", "alpha", "beta", "one", "two"),
            fair_sharing: bool = False) -> KueueManager:
    """A manager with the flavors, cohorts and queues, and a LocalQueue `q-<cq>` in the
    default namespace for every ClusterQueue."""
    m = KueueManager(fair_sharing=fair_sharing)
    m.apply(*(ResourceFlavor(f) for f in flavors), *cohorts, *queues,
            *(LocalQueue("default", f"q-{c.name}", c.name) for c in queues))
    return m


def admit(m: KueueManager, workload: Workload, cluster_queue: str,
          flavors: Mapping[str, str] | None = None, at: float = 0.0) -> None:
    """Record `workload` as already admitted (its single pod set on `flavors`)."""
    m.restore(workload, cluster_queue,
              {workload.pod_sets[0].name: dict(flavors)} if flavors else None, at)


def targets(m: KueueManager, incoming: Workload, cluster_queue: str,
            assignment: Mapping[str, tuple[str, str]],
            strategies: tuple[str, ...] = (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,
                                           LESS_THAN_INITIAL_SHARE)) -> dict[str, str]:
    """The victims Kueue's preemptor picks for `incoming` under a given flavor assignment
    (`{resource: (flavor, "Fit" | "Preempt")}`), as `{name: reason}`."""
    usage: dict[tuple[str, str], int] = {}
    for ps in incoming.pod_sets:
        for resource, amount in ps.total().items():
            flavor = assignment[resource][0]
            usage[(flavor, resource)] = usage.get((flavor, resource), 0) + amount
    frs = frozenset((f, r) for r, (f, mode) in assignment.items() if mode == "Preempt")
    record = Record(incoming, 10**6, m.cluster.priority_of(incoming))
    found = get_targets(m.cluster, record, cluster_queue, frs, usage, strategies)
    return {t.record.workload.name: t.reason for t in found}


@pytest.fixture
def k() -> SimpleNamespace:
    return SimpleNamespace(q=q, fq=fq, rg=rg, cq=cq, pod_set=pod_set, wl=wl, manager=manager,
                           admit=admit, targets=targets)


@pytest.fixture
def service() -> Iterator[KueueService]:
    svc = KueueService.start(timeout=10.0)
    try:
        yield svc
    finally:
        svc.stop()


def usage_of(m: KueueManager, cluster_queue: str) -> dict[tuple[str, str], int]:
    return {(r.flavor, r.resource): r.used for r in m.cluster_queue_usage(cluster_queue).resources}


@pytest.fixture
def used() -> Any:
    return usage_of

"""Flavor assignment: which flavor each resource of each pod set gets (Kueue's flavor
assigner).

Pod sets are assigned in order, each seeing the quota the previous ones took. For each
resource group a pod set requests, the group's flavors are tried in order; a flavor is
skipped when its taints are not tolerated or its node labels contradict the pod set's node
selector. A flavor's mode for the pod set is the worst over the group's resources: `Fit`
(unused quota suffices, maybe borrowing), `Preempt` (it would fit after preemptions) or
`NoFit`. The search stops at the first flavor that fits without borrowing, or that needs
borrowing or preemption when `flavorFungibility` says to stop there; otherwise the best flavor
seen wins (`preference` decides between less borrowing and less preemption). A workload is
assigned whole or not at all: one pod set without a flavor makes the assignment `NoFit`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from quotactor.elastic.quantity import format_quantity
from quotactor.kueue.api import (
    NEVER,
    TRY_NEXT_FLAVOR,
    FlavorFungibility,
    FlavorResource,
    PodSet,
    ResourceGroup,
)
from quotactor.kueue.cluster import Cluster, Record
from quotactor.kueue.preemption import (
    LESS_THAN_INITIAL_SHARE,
    LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,
    NO_CANDIDATES,
    PREEMPT,
    RECLAIM,
    simulate,
)
from quotactor.kueue.tree import available, lowest_fitting_subtree, potential_available

__all__ = [
    "FIT", "NO_FIT", "PREEMPT_MODE", "Assignment", "FlavorChoice", "PodSetChoice", "assign",
    "is_preferred",
]

NO_FIT = "NoFit"
PREEMPT_MODE = "Preempt"
FIT = "Fit"
_NO_FIT, _FIT = 0, 4  # the ends of the preemption-mode scale (see quotactor.kueue.preemption)
_MODE_RANK = {NO_FIT: 0, PREEMPT_MODE: 1, FIT: 2}
PREFERENCE_PREEMPTION_OVER_BORROWING = "PreemptionOverBorrowing"

Granular = tuple[int, int]
"""A flavor's (preemption mode, borrowing height): how it could be used."""


@dataclass(frozen=True, slots=True)
class FlavorChoice:
    resource: str
    flavor: str
    mode: str
    borrow: int


@dataclass(frozen=True, slots=True)
class PodSetChoice:
    name: str
    count: int
    flavors: tuple[FlavorChoice, ...]
    reasons: tuple[str, ...] = ()

    @property
    def mode(self) -> str:
        if not self.flavors:
            return NO_FIT
        return min((c.mode for c in self.flavors), key=_MODE_RANK.__getitem__)


@dataclass(slots=True)
class Assignment:
    """The flavors of a whole workload: its mode is the worst of its pod sets'; `usage` is
    what it would charge per `(flavor, resource)`; `borrowing` the farthest height its quota
    comes from (0: all from its own ClusterQueue)."""

    pod_sets: list[PodSetChoice] = field(default_factory=list)
    usage: dict[FlavorResource, int] = field(default_factory=dict)
    borrowing: int = 0
    failed: bool = False

    @property
    def mode(self) -> str:
        if self.failed or not self.pod_sets:
            return NO_FIT
        return min((p.mode for p in self.pod_sets), key=_MODE_RANK.__getitem__)

    def needing_preemption(self) -> frozenset[FlavorResource]:
        return frozenset((c.flavor, c.resource) for p in self.pod_sets for c in p.flavors
                         if c.mode == PREEMPT_MODE)

    def reasons(self) -> list[str]:
        return [reason for p in self.pod_sets for reason in p.reasons]


def is_preferred(a: Granular, b: Granular, fungibility: FlavorFungibility) -> bool:
    """Is a flavor usable as `a` better than one usable as `b`?"""
    if a[0] == _NO_FIT:
        return False
    if b[0] == _NO_FIT:
        return True
    a_stuck, b_stuck = a[0] == NO_CANDIDATES, b[0] == NO_CANDIDATES
    if a_stuck != b_stuck:
        return not a_stuck
    if fungibility.preference == PREFERENCE_PREEMPTION_OVER_BORROWING:
        if a[1] != b[1]:
            return a[1] < b[1]
        return a[0] > b[0]
    if a[0] != b[0]:
        return a[0] > b[0]
    return a[1] < b[1]


def _try_next(mode: Granular, fungibility: FlavorFungibility) -> bool:
    if mode[0] in (_NO_FIT, NO_CANDIDATES):
        return True
    if mode[0] in (PREEMPT, RECLAIM) and fungibility.when_can_preempt == TRY_NEXT_FLAVOR:
        return True
    return mode[1] > 0 and fungibility.when_can_borrow == TRY_NEXT_FLAVOR


class _Assigner:
    def __init__(self, cluster: Cluster, record: Record, cluster_queue: str,
                 strategies: tuple[str, ...]) -> None:
        self.cluster = cluster
        self.record = record
        self.cq = cluster_queue
        self.spec = cluster.cluster_queues[cluster_queue]
        self.node = cluster.node(cluster_queue)
        self.strategies = strategies
        bwc = self.spec.preemption.borrow_within_cohort
        self.preempt_while_borrowing = (
            (bwc is not None and bwc.policy != NEVER)
            or (cluster.fair_sharing and self.spec.preemption.reclaim_within_cohort != NEVER))

    def assign(self) -> Assignment:
        groups: dict[str, ResourceGroup] = {
            r: g for g in self.spec.resource_groups for r in g.covered_resources}
        result = Assignment()
        for pod_set in self.record.workload.pod_sets:
            requests = pod_set.total()
            if "pods" in groups:
                requests["pods"] = pod_set.count
            chosen: dict[str, FlavorChoice] = {}
            reasons: list[str] = []
            failed = False
            for resource in sorted(requests):
                group = groups.get(resource)
                if group is None:
                    if requests[resource] == 0:
                        continue
                    reasons.append(f"resource {resource} unavailable in ClusterQueue")
                    failed = True
                    break
                if resource in chosen:
                    continue
                wanted = {r: requests[r] for r in group.covered_resources if r in requests}
                found = self._find_flavor(pod_set, group, wanted, result.usage, reasons)
                if found is None:
                    failed = True
                    break
                chosen.update(found)
            choice = PodSetChoice(pod_set.name, pod_set.count,
                                  () if failed else tuple(chosen[r] for r in sorted(chosen)),
                                  tuple(reasons))
            result.pod_sets.append(choice)
            if failed:
                result.failed = True
                return result
            for c in choice.flavors:
                fr = (c.flavor, c.resource)
                result.usage[fr] = result.usage.get(fr, 0) + requests[c.resource]
                result.borrowing = max(result.borrowing, c.borrow)
        return result

    def _find_flavor(self, pod_set: PodSet, group: ResourceGroup, wanted: dict[str, int],
                     assumed: dict[FlavorResource, int], reasons: list[str]
                     ) -> dict[str, FlavorChoice] | None:
        fungibility = self.spec.flavor_fungibility
        best: dict[str, FlavorChoice] | None = None
        best_mode: Granular = (_NO_FIT, 1 << 62)
        for quotas in group.flavors:
            why = self._mismatch(quotas.name, pod_set)
            if why is not None:
                reasons.append(why)
                continue
            choices: dict[str, FlavorChoice] = {}
            mode: Granular = (_FIT, 0)
            for resource in group.covered_resources:
                if resource not in wanted:
                    continue
                fr = (quotas.name, resource)
                this = self._fits(fr, assumed.get(fr, 0), wanted[resource], reasons)
                if is_preferred(mode, this, fungibility):
                    mode = this
                if mode[0] == _NO_FIT:
                    break
                choices[resource] = FlavorChoice(
                    resource, quotas.name, FIT if this[0] == _FIT else PREEMPT_MODE, this[1])
            if not _try_next(mode, fungibility):
                return choices
            if is_preferred(mode, best_mode, fungibility):
                best, best_mode = choices, mode
        return best

    def _mismatch(self, name: str, pod_set: PodSet) -> str | None:
        flavor = self.cluster.flavors.get(name)
        if flavor is None:
            return f"flavor {name} not found"
        tolerations = (*pod_set.tolerations, *flavor.tolerations)
        for taint in flavor.node_taints:
            if taint.effect in ("NoSchedule", "NoExecute") and not any(
                    t.tolerates(taint) for t in tolerations):
                return (f"untolerated taint {taint.key}={taint.value}:{taint.effect} "
                        f"in flavor {name}")
        for key, value in pod_set.node_selector.items():
            if key in flavor.node_labels and flavor.node_labels[key] != value:
                return f"flavor {name} doesn't match node affinity"
        return None

    def _fits(self, fr: FlavorResource, assumed: int, request: int, reasons: list[str]
              ) -> Granular:
        flavor, resource = fr
        free = max(0, available(self.node, fr))
        most = potential_available(self.node, fr)
        value = assumed + request
        if value > most:
            reasons.append(
                f"insufficient quota for {resource} in flavor {flavor}, previously considered "
                f"podsets requests ({format_quantity(resource, assumed)}) + current podset "
                f"request ({format_quantity(resource, request)}) > maximum capacity "
                f"({format_quantity(resource, most)})")
            return _NO_FIT, 0
        borrow, may_reclaim = lowest_fitting_subtree(self.node, fr, value)
        if value <= free:
            return _FIT, borrow
        reasons.append(f"insufficient unused quota for {resource} in flavor {flavor}, "
                       f"{format_quantity(resource, value - free)} more needed")
        if self.node.nominal(fr) >= value or may_reclaim or self.preempt_while_borrowing:
            return simulate(self.cluster, self.record, self.cq, fr, value, self.strategies)
        return _NO_FIT, borrow


def assign(cluster: Cluster, record: Record, cluster_queue: str,
           strategies: tuple[str, ...] = (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,
                                          LESS_THAN_INITIAL_SHARE)) -> Assignment:
    """The flavors `record`'s workload would get in `cluster_queue` now (nothing changes)."""
    return _Assigner(cluster, record, cluster_queue, strategies).assign()

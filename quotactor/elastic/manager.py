"""`ElasticQuotaManager`: Koordinator's multi-hierarchy elastic quota for one cluster.

It owns the quota tree, the pods charged to it and the cluster total, validates every change
the way Koordinator's webhook does (refusing with `QuotaError` and changing nothing), keeps
requests and runtimes up to date incrementally, and answers admission, preemption and
revocation questions on its current state.

It is a plain object and not thread-safe: `ElasticQuotaActor` serves one to concurrent callers.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from quotactor.core.resources import QuantityError, Resource
from quotactor.elastic import admission
from quotactor.elastic.admission import Admission
from quotactor.elastic.demand import masked
from quotactor.elastic.engine import RuntimeEngine
from quotactor.elastic.errors import QuotaError
from quotactor.elastic.node import QuotaNode
from quotactor.elastic.pods import Pod
from quotactor.elastic.spec import DEFAULT_QUOTA, ROOT_QUOTA, SYSTEM_QUOTA, QuotaSpec
from quotactor.elastic.status import QuotaStatus
from quotactor.elastic.validation import check_remove, check_upsert
from quotactor.elastic.view import quota_tree_view
from quotactor.logs import get_logger

__all__ = ["ElasticQuotaManager"]

log = get_logger()


class ElasticQuotaManager:
    """Quota tree, pods, runtimes and decisions (Koordinator semantics).

    Args:
        total: the cluster's allocatable resources.
        scale_min: scale the children's mins down when they add up to more than their parent
            has (Koordinator's `EnableMinQuotaScale`, on by default).
        default_quota_preemption: allow in-quota preemption in the default group (Koordinator
            disables it by default).
    """

    def __init__(self, total: Resource | Mapping[str, int] | None = None, scale_min: bool = True,
                 default_quota_preemption: bool = False) -> None:
        self._engine = RuntimeEngine(_amount("total", total), scale_min)
        self._tree = _TreeView(self._engine)
        self._pods: dict[str, Pod] = {}
        self._parked: dict[str, set[str]] = defaultdict(set)
        self._starts = 0
        self.default_quota_preemption = default_quota_preemption

    # -- the tree --------------------------------------------------------------------

    @property
    def total(self) -> Resource:
        return self._engine.total

    @property
    def scale_min(self) -> bool:
        return self._engine.scale_min

    @property
    def split_count(self) -> int:
        """How many parent splits have run so far (a measure of incremental work)."""
        return self._engine.split_count

    def set_total(self, total: Resource | Mapping[str, int]) -> None:
        """A new cluster total (nodes came or went); runtimes follow on the next read."""
        self._engine.set_total(_amount("total", total))

    def upsert(self, spec: QuotaSpec) -> None:
        """Create or update a quota; `QuotaError` (and no change) if the webhook would refuse.

        A new leaf also takes over the pods that named it while it did not exist yet (they
        waited in the default group, as in Koordinator).
        """
        if not isinstance(spec, QuotaSpec):
            raise QuotaError(f"expected a QuotaSpec, got {type(spec).__name__}")
        check_upsert(self._tree, spec)
        old = self._engine.get(spec.name)
        if old is None:
            self._engine.add(spec)
            log.debug("elastic_quota_added", quota=spec.name, parent=spec.parent_name)
        elif old.spec != spec:
            self._engine.update(spec)
            log.debug("elastic_quota_updated", quota=spec.name, parent=spec.parent_name)
        if not spec.is_parent:
            self._adopt_parked(spec.name)

    def remove(self, name: str) -> None:
        """Delete a quota that has neither child quotas nor pods."""
        check_remove(self._tree, name)
        self._engine.remove(name)
        log.debug("elastic_quota_removed", quota=name)

    def specs(self) -> list[QuotaSpec]:
        """Every declared quota (the default group included), parents before children."""
        return [node.spec for node in self._engine.nodes()
                if node.name not in (ROOT_QUOTA, SYSTEM_QUOTA)]

    def quota_names(self) -> list[str]:
        """All quota names, the root and the special groups included, parents first."""
        return [node.name for node in self._engine.nodes()]

    # -- pods ------------------------------------------------------------------------

    def add_pod(self, pod_id: str, quota: str | None, request: Resource | Mapping[str, int],
                priority: int = 0, preemptible: bool = True) -> None:
        """A new (pending) pod: its request counts in its quota's request from now on.

        `quota` None, or a quota that does not exist yet, charges the default group. A parent
        quota cannot run pods.
        """
        if not isinstance(pod_id, str) or not pod_id:
            raise QuotaError(f"pod id must be a non-empty string, got {pod_id!r}")
        if pod_id in self._pods:
            raise QuotaError(f"pod {pod_id} already exists")
        if isinstance(priority, bool) or not isinstance(priority, int):
            raise QuotaError(f"priority of pod {pod_id} must be an integer, got {priority!r}")
        amount = _amount(f"request of pod {pod_id}", request)
        target, wanted = self._resolve(quota)
        if target.spec.is_parent:
            raise QuotaError(f"quota {target.name} is a parent quota and cannot run pods")
        pod = Pod(pod_id, target.name, amount, priority, bool(preemptible), wanted_quota=wanted)
        self._pods[pod_id] = pod
        target.pods.add(pod_id)
        if wanted is not None:
            self._parked[wanted].add(pod_id)
        self._engine.charge(target.name, request=amount)

    def assign_pod(self, pod_id: str) -> None:
        """The scheduler placed the pod: it counts in used. Records, never re-checks."""
        pod = self._pod(pod_id)
        if pod.assigned:
            return
        self._starts += 1
        self._pods[pod_id] = pod.assign(self._starts)
        self._charge_used(pod, 1)

    def unassign_pod(self, pod_id: str) -> None:
        """The placement was undone (Koordinator's Unreserve): the pod is pending again."""
        pod = self._pod(pod_id)
        if pod.assigned:
            self._pods[pod_id] = pod.unassign()
            self._charge_used(pod, -1)

    def remove_pod(self, pod_id: str) -> None:
        """The pod is gone: it leaves its quota's request (and used)."""
        pod = self._pod(pod_id)
        self.unassign_pod(pod_id)
        del self._pods[pod_id]
        node = self._node(pod.quota)
        node.pods.discard(pod_id)
        if pod.wanted_quota is not None:
            self._parked[pod.wanted_quota].discard(pod_id)
        self._engine.charge(pod.quota, request=-pod.request)

    def reserve(self, pod_id: str) -> Admission:
        """Admit a pending pod and assign it in one step (Koordinator's PreFilter + Reserve)."""
        pod = self._pod(pod_id)
        if pod.assigned:
            return Admission(True, pod.quota)
        decision = admission.admit(self.status(pod.quota), pod.request, not pod.preemptible)
        if decision.ok:
            self.assign_pod(pod_id)
        return decision

    def pod(self, pod_id: str) -> Pod:
        return self._pod(pod_id)

    def pods(self, quota: str | None = None) -> list[Pod]:
        """All pods, or a quota's own pods, by id."""
        if quota is None:
            return sorted(self._pods.values(), key=lambda p: p.id)
        return sorted((self._pods[p] for p in self._node(quota).pods), key=lambda p: p.id)

    # -- figures ---------------------------------------------------------------------

    def runtime(self, name: str) -> Resource:
        return self.status(name).runtime

    def request(self, name: str) -> Resource:
        return self._node(name).request

    def used(self, name: str) -> Resource:
        return self._node(name).used

    def available(self) -> Resource:
        """What normal quotas share: the total minus the system and default groups' used."""
        return self._engine.available()

    def status(self, name: str) -> QuotaStatus:
        """A snapshot of one quota with up-to-date runtime."""
        node = self._node(name)
        self._engine.settle()
        return _snapshot(node)

    def statuses(self) -> list[QuotaStatus]:
        """Snapshots of every quota, parents before children, siblings by name."""
        self._engine.settle()
        return [_snapshot(node) for node in self._engine.nodes()]

    def view(self) -> dict[str, Any]:
        """The quota tree as a JSON-able dict (the REST view)."""
        return quota_tree_view(self.statuses(), self.total, self.available())

    # -- decisions -------------------------------------------------------------------

    def admit(self, quota: str | None, request: Resource | Mapping[str, int],
              non_preemptible: bool = False) -> Admission:
        """Whether a pod with `request` fits its quota now: used + request <= runtime."""
        node, _ = self._resolve(quota)
        return admission.admit(self.status(node.name), _amount("request", request),
                               non_preemptible)

    def preemption_victims(self, pod_id: str, candidates: Iterable[str]) -> list[str]:
        """Which of `candidates` (pod ids, e.g. those on one node) to evict for a pending pod.

        Only assigned, preemptible pods of the same quota with strictly lower priority can be
        victims; the most important of them are spared while the pod still fits.
        """
        preemptor = self._pod(pod_id)
        if preemptor.assigned:
            raise QuotaError(f"pod {pod_id} is already assigned")
        pods = [self._pods[c] for c in dict.fromkeys(candidates) if c in self._pods]
        victims = admission.select_victims(self.status(preemptor.quota), preemptor, pods,
                                           self.default_quota_preemption)
        return [pod.id for pod in victims]

    def revoke_list(self, name: str) -> list[str]:
        """The pods to evict, least important first, to bring the quota back within runtime."""
        status = self.status(name)
        if name == SYSTEM_QUOTA:
            return []
        return [pod.id for pod in admission.revoke_list(status, self.pods(name))]

    def over_runtime(self) -> list[str]:
        """Quotas that can run pods and use more than their runtime now."""
        return [s.name for s in self.statuses()
                if s.name not in (ROOT_QUOTA, SYSTEM_QUOTA) and not s.spec.is_parent
                and admission.is_over_runtime(s)]

    # -- helpers ---------------------------------------------------------------------

    def _node(self, name: str) -> QuotaNode:
        node = self._engine.get(name)
        if node is None:
            raise QuotaError(f"quota {name} does not exist")
        return node

    def _pod(self, pod_id: str) -> Pod:
        pod = self._pods.get(pod_id)
        if pod is None:
            raise QuotaError(f"pod {pod_id} does not exist")
        return pod

    def _resolve(self, quota: str | None) -> tuple[QuotaNode, str | None]:
        """The quota a pod is charged to, and the name it waits for if that does not exist."""
        if quota is None:
            return self._node(DEFAULT_QUOTA), None
        node = self._engine.get(quota)
        if node is None:
            return self._node(DEFAULT_QUOTA), quota
        return node, None

    def _charge_used(self, pod: Pod, sign: int) -> None:
        used = pod.request if sign > 0 else -pod.request
        self._engine.charge(pod.quota, used=used,
                            non_preemptible_used=used if not pod.preemptible else Resource())

    def _adopt_parked(self, name: str) -> None:
        parked = self._parked.pop(name, set())
        for pod_id in sorted(parked):
            pod = self._pods[pod_id]
            self._move(pod, self._node(name))
            log.info("elastic_pod_moved_from_default", pod=pod_id, quota=name)

    def _move(self, pod: Pod, target: QuotaNode) -> None:
        source = self._node(pod.quota)
        if pod.assigned:
            self._charge_used(pod, -1)
        self._engine.charge(source.name, request=-pod.request)
        source.pods.discard(pod.id)
        moved = pod.moved_to(target.name)
        self._pods[pod.id] = moved
        target.pods.add(pod.id)
        self._engine.charge(target.name, request=moved.request)
        if moved.assigned:
            self._charge_used(moved, 1)


class _TreeView:
    """The validation rules' window on the engine's tree."""

    def __init__(self, engine: RuntimeEngine) -> None:
        self._engine = engine

    def spec_of(self, name: str) -> QuotaSpec | None:
        node = self._engine.get(name)
        return None if node is None else node.spec

    def children_of(self, name: str) -> list[QuotaSpec]:
        node = self._engine.get(name)
        return [] if node is None else [c.spec for c in node.children.values()]

    def has_pods(self, name: str) -> bool:
        node = self._engine.get(name)
        return node is not None and bool(node.pods)


def _snapshot(node: QuotaNode) -> QuotaStatus:
    return QuotaStatus(
        spec=node.spec,
        depth=node.depth,
        children=tuple(sorted(node.children)),
        request=node.request,
        limited_request=node.contribution,
        used=node.used,
        non_preemptible_used=masked(node.spec, node.own_np_used),
        runtime=node.runtime,
        effective_min=node.effective_min,
        pods=len(node.pods),
    )


def _amount(what: str, value: object) -> Resource:
    try:
        amount = Resource.of(value)  # type: ignore[arg-type]
    except QuantityError as exc:
        raise QuotaError(f"{what}: {exc}") from None
    if amount.has_negative():
        raise QuotaError(f"{what} must not be negative: {amount}")
    return amount

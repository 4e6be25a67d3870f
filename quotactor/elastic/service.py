"""`ElasticQuotaService`: the blocking facade over one `ElasticQuotaActor`.

Callers on any thread use it like an `ElasticQuotaManager`; each call is one message to the
actor (`quotactor.actors.served`), bounded by the caller's `timeout`, and a refusal is raised in
the caller as the same `QuotaError`. Any other failure is an `OperationFailed` (the manager is
left as before it), a stopped service raises `ManagerClosed`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from quotactor.actors.served import Facade, Served
from quotactor.core.resources import Resource
from quotactor.elastic.actor import CheckOveruse, ElasticMessage, ElasticQuotaActor
from quotactor.elastic.admission import Admission
from quotactor.elastic.manager import ElasticQuotaManager
from quotactor.elastic.monitor import Clock, OveruseReport
from quotactor.elastic.pods import Pod
from quotactor.elastic.spec import QuotaSpec
from quotactor.elastic.status import QuotaStatus

__all__ = ["ElasticQuotaService"]

DEFAULT_TIMEOUT = 30.0
Manager = ElasticQuotaManager


class ElasticQuotaService(Facade[ElasticQuotaManager]):
    """Start with `ElasticQuotaService.start(...)`; stop with `stop()` or a `with` block.

    `timeout` (seconds) bounds every call; it may be changed at any time.
    """

    @classmethod
    def start(
        cls,
        total: Resource | Mapping[str, int] | None = None,
        *,
        scale_min: bool = True,
        default_quota_preemption: bool = False,
        overuse_delay: float = 120.0,
        clock: Clock = time.monotonic,
        check_interval: float | None = None,
        on_overuse: Callable[[OveruseReport], None] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> ElasticQuotaService:
        """Start an actor around a new manager (see `ElasticQuotaManager`, `ElasticQuotaActor`)."""
        manager = ElasticQuotaManager(total, scale_min, default_quota_preemption)
        served: Served[ElasticMessage] = Served("elastic", lambda pool: ElasticQuotaActor(
            pool, manager, overuse_delay, clock, check_interval, on_overuse))
        return cls(served, timeout)

    # -- the manager's operations ------------------------------------------------------

    def upsert(self, spec: QuotaSpec) -> None:
        self._change(Manager.upsert, spec)

    def remove(self, name: str) -> None:
        self._change(Manager.remove, name)

    def set_total(self, total: Resource | Mapping[str, int]) -> None:
        self._change(Manager.set_total, _amount(total))

    def add_pod(self, pod_id: str, quota: str | None, request: Resource | Mapping[str, int],
                priority: int = 0, preemptible: bool = True) -> None:
        self._change(Manager.add_pod, pod_id, quota, _amount(request), priority, preemptible)

    def assign_pod(self, pod_id: str) -> None:
        self._change(Manager.assign_pod, pod_id)

    def unassign_pod(self, pod_id: str) -> None:
        self._change(Manager.unassign_pod, pod_id)

    def remove_pod(self, pod_id: str) -> None:
        self._change(Manager.remove_pod, pod_id)

    def reserve(self, pod_id: str) -> Admission:
        return self._change(Manager.reserve, pod_id)

    def admit(self, quota: str | None, request: Resource | Mapping[str, int],
              non_preemptible: bool = False) -> Admission:
        return self._read(Manager.admit, quota, request, non_preemptible)

    def preemption_victims(self, pod_id: str, candidates: Iterable[str]) -> list[str]:
        chosen = tuple(candidates)
        return self._read(Manager.preemption_victims, pod_id, chosen)

    def revoke_list(self, name: str) -> list[str]:
        return self._read(Manager.revoke_list, name)

    def over_runtime(self) -> list[str]:
        return self._read(Manager.over_runtime)

    def runtime(self, name: str) -> Resource:
        return self._read(Manager.runtime, name)

    def request(self, name: str) -> Resource:
        return self._read(Manager.request, name)

    def used(self, name: str) -> Resource:
        return self._read(Manager.used, name)

    def available(self) -> Resource:
        return self._read(Manager.available)

    def status(self, name: str) -> QuotaStatus:
        return self._read(Manager.status, name)

    def statuses(self) -> list[QuotaStatus]:
        return self._read(Manager.statuses)

    def specs(self) -> list[QuotaSpec]:
        return self._read(Manager.specs)

    def pods(self, quota: str | None = None) -> list[Pod]:
        return self._read(Manager.pods, quota)

    def pod(self, pod_id: str) -> Pod:
        return self._read(Manager.pod, pod_id)

    def view(self) -> dict[str, Any]:
        """The quota tree as a JSON-able dict (the REST view)."""
        return self._read(Manager.view)

    def check_overuse(self) -> list[OveruseReport]:
        """Run one over-use check now (tests drive the monitor's clock and call this)."""
        reports: list[OveruseReport] = self._served.ask(CheckOveruse(), self.timeout)
        return reports



def _amount(value: Resource | Mapping[str, int]) -> Resource | Mapping[str, int]:
    """A caller's mapping copied, so that editing it later cannot change a replay."""
    return value if isinstance(value, Resource) else dict(value)

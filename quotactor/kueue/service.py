"""`KueueService`: the blocking facade over one `KueueActor`.

Callers on any thread use it like a `KueueManager`; each call is one message to the actor
(`quotactor.actors.served`), bounded by the caller's `timeout`, and a refusal is raised in the
caller as the same `KueueError`. Any other failure is an `OperationFailed` (the manager is left
as before it); a stopped service raises `ManagerClosed`. An interrupt (Ctrl-C) while waiting
ends the wait only: the call is applied whole or not at all.
"""

from __future__ import annotations

from collections.abc import Mapping

from quotactor.actors.served import Facade, Served
from quotactor.kueue.actor import KueueActor, KueueMessage
from quotactor.kueue.api import Workload
from quotactor.kueue.manager import CycleResult, KueueManager, KueueObject
from quotactor.kueue.preemption import LESS_THAN_INITIAL_SHARE, LESS_THAN_OR_EQUAL_TO_FINAL_SHARE
from quotactor.kueue.status import ClusterQueueUsage, CohortUsage, WorkloadStatus

__all__ = ["KueueService"]

DEFAULT_TIMEOUT = 30.0
Manager = KueueManager


class KueueService(Facade[KueueManager]):
    """Start with `KueueService.start(...)`; stop with `stop()` or a `with` block.

    `timeout` (seconds) bounds every call; it may be changed at any time.
    """

    @classmethod
    def start(cls, *, fair_sharing: bool = False,
              fair_sharing_strategies: tuple[str, ...] = (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,
                                                          LESS_THAN_INITIAL_SHARE),
              timeout: float = DEFAULT_TIMEOUT) -> KueueService:
        """Start an actor around a new manager (see `KueueManager`)."""
        manager = KueueManager(fair_sharing, fair_sharing_strategies)
        served: Served[KueueMessage] = Served("kueue", lambda pool: KueueActor(pool, manager))
        return cls(served, timeout)

    # -- the manager's operations ------------------------------------------------------

    def apply(self, *objects: KueueObject) -> None:
        self._change(Manager.apply, *objects)

    def delete(self, kind: str, name: str, namespace: str = "default") -> None:
        self._change(Manager.delete, kind, name, namespace)

    def set_namespace(self, name: str, labels: Mapping[str, str] | None = None) -> None:
        self._change(Manager.set_namespace, name, dict(labels or {}))

    def submit(self, workload: Workload) -> None:
        self._change(Manager.submit, workload)

    def finish(self, key: str) -> None:
        self._change(Manager.finish, key)

    def evict(self, key: str) -> None:
        self._change(Manager.evict, key)

    def schedule(self) -> CycleResult:
        return self._change(Manager.schedule)

    def admit_pending(self, max_cycles: int | None = None) -> CycleResult:
        return self._change(Manager.admit_pending, max_cycles)

    def workload(self, key: str) -> WorkloadStatus:
        return self._read(Manager.workload, key)

    def workloads(self) -> list[WorkloadStatus]:
        return self._read(Manager.workloads)

    def pending(self, cluster_queue: str | None = None) -> list[str]:
        return self._read(Manager.pending, cluster_queue)

    def inadmissible(self, cluster_queue: str | None = None) -> list[str]:
        return self._read(Manager.inadmissible, cluster_queue)

    def restore(self, workload: Workload, cluster_queue: str,
                flavors: Mapping[str, Mapping[str, str]] | None = None,
                admitted_at: float | None = None) -> None:
        chosen = {p: dict(f) for p, f in flavors.items()} if flavors is not None else None
        self._change(Manager.restore, workload, cluster_queue, chosen, admitted_at)

    def admitted(self, cluster_queue: str | None = None) -> list[str]:
        return self._read(Manager.admitted, cluster_queue)

    def cluster_queue_usage(self, name: str) -> ClusterQueueUsage:
        return self._read(Manager.cluster_queue_usage, name)

    def cluster_queue_usages(self) -> list[ClusterQueueUsage]:
        return self._read(Manager.cluster_queue_usages)

    def cohort_usage(self, name: str) -> CohortUsage:
        return self._read(Manager.cohort_usage, name)

    def cohort_usages(self) -> list[CohortUsage]:
        return self._read(Manager.cohort_usages)

    def share(self, name: str) -> float:
        return self._read(Manager.share, name)

    def objects(self) -> list[KueueObject]:
        return self._read(Manager.objects)

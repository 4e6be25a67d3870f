"""`ElasticQuotaService`: the blocking facade over one `ElasticQuotaActor`.

Callers on any thread use it like an `ElasticQuotaManager`; each call is one `ask` to the
actor, bounded by a timeout, and a refusal is raised in the caller as the same `QuotaError`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from types import TracebackType
from typing import Any

import pykka

from quotactor.core.resources import Resource
from quotactor.elastic.actor import Call, CheckOveruse, ElasticQuotaActor, Failure
from quotactor.elastic.admission import Admission
from quotactor.elastic.manager import ElasticQuotaManager
from quotactor.elastic.monitor import Clock, OveruseReport
from quotactor.elastic.pods import Pod
from quotactor.elastic.spec import QuotaSpec
from quotactor.elastic.status import QuotaStatus

__all__ = ["ElasticQuotaService"]

DEFAULT_TIMEOUT = 30.0


class ElasticQuotaService:
    """Start with `ElasticQuotaService.start(...)`; stop with `stop()` or a `with` block."""

    def __init__(self, actor: pykka.ActorRef[Any], timeout: float = DEFAULT_TIMEOUT) -> None:
        self._actor: pykka.ActorRef[Any] | None = actor
        self.timeout = timeout
        self._lock = threading.Lock()

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
        actor = ElasticQuotaActor.start(manager, overuse_delay, clock, check_interval,
                                        on_overuse)
        return cls(actor, timeout)

    def stop(self) -> None:
        """Stop the actor (and its ticker); safe to call twice."""
        with self._lock:
            actor, self._actor = self._actor, None
        if actor is not None:
            actor.stop(block=True, timeout=self.timeout)

    def __enter__(self) -> ElasticQuotaService:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._actor is not None

    # -- the manager's operations ------------------------------------------------------

    def upsert(self, spec: QuotaSpec) -> None:
        self._call("upsert", spec)

    def remove(self, name: str) -> None:
        self._call("remove", name)

    def set_total(self, total: Resource | Mapping[str, int]) -> None:
        self._call("set_total", total)

    def add_pod(self, pod_id: str, quota: str | None, request: Resource | Mapping[str, int],
                priority: int = 0, preemptible: bool = True) -> None:
        self._call("add_pod", pod_id, quota, request, priority, preemptible)

    def assign_pod(self, pod_id: str) -> None:
        self._call("assign_pod", pod_id)

    def unassign_pod(self, pod_id: str) -> None:
        self._call("unassign_pod", pod_id)

    def remove_pod(self, pod_id: str) -> None:
        self._call("remove_pod", pod_id)

    def reserve(self, pod_id: str) -> Admission:
        result: Admission = self._call("reserve", pod_id)
        return result

    def admit(self, quota: str | None, request: Resource | Mapping[str, int],
              non_preemptible: bool = False) -> Admission:
        result: Admission = self._call("admit", quota, request, non_preemptible)
        return result

    def preemption_victims(self, pod_id: str, candidates: Iterable[str]) -> list[str]:
        result: list[str] = self._call("preemption_victims", pod_id, tuple(candidates))
        return result

    def revoke_list(self, name: str) -> list[str]:
        result: list[str] = self._call("revoke_list", name)
        return result

    def over_runtime(self) -> list[str]:
        result: list[str] = self._call("over_runtime")
        return result

    def runtime(self, name: str) -> Resource:
        result: Resource = self._call("runtime", name)
        return result

    def request(self, name: str) -> Resource:
        result: Resource = self._call("request", name)
        return result

    def used(self, name: str) -> Resource:
        result: Resource = self._call("used", name)
        return result

    def available(self) -> Resource:
        result: Resource = self._call("available")
        return result

    def status(self, name: str) -> QuotaStatus:
        result: QuotaStatus = self._call("status", name)
        return result

    def statuses(self) -> list[QuotaStatus]:
        result: list[QuotaStatus] = self._call("statuses")
        return result

    def specs(self) -> list[QuotaSpec]:
        result: list[QuotaSpec] = self._call("specs")
        return result

    def pods(self, quota: str | None = None) -> list[Pod]:
        result: list[Pod] = self._call("pods", quota)
        return result

    def pod(self, pod_id: str) -> Pod:
        result: Pod = self._call("pod", pod_id)
        return result

    def view(self) -> dict[str, Any]:
        """The quota tree as a JSON-able dict (the REST view)."""
        result: dict[str, Any] = self._call("view")
        return result

    def check_overuse(self) -> list[OveruseReport]:
        """Run one over-use check now (tests drive the monitor's clock and call this)."""
        result: list[OveruseReport] = self._ask(CheckOveruse())
        return result

    def _call(self, operation: str, *args: Any) -> Any:
        return self._ask(Call(operation, args))

    def _ask(self, message: Any) -> Any:
        actor = self._actor
        if actor is None:
            raise RuntimeError("the elastic quota service is stopped")
        result = actor.ask(message, timeout=self.timeout)
        if isinstance(result, Failure):
            raise result.error
        return result

"""`ElasticQuotaService`: the blocking facade over one `ElasticQuotaActor`.

Callers on any thread use it like an `ElasticQuotaManager`; each call is one `ask` to the
actor, bounded by a timeout, and a refusal is raised in the caller as the same `QuotaError`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping
from types import TracebackType
from typing import Any, TypeVar

import pykka

from quotactor.actors.boundary import ask, translated
from quotactor.core.errors import OperationFailed, QuotactorError
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
R = TypeVar("R")


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
            translated(lambda: actor.stop(block=True, timeout=self.timeout))

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
        self._call(lambda m: m.upsert(spec))

    def remove(self, name: str) -> None:
        self._call(lambda m: m.remove(name))

    def set_total(self, total: Resource | Mapping[str, int]) -> None:
        self._call(lambda m: m.set_total(total))

    def add_pod(self, pod_id: str, quota: str | None, request: Resource | Mapping[str, int],
                priority: int = 0, preemptible: bool = True) -> None:
        self._call(lambda m: m.add_pod(pod_id, quota, request, priority, preemptible))

    def assign_pod(self, pod_id: str) -> None:
        self._call(lambda m: m.assign_pod(pod_id))

    def unassign_pod(self, pod_id: str) -> None:
        self._call(lambda m: m.unassign_pod(pod_id))

    def remove_pod(self, pod_id: str) -> None:
        self._call(lambda m: m.remove_pod(pod_id))

    def reserve(self, pod_id: str) -> Admission:
        return self._call(lambda m: m.reserve(pod_id))

    def admit(self, quota: str | None, request: Resource | Mapping[str, int],
              non_preemptible: bool = False) -> Admission:
        return self._call(lambda m: m.admit(quota, request, non_preemptible))

    def preemption_victims(self, pod_id: str, candidates: Iterable[str]) -> list[str]:
        chosen = tuple(candidates)
        return self._call(lambda m: m.preemption_victims(pod_id, chosen))

    def revoke_list(self, name: str) -> list[str]:
        return self._call(lambda m: m.revoke_list(name))

    def over_runtime(self) -> list[str]:
        return self._call(lambda m: m.over_runtime())

    def runtime(self, name: str) -> Resource:
        return self._call(lambda m: m.runtime(name))

    def request(self, name: str) -> Resource:
        return self._call(lambda m: m.request(name))

    def used(self, name: str) -> Resource:
        return self._call(lambda m: m.used(name))

    def available(self) -> Resource:
        return self._call(lambda m: m.available())

    def status(self, name: str) -> QuotaStatus:
        return self._call(lambda m: m.status(name))

    def statuses(self) -> list[QuotaStatus]:
        return self._call(lambda m: m.statuses())

    def specs(self) -> list[QuotaSpec]:
        return self._call(lambda m: m.specs())

    def pods(self, quota: str | None = None) -> list[Pod]:
        return self._call(lambda m: m.pods(quota))

    def pod(self, pod_id: str) -> Pod:
        return self._call(lambda m: m.pod(pod_id))

    def view(self) -> dict[str, Any]:
        """The quota tree as a JSON-able dict (the REST view)."""
        return self._call(lambda m: m.view())

    def check_overuse(self) -> list[OveruseReport]:
        """Run one over-use check now (tests drive the monitor's clock and call this)."""
        result: list[OveruseReport] = self._ask(CheckOveruse())
        return result

    def _call(self, operation: Callable[[ElasticQuotaManager], R]) -> R:
        result: R = self._ask(Call(operation))
        return result

    def _ask(self, message: Any) -> Any:
        """One ask through the library's exception boundary; a refusal raises its
        `QuotaError` here."""
        result = ask(self._actor, message, self.timeout)
        if isinstance(result, Failure):
            error = result.error
            if isinstance(error, QuotactorError):
                raise error
            raise OperationFailed(f"{type(error).__name__}: {error}") from error
        return result

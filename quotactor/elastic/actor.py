"""`ElasticQuotaActor`: one `ElasticQuotaManager` served to concurrent callers.

Every operation is a message handled on the actor's own thread, one after the other, so each
decision (an admission, a victim list) is taken on one consistent state and no lock is needed.
An operation is a `Call`: a typed function of the manager, run on the actor's thread (what a
pykka proxy call does, with the manager's own signatures checked by the type checker instead of
a method name looked up at run time). A handler never raises: a refusal travels back to the
caller as a `Failure` value, because pykka stops an actor whose `tell` handler raises, and a
dead quota engine would refuse all pods. An optional ticker thread sends the over-use check
periodically.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import pykka

from quotactor.elastic.manager import ElasticQuotaManager
from quotactor.elastic.monitor import Clock, OveruseMonitor, OveruseReport
from quotactor.logs import get_logger

__all__ = ["Call", "CheckOveruse", "ElasticQuotaActor", "Failure"]

log = get_logger()
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Call(Generic[R]):
    """Run `operation(manager)` on the actor's thread; answered with its result."""

    operation: Callable[[ElasticQuotaManager], R]


@dataclass(frozen=True, slots=True)
class CheckOveruse:
    """Run one round of the over-use monitor; answered with the list of `OveruseReport`s."""


@dataclass(frozen=True, slots=True)
class Failure:
    """An operation was refused or failed; the facade raises `error` in the caller."""

    error: Exception


class ElasticQuotaActor(pykka.ThreadingActor):
    """Serialises all access to one manager; see the module docstring.

    Args:
        manager: the engine to serve (a new, empty one by default).
        overuse_delay: seconds a quota may stay over its runtime before it is reported.
        clock: time source of the monitor (inject a fake one in tests).
        check_interval: seconds between automatic over-use checks; None: only on request.
        on_overuse: called (on the actor thread) with every report; its errors are logged.
    """

    use_daemon_thread = True

    def __init__(self, manager: ElasticQuotaManager | None = None, overuse_delay: float = 120.0,
                 clock: Clock = time.monotonic, check_interval: float | None = None,
                 on_overuse: Callable[[OveruseReport], None] | None = None) -> None:
        super().__init__()
        if check_interval is not None and check_interval <= 0:
            raise ValueError(f"check_interval must be positive, got {check_interval}")
        self.manager = manager if manager is not None else ElasticQuotaManager()
        self.monitor = OveruseMonitor(overuse_delay, clock)
        self.check_interval = check_interval
        self.on_overuse = on_overuse
        self._ticker: _Ticker | None = None

    def on_start(self) -> None:
        if self.check_interval is not None:
            self._ticker = _Ticker(self.actor_ref, self.check_interval)
            self._ticker.start()

    def on_stop(self) -> None:
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None

    def on_receive(self, message: Any) -> Any:
        try:
            if isinstance(message, Call):
                return message.operation(self.manager)
            if isinstance(message, CheckOveruse):
                return self.check_overuse()
            raise ValueError(f"unexpected message {type(message).__name__}")
        except ValueError as exc:
            return Failure(exc)
        except Exception as exc:
            log.exception("elastic_quota_operation_failed", message=repr(message))
            return Failure(exc)

    def check_overuse(self) -> list[OveruseReport]:
        """Report the quotas over their runtime for longer than the delay, with what to evict."""
        due = self.monitor.observe(self.manager.over_runtime())
        reports: list[OveruseReport] = []
        for name, over_for in due.items():
            status = self.manager.status(name)
            report = OveruseReport(name, over_for, status.used, status.runtime,
                                   tuple(self.manager.revoke_list(name)))
            reports.append(report)
            log.warning("elastic_quota_overused", quota=name, over_for=over_for,
                        used=report.used.to_dict(), runtime=report.runtime.to_dict(),
                        revoke=list(report.revoke))
            if self.on_overuse is not None:
                try:
                    self.on_overuse(report)
                except Exception:
                    log.exception("elastic_overuse_callback_failed", quota=name)
        return reports


class _Ticker(threading.Thread):
    """Sends `CheckOveruse` to the actor every `interval` seconds until stopped."""

    def __init__(self, actor: pykka.ActorRef[Any], interval: float) -> None:
        super().__init__(name="quotactor-elastic-monitor", daemon=True)
        self._actor = actor
        self._interval = interval
        self._stopped = threading.Event()

    def run(self) -> None:
        while not self._stopped.wait(self._interval):
            try:
                self._actor.tell(CheckOveruse())
            except pykka.ActorDeadError:
                return

    def stop(self) -> None:
        self._stopped.set()
        if self is not threading.current_thread():
            self.join(timeout=self._interval + 5.0)

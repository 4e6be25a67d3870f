"""`ElasticQuotaActor`: one `ElasticQuotaManager` served to concurrent callers.

An actor of the package's runtime (`quotactor.actors.runtime`), like the trackers: messages are
handled one at a time, so each decision (an admission, a victim list) is taken on one
consistent state and no lock is needed. A message is a `Read` or a `Change` naming a manager
method and its arguments (typed where the facade builds it), or `CheckOveruse`. The manager is
held under a `Checkpoint`: a step that raises inside a handler leaves it as before the
message, and the error reaches the caller (a refusal as its `QuotaError`). A handler that
raises never stops the actor. An optional ticker thread sends the over-use check periodically.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from quotactor.actors.checkpoint import Checkpoint
from quotactor.actors.runtime import Actor, WorkerPool, deliver
from quotactor.actors.served import Change, Read
from quotactor.elastic.errors import QuotaError
from quotactor.elastic.manager import ElasticQuotaManager
from quotactor.elastic.monitor import Clock, OveruseMonitor, OveruseReport
from quotactor.logs import get_logger

__all__ = ["CheckOveruse", "ElasticMessage", "ElasticQuotaActor"]

log = get_logger()


@dataclass(frozen=True, slots=True)
class CheckOveruse:
    """Run one round of the over-use monitor; answered with the list of `OveruseReport`s."""


ElasticMessage = Read[ElasticQuotaManager] | Change[ElasticQuotaManager] | CheckOveruse


class ElasticQuotaActor(Actor[ElasticMessage]):
    """Serialises all access to one manager; see the module docstring.

    Args:
        pool: the worker pool that runs the actor when a message finds it busy.
        manager: the engine to serve (a new, empty one by default); the actor owns it.
        overuse_delay: seconds a quota may stay over its runtime before it is reported.
        clock: time source of the monitor (inject a fake one in tests).
        check_interval: seconds between automatic over-use checks; None: only on request.
        on_overuse: called (on the thread running the actor) with every report; its errors
            are logged.
    """

    def __init__(self, pool: WorkerPool, manager: ElasticQuotaManager | None = None,
                 overuse_delay: float = 120.0, clock: Clock = time.monotonic,
                 check_interval: float | None = None,
                 on_overuse: Callable[[OveruseReport], None] | None = None) -> None:
        if check_interval is not None and check_interval <= 0:
            raise ValueError(f"check_interval must be positive, got {check_interval}")
        # the first copy may fail (a state that cannot be copied): before the actor counts
        self._state = Checkpoint(
            manager if manager is not None else ElasticQuotaManager(), (QuotaError,))
        super().__init__(pool)
        self.monitor = OveruseMonitor(overuse_delay, clock)
        self.on_overuse = on_overuse
        self._ticker: _Ticker | None = None
        if check_interval is not None:
            self._ticker = _Ticker(self, pool, check_interval)
            self._ticker.start()

    @property
    def manager(self) -> ElasticQuotaManager:
        """The served manager (a rebuilt one after a failure): only for the actor's thread."""
        return self._state.state

    @property
    def rebuilds(self) -> int:
        """How often a failure inside a handler made the actor rebuild its manager."""
        return self._state.rebuilds

    def handle(self, message: ElasticMessage) -> Any:
        if isinstance(message, Read):
            return self._state.read(message)
        if isinstance(message, Change):
            return self._state.change(message)
        if isinstance(message, CheckOveruse):
            return self._state.read(self._check_overuse)
        raise TypeError(f"unexpected message {type(message).__name__}")

    def on_stop(self) -> None:
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None

    def _check_overuse(self, manager: ElasticQuotaManager) -> list[OveruseReport]:
        """Report the quotas over their runtime for longer than the delay, with what to evict."""
        due = self.monitor.observe(manager.over_runtime())
        reports: list[OveruseReport] = []
        for name, over_for in due.items():
            status = manager.status(name)
            report = OveruseReport(name, over_for, status.used, status.runtime,
                                   tuple(manager.revoke_list(name)))
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
    """Has `CheckOveruse` sent to the actor every `interval` seconds until stopped (a message
    of a stopped actor is dropped).

    The message is sent from the actor's pool, never from this thread: the check (and a stop
    queued behind it) then never runs here, so `on_stop` can always join this thread.
    """

    def __init__(self, actor: ElasticQuotaActor, pool: WorkerPool, interval: float) -> None:
        super().__init__(name="quotactor-elastic-monitor", daemon=True)
        self._actor = actor
        self._pool = pool
        self._interval = interval
        self._stopped = threading.Event()

    def run(self) -> None:
        while not self._stopped.wait(self._interval) and self._actor.is_alive():
            self._pool.schedule(partial(deliver, self._actor, CheckOveruse()))

    def stop(self) -> None:
        self._stopped.set()
        if self is not threading.current_thread():
            self.join(timeout=self._interval + 5.0)

"""The background scheduling loop: one cycle every interval, on one thread, until stopped."""

from __future__ import annotations

import threading
from collections.abc import Callable

from quotactor.logs import get_logger

__all__ = ["PeriodicRunner"]

log = get_logger()


class PeriodicRunner:
    """Calls `work` every `interval` seconds on a thread named `quotactor-scheduler`.

    `stop` wakes the thread at once and waits for it, so no thread outlives the scheduler.
    A cycle that raises is logged and the loop goes on: one bad cycle must not stop scheduling.
    """

    def __init__(self, work: Callable[[], object], interval: float) -> None:
        if interval <= 0:
            raise ValueError(f"the scheduling interval must be positive, got {interval}")
        self._work = work
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="quotactor-scheduler",
                                        daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self._work()
            except Exception:
                log.exception("scheduler.cycle_failed")

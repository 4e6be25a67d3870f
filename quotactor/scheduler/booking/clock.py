"""Where the scheduler gets its time from: the wall clock, or a virtual clock a simulator drives.

Every timeout the scheduler knows (starting, completing, placeholder, expiry) is a deadline read
from one injected clock, never a thread sleeping on real time. A virtual clock therefore makes a
whole replay deterministic and as fast as the machine allows.
"""

from __future__ import annotations

import threading
import time
from typing import Protocol

__all__ = ["Clock", "SystemClock", "VirtualClock"]


class Clock(Protocol):
    """Seconds since some epoch, as a float; must never go backwards."""

    def now(self) -> float: ...


class SystemClock:
    """Wall-clock time (`time.time`), for a scheduler that serves real workloads."""

    def now(self) -> float:
        return time.time()


class VirtualClock:
    """Time that moves only when told to: the clock of tests and simulations."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)
        self._lock = threading.Lock()

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> float:
        """Move time forward by `seconds` (not negative) and return the new time."""
        if seconds < 0:
            raise ValueError(f"time cannot move backwards: advance({seconds})")
        with self._lock:
            self._now += seconds
            return self._now

    def set(self, when: float) -> None:
        """Jump to `when`, which must not be earlier than now."""
        with self._lock:
            if when < self._now:
                raise ValueError(f"time cannot move backwards: {when} < {self._now}")
            self._now = float(when)

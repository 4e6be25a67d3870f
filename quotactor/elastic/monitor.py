"""The over-use monitor: which quotas have stayed above their runtime for too long.

Borrowed resources must come back when their lenders need them. A quota that uses more than
its runtime is tolerated for a while (pods finish, requests shrink); only when it has been
over continuously for longer than the delay is it reported for revocation, and its timer
starts again. The clock is injected so that tests move time instead of sleeping.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from quotactor.core.resources import Resource

__all__ = ["Clock", "OveruseMonitor", "OveruseReport"]

Clock = Callable[[], float]


@dataclass(frozen=True, slots=True)
class OveruseReport:
    """A quota that has been over its runtime for longer than the delay.

    Attributes:
        quota: the quota's name.
        over_for: seconds it has been over, continuously.
        used: its used when reported.
        runtime: its runtime when reported.
        revoke: the pods whose eviction brings it back within runtime, least important first.
    """

    quota: str
    over_for: float
    used: Resource
    runtime: Resource
    revoke: tuple[str, ...]


class OveruseMonitor:
    """Remembers since when each quota has been over its runtime (Koordinator's
    `DelayEvictTime` rule: strictly longer than the delay, then the timer resets)."""

    def __init__(self, delay: float, clock: Clock = time.monotonic) -> None:
        if delay < 0:
            raise ValueError(f"delay must not be negative, got {delay}")
        self.delay = delay
        self.clock = clock
        self._since: dict[str, float] = {}

    def observe(self, over: Iterable[str]) -> dict[str, float]:
        """Record which quotas are over now; return those due, with how long they were over."""
        now = self.clock()
        current = set(over)
        self._since = {name: self._since.get(name, now) for name in current}
        due: dict[str, float] = {}
        for name in sorted(current):
            over_for = now - self._since[name]
            if over_for > self.delay:
                due[name] = over_for
                self._since[name] = now
        return due

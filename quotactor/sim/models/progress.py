"""Progress of a replay on stderr: a redrawn bar on a terminal, a plain line every few
seconds elsewhere (CI logs, files), each with an estimate of the time left.

A replay of a long trace can take minutes; a CI log that shows nothing for that long looks
hung. The line mode writes at most one line per `interval` seconds and nothing at all for a
replay that ends sooner, so short runs stay quiet. Redraws are throttled so progress costs
nothing measurable even when the replay reports it for every event.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

from quotactor.sim.fmt import duration

__all__ = ["Progress"]

_WIDTH = 30
_BAR_INTERVAL = 0.1
_LINE_INTERVAL = 5.0


class Progress:
    """Call `update(done, virtual_seconds)` as often as you like, `close()` at the end.

    `enabled` True or False forces the bar on or off; None (the default) draws the bar on a
    terminal and writes lines every `interval` seconds otherwise.
    """

    def __init__(self, total: int, label: str, stream: TextIO | None = None,
                 enabled: bool | None = None, interval: float = _LINE_INTERVAL,
                 clock: Callable[[], float] | None = None) -> None:
        self.stream = stream or sys.stderr
        tty = self.stream.isatty()
        self.bar = tty if enabled is None else enabled
        self.lines = enabled is None and not tty
        self.total = max(total, 1)
        self.label = label
        self.interval = interval
        self._now = clock or time.monotonic
        self._started = self._now()
        self._next = self._started + (_BAR_INTERVAL if self.bar else interval)
        self._drawn = False

    def _eta(self, done: int, now: float) -> str:
        if done <= 0:
            return "ETA unknown"
        elapsed = now - self._started
        return f"ETA {duration(elapsed * (self.total - done) / done)}"

    def update(self, done: int, virtual_seconds: float) -> None:
        if not (self.bar or self.lines):
            return
        now = self._now()
        if now < self._next and (done < self.total or self.lines):
            return
        days = virtual_seconds / 86400
        shown = min(done, self.total)
        if self.bar:
            self._next = now + _BAR_INTERVAL
            filled = int(_WIDTH * shown / self.total)
            self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (_WIDTH - filled)}] "
                              f"{done}/{self.total} jobs ended, day {days:.1f}, "
                              f"{self._eta(done, now)}")
            self._drawn = True
        else:
            self._next = now + self.interval
            self.stream.write(f"{self.label}: {done}/{self.total} jobs ended "
                              f"({100 * shown / self.total:.0f}%), day {days:.1f}, "
                              f"{duration(now - self._started)} elapsed, "
                              f"{self._eta(done, now)}\n")
        self.stream.flush()

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self._drawn = False

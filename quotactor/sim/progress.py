"""A one-line progress bar on stderr while a replay runs, only when stderr is a terminal.

Redirected output (CI logs, files, pipes) stays clean; redraws are throttled so the bar costs
nothing measurable even when the replay reports progress for every event.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["Progress"]

_WIDTH = 30
_INTERVAL = 0.1


class Progress:
    """Call `update(done, virtual_seconds)` as often as you like, `close()` at the end."""

    def __init__(self, total: int, label: str, stream: TextIO | None = None,
                 enabled: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.total = max(total, 1)
        self.label = label
        self._next = 0.0
        self._drawn = False

    def update(self, done: int, virtual_seconds: float) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now < self._next and done < self.total:
            return
        self._next = now + _INTERVAL
        filled = int(_WIDTH * min(done, self.total) / self.total)
        days = virtual_seconds / 86400
        self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (_WIDTH - filled)}] "
                          f"{done}/{self.total} jobs ended, day {days:.1f}")
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self._drawn = False

"""Application events: a bounded memory of what happened, and the log line for each.

Every rejection, refusal and state change is both logged (structlog, through the library's
non-configuring logger, with the partition bound once and the application on each event) and
kept in the application's own short history, so `Scheduler.events()` can explain an
application without anyone having to search logs.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from quotactor.logs import get_logger

__all__ = ["DEFAULT_EVENT_LIMIT", "Event", "EventLog", "partition_logger"]

DEFAULT_EVENT_LIMIT = 50


@dataclass(frozen=True, slots=True)
class Event:
    """One thing that happened to an application, at scheduler-clock `time` (seconds)."""

    time: float
    kind: str
    message: str


class EventLog:
    """The most recent events of one application; older ones fall off the front.

    A message is kept as given and turned into text only when the log is read: a replay
    changes an application's reason to wait millions of times (each one an event), and
    almost none of them is ever read, so formatting each when it happens cost a tenth of a
    replay's CPU. What is kept must be immutable (text, or a frozen value such as `Wait`).
    """

    __slots__ = ("_events",)

    def __init__(self, limit: int = DEFAULT_EVENT_LIMIT) -> None:
        self._events: deque[tuple[float, str, object]] = deque(maxlen=limit)

    def add(self, time: float, kind: str, message: object) -> None:
        self._events.append((time, kind, message))

    def __iter__(self) -> Iterator[Event]:
        return (Event(time, kind, str(message)) for time, kind, message in self._events)

    def __len__(self) -> int:
        return len(self._events)


def partition_logger(partition: str) -> Any:
    """A structlog logger with the partition bound; never configures logging."""
    return get_logger(partition=partition)

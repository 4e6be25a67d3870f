"""Deadlines in scheduler time: state timeouts and placeholder timeouts of applications.

A deadline carries the token the application had when it was set; a state change or a
cleared placeholder timer moves the token on, so an outdated deadline simply finds a different
token and is ignored. Nothing runs on its own: the partition asks for the due deadlines
before each scheduling cycle, which is what makes virtual time deterministic.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Literal

__all__ = ["Deadline", "DeadlineKind", "Deadlines"]

DeadlineKind = Literal["state", "placeholder"]


@dataclass(frozen=True, slots=True, order=True)
class Deadline:
    when: float
    seq: int
    application_id: str
    owner: int
    kind: DeadlineKind
    token: int


class Deadlines:
    """A heap of deadlines, popped in time order (then in the order they were set)."""

    def __init__(self) -> None:
        self._heap: list[Deadline] = []
        self._seq = 0

    def set(self, when: float, application_id: str, owner: int, kind: DeadlineKind,
            token: int) -> None:
        """A deadline for the application `application_id` whose sequence number is `owner`
        (so a later application reusing the ID never receives it)."""
        self._seq += 1
        heapq.heappush(self._heap, Deadline(when, self._seq, application_id, owner, kind,
                                            token))

    def pop_due(self, now: float) -> Deadline | None:
        if self._heap and self._heap[0].when <= now:
            return heapq.heappop(self._heap)
        return None

    def next_due(self) -> float | None:
        return self._heap[0].when if self._heap else None

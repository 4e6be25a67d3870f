"""Deadlines in scheduler time: state timeouts and placeholder timeouts of applications.

A deadline carries the token the application had when it was set; a state change or a
cleared placeholder timer moves the token on, so an outdated deadline simply finds a different
token and is ignored. Nothing runs on its own: the partition asks for the due deadlines
before each scheduling cycle, which is what makes virtual time deterministic.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

__all__ = ["Deadline", "DeadlineKind", "Deadlines"]

DeadlineKind = Literal["state", "placeholder"]


@dataclass(frozen=True, slots=True)
class Deadline:
    when: float
    seq: int
    application_id: str
    owner: int
    kind: DeadlineKind
    token: int


_Entry = tuple[float, int, Deadline]


class Deadlines:
    """Deadlines popped in time order (then in the order they were set), whatever their kind.

    Each kind has a heap of its own, so the next deadline of one kind is found without
    looking at the others (a replay waits for placeholder timeouts, not state timeouts).
    """

    def __init__(self) -> None:
        self._heaps: dict[DeadlineKind, list[_Entry]] = {"state": [], "placeholder": []}
        """Per kind, (when, seq, deadline): ordered by the numbers alone (seq is unique)."""
        self._seq = 0

    def set(self, when: float, application_id: str, owner: int, kind: DeadlineKind,
            token: int) -> None:
        """A deadline for the application `application_id` whose sequence number is `owner`
        (so a later application reusing the ID never receives it)."""
        self._seq = seq = self._seq + 1
        heapq.heappush(self._heaps[kind],
                       (when, seq, Deadline(when, seq, application_id, owner, kind, token)))

    def pop_due(self, now: float) -> Deadline | None:
        """The earliest deadline due at `now` (removed), or None."""
        first: list[_Entry] | None = None
        for heap in self._heaps.values():
            if heap and heap[0][0] <= now and (first is None or heap[0] < first[0]):
                first = heap
        return heapq.heappop(first)[2] if first is not None else None

    def next_due(self, kind: DeadlineKind | None = None,
                 armed: Callable[[Deadline], bool] | None = None) -> float | None:
        """When the earliest deadline (of `kind`, or of any) is due. With `armed`, deadlines
        of `kind` it rejects are dropped first: they are the ones that would be ignored when
        due (their application moved on)."""
        if kind is None:
            known = [heap[0][0] for heap in self._heaps.values() if heap]
            return min(known) if known else None
        heap = self._heaps[kind]
        if armed is not None:
            while heap and not armed(heap[0][2]):
                heapq.heappop(heap)
        return heap[0][0] if heap else None

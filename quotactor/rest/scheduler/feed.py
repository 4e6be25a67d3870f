"""Numbered, bounded logs of what happened: YuniKorn's event records and the shim's decisions.

Writers (the scheduler's cycle listener, the shim's write handlers) append under a short lock;
readers ask for what came after a position they remember, so a reader that reconnects resumes
where it left off, and one that fell behind further than the log keeps learns it from
`lowest` (the oldest record still held) instead of silently missing records. Readers never
block a thread: the server's streaming and long-poll handlers wait on an asyncio event of their
own loop (`wait_after`), which a writer sets thread-safely, so a thousand idle subscribers cost
no worker threads and a waiting one hears of a new record at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["RELEASE_DETAILS", "Feed", "Page", "event_record"]

DEFAULT_CAPACITY = 100_000

# YuniKorn's EventRecord enums (scheduler-interface `si.EventRecord`), by name.
EVENT_TYPES = {"REQUEST": 1, "APP": 2, "NODE": 3, "QUEUE": 4, "USERGROUP": 5}
CHANGE_TYPES = {"NONE": 0, "SET": 1, "ADD": 2, "REMOVE": 3}
CHANGE_DETAILS = {
    "DETAILS_NONE": 0, "REQUEST_CANCEL": 100, "REQUEST_ALLOC": 101, "APP_ALLOC": 200,
    "APP_REQUEST": 201, "APP_REJECT": 202, "APP_NEW": 203, "APP_ACCEPTED": 204,
    "APP_RUNNING": 206, "APP_COMPLETING": 207, "APP_COMPLETED": 208, "APP_FAILING": 209,
    "APP_FAILED": 210, "APP_RESUMING": 211, "APP_EXPIRED": 212,
    "NODE_DECOMISSION": 300, "NODE_SCHEDULABLE": 302, "NODE_ALLOC": 303, "NODE_CAPACITY": 304,
    "QUEUE_ALLOC": 406, "ALLOC_CANCEL": 500, "ALLOC_PREEMPT": 501, "ALLOC_TIMEOUT": 502,
    "ALLOC_REPLACED": 503, "ALLOC_NODEREMOVED": 504,
    "UG_USER_RESOURCE": 603, "UG_GROUP_RESOURCE": 604,
}


RELEASE_DETAILS = {"PLACEHOLDER_REPLACED": "ALLOC_REPLACED", "TIMEOUT": "ALLOC_TIMEOUT",
                   "PREEMPTED_BY_SCHEDULER": "ALLOC_PREEMPT"}
"""The change detail of a release by its `terminationType` (the RM's own: `ALLOC_CANCEL`)."""


def event_record(kind: str, object_id: str, change: str, detail: str, *, message: str = "",
                 reference: str = "", resource: Mapping[str, int] | None = None
                 ) -> dict[str, Any]:
    """One `si.EventRecord` as YuniKorn's REST API renders it (enums as numbers)."""
    return {
        "type": EVENT_TYPES[kind],
        "objectID": object_id,
        "referenceID": reference,
        "message": message,
        "timestampNano": time.time_ns(),
        "eventChangeType": CHANGE_TYPES[change],
        "eventChangeDetail": CHANGE_DETAILS[detail],
        "resource": {"resources": {k: {"value": v} for k, v in sorted((resource or {}).items())}},
    }


@dataclass(frozen=True, slots=True)
class Page:
    """Records after a position: `records` (each with its `id`), the bounds held now, and
    `last`, the id of the last record looked at (kept or not; the position asked for when
    none): where the next page starts."""

    records: tuple[dict[str, Any], ...]
    lowest: int
    highest: int
    last: int


class Feed:
    """An append-only log of dict records numbered from `first` (1 unless told), keeping the
    newest `capacity`."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY, first: int = 1) -> None:
        if capacity < 1:
            raise ValueError("a feed must keep at least one record")
        if first < 1:
            raise ValueError("records are numbered from 1 up")
        self.first = first
        self._records: deque[dict[str, Any]] = deque(maxlen=capacity)
        self._next = first
        self._lock = threading.Lock()
        self._waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()

    def publish(self, records: Iterable[Mapping[str, Any]]) -> int:
        """Append `records` in order, numbering each (`id`); returns the highest id now held."""
        with self._lock:
            before = self._next
            for record in records:
                self._records.append({"id": self._next, **record})
                self._next += 1
            highest = self._next - 1
            waiters = list(self._waiters) if self._next != before else []
        for loop, event in waiters:
            # A closed loop (its server stopped) has nobody waiting any more.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(event.set)
        return highest

    async def wait_after(self, position: int, timeout: float) -> None:
        """Return once a record above `position` exists, or after `timeout` seconds."""
        event = asyncio.Event()
        waiter = (asyncio.get_running_loop(), event)
        with self._lock:
            if self._next - 1 > position:
                return
            self._waiters.add(waiter)
        try:
            await asyncio.wait_for(event.wait(), timeout)
        except TimeoutError:
            pass
        finally:
            with self._lock:
                self._waiters.discard(waiter)

    @property
    def highest(self) -> int:
        with self._lock:
            return self._next - 1

    def after(self, position: int, limit: int,
              keep: Callable[[dict[str, Any]], bool] | None = None) -> Page:
        """Up to `limit` records with an id above `position`, oldest first; with `keep`,
        only those it accepts (the others are looked past, so `last` moves on over them)."""
        with self._lock:
            held = self._records
            lowest = held[0]["id"] if held else self._next
            start = max(0, position + 1 - lowest)
            if keep is None:
                end = min(len(held), start + max(0, limit))
                records = tuple(held[i] for i in range(start, end))
                last = records[-1]["id"] if records else position
                return Page(records, lowest, self._next - 1, last)
            kept: list[dict[str, Any]] = []
            last = position
            for i in range(start, len(held)):
                if len(kept) >= limit:
                    break
                record = held[i]
                last = record["id"]
                if keep(record):
                    kept.append(record)
            return Page(tuple(kept), lowest, self._next - 1, last)

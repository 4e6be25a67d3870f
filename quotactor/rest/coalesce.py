"""Sharing expensive snapshots between concurrent requests, without serving stale ones.

A list of every user costs the actors one message per tracker, and those messages queue with
the scheduler's own; clients polling in a loop would keep the actors (and the GIL) busy and
slow tracking down. So for each kind of snapshot at most one is taken at a time, starts are
spaced by at least `min_interval`, and every request that arrives while one is pending or
running waits for the next one to start and shares its (already serialised) result. Each
answer still reflects a snapshot begun after its request arrived; the price is at most
`min_interval` of extra latency, paid only by requests that follow another of their kind
within `min_interval`.

A shared result is rendered to JSON bytes once (`render_json`) and answered as they are
(`json_response`).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from fastapi import Response

__all__ = ["Coalescer", "json_response", "render_json"]


@dataclass(slots=True)
class _Slot:
    started: int = 0
    finished: int = 0
    running: bool = False
    last_start: float = field(default=-float("inf"))
    outcome: bytes | Exception = b""
    waiting: int = 0


class Coalescer:
    """Runs `make()` for a key at most once at a time, and shares each run with its waiters."""

    def __init__(self, min_interval: float) -> None:
        if min_interval < 0:
            raise ValueError("min_interval must not be negative")
        self.min_interval = min_interval
        self._condition = threading.Condition()
        self._slots: dict[Hashable, _Slot] = {}

    def get(self, key: Hashable, make: Callable[[], bytes]) -> bytes:
        """The result of a run of `make` that started after this call; may wait for it."""
        with self._condition:
            slot = self._slots.setdefault(key, _Slot())
            ticket = slot.started + 1
            slot.waiting += 1
            while slot.finished < ticket and not self._may_start(slot):
                self._condition.wait(None if slot.running else self._pause(slot))
            slot.waiting -= 1
            if slot.finished >= ticket:
                return _unwrap(slot.outcome)
            slot.running = True
            slot.started += 1
            slot.last_start = time.monotonic()
        outcome: bytes | Exception = RuntimeError("the snapshot was interrupted")
        try:
            outcome = make()
        except Exception as exc:  # shared with every waiter of this run, then raised
            outcome = exc
        finally:
            with self._condition:
                slot.outcome = outcome
                slot.finished = slot.started
                slot.running = False
                self._condition.notify_all()
        return _unwrap(outcome)

    def waiting(self, key: Hashable) -> int:
        """Callers inside `get(key)` that have not started or received a run yet."""
        with self._condition:
            slot = self._slots.get(key)
            return 0 if slot is None else slot.waiting

    def _pause(self, slot: _Slot) -> float:
        return slot.last_start + self.min_interval - time.monotonic()

    def _may_start(self, slot: _Slot) -> bool:
        return not slot.running and self._pause(slot) <= 0


def _unwrap(outcome: bytes | Exception) -> bytes:
    if isinstance(outcome, Exception):
        raise outcome
    return outcome


def render_json(value: Any) -> bytes:
    """Compact UTF-8 JSON, as Starlette's `JSONResponse` renders it."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":")
                      ).encode("utf-8")


def json_response(body: bytes) -> Response:
    return Response(body, media_type="application/json")

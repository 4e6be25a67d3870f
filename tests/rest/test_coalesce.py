"""Shared snapshots: concurrent requests share runs, and no answer predates its request."""

from __future__ import annotations

import itertools
import threading
import time
from types import SimpleNamespace

import pytest

from quotactor.rest import coalesce
from quotactor.rest.coalesce import Coalescer


def test_a_lone_caller_runs_at_once_and_every_call_sees_a_new_run() -> None:
    counter = itertools.count(1)
    gate = Coalescer(min_interval=0.0)
    assert [gate.get("k", lambda: str(next(counter)).encode()) for _ in range(3)] == [
        b"1", b"2", b"3"]


def test_callers_arriving_during_a_run_share_the_next_one() -> None:
    started, release = threading.Event(), threading.Event()
    runs: list[int] = []

    def make() -> bytes:
        runs.append(len(runs) + 1)
        if len(runs) == 1:
            started.set()
            release.wait(10.0)
        return str(len(runs)).encode()

    gate = Coalescer(min_interval=0.0)
    results: dict[str, bytes] = {}
    first = threading.Thread(target=lambda: results.setdefault("first", gate.get("k", make)))
    first.start()
    assert started.wait(10.0)
    late = [threading.Thread(target=lambda i=i: results.setdefault(f"late{i}", gate.get("k", make)))
            for i in range(5)]
    for thread in late:
        thread.start()
    deadline = time.monotonic() + 10.0
    while gate.waiting("k") < 5:
        assert time.monotonic() < deadline
        time.sleep(0.005)  # sleep-ok: pause between polls of a bounded wait
    release.set()
    for thread in [first, *late]:
        thread.join(10.0)
    assert results["first"] == b"1"
    assert {results[f"late{i}"] for i in range(5)} == {b"2"}, "all share the run after theirs"
    assert runs == [1, 2]


class ClockedCondition(threading.Condition):
    """A condition whose timed waits pass at once on a fake clock (`now[0]`), recorded in
    `waits`; the one-thread test that uses it has nobody to wait for without a timeout."""

    def __init__(self, now: list[float]) -> None:
        super().__init__()
        self.now = now
        self.waits: list[float] = []

    def wait(self, timeout: float | None = None) -> bool:
        assert timeout is not None, "an untimed wait would block the only thread"
        self.waits.append(timeout)
        self.now[0] += timeout
        return False


def test_runs_of_one_key_are_spaced_and_other_keys_are_not_held_up(
        monkeypatch: pytest.MonkeyPatch) -> None:
    now = [0.0]
    condition = ClockedCondition(now)
    monkeypatch.setattr(coalesce, "time", SimpleNamespace(monotonic=lambda: now[0]))
    monkeypatch.setattr(coalesce, "threading", SimpleNamespace(Condition=lambda: condition))
    gate = Coalescer(min_interval=0.25)
    runs: list[tuple[str, float]] = []

    def run(key: str) -> bytes:
        runs.append((key, now[0]))
        return b""

    gate.get("a", lambda: run("a"))
    now[0] += 0.125
    gate.get("b", lambda: run("b"))
    assert condition.waits == [], "another key's run was held up"
    gate.get("a", lambda: run("a"))
    assert condition.waits == [0.125], "the next run of a key waits out the interval"
    assert runs == [("a", 0.0), ("b", 0.125), ("a", 0.25)]


def test_a_failed_run_fails_its_callers_and_the_next_run_is_tried_afresh() -> None:
    gate = Coalescer(min_interval=0.0)

    def fail() -> bytes:
        raise LookupError("gone")

    with pytest.raises(LookupError):
        gate.get("k", fail)
    assert gate.get("k", lambda: b"ok") == b"ok"


def test_a_negative_interval_is_refused() -> None:
    with pytest.raises(ValueError):
        Coalescer(min_interval=-1)

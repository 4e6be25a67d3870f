"""Fixtures for the tests that make a caller wait for another's batch (that batch, held on its
own thread, and a watch on the waiter's turn, `holding_in_order`'s wait), and for the stress
tests that shake the threads' orderings (`shaken`, `yielding`)."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pytest

from quotactor.actors import holding as holding_module
from quotactor.actors.runtime import Actor

WAIT = 10.0

HeldByAnotherBatch = Callable[[Sequence[Actor[Any]]], tuple["Future[list[int]]", threading.Event]]


@pytest.fixture
def held_by_another_batch() -> Iterator[HeldByAnotherBatch]:
    """A function holding some actors in a batch on another thread (`holding`) until the event
    it returns is set; the batch's future gives the positions it held."""
    executor = ThreadPoolExecutor(2, thread_name_prefix="batch")

    def hold(actors: Sequence[Actor[Any]]) -> tuple[Future[list[int]], threading.Event]:
        claimed, release = threading.Event(), threading.Event()

        def work(held: list[int]) -> list[int]:
            claimed.set()
            assert release.wait(WAIT)
            return held

        done = executor.submit(holding_module.holding, actors, work)
        assert claimed.wait(WAIT)
        return done, release

    yield hold
    executor.shutdown(wait=False)


@pytest.fixture
def turn_queued(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """An event set once a waiter has queued its turn (`holding_in_order`'s wait)."""
    queued = threading.Event()
    original = holding_module._handed_over

    def watched(actor: Actor[Any], deadline: float) -> bool:
        queued.set()
        return original(actor, deadline)

    monkeypatch.setattr(holding_module, "_handed_over", watched)
    return queued


@pytest.fixture
def shaken() -> Iterator[None]:
    """Thread switches as often as CPython allows (a switch interval of 1 µs, restored after),
    so that the stress tests see many more interleavings of the hand-offs between threads."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(previous)


HAND_OFFS = (("Actor", "_post"), ("Actor", "_claim"), ("Actor", "_let_go"),
             ("Actor", "_dispatch"), ("Actor", "_halt"), ("Ticket", "_settle"),
             ("WorkerPool", "schedule"))
"""The runtime's steps between which another thread may take over: a post, a claim, a
release, a handler run, a stop, a ticket settled, a job handed to a pool."""


@pytest.fixture
def yielding(monkeypatch: pytest.MonkeyPatch) -> None:
    """The runtime with a thread switch offered (a zero-length sleep, which lets go of the GIL)
    before and after each of its hand-off steps (`HAND_OFFS`), for this test only: the
    orderings a free-threaded build could take there, tried on this one."""
    from quotactor.actors import runtime

    for owner_name, name in HAND_OFFS:
        owner = getattr(runtime, owner_name)
        real = getattr(owner, name)

        def offered(*args: object, _real: Callable[..., object] = real) -> object:
            time.sleep(0)  # sleep-ok: a thread switch offered, not a wait
            try:
                return _real(*args)
            finally:
                time.sleep(0)  # sleep-ok: a thread switch offered, not a wait

        monkeypatch.setattr(owner, name, offered)

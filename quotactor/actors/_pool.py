"""pykka actors that run on a small shared pool of threads instead of one thread each.

A thread per tracker costs ~24 KiB and a thread start per new user; with tens of thousands of
users every round trip slows down. Here an actor is a pykka `Actor` whose inbox, on the first
message, puts the actor on a pool's ready queue; a pool thread then runs a batch of its messages
with pykka's own handling (`_handle_receive`, replies, `ActorDeadError` after a stop). Each actor
still handles one message at a time, in order, so the actor model's guarantees are unchanged.

Blocking inside a pooled handler ties up a pool thread. The tracker protocol blocks in one place
only: a user tracker waiting for its group tracker. Users and groups therefore run on separate
pools, and group handlers never block, so a wait always ends no matter how many user threads are
waiting.
"""

from __future__ import annotations

import itertools
import queue
import sys
import threading
from collections import deque
from typing import Any

import pykka
from pykka import ActorDeadError
from pykka._envelope import Envelope

__all__ = ["PooledActor", "WorkerPool"]

_BATCH = 64
_pool_ids = itertools.count(1)


class WorkerPool:
    """A fixed number of daemon threads that run whichever pooled actors have messages."""

    def __init__(self, name: str, size: int) -> None:
        if size < 1:
            raise ValueError("a worker pool needs at least one thread")
        self._ready: queue.SimpleQueue[PooledActor | None] = queue.SimpleQueue()
        pool_id = next(_pool_ids)
        self._threads = [
            threading.Thread(target=self._work, name=f"quotactor-{name}-{pool_id}-{i}",
                             daemon=True)
            for i in range(size)
        ]
        for thread in self._threads:
            thread.start()

    @property
    def size(self) -> int:
        return len(self._threads)

    def schedule(self, actor: PooledActor) -> None:
        self._ready.put(actor)

    def _work(self) -> None:
        ready = self._ready
        while True:
            actor = ready.get()
            if actor is None:
                return
            actor._run_batch()

    def shutdown(self, timeout: float = 10.0) -> None:
        """Stop the threads once the actors on them are stopped; safe to call twice."""
        for _ in self._threads:
            self._ready.put(None)
        for thread in self._threads:
            thread.join(timeout)


class _PooledInbox:
    """A deque that schedules its actor on the pool when a message arrives for an idle actor."""

    __slots__ = ("_actor", "_closed", "_items", "_lock", "_scheduled")

    def __init__(self) -> None:
        self._items: deque[Envelope[Any]] = deque()
        self._lock = threading.Lock()
        self._scheduled = True  # until the actor is started
        self._closed = False
        self._actor: PooledActor | None = None

    def put(self, envelope: Envelope[Any], /) -> None:
        with self._lock:
            if not self._closed:
                self._items.append(envelope)
                if self._scheduled:
                    return
                self._scheduled = True
                actor = self._actor
            else:
                actor = None
        if actor is None:
            _reply_dead(envelope)
            return
        actor._pool.schedule(actor)

    def get(self) -> Envelope[Any]:
        with self._lock:
            return self._items.popleft()

    def empty(self) -> bool:
        with self._lock:
            return not self._items

    def _open(self, actor: PooledActor) -> bool:
        """Attach the actor and report whether it already has messages waiting."""
        with self._lock:
            self._actor = actor
            if self._items:
                return True
            self._scheduled = False
            return False

    def _next(self) -> Envelope[Any] | None:
        """The next envelope, or None (and the actor becomes idle) when there is none."""
        with self._lock:
            if self._items:
                return self._items.popleft()
            self._scheduled = False
            return None

    def _close(self) -> None:
        """No more messages: any later `put` is answered with `ActorDeadError` at once."""
        with self._lock:
            self._closed = True


def _reply_dead(envelope: Envelope[Any]) -> None:
    if envelope.reply_to is not None:
        envelope.reply_to.set_exception(exc_info=(
            ActorDeadError, ActorDeadError("the actor was stopped before the message"), None
        ))


class PooledActor(pykka.Actor):
    """A pykka actor executed on a `WorkerPool`; pass the pool to `start`."""

    actor_inbox: _PooledInbox  # type: ignore[assignment]

    def __init__(self, pool: WorkerPool) -> None:
        super().__init__()
        self._pool = pool

    @staticmethod
    def _create_actor_inbox() -> Any:
        return _PooledInbox()

    @staticmethod
    def _create_future() -> pykka.Future[Any]:
        return pykka.ThreadingFuture()

    def _start_actor_loop(self) -> None:
        self._actor_loop_setup()
        if self.actor_inbox._open(self):
            self._pool.schedule(self)

    def _run_batch(self) -> None:
        inbox = self.actor_inbox
        for _ in range(_BATCH):
            envelope = inbox._next()
            if envelope is None:
                return
            self._process(envelope)
            if self.actor_stopped.is_set():
                inbox._close()
                self._actor_loop_teardown()
                return
        self._pool.schedule(self)

    def _process(self, envelope: Envelope[Any]) -> None:
        """pykka's per-message handling, minus `ActorRegistry.stop_all()` on BaseException."""
        try:
            response = self._handle_receive(envelope.message)
            if envelope.reply_to is not None:
                envelope.reply_to.set(response)
        except Exception:
            if envelope.reply_to is not None:
                envelope.reply_to.set_exception()
            else:
                self._handle_failure(*sys.exc_info())
                self.on_failure(*sys.exc_info())
        except BaseException:
            if envelope.reply_to is not None:
                envelope.reply_to.set_exception()
            self._stop()

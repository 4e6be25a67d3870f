"""pykka actors that run on a small shared pool of threads, or on their caller's thread.

A thread per tracker costs ~24 KiB and a thread start per new user; with tens of thousands of
users every round trip slows down. Here an actor is a pykka `Actor` whose inbox, on the first
message, puts the actor on a pool's ready queue; a pool thread then runs a batch of its messages
with pykka's own handling (`_handle_receive`, replies, `ActorDeadError` after a stop).

Handing a message to another thread is the expensive part of an actor call under the GIL (about
40-55 µs of CPU per handoff against ~15 µs for a whole decision), so `call` and `deliver` run
the handler on the sender's own thread when the actor is idle: the sender claims the actor the
way a pool thread would, handles the one message, and releases it; anything that arrived
meanwhile goes to the pool. An actor is still run by one thread at a time and handles its
messages one at a time, in order (a claim only succeeds on an empty inbox), so the actor model's
guarantees are unchanged; only the thread that does the work differs.

Blocking inside a handler ties up its thread. The tracker protocol waits in one place only: a
user tracker waiting for its group tracker, which never waits on anyone. Users and groups
therefore run on separate pools, so a wait always ends however many user threads are waiting,
and a sender that finds an actor busy only waits when it holds nothing a group needs.
"""

from __future__ import annotations

import itertools
import queue
import threading
from collections import Counter, deque
from typing import Any

import pykka
from pykka import ActorDeadError, ActorRegistry
from pykka._envelope import Envelope
from pykka.messages import _ActorStop

from quotactor.logs import get_logger

__all__ = [
    "PooledActor", "WorkerPool", "call", "deliver", "live_actors", "stop_now", "submit",
]

_BATCH = 64
log = get_logger()
_pool_ids = itertools.count(1)
_actor_ids = itertools.count(1)


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

    def _claim(self) -> PooledActor | None:
        """The actor, now reserved for the calling thread, if it is idle; else None."""
        with self._lock:
            if self._scheduled or self._closed:
                return None
            self._scheduled = True
            return self._actor

    def _release(self) -> bool:
        """End a claim; True when messages arrived meanwhile (the actor stays reserved)."""
        with self._lock:
            if self._items:
                return True
            self._scheduled = False
            return False

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
        """No more messages: any later `put` is answered with `ActorDeadError` at once.

        Dropping the actor breaks the actor <-> inbox cycle, so a stopped tracker is freed as
        soon as its owner lets go of it, not by a full collection (seconds at 100k trackers).
        """
        with self._lock:
            self._closed = True
            self._actor = None


class _StopFlag:
    """`actor_stopped` for pooled actors: the `set`/`is_set` that pykka uses of an `Event`.

    Nothing waits on it, and an `Event` costs six objects for the collector to walk (its
    condition, lock, waiter deque and bound methods): a fifth of a live tracker's share.
    """

    __slots__ = ("_stopped",)

    def __init__(self) -> None:
        self._stopped = False

    def set(self) -> None:
        self._stopped = True

    def is_set(self) -> bool:
        return self._stopped


def _reply_dead(envelope: Envelope[Any]) -> None:
    if envelope.reply_to is not None:
        envelope.reply_to.set_exception(exc_info=(
            ActorDeadError, ActorDeadError("the actor was stopped before the message"), None
        ))


_live: Counter[str] = Counter()
_live_lock = threading.Lock()


def live_actors() -> dict[str, int]:
    """Pooled actors started and not yet stopped, by class name (registered or not)."""
    with _live_lock:
        return {name: count for name, count in _live.items() if count}


class _Held(threading.local):
    """How many actors the current thread is running (a claim, or a pool thread's batch)."""

    depth = 0


_held = _Held()


class PooledActor(pykka.Actor):
    """A pykka actor executed on a `WorkerPool` (or its sender's thread); pass the pool to
    `start`.

    Set `registered = False` for actors that come and go by the thousand (trackers): pykka's
    process-wide registry is a list with linear removal behind one lock, so registering them
    would make every start and stop slower as they accumulate; their owner tracks them instead.
    """

    actor_inbox: _PooledInbox  # type: ignore[assignment]
    registered = True
    handlers_wait = True
    """False for actors whose handlers never wait: any thread that holds one may then also run
    the messages that arrived for it meanwhile, however many other actors it holds."""

    def __init__(self, pool: WorkerPool) -> None:
        # pykka.Actor.__init__ without its uuid4 URN, which reads OS entropy on every start.
        self.actor_urn = f"urn:quotactor:{next(_actor_ids)}"
        self.actor_inbox = self._create_actor_inbox()
        self.actor_stopped = _StopFlag()  # type: ignore[assignment]
        self._actor_ref = pykka.ActorRef(self)
        self._pool = pool

    @classmethod
    def start(cls, *args: Any, **kwargs: Any) -> pykka.ActorRef[Any]:
        actor = cls(*args, **kwargs)
        if cls.registered:
            ActorRegistry.register(actor.actor_ref)
        with _live_lock:
            _live[cls.__name__] += 1
        actor._start_actor_loop()
        return actor.actor_ref

    def _stop(self) -> None:
        if self.registered:
            ActorRegistry.unregister(self.actor_ref)
        with _live_lock:
            _live[type(self).__name__] -= 1
        self.actor_stopped.set()
        try:
            self.on_stop()
        except Exception:
            _log_failure(self, "on_stop")

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
        """A pool thread's turn: it holds nothing else, so it may work through a batch."""
        _held.depth += 1
        try:
            self._finish(_BATCH)
        finally:
            _held.depth -= 1

    def _handle_inline(self, message: Any) -> Any:
        """Handle one message on the claiming thread, then release the actor.

        The thread also handles what arrived meanwhile (a retirement told by the manager, the
        message of a sender that found the actor busy), saving that sender a handoff to the
        pool, unless this is a nested claim on an actor whose handlers may wait: those messages
        go to the pool, so that a thread never waits while holding an actor that the wait's
        outcome could need.
        """
        _held.depth += 1
        try:
            return self._handle_receive(message)
        finally:
            _held.depth -= 1
            self._finish(_BATCH if _held.depth == 0 or not self.handlers_wait else 0)

    def _handle_receive(self, message: Any) -> Any:
        """pykka's dispatch without proxy support, which pooled actors do not offer."""
        if isinstance(message, _ActorStop):
            return self._stop()
        return self.on_receive(message)

    def _finish(self, budget: int) -> None:
        """Handle up to `budget` waiting messages, then release the actor or give it to the pool.
        """
        inbox = self.actor_inbox
        while not self.actor_stopped.is_set():
            if budget == 0:
                if inbox._release():
                    self._pool.schedule(self)
                return
            envelope = inbox._next()
            if envelope is None:
                return
            budget -= 1
            self._process(envelope)
        inbox._close()
        self._actor_loop_teardown()

    def _process(self, envelope: Envelope[Any]) -> None:
        """pykka's per-message handling, except that a failing `tell` is logged, not fatal
        (a tracker that died would silently drop usage), and a BaseException stops this actor
        only, not every actor of the process."""
        try:
            response = self._handle_receive(envelope.message)
            if envelope.reply_to is not None:
                envelope.reply_to.set(response)
        except Exception:
            if envelope.reply_to is not None:
                envelope.reply_to.set_exception()
            else:
                _log_failure(self, envelope.message)
        except BaseException:
            if envelope.reply_to is not None:
                envelope.reply_to.set_exception()
            self._stop()


def call(ref: pykka.ActorRef[Any], message: Any, timeout: float | None) -> Any:
    """Ask a pooled actor; handled on this thread when the actor is idle.

    The handler's exception is raised here, as `ask` would; `pykka.Timeout` after `timeout`
    seconds when the actor was busy and did not answer in time; `ActorDeadError` once stopped.
    """
    actor = ref.actor_inbox._claim()
    if actor is None:
        return ref.ask(message, block=False).get(timeout=timeout)
    return actor._handle_inline(message)


class _Answered:
    """The answer of a message handled on the sender's thread, shaped like a future."""

    __slots__ = ("_value",)

    def __init__(self, value: Any) -> None:
        self._value = value

    def get(self, timeout: float | None = None) -> Any:
        return self._value


def submit(ref: pykka.ActorRef[Any], message: Any) -> Any:
    """Like `call`, but returns something to `get(timeout=...)` the answer from, so a sender
    can decide what to do after a timeout and then go on waiting."""
    actor = ref.actor_inbox._claim()
    if actor is None:
        return ref.ask(message, block=False)
    return _Answered(actor._handle_inline(message))


def deliver(ref: pykka.ActorRef[Any], message: Any) -> None:
    """Tell a pooled actor; handled on this thread when the actor is idle, queued otherwise.

    Never waits, so it may be used from inside another actor's handler. A failing handler is
    logged, as for a `tell`.
    """
    actor = ref.actor_inbox._claim()
    if actor is None:
        ref.tell(message)
        return
    try:
        actor._handle_inline(message)
    except Exception:
        _log_failure(actor, message)


def stop_now(ref: pykka.ActorRef[Any]) -> None:
    """Stop a pooled actor after what it was sent before; at once, here, when it is idle."""
    deliver(ref, _ActorStop())


def _log_failure(actor: PooledActor, message: Any) -> None:
    log.exception("actor_handler_failed", actor=type(actor).__name__,
                  message=type(message).__name__)

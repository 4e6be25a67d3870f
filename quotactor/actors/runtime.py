"""The actors' runtime: actors on a small pool of threads, or run on the sender's thread.

Each actor has an inbox; a `WorkerPool` thread runs the actors that have messages, and a sender
that finds an actor idle claims it and runs the handler on its own thread. The rules every
change here keeps are the numbered invariants of docs/concurrency.md (1-9 are this module's);
the code cites them by number.
"""

from __future__ import annotations

import queue
import threading
from collections import Counter, deque
from collections.abc import Callable
from threading import get_ident
from typing import Any, ClassVar, Generic, TypeVar, final

from quotactor.core.errors import ActorStopped, OperationTimeout
from quotactor.logs import get_logger

__all__ = [
    "BUSY", "Actor", "Busy", "Reply", "Ticket", "WorkerPool", "answer", "call", "deliver", "here",
    "idle", "live_actors", "on_main_thread", "stop", "stop_now", "submit", "Submitted",
    "unguarded", "when_idle",
]

T = TypeVar("T")
M = TypeVar("M")
M_contra = TypeVar("M_contra", contravariant=True)
_BATCH = 64
log = get_logger()
_MAIN = threading.main_thread().ident


def on_main_thread() -> bool:
    """Whether this thread is the one that signal handlers' exceptions may interrupt."""
    return get_ident() == _MAIN


def _guarded() -> bool:
    """Whether this thread must not claim actors (invariant 2): the main thread, unless
    `unguarded`."""
    return get_ident() == _MAIN and not _held.unguarded


class Reply(Generic[T]):
    """A one-shot answer: set once (a value or an exception), read by any number of waiters.

    A plain lock, held until the answer is set, is the cheapest wait there is; `get` waits for
    it with a timeout and never holds it.
    """

    __slots__ = ("_done", "_error", "_value")

    def __init__(self) -> None:
        self._done = threading.Lock()
        self._done.acquire()
        self._value: T | None = None
        self._error: BaseException | None = None

    def set(self, value: T) -> None:
        self._value = value
        self._done.release()

    def fail(self, error: BaseException) -> None:
        self._error = error
        self._done.release()

    def ready(self) -> bool:
        return not self._done.locked()

    def get(self, timeout: float | None) -> T:
        """The answer, or its exception; `OperationTimeout` after `timeout` seconds."""
        if not self._done.acquire(timeout=-1 if timeout is None else max(timeout, 0.0)):
            raise OperationTimeout(f"no answer within {timeout} s")
        self._done.release()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]


class WorkerPool:
    """A fixed number of daemon threads that run whatever is scheduled: actors with messages,
    and jobs from callers on the main thread."""

    def __init__(self, name: str, size: int) -> None:
        if size < 1:
            raise ValueError("a worker pool needs at least one thread")
        self._ready: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        with _live_lock:
            _pools[0] += 1
            pool_id = _pools[0]
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

    def schedule(self, work: Callable[[], None]) -> None:
        self._ready.put(work)

    def _work(self) -> None:
        ready = self._ready
        while True:
            work = ready.get()
            if work is None:
                return
            try:
                work()
            except BaseException:  # a job's failure is its reply's business, never the pool's
                log.exception("pool_work_failed")
            work = None  # let a stopped actor go now, not when the next work arrives

    def run(self, job: Callable[[], T], timeout: float | None) -> T:
        """Run `job` on this pool and wait for its result: how a main-thread caller calls in.

        An interrupt or a timeout ends the wait only; the job itself runs to its end.
        """
        reply: Reply[T] = Reply()

        def work() -> None:
            try:
                value = job()
            except BaseException as exc:
                reply.fail(exc)
            else:
                reply.set(value)

        self._ready.put(work)
        return reply.get(timeout)

    def shutdown(self, timeout: float | None = 10.0) -> None:
        """Stop the threads once what is scheduled has run; safe to call twice."""
        for _ in self._threads:
            self._ready.put(None)
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(timeout)


class _Stop:
    """The message that stops an actor, after everything sent to it before."""


_STOP = _Stop()


class Ticket:
    """Settles, once, who decides the fate of something one thread hands another: the side
    that takes it (`take`: a group tracker applying an increase, the manager routing a queued
    batch, a holder handing its claim to a waiter) or the side that stopped waiting for it
    (`abandon`). Whichever comes first wins, and the other learns it (invariant 9).
    """

    __slots__ = ("_first", "_lock")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._first: bool | None = None
        """True once the taker came first, False once the waiter did."""

    def _settle(self, taker: bool) -> bool:
        with self._lock:
            if self._first is None:
                self._first = taker
            return self._first is taker

    def take(self) -> bool:
        """The taker's side: True if the other still waits (the taker goes on)."""
        return self._settle(True)

    def abandon(self) -> bool:
        """The waiter's side: True if it gave up before the taker took it."""
        return self._settle(False)


class _Handover(Ticket):
    """A waiter's turn (`holding_in_order`), queued in the actor's inbox: whoever takes it off,
    holding the actor, hands the claim to the waiter instead of running or releasing anything
    more, unless the waiter gave up first (invariant 7)."""

    __slots__ = ()


class _Life:
    """An actor class's starts and stops (`live_actors`), changed under `_live_lock`."""

    __slots__ = ("started", "stopped")

    def __init__(self) -> None:
        self.started = 0
        self.stopped = 0


_live_lock = threading.Lock()
_lives: list[tuple[str, _Life]] = []
"""Each actor class's name and counts (appended at class creation)."""
_pools = [0]
"""Pools started so far, for their threads' names (under `_live_lock`)."""


def _register(cls: type[Actor[Any]]) -> None:
    """Give an actor class its counts (`live_actors`), and note whether it has a stop hook of
    its own (`Actor._halt` calls no empty `on_stop`)."""
    life = _Life()
    cls._life = life
    cls._stop_hook = cls.on_stop is not Actor.on_stop
    with _live_lock:
        _lives.append((cls.__name__, life))


def live_actors() -> dict[str, int]:
    """Actors started and not yet stopped, by class name."""
    live: Counter[str] = Counter()
    with _live_lock:
        for name, life in _lives:
            live[name] += life.started - life.stopped
    return {name: count for name, count in live.items() if count}


class _Held(threading.local):
    """How many actors the current thread is running (claims, or a pool thread's batch), and
    whether it runs handlers inline although it is the main thread (`unguarded`)."""

    depth = 0
    unguarded = False


_held = _Held()
Envelope = tuple[Any, "Reply[Any] | None"]


class Actor(Generic[M_contra]):
    """An actor of this runtime, taking messages of type `M`: subclasses implement `handle`;
    start one with `Actor(pool, ...)`.

    The object is its own reference: pass it to `call`, `deliver`, `submit` and `stop_now`.
    Its inbox, its claim and its stop flag change only under its mailbox lock (invariant 8).
    """

    __slots__ = ("__weakref__", "_claimed", "_items", "_mailbox", "_pool", "_stopped")

    handlers_wait = True
    """False for actors whose handlers never wait: a thread that holds other actors may then
    also run the messages that arrived for this one meanwhile."""
    _life: ClassVar[_Life]
    _stop_hook: ClassVar[bool]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _register(cls)

    def __init__(self, pool: WorkerPool) -> None:
        self._pool = pool
        self._items: deque[Envelope] = deque()
        self._mailbox = threading.Lock()
        self._claimed = False
        self._stopped = False
        life = self._life
        with _live_lock:
            life.started += 1

    def handle(self, message: M_contra) -> Any:
        raise NotImplementedError

    def on_stop(self) -> None:
        """Called once, on the thread that handles the stop; overridden in the class body (a
        class notes at its creation whether it has its own)."""

    def is_alive(self) -> bool:
        with self._mailbox:
            return not self._stopped

    # -- the inbox (invariant 8) ----------------------------------------------------------

    @final
    def _post(self, message: M_contra | _Stop, reply: Reply[Any] | None) -> None:
        """Queue a message; schedule the actor on its pool if nobody held it. A stopped actor
        fails it with `ActorStopped` at once."""
        with self._mailbox:
            stopped = self._stopped
            if not stopped:
                self._items.append((message, reply))
                if self._claimed:
                    return
                self._claimed = True
        if stopped:
            if reply is not None:
                reply.fail(ActorStopped(f"{type(self).__name__} is stopped"))
            return
        self._pool.schedule(self._run_batch)

    @final
    def _claim(self) -> bool:
        """Reserve the actor for this thread if it is idle: not held, not stopped (and so no
        message waiting: invariant 8). Never called on the main thread (invariant 2)."""
        mailbox = self._mailbox
        mailbox.acquire()
        if self._claimed or self._stopped:
            mailbox.release()
            return False
        self._claimed = True
        mailbox.release()
        return True

    @final
    def _let_go(self) -> bool:
        """Release the actor unless messages arrived meanwhile: False then, and it is still
        this thread's, to run or to give to its pool."""
        mailbox = self._mailbox
        mailbox.acquire()
        if self._items:
            mailbox.release()
            return False
        self._claimed = False
        mailbox.release()
        return True

    # -- running ------------------------------------------------------------------------

    @final
    def _run_batch(self) -> None:
        """A pool thread's turn: it holds nothing else, so it may work through a batch."""
        _held.depth += 1
        try:
            self._finish(_BATCH)
        finally:
            _held.depth -= 1

    @final
    def _handle_inline(self, message: M_contra | _Stop) -> Any:
        """Handle one message on the claiming thread, then what arrived meanwhile (unless this
        is a nested claim of an actor whose handlers may wait: that goes to the pool, so a
        thread never waits while holding an actor the wait could need: invariant 6)."""
        held = _held
        held.depth += 1
        try:
            if isinstance(message, _Stop):
                self._halt()
                return None
            return self.handle(message)
        finally:
            held.depth -= 1
            self._finish(_BATCH if held.depth == 0 or not self.handlers_wait else 0)

    @final
    def _dispatch(self, message: M_contra | _Stop) -> Any:
        if isinstance(message, _Stop):
            self._halt()
            return None
        return self.handle(message)

    @final
    def _finish(self, budget: int) -> None:
        """Handle up to `budget` waiting messages, then release the actor (invariant 3), or
        give it, still claimed, to its pool when messages wait beyond the budget. Each runs
        counted as held (`_held.depth`), so that its nested claims of actors whose handlers
        may wait go to their pools (invariant 6), wherever this was called from."""
        mailbox, items, held = self._mailbox, self._items, _held
        while True:
            mailbox.acquire()
            if not items:  # a stopped actor's inbox is empty too
                self._claimed = False
                mailbox.release()
                return
            if budget <= 0:
                mailbox.release()
                self._pool.schedule(self._run_batch)
                return
            message, reply = items.popleft()
            mailbox.release()
            budget -= 1
            if type(message) is _Handover:
                if message.take():  # the claim is the waiter's now: not released here
                    reply.set(None)  # type: ignore[union-attr]  # a handover has its reply
                    return
                continue  # its waiter gave up: on with the inbox
            held.depth += 1
            try:
                answer = self._dispatch(message)
            except BaseException as exc:
                held.depth -= 1
                if reply is not None:
                    reply.fail(exc)
                else:
                    _log_failure(self, message)
            else:
                held.depth -= 1
                if reply is not None:
                    reply.set(answer)

    @final
    def _halt(self) -> None:
        """Stop (run by the holder): answer everything still queued with `ActorStopped`,
        then `on_stop`."""
        with self._mailbox:
            self._stopped = True
            queued = list(self._items)
            self._items.clear()
        for _, reply in queued:
            if reply is not None:
                reply.fail(ActorStopped(f"{type(self).__name__} stopped before the message"))
        life = self._life
        with _live_lock:
            life.stopped += 1
        if self._stop_hook:
            try:
                self.on_stop()
            except Exception:
                _log_failure(self, "on_stop")


_register(Actor)


def idle(actor: Actor[Any]) -> bool:
    """Whether no thread holds `actor` and no message waits for it (a stopped actor is
    idle)."""
    with actor._mailbox:
        return not actor._claimed


def when_idle(actor: Actor[Any], test: Callable[[], bool]) -> bool | None:
    """`test()` evaluated while `actor` is idle and nobody can claim it (under its mailbox
    lock, after its last holder let go: what that holder wrote is seen); None at once when
    `actor` is held. `test` must be short and take no lock (invariant 10)."""
    with actor._mailbox:
        return None if actor._claimed else test()


def answer(reply: Reply[T], compute: Callable[[], T]) -> None:
    """Set `reply` to what `compute` returns, or fail it with its exception (logged): for a
    message answered on a reply it carries, whose sender waits on that reply."""
    try:
        value = compute()
    except Exception as exc:
        log.exception("actor_answer_failed")
        reply.fail(exc)
    else:
        reply.set(value)


def call(actor: Actor[M], message: M, timeout: float | None) -> Any:
    """Ask `actor`; handled on this thread when the actor is idle (not on the main thread).

    Raises the handler's exception; `OperationTimeout` when a busy actor did not answer in time;
    `ActorStopped` once stopped.
    """
    if (get_ident() != _MAIN or _held.unguarded) and actor._claim():  # not `_guarded()`
        return actor._handle_inline(message)
    return submit(actor, message).get(timeout)


class Busy:
    """`here`'s answer when the actor is not idle (or this is the main thread)."""


BUSY = Busy()


def here(actor: Actor[M], message: M) -> Any:
    """The handler's answer to `message`, handled on this thread if `actor` is idle (its
    exception raised); `BUSY` otherwise (and on the main thread), and nothing was sent.

    For a sender whose queued message needs more than an inline one (a ticket that settles a
    timed-out wait): it builds that only when `here` found the actor busy.
    """
    if (get_ident() != _MAIN or _held.unguarded) and actor._claim():
        return actor._handle_inline(message)
    return BUSY


class _Answered(Generic[T]):
    """The answer of a message handled on the sender's thread, shaped like a `Reply`."""

    __slots__ = ("_error", "_value")

    def __init__(self, value: T | None, error: BaseException | None = None) -> None:
        self._value = value
        self._error = error

    def get(self, timeout: float | None) -> T:
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]


Submitted = Reply[Any] | _Answered[Any]
"""What `submit` gives back: something to `get(timeout)` the answer from."""


def submit(actor: Actor[M], message: M | _Stop) -> Submitted:
    """Send `message` and return something to `get(timeout)` its answer from, so a sender can
    decide what to do after a timeout and then wait on."""
    main = _guarded()
    if not main and actor._claim():
        try:
            return _Answered(actor._handle_inline(message))
        except Exception as exc:
            return _Answered(None, exc)
    reply: Reply[Any] = Reply()
    if main:
        _post_from_main(actor, message, reply).get(None)
    else:
        actor._post(message, reply)
    return reply


def _post_from_main(
    actor: Actor[M], message: M | _Stop, reply: Reply[Any] | None
) -> Reply[None]:
    """Have a pool thread queue the message (invariant 2); the result is set once it is queued.
    The sender waits for that, so that one sender's messages keep their order (the wait is
    short: pool threads run such posts between handlers)."""
    posted: Reply[None] = Reply()

    def post() -> None:
        try:
            actor._post(message, reply)
        finally:
            posted.set(None)

    actor._pool.schedule(post)
    return posted


def deliver(actor: Actor[M], message: M | _Stop) -> None:
    """Tell `actor`; handled on this thread when it is idle, queued otherwise. Never waits, so
    it may be used inside a handler; a failing handler is logged."""
    if _guarded():
        _post_from_main(actor, message, None).get(None)
    elif actor._claim():
        try:
            actor._handle_inline(message)
        except Exception:
            _log_failure(actor, message)
    else:
        actor._post(message, None)


def unguarded(operation: Callable[[], T]) -> T:
    """Run `operation` letting this thread run handlers inline even if it is the main thread.

    This waives invariant 2 for the operation: a signal handler's exception landing in it may
    leave an actor claimed or a change half-done. Only for a host that drives the actors from
    its main thread in a tight loop and does not survive an interrupt anyway (its own state is
    not interrupt-safe either), to save a thread handoff per call.
    """
    previous = _held.unguarded
    _held.unguarded = True
    try:
        return operation()
    finally:
        _held.unguarded = previous


def stop_now(actor: Actor[Any]) -> None:
    """Stop `actor` after what it was sent before; at once, here, when it is idle."""
    deliver(actor, _STOP)


def stop(actor: Actor[Any]) -> Submitted:
    """Stop `actor` after what it was sent before; `get` the result to wait for it."""
    return submit(actor, _STOP)


def _log_failure(actor: Actor[Any], message: object) -> None:
    log.exception("actor_handler_failed", actor=type(actor).__name__,
                  message=type(message).__name__)

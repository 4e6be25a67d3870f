"""The trackers' and the manager's runtime: actors on a small pool of threads, or run inline.

A thread per tracker costs ~24 KiB and a thread start per new user, so trackers are actors of
this small runtime, not pykka actors: each has an inbox, and a `WorkerPool` thread runs the
actors that have messages. Handing a message to another thread is the expensive part of a call
under the GIL (40-55 µs against ~15 µs for a decision), so a sender that finds the actor idle
claims it and runs the handler on its own thread.

Invariants (every change to this module must keep them):

1. One thread at a time runs an actor: the one holding its claim (an entry in `_claims`,
   taken by one atomic `dict.setdefault`: see "Claims without a lock" below) by a sender
   (`_claim`) or by whoever makes an idle actor's inbox non-empty (that thread hands the
   actor to its pool). Messages are handled one at a time, in order.
2. No claim is taken, and no handler runs, on the main thread. The main thread is the only one
   on which Python raises the exceptions of signal handlers (`KeyboardInterrupt`, an alarm's
   exception): between any two bytecodes, including inside a `finally`. A caller on the main
   thread therefore only puts a job on a pool's queue (one C call: it happened or it did not)
   and waits for its reply; the interrupt can land in the wait, never in a claim, a handler or
   a release, and the job runs to its end on the pool. (`unguarded` waives this, explicitly,
   for a host that prefers speed.)
3. A claim is released in the `finally` of the frame that took it, and a release hands the
   actor to its pool when messages arrived meanwhile (or, when its handlers never wait, first
   runs them itself, as a pool thread would): an exception in a handler never leaves an actor
   claimed.
4. Every message whose sender waits gets an answer or an exception on its `Reply`, whatever the
   handler raises; after a stop every message gets `ActorStopped`.
5. Every wait has the caller's timeout. A timed-out message is not withdrawn: it is handled,
   whole, later; the caller learns only that it has no answer yet.
6. A handler may wait only on actors whose handlers never wait (`handlers_wait = False`), on
   a pool of their own, so a wait always ends. (A thread holding such actors waits only in
   `holding_in_order`, for the next one in one global order: that wait ends too.)
7. A thread may hold several actors at once only through `holding` or `holding_in_order`
   (`quotactor.actors.holding`): `holding` claims those that are idle (never waiting for a
   claim: a busy one is left out, for the caller to send its message to once it holds
   nothing); `holding_in_order` claims actors whose handlers never wait in one global
   order, waiting for a busy one's turn (its holder hands the claim over as it lets go).
   Each runs one piece of work that may wait only as a handler may (invariant 6), and
   releases every claim in the `finally` of that frame.

Claims without a lock. A claim is an entry in the module's dictionary `_claims` (actor ->
the claim's ticket, a fresh object), taken by `_claims.setdefault(actor, ticket) is ticket`
and released by `del _claims[actor]`, only by its holder. Under the GIL each of these is one
C call that runs no Python code (an actor hashes and compares by identity, which
`Actor.__init_subclass__` enforces), so no other thread runs between its test and its set: it
is a test-and-set, as atomic as the lock it replaces, and every thread switch goes through the
GIL, so all threads see these steps in one order. The inbox (`deque.append`, `popleft`) and
the stop flag are read and changed by single steps too. What the lock used to give, the order
of the steps gives:
- No message is stranded. A sender appends its message, then tries to claim the actor (and
  hands it to its pool if it wins); a holder releases only after finding the inbox empty,
  and after `del` looks at the inbox again and, if a message is there, tries to claim the
  actor again (`Actor._next`, `_release`). If the sender's append comes after the holder's
  second look, the holder's `del` came before the sender's claim, which then finds the actor
  free (or another thread's claim, whose holder looks again when it lets go). Either way,
  while a message waits and the actor is not stopped, some thread holds the claim or is
  about to try it, and whoever wins runs or schedules it.
- Order. A thread that claims an actor to run its own message inline (`_claim`, `holding`)
  and finds messages already waiting does not jump them: it hands the actor, still claimed,
  to its pool and counts it busy (its own message then goes behind them), as the locked
  claim found such an actor busy (it was released only with an empty inbox).
- Stop. The stop runs under the claim: it sets `_stopped`, then fails every queued message.
  A sender reads `_stopped` after its append and, if set, fails what is still queued itself
  (`popleft` hands each message to one thread only): if it read False, its append came
  before the stop's flag, so before the stop's drain. A claim that wins on a stopped actor
  lets it go at once and counts as busy.
Interrupts: nothing here runs on the main thread (invariant 2), the only one where a signal
handler's exception can land, so a claim and the `try` that releases it are never split.
"""

from __future__ import annotations

import itertools
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
    "live_actors", "on_main_thread", "stop", "stop_now", "submit", "Submitted", "unguarded",
]

T = TypeVar("T")
M = TypeVar("M")
M_contra = TypeVar("M_contra", contravariant=True)
_BATCH = 64
log = get_logger()
_pool_ids = itertools.count(1)
_MAIN = threading.main_thread().ident


def on_main_thread() -> bool:
    """Whether this thread is the one that signal handlers' exceptions may interrupt."""
    return get_ident() == _MAIN


def _guarded() -> bool:
    """Whether this thread must not claim actors: the main thread, unless `unguarded`."""
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
    (`abandon`).

    Whichever comes first wins; the other learns it. So a late increase is never applied behind
    the back of a user tracker that refused, and a sender never gives up on what the other
    side has already begun: it waits for that answer instead.

    Lock-free: each side appends its name to a list (`list.append` is one atomic step under
    the GIL) and the first name in the list wins; it never changes once there, so both sides
    read the same winner. A lock per ticket cost a lock allocation per group increase. Both
    sides run on worker threads (invariant 2), so no signal handler's exception lands between
    the append and the read.
    """

    __slots__ = ("_sides",)

    def __init__(self) -> None:
        self._sides: list[str] = []

    def take(self) -> bool:
        """The taker's side: True if the other still waits (the taker goes on)."""
        sides = self._sides
        sides.append("taker")
        return sides[0] == "taker"

    def abandon(self) -> bool:
        """The waiter's side: True if it gave up before the taker took it."""
        sides = self._sides
        sides.append("waiter")
        return sides[0] == "waiter"


class _Handover(Ticket):
    """A waiter's turn (`holding_in_order`), queued in the actor's inbox: whoever takes it off,
    holding the actor, hands the claim to the waiter instead of running or releasing anything
    more, unless the waiter gave up first."""

    __slots__ = ()


class _Count:
    """A count that threads add to without a lock (an actor's start or stop): `add` is an
    `itertools.count`'s `__next__`, one C call, atomic under the GIL. A lock per start cost
    a fifth of a new tracker. Reading takes a number from the count too, which `read`
    remembers (readers hold `_live_lock`)."""

    __slots__ = ("_reads", "add")

    def __init__(self) -> None:
        self.add: Callable[[], int] = itertools.count().__next__
        self._reads = 0

    def read(self) -> int:
        value = self.add() - self._reads
        self._reads += 1
        return value


_lives: list[tuple[str, _Count, _Count]] = []
"""Each actor class's name, its starts and its stops (appended at class creation)."""
_live_lock = threading.Lock()


def _register(cls: type[Actor[Any]]) -> None:
    """Give an actor class its start and stop counts (`live_actors`), and note whether it has
    a stop hook of its own (`Actor._halt` calls no empty `on_stop`)."""
    started, stopped = _Count(), _Count()
    cls._starts, cls._stops = started, stopped
    cls._stop_hook = cls.on_stop is not Actor.on_stop
    with _live_lock:
        _lives.append((cls.__name__, started, stopped))


def live_actors() -> dict[str, int]:
    """Actors started and not yet stopped, by class name."""
    live: Counter[str] = Counter()
    with _live_lock:
        for name, started, stopped in _lives:
            live[name] += started.read() - stopped.read()
    return {name: count for name, count in live.items() if count}


class _Held(threading.local):
    """How many actors the current thread is running (claims, or a pool thread's batch), and
    whether it runs handlers inline although it is the main thread (`unguarded`)."""

    depth = 0
    unguarded = False


_held = _Held()
Envelope = tuple[Any, "Reply[Any] | None"]
_claims: dict[Actor[Any], object] = {}
"""The claimed actors, each with its claim's ticket (see "Claims without a lock")."""
_tickets = itertools.count()
"""A fresh ticket per claim (`next` is one C call: no two claims ever share one)."""


class Actor(Generic[M_contra]):
    """An actor of this runtime, taking messages of type `M`: subclasses implement `handle`;
    start one with `Actor(pool, ...)`.

    The object is its own reference: pass it to `call`, `deliver`, `submit` and `stop_now`.
    """

    __slots__ = ("__weakref__", "_items", "_pool", "_stopped")

    handlers_wait = True
    """False for actors whose handlers never wait: a thread that holds other actors may then
    also run the messages that arrived for this one meanwhile."""
    _starts: ClassVar[_Count]
    _stops: ClassVar[_Count]
    """This class's starts and stops, for `live_actors` (`_register`)."""
    _stop_hook: ClassVar[bool]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """An actor is a key of `_claims`: its hash and equality must stay identity's, C
        functions that run no Python code (a claim is atomic only so)."""
        super().__init_subclass__(**kwargs)
        if cls.__hash__ is not object.__hash__ or cls.__eq__ is not object.__eq__:
            raise TypeError(f"{cls.__name__}: an actor hashes and compares by identity")
        _register(cls)

    def __init__(self, pool: WorkerPool) -> None:
        self._pool = pool
        self._items: deque[Envelope] = deque()
        self._stopped = False
        self._starts.add()

    def handle(self, message: M_contra) -> Any:
        raise NotImplementedError

    def on_stop(self) -> None:
        """Called once, on the thread that handles the stop; overridden in the class body (a
        class notes at its creation whether it has its own)."""

    def is_alive(self) -> bool:
        return not self._stopped

    # -- the inbox ----------------------------------------------------------------------

    @final
    def _post(self, message: M_contra | _Stop, reply: Reply[Any] | None) -> None:
        """Queue a message; schedule the actor on its pool if it was idle."""
        self._items.append((message, reply))
        if self._stopped:  # read after the append: see "Claims without a lock"
            self._fail_queued("is stopped")
        elif _claims.setdefault(self, ticket := next(_tickets)) is ticket:
            if self._stopped:
                del _claims[self]
                self._fail_queued("is stopped")
            else:
                self._pool.schedule(self._run_batch)

    @final
    def _claim(self) -> bool:
        """Reserve the actor for this thread if it is idle (never on the main thread): claimed,
        not stopped, and no message waiting (one that waits is handed to the pool, claimed)."""
        if _claims.setdefault(self, ticket := next(_tickets)) is not ticket:
            return False
        if self._stopped or self._items:
            self._settle()
            return False
        return True

    @final
    def _settle(self) -> None:
        """A claim just won on an actor that is not idle: let a stopped one go; give one with
        messages waiting to its pool, still claimed (they were sent before ours)."""
        if self._stopped:
            del _claims[self]
        else:
            self._pool.schedule(self._run_batch)

    @final
    def _next(self, budget: int) -> Envelope | None:
        """The next message within `budget`; or None, and the actor is released (given to
        its pool when messages are waiting beyond the budget)."""
        if self._stopped:
            del _claims[self]
            return None
        items = self._items
        if not items:  # let go, then look again (every inline handler ends here)
            del _claims[self]
            if not items or self._stopped:
                return None
            if _claims.setdefault(self, ticket := next(_tickets)) is not ticket:
                return None  # another holder: it looks at the inbox when it lets go
            if self._stopped:
                del _claims[self]
                return None
        # only the holder takes messages off a live actor's inbox: it is not empty
        if budget > 0:
            return items.popleft()
        self._pool.schedule(self._run_batch)
        return None

    @final
    def _fail_queued(self, why: str) -> None:
        """Fail every queued message with `ActorStopped` ("<class> <why>"; each `popleft` hands
        a message to one thread only, however many drain at once: another may empty the
        inbox between the test and the `popleft`, hence the `except`)."""
        items = self._items
        while items:
            try:
                _, reply = items.popleft()
            except IndexError:
                return
            if reply is not None:
                reply.fail(ActorStopped(f"{type(self).__name__} {why}"))

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
        thread never waits while holding an actor the wait could need)."""
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
        """Handle up to `budget` waiting messages, then release the actor."""
        while True:
            envelope = self._next(budget)
            if envelope is None:
                return
            budget -= 1
            message, reply = envelope
            if type(message) is _Handover:
                if message.take():  # the claim is the waiter's now: not released here
                    reply.set(None)  # type: ignore[union-attr]  # a handover has its reply
                    return
                continue  # its waiter gave up: on with the inbox
            try:
                answer = self._dispatch(message)
            except BaseException as exc:
                if reply is not None:
                    reply.fail(exc)
                else:
                    _log_failure(self, message)
            else:
                if reply is not None:
                    reply.set(answer)

    @final
    def _halt(self) -> None:
        """Stop: answer everything still queued with `ActorStopped`, then `on_stop`."""
        self._stopped = True
        if self._items:  # one appended after this test sees `_stopped` and fails itself
            self._fail_queued("stopped before the message")
        self._stops.add()
        if self._stop_hook:
            try:
                self.on_stop()
            except Exception:
                _log_failure(self, "on_stop")


_register(Actor)


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

"""One state served by one actor of the runtime to any number of callers: the messages and the
handle a facade holds (the elastic quota service and the shared quota-tree manager use it).

A message names a method of the served state and its arguments (`Read`, `Change`), so the
facade's signatures are checked against the state's own methods; the actor runs it under a
`Checkpoint`, so a step that raises leaves the state as before the message. `Served` starts
the actor on a pool of its own (one thread) and asks it the way the user group manager asks
its manager: from the main thread through a relay thread, so a signal handler's exception
(Ctrl-C, an alarm) only ends the caller's wait and the operation completes whole (invariant 2
of the runtime); from any other thread inline when the actor is idle. Every wait has the
caller's timeout, and only `QuotactorError`s (and the caller's own interrupts) come out.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Concatenate, Generic, ParamSpec, Self, TypeVar, cast

from quotactor.actors.boundary import translate
from quotactor.actors.runtime import Actor, WorkerPool, call, on_main_thread, stop
from quotactor.core.errors import ManagerClosed, QuotactorError

__all__ = ["Change", "Facade", "Read", "Served"]

S = TypeVar("S")
M = TypeVar("M")
T = TypeVar("T")
P = ParamSpec("P")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Read(Generic[S]):
    """Answered with `method(state, *args, **kwargs)`; changes nothing the caller can see."""

    method: Callable[..., Any]
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    def __call__(self, state: S) -> Any:
        return self.method(state, *self.args, **self.kwargs)


@dataclass(frozen=True, slots=True)
class Change(Generic[S]):
    """Answered with `method(state, *args, **kwargs)`, a change of the state (logged, to be
    replayed if a later message fails: its arguments must be values the caller cannot edit)."""

    method: Callable[..., Any]
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    def __call__(self, state: S) -> Any:
        return self.method(state, *self.args, **self.kwargs)


class Served(Generic[M]):
    """An actor taking messages `M` on its own pool, with a relay for main-thread callers.

    Args:
        name: names the threads (`quotactor-<name>-...`, `quotactor-<name>-relay-...`).
        make: builds the actor on the pool it is given.
    """

    def __init__(self, name: str, make: Callable[[WorkerPool], Actor[M]]) -> None:
        self._pool = WorkerPool(name, 1)
        self._relay = WorkerPool(f"{name}-relay", 1)
        try:
            self._actor: Actor[M] | None = make(self._pool)
        except BaseException:
            self._pool.shutdown()
            self._relay.shutdown()
            raise
        self._lock = threading.Lock()

    @property
    def running(self) -> bool:
        return self._actor is not None

    @property
    def actor(self) -> Actor[M] | None:
        """The actor, None once stopped (tests look inside; callers use `ask`)."""
        return self._actor

    def ask(self, message: M, timeout: float) -> Any:
        """The actor's answer within `timeout` seconds; `OperationTimeout` if none came in
        time (the message is still handled, whole, later), `ManagerClosed` once stopped."""
        actor = self._actor
        if actor is None:
            raise ManagerClosed("the actor is stopped")
        deadline = time.monotonic() + timeout
        if on_main_thread():
            # Translated on the relay: an interrupt of this wait is the caller's, and passes raw.
            return self._relay.run(lambda: _asked(actor, message, deadline), timeout)
        return _asked(actor, message, deadline)

    def stop(self, timeout: float) -> None:
        """Stop the actor after what was sent before, and both threads; safe to call twice.
        `OperationTimeout` if the actor does not stop in time (the threads are told to end
        all the same)."""
        with self._lock:
            actor, self._actor = self._actor, None
        if actor is None:
            return
        try:
            if on_main_thread():
                self._relay.run(lambda: _stopped(actor, timeout), timeout)
            else:
                _stopped(actor, timeout)
        finally:
            self._relay.shutdown(timeout)
            self._pool.shutdown(timeout)


def _asked(actor: Actor[M], message: M, deadline: float) -> Any:
    """Ask through the library's exception boundary, within what is left of the deadline."""
    try:
        return call(actor, message, max(deadline - time.monotonic(), 0.0))
    except QuotactorError:
        raise
    except Exception as exc:
        raise translate(exc) from exc


def _stopped(actor: Actor[Any], timeout: float) -> None:
    try:
        stop(actor).get(timeout)
    except QuotactorError:
        raise
    except Exception as exc:
        raise translate(exc) from exc


class Facade(Generic[S]):
    """A blocking facade over one state of type `S` served by `served`: a service subclasses
    it and gives each of the state's operations a method that asks it by `_read` or `_change`.

    `timeout` (seconds) bounds every call; it may be changed at any time.
    """

    def __init__(self, served: Served[Any], timeout: float) -> None:
        self._served = served
        self.timeout = timeout

    def stop(self) -> None:
        """Stop the actor and its threads; safe to call twice."""
        self._served.stop(self.timeout)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._served.running

    def _read(self, method: Callable[Concatenate[S, P], R], *args: P.args,
              **kwargs: P.kwargs) -> R:
        """`method(state, *args)` in the actor; typed by the method."""
        return cast(R, self._served.ask(Read(method, args, kwargs), self.timeout))

    def _change(self, method: Callable[Concatenate[S, P], R], *args: P.args,
                **kwargs: P.kwargs) -> R:
        """`_read` for a method that changes the state."""
        return cast(R, self._served.ask(Change(method, args, kwargs), self.timeout))

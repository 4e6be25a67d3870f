"""Shared fixtures: every manager a test starts is stopped, and no actor may outlive it.

No test module may leave anything running: `no_leaks_from_module` (autouse, per module) fails
the module that ends with threads, actors, child processes or a Ray it did not have when it
began, naming them.
"""

from __future__ import annotations

import multiprocessing
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pytest

from quotactor.actors.runtime import live_actors
from quotactor.ugm import UserGroupManager


def live_quotactor_actors() -> list[str]:
    """Actors of ours not stopped, and threads of ours."""
    pooled = [f"{name} x{count}" for name, count in live_actors().items()]
    threads = [t.name for t in threading.enumerate() if t.name.startswith("quotactor-")]
    return pooled + threads


SETTLE_SECONDS = 20.0
"""How long a module's leftover threads get to end on their own (a pool told to stop without
waiting, a server's last close): far above the milliseconds they need, so only a thread that
is never told to stop fails its module."""


@dataclass(frozen=True)
class Running:
    """What is running in the process at one moment: threads (by identity), live actors by
    class, child processes (by pid) and whether Ray is initialised here."""

    threads: frozenset[threading.Thread]
    actors: dict[str, int]
    children: frozenset[int]
    ray: bool

    @classmethod
    def now(cls) -> Running:
        ray = sys.modules.get("ray")
        return cls(frozenset(threading.enumerate()), live_actors(),
                   frozenset(p.pid for p in multiprocessing.active_children() if p.pid),
                   bool(ray is not None and ray.is_initialized()))

    def left_since(self, before: Running) -> list[str]:
        """What runs now that did not run `before`, one description per leftover."""
        left = sorted(f"thread {t.name!r}" for t in self.threads - before.threads)
        left += [f"{count - before.actors.get(name, 0)} live {name} actor(s)"
                 for name, count in self.actors.items() if count > before.actors.get(name, 0)]
        left += [f"child process {pid}" for pid in sorted(self.children - before.children)]
        if self.ray and not before.ray:
            left.append("Ray (initialised, not shut down)")
        return left


def settled_since(before: Running, seconds: float = SETTLE_SECONDS) -> Running:
    """What runs once the threads started since `before` have ended, or `seconds` have passed
    (each is joined, never polled; actors and processes are looked at once they are)."""
    deadline = time.monotonic() + seconds
    for thread in set(threading.enumerate()) - before.threads:
        if thread is not threading.current_thread():
            thread.join(max(0.0, deadline - time.monotonic()))
    return Running.now()


@pytest.fixture(scope="module", autouse=True)
def no_leaks_from_module(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail the module whose tests (or module fixtures) leave threads, actors, child
    processes or Ray running after its last test."""
    before = Running.now()
    yield
    left = settled_since(before).left_since(before)
    if left:
        pytest.fail(f"{request.node.nodeid} left running after its tests: {', '.join(left)}",
                    pytrace=False)


@pytest.fixture
def ugm() -> Iterator[UserGroupManager]:
    manager = UserGroupManager.start(timeout=20.0)
    try:
        yield manager
    finally:
        manager.stop()
    assert live_quotactor_actors() == []


@pytest.fixture
def start_ugm() -> Iterator[object]:
    """Start managers with a config; all are stopped at the end of the test."""
    started: list[UserGroupManager] = []

    def start(config: object = None) -> UserGroupManager:
        manager = UserGroupManager.start(config, timeout=20.0)
        started.append(manager)
        return manager

    yield start
    for manager in started:
        manager.stop()
    assert live_quotactor_actors() == []


RunConcurrently = Callable[..., list[Any]]


@pytest.fixture
def run_concurrently() -> RunConcurrently:
    """Run `workers` on threads at once, through futures, and return their results in order;
    a worker's exception is raised here, in the test. Each of `background` gets a stop event,
    set once the workers are done, and its exception is raised too."""

    def run(workers: Sequence[Callable[[], Any]],
            background: Sequence[Callable[[threading.Event], Any]] = (),
            timeout: float = 100.0) -> list[Any]:
        stop = threading.Event()
        with ThreadPoolExecutor(len(workers) + len(background)) as pool:
            helpers = [pool.submit(task, stop) for task in background]
            try:
                futures = [pool.submit(task) for task in workers]
                return [future.result(timeout=timeout) for future in futures]
            finally:
                stop.set()
                for helper in helpers:
                    helper.result(timeout=timeout)

    return run


class Interrupted(Exception):
    """What the `alarm` fixture's signal handler raises, standing in for KeyboardInterrupt."""


class Alarm:
    """Raises `Interrupted` from SIGALRM, but only while armed, so that a test's own
    bookkeeping is never interrupted: the interrupt lands only inside the call under test."""

    def __init__(self) -> None:
        self.armed = False
        self.fired = 0

    def handler(self, signum: int, frame: Any) -> None:
        if self.armed:
            self.armed = False
            self.fired += 1
            raise Interrupted

    def attempt(self, call: Callable[[], Any], delay: float,
                tolerated: tuple[type[BaseException], ...] = ()) -> bool:
        """Run `call` with the alarm set to fire after `delay` s; True if it was interrupted.
        Errors of the `tolerated` types (a refusal the call may answer) are swallowed."""
        try:
            try:
                self.armed = True
                signal.setitimer(signal.ITIMER_REAL, delay)
                call()
            finally:
                self.armed = False
                signal.setitimer(signal.ITIMER_REAL, 0)
        except Interrupted:
            return True
        except tolerated:
            pass
        return False


@pytest.fixture
def alarm() -> Iterator[Alarm]:
    """An `Alarm` whose handler is installed for the test and removed after it."""
    armed = Alarm()
    previous = signal.signal(signal.SIGALRM, armed.handler)
    try:
        yield armed
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class Fault:
    """Wraps a function so that, while armed, its `nth` call raises; counts what it did."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function
        self.armed = False
        self.calls = 0
        self.nth = 1
        self.raised = 0

    def wrapper(self) -> Callable[..., Any]:
        """A plain function (so that, set on a class, it binds like the method it replaces)."""
        def faulty(*args: Any, **kwargs: Any) -> Any:
            if self.armed:
                self.calls += 1
                if self.calls == self.nth:
                    self.raised += 1
                    raise RuntimeError("injected fault")
            return self.function(*args, **kwargs)

        return faulty

    def arm(self, nth: int) -> None:
        self.armed, self.calls, self.nth = True, 0, nth


@pytest.fixture
def inject_fault(monkeypatch: pytest.MonkeyPatch) -> Callable[[Any, str], Fault]:
    """`inject_fault(owner, name)` replaces `owner.name` with a `Fault` for the test."""
    def inject(owner: Any, name: str) -> Fault:
        fault = Fault(getattr(owner, name))
        monkeypatch.setattr(owner, name, fault.wrapper())
        return fault

    return inject

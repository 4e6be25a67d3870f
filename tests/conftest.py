"""Shared fixtures: every manager a test starts is stopped, and no actor may outlive it."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from quotactor.actors.runtime import live_actors
from quotactor.ugm import UserGroupManager


def live_quotactor_actors() -> list[str]:
    """Actors of ours not stopped, and threads of ours."""
    pooled = [f"{name} x{count}" for name, count in live_actors().items()]
    threads = [t.name for t in threading.enumerate() if t.name.startswith("quotactor-")]
    return pooled + threads


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

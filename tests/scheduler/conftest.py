"""Fixtures for the scheduler tests: a virtual clock, and schedulers that are always stopped.

Test modules are imported by path and cannot import this file, so shared helpers are
fixtures too.
"""

from __future__ import annotations

import textwrap
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from quotactor.actors.runtime import live_actors
from quotactor.core.resources import Resource
from quotactor.scheduler import Scheduler, VirtualClock


def _leftovers() -> list[str]:
    actors = [f"{name} x{count}" for name, count in live_actors().items()]
    threads = [t.name for t in threading.enumerate() if t.name.startswith("quotactor-")]
    return actors + threads


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock(1_000.0)


@pytest.fixture
def looked_at(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The applications the cycles of this test put in a leaf's heap (their sorting key
    computed) or in a line, in order, with repeats."""
    from quotactor.scheduler.partition.cycle import Cycle

    seen: list[str] = []
    original = Cycle._app_key

    def spy(self: Cycle, leaf: Any, app: Any) -> tuple[Any, ...]:
        seen.append(app.application_id)
        return original(self, leaf, app)

    monkeypatch.setattr(Cycle, "_app_key", spy)
    return seen


@pytest.fixture
def attempted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The applications the cycles of this test attempted to place (`Cycle._allocate_app`),
    in order, with repeats."""
    from quotactor.scheduler.partition.cycle import Cycle

    seen: list[str] = []
    original = Cycle._allocate_app

    def spy(self: Cycle, leaf: Any, app: Any) -> Any:
        seen.append(app.application_id)
        return original(self, leaf, app)

    monkeypatch.setattr(Cycle, "_allocate_app", spy)
    return seen


@pytest.fixture
def start_scheduler(clock: VirtualClock) -> Iterator[Callable[..., Scheduler]]:
    """Start schedulers (YAML configs are dedented); all are stopped when the test ends."""
    started: list[Scheduler] = []

    def start(config: Any = None, **options: Any) -> Scheduler:
        options.setdefault("clock", clock)
        if isinstance(config, str):
            config = textwrap.dedent(config)
        scheduler = Scheduler.start(config, **options)
        started.append(scheduler)
        return scheduler

    yield start
    for scheduler in started:
        scheduler.stop()
    assert _leftovers() == []


@pytest.fixture
def assert_balanced() -> Callable[[Scheduler], None]:
    """Every queue, user and group of every partition back to zero usage, nothing running."""

    def check(scheduler: Scheduler) -> None:
        for partition in scheduler.partitions:
            for queue in scheduler.queues(partition=partition):
                assert queue.allocated == {}, queue.path
                assert queue.pending == {}, queue.path
                assert queue.running_applications == frozenset(), queue.path
            ugm = scheduler.ugm(partition)
            for user in ugm.users_usage():
                assert user["queues"].get("resourceUsage", {}) == {}, user
                assert "runningApplications" not in user["queues"], user
            for group in ugm.groups_usage():
                assert group["queues"].get("resourceUsage", {}) == {}, group
                assert "runningApplications" not in group["queues"], group

    return check


@pytest.fixture
def assert_books() -> Callable[[Scheduler], None]:
    """Usage equals the sum of the live allocations: for every queue, user and node."""

    def check(scheduler: Scheduler) -> None:
        for partition in scheduler.partitions:
            apps = scheduler.applications(partition=partition)
            by_queue: dict[str, Resource] = {}
            by_user: dict[str, Resource] = {}
            for app in apps:
                held = sum((a.resource for a in app.allocations), Resource())
                by_user[app.user.user] = by_user.get(app.user.user, Resource()) + held
                parts = app.queue_path.split(".") if app.queue_path else []
                for i in range(1, len(parts) + 1):
                    path = ".".join(parts[:i])
                    by_queue[path] = by_queue.get(path, Resource()) + held
            for queue in scheduler.queues(partition=partition):
                assert queue.allocated == by_queue.get(queue.path, Resource()), queue.path
            for user in scheduler.ugm(partition).users_usage():
                usage = Resource(user["queues"].get("resourceUsage", {}))
                assert usage == by_user.get(user["userName"], Resource()), user["userName"]
            for node in scheduler.nodes_view(partition):
                held = sum((Resource(a["resource"]) for a in node["allocations"]), Resource())
                assert Resource(node["allocated"]) == held, node["nodeID"]

    return check

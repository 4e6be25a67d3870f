"""Fault injection: a core function raising on its Nth call, at every step of an increase, a
decrease and a removal.

For each step the failed operation must leave every user and group exactly as before (both
change or neither), the caller must get a `QuotactorError`, other users must be unaffected, and
once everything is removed nothing may be left (no tracker kept alive by a lost count, no
application id still bound).

The "increase" and "decrease" operations, on a running application of a user with a live
tracker, are decided without the manager (`quotactor.actors.known`; checked below), the others
through its route.

The faults are injected by replacing core functions, which only Python callers see: compiled
core code calls compiled core code directly. So these run on the pure build of the core (with a
compiled install, `tests/core/test_builds.py` runs them again with `QUOTACTOR_PURE=1`), and
each checks that its fault was reached.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pytest

from quotactor import (
    OperationFailed,
    QuotactorError,
    UsageDecrease,
    UsageIncrease,
    UserGroup,
    UserGroupManager,
)
from quotactor.core import compiled, journal, queue_tracker, tracker
from quotactor.core.limits import LimitEntry, LimitTable

pytestmark = pytest.mark.skipif(
    compiled, reason="needs the pure core (run with QUOTACTOR_PURE=1 by test_builds.py)")

TABLE = LimitTable({
    "root": [LimitEntry(groups=("dev",), max_resources={"m": 1000})],
    "root.a": [LimitEntry(users=("*",), max_applications=5)],
})
SUE = UserGroup("sue", ["dev"])
BOB = UserGroup("bob", ["dev"])
ANN = UserGroup("ann", ["ops"])

STEPS: list[tuple[Any, str]] = [
    (queue_tracker, "_added"),
    (queue_tracker, "_prune_path"),
    (queue_tracker.QueueNode, "check_increase"),
    (queue_tracker.QueueNode, "increase"),
    (queue_tracker.QueueNode, "decrease"),
    (queue_tracker.QueueNode, "remove_app"),
    (queue_tracker.QueueNode, "walk"),
    (tracker, "_link_path"),
    (tracker, "_unlink_app"),
    (journal.Journal, "store"),
    (journal.Journal, "pop"),
    (journal.Journal, "add"),
    (journal.Journal, "discard"),
    (LimitTable, "resolve_group"),
]


class Injected(Exception):
    """The fault."""


@dataclass
class Fault:
    """Counts calls of one function while armed, and raises on call number `at`."""

    at: int = 0
    calls: int = 0
    armed: bool = False

    def wrap(self, original: Callable[..., Any]) -> Callable[..., Any]:
        def faulty(*args: Any, **kwargs: Any) -> Any:
            if self.armed:
                self.calls += 1
                if self.calls == self.at:
                    raise Injected(f"fault at call {self.at}")
            return original(*args, **kwargs)

        return faulty

    @contextmanager
    def armed_at(self, at: int) -> Iterator[None]:
        self.at, self.calls, self.armed = at, 0, True
        try:
            yield
        finally:
            self.armed = False


def state(ugm: UserGroupManager) -> tuple[Any, ...]:
    return ugm.users_usage(), ugm.groups_usage()


def prepare(ugm: UserGroupManager) -> None:
    assert ugm.increase_tracked_resource("root.a.x", "sue-1", {"m": 5, "v": 1}, SUE)
    assert ugm.increase_tracked_resource("root.a.y", "sue-3", {"m": 2}, SUE)
    assert ugm.increase_tracked_resource("root.a.x", "bob-1", {"m": 3}, BOB)
    # sue-1 runs on a second path too (with no usage there): its removal forgets it there
    # (`QueueNode.remove_app`)
    assert ugm.increase_tracked_resource("root.a.w", "sue-1", {}, SUE)


OPERATIONS: dict[str, Callable[[UserGroupManager], Any]] = {
    "increase": lambda ugm: ugm.increase_tracked_resource("root.a.x", "sue-1", {"m": 4}, SUE),
    "increase_new_app": lambda ugm: ugm.increase_tracked_resource(
        "root.a.z", "sue-2", {"m": 4}, SUE),
    "decrease": lambda ugm: ugm.decrease_tracked_resource("root.a.x", "sue-1", {"m": 1}, SUE),
    "removal": lambda ugm: ugm.decrease_tracked_resource(
        "root.a.x", "sue-1", {"m": 5, "v": 1}, SUE, remove_app=True),
}


def drain(ugm: UserGroupManager) -> None:
    """Remove everything that can be running; then nothing may be left."""
    for path, app, user in (("root.a.x", "sue-1", SUE), ("root.a.y", "sue-3", SUE),
                            ("root.a.z", "sue-2", SUE), ("root.a.x", "bob-1", BOB),
                            ("root.b", "ann-1", ANN)):
        snapshot = ugm.user_usage(user.user)
        if snapshot is None:
            continue
        usage = _usage_at(snapshot["queues"], path)
        ugm.decrease_tracked_resource(path, app, usage, user, remove_app=True)
    assert ugm.users_usage() == []
    assert [g for g in ugm.groups_usage()
            if {"resourceUsage", "runningApplications", "children"} & set(g["queues"])] == []
    stats = ugm.stats()
    assert (stats["users"], stats["groups"], stats["inflight"]) == (0, 0, 0)
    # every application id is free again: another user may use it
    assert ugm.increase_tracked_resource("root.b", "sue-1", {"m": 1}, ANN)
    ugm.decrease_tracked_resource("root.b", "sue-1", {"m": 1}, ANN, remove_app=True)


def _usage_at(node: dict[str, Any], path: str) -> dict[str, int]:
    if node["queuePath"] == path:
        return dict(node.get("resourceUsage", {}))
    for child in node.get("children", []):
        if path.startswith(child["queuePath"]):
            return _usage_at(child, path)
    return {}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("operation", sorted(OPERATIONS))
@pytest.mark.parametrize("step", STEPS, ids=[f"{owner.__name__}.{name}" for owner, name in STEPS])
def test_a_step_that_fails_changes_nothing(
    step: tuple[Any, str], operation: str, start_ugm: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    owner, name = step
    fault = Fault()
    monkeypatch.setattr(owner, name, fault.wrap(getattr(owner, name)))
    ugm: UserGroupManager = start_ugm(TABLE)
    prepare(ugm)
    run = OPERATIONS[operation]

    with fault.armed_at(0):  # count the calls of a clean run, on a twin
        twin = UserGroupManager.start(TABLE)
        try:
            prepare(twin)
            fault.calls = 0
            run(twin)
            calls = fault.calls
        finally:
            twin.stop()

    before = state(ugm)
    for at in range(1, calls + 1):
        with fault.armed_at(at), pytest.raises(OperationFailed) as failed:
            run(ugm)
        assert isinstance(failed.value.__cause__, Injected)
        assert state(ugm) == before, f"call {at} of {calls} left a change behind"
        # other users, in the same group and in another, are unaffected
        assert ugm.increase_tracked_resource("root.a.x", "bob-2", {"m": 1}, BOB)
        ugm.decrease_tracked_resource("root.a.x", "bob-2", {"m": 1}, BOB, remove_app=True)
        assert ugm.increase_tracked_resource("root.b", "ann-1", {"m": 1}, ANN)
        ugm.decrease_tracked_resource("root.b", "ann-1", {"m": 1}, ANN, remove_app=True)
        assert state(ugm) == before
    run(ugm)  # and the operation itself still works
    drain(ugm)


def _consistent(ugm: UserGroupManager) -> None:
    """Every item of a failed batch either changed its user and its group, or neither: the
    group's usage and applications are its members' sums."""
    users = ugm.users_usage()
    usage: dict[str, int] = {}
    apps: set[str] = set()
    for snap in users:
        if snap["userName"] not in ("sue", "bob"):  # dev's members
            continue
        apps |= set(snap.get("groups", {}))
        for k, v in snap["queues"].get("resourceUsage", {}).items():
            usage[k] = usage.get(k, 0) + v
    [dev] = [g for g in ugm.groups_usage() if g["groupName"] == "dev"] or [None]
    got = {} if dev is None else dev["queues"].get("resourceUsage", {})
    assert got == {k: v for k, v in usage.items() if v}
    assert set([] if dev is None else dev.get("applications", [])) == apps


BATCHES: dict[str, Callable[[UserGroupManager], Any]] = {
    "increases": lambda ugm: ugm.apply_batch([
        UsageIncrease("root.a.x", "sue-1", {"m": 4}, SUE),
        UsageIncrease("root.a.z", "sue-2", {"m": 1}, SUE),
        UsageIncrease("root.a.x", "bob-1", {"m": 2}, BOB),
        UsageIncrease("root.b", "ann-1", {"m": 1}, ANN)]),
    "removals": lambda ugm: ugm.apply_batch([
        UsageDecrease("root.a.x", "sue-1", {"m": 5, "v": 1}, SUE, True),
        UsageDecrease("root.a.y", "sue-3", {"m": 2}, SUE, True),
        UsageDecrease("root.a.x", "bob-1", {"m": 3}, BOB, True)]),
}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("batch", sorted(BATCHES))
@pytest.mark.parametrize("step", STEPS, ids=[f"{owner.__name__}.{name}" for owner, name in STEPS])
def test_a_step_that_fails_in_a_batch_leaves_each_item_whole(
    step: tuple[Any, str], batch: str, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A batch holds its user trackers and sends each group one message per round: a step
    failing anywhere in it leaves every item applied whole or not at all (users and group
    agree), the caller gets a `QuotactorError`, and everything drains afterwards."""
    owner, name = step
    fault = Fault()
    monkeypatch.setattr(owner, name, fault.wrap(getattr(owner, name)))
    run = BATCHES[batch]
    with fault.armed_at(0), UserGroupManager.start(TABLE) as twin:
        prepare(twin)
        fault.calls = 0
        run(twin)
        calls = fault.calls
    for at in range(1, calls + 1):
        with UserGroupManager.start(TABLE, timeout=20.0) as ugm:
            prepare(ugm)
            with fault.armed_at(at), pytest.raises(QuotactorError):
                run(ugm)
            _consistent(ugm)
            drain(ugm)


@pytest.mark.parametrize("step", STEPS, ids=[f"{owner.__name__}.{name}" for owner, name in STEPS])
def test_every_step_is_reached_by_some_operation(
    step: tuple[Any, str], start_ugm: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Else a fault placed there would never fire and the test above would pass vacuously."""
    owner, name = step
    fault = Fault()
    monkeypatch.setattr(owner, name, fault.wrap(getattr(owner, name)))
    reached = []
    for operation in sorted(OPERATIONS):
        ugm: UserGroupManager = start_ugm(TABLE)
        prepare(ugm)
        with fault.armed_at(0):
            OPERATIONS[operation](ugm)
        reached.append(fault.calls)
    assert sum(reached) > 0, f"{name} is called by no operation"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("operation", ["increase", "decrease"])
def test_the_running_applications_changes_are_decided_without_the_manager(
    operation: str, start_ugm: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """So the faults above, injected in the "increase" and "decrease" operations, land on the
    known-user path (`quotactor.actors.known`), not on the manager's route."""
    from quotactor.actors.manager import ManagerActor

    ugm: UserGroupManager = start_ugm(TABLE)
    prepare(ugm)
    routes: list[Any] = []
    original, original_one = ManagerActor._route, ManagerActor.route_held
    monkeypatch.setattr(ManagerActor, "_route",
                        lambda self, msg: routes.append(msg) or original(self, msg))
    monkeypatch.setattr(ManagerActor, "route_held",
                        lambda self, item: routes.append(item) or original_one(self, item))
    OPERATIONS[operation](ugm)
    assert routes == []

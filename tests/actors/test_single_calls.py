"""A single call's delivery (`batch.deliver_one`): holding its idle user and group trackers, in
one compiled core call; by a message to a busy group, holding the user; by a message to a busy
user tracker. Each path gives the answer the trackers would, changes both sides or neither,
and leaves nothing claimed."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

import pytest

from quotactor import UsageDecrease, UsageIncrease, UserGroup
from quotactor.actors.runtime import idle
from quotactor.core.decision import Decision
from quotactor.core.limits import LimitEntry as L
from quotactor.core.limits import LimitTable
from quotactor.ugm import UserGroupManager

T = TypeVar("T")
WAIT = 10.0
DEV = LimitTable({"root": [L(users=("*",), max_resources={"m": 50}),
                           L(groups=("dev",), max_resources={"m": 10})]})
SUE, BOB, SOLO = UserGroup("sue", ["dev"]), UserGroup("bob", ["dev"]), UserGroup("solo")


def _off_main(fn: Callable[[], T]) -> T:
    with ThreadPoolExecutor(1) as executor:
        return executor.submit(fn).result(WAIT)


def _until(happened: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT
    while not happened():
        assert time.monotonic() < deadline


def _answered_once_let_go(
    ugm: UserGroupManager, size: int,
    hold: Callable[[list[Any]], tuple[Future[list[int]], threading.Event]], busy: Any,
    waits: Callable[[], bool],
) -> Decision:
    """sue's increase of `size` (app sue-1), sent while another batch holds `busy`, a tracker
    it needs: once it `waits` (holding nothing but, when the group is the busy one, sue), it
    has no answer until that batch lets go, then has one."""
    holder, release = hold([busy])
    with ThreadPoolExecutor(1) as executor:
        waiting = executor.submit(ugm.decide_increase, "root.a", "sue-1", {"m": size}, SUE)
        _until(waits)
        assert not waiting.done()
        assert not idle(busy) and not idle(ugm._manager.users["sue"])  # type: ignore[union-attr]
        release.set()
        assert holder.result(WAIT) == [0]
        return waiting.result(WAIT)


def _all_idle(ugm: UserGroupManager) -> bool:
    """Whether the manager and every listed tracker are idle: nothing held, nothing queued."""
    manager = ugm._manager
    assert manager is not None
    return all(idle(ref) for ref in [manager, *manager.users.values(),
                                     *manager.groups.values()])


def _nothing_left(ugm: UserGroupManager) -> None:
    assert _all_idle(ugm)
    assert ugm.users_usage() == []
    stats = ugm.stats()
    assert (stats["users"], stats["groups"], stats["inflight"]) == (0, 0, 0)


@pytest.mark.timeout(60)
def test_single_calls_with_idle_trackers_answer_as_the_limits_say(start_ugm: Any) -> None:
    """With its user and group idle (and for a user of no group), a single call is answered
    at once, refused as the limits say, and leaves every tracker idle."""
    ugm: UserGroupManager = start_ugm(DEV)

    def calls() -> list[Any]:
        return [
            ugm.decide_increase("root.a", "sue-1", {"m": 6}, SUE).ok,
            ugm.decide_increase("root.a", "bob-1", {"m": 6}, BOB).ok,  # dev: 12 > 10
            ugm.decide_increase("root.a", "solo-1", {"m": 40}, SOLO).ok,
            ugm.get_user_resources("bob"), ugm.get_group_resources("dev"),
            ugm.get_user_resources("solo"),
            ugm.decrease_tracked_resource("root.a", "sue-1", {"m": 6}, SUE, True),
            ugm.decrease_tracked_resource("root.a", "solo-1", {"m": 40}, SOLO, True),
        ]

    assert _off_main(calls) == [True, False, True, None, {"m": 6}, {"m": 40}, None, None]
    _nothing_left(ugm)


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("size", "accepted"), [(3, True), (10, False)])
def test_a_single_call_messages_a_busy_group_holding_its_user(
    size: int, accepted: bool, start_ugm: Any, held_by_another_batch: Any,
    turn_queued: threading.Event,
) -> None:
    """Another caller's batch holds group dev: the call, holding sue, is answered once dev is
    let go (never waiting for dev's turn): both sides changed, or, refused by dev's limit,
    neither."""
    ugm: UserGroupManager = start_ugm(DEV)
    assert ugm.increase_tracked_resource("root.a", "sue-0", {"m": 1}, SUE)
    dev = ugm._manager.groups["dev"]  # type: ignore[union-attr]
    sue = ugm._manager.users["sue"]  # type: ignore[union-attr]
    decision = _answered_once_let_go(
        ugm, size, held_by_another_batch, dev, lambda: not idle(sue))
    assert decision.ok is accepted
    assert not turn_queued.is_set()
    total = {"m": 1 + size} if accepted else {"m": 1}
    assert (ugm.get_user_resources("sue"), ugm.get_group_resources("dev")) == (total, total)
    assert idle(dev)
    _off_main(lambda: ugm.apply_batch([
        UsageDecrease("root.a", "sue-0", {"m": 1}, SUE, True),
        UsageDecrease("root.a", "sue-1", {"m": size}, SUE, True)]))
    _nothing_left(ugm)


@pytest.mark.timeout(60)
def test_a_single_call_for_a_busy_user_is_answered_when_its_tracker_runs_again(
    start_ugm: Any, held_by_another_batch: Any,
) -> None:
    """Another caller's batch holds sue's tracker: the call is answered when the tracker runs
    again; then a removal takes all of it back."""
    ugm: UserGroupManager = start_ugm(DEV)
    assert ugm.increase_tracked_resource("root.a", "sue-0", {"m": 1}, SUE)
    sue = ugm._manager.users["sue"]  # type: ignore[union-attr]
    assert _answered_once_let_go(
        ugm, 4, held_by_another_batch, sue, lambda: ugm.stats()["inflight"] == 1).ok
    assert ugm.get_group_resources("dev") == {"m": 5}
    assert ugm.increase_tracked_resource("root.a", "bob-1", {"m": 6}, BOB) is False
    for app, size in (("sue-0", 1), ("sue-1", 4)):
        _off_main(lambda a=app, s=size: ugm.decrease_tracked_resource(  # type: ignore[misc]
            "root.a", a, {"m": s}, SUE, True))
    _nothing_left(ugm)


@pytest.mark.timeout(60)
def test_a_single_decrease_of_a_user_with_nothing_tracked_changes_nothing(
    start_ugm: Any,
) -> None:
    ugm: UserGroupManager = start_ugm(DEV)
    assert _off_main(lambda: ugm.decrease_tracked_resource(
        "root.a", "ghost", {"m": 1}, SUE, True)) is None
    assert _off_main(lambda: ugm.apply_batch([
        UsageIncrease("root.a", "sue-1", {"m": 2}, SUE)]))[0].ok  # type: ignore[union-attr]
    _off_main(lambda: ugm.decrease_tracked_resource("root.a", "sue-1", {"m": 2}, SUE, True))
    _nothing_left(ugm)

"""The batch API: per-item atomic semantics, per-user order, all-or-nothing validation."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import partial
from typing import Any, TypeVar

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from quotactor import InvalidRequest, OperationTimeout, UsageDecrease, UsageIncrease, UserGroup
from quotactor.core.decision import ACCEPTED
from quotactor.core.limits import LimitEntry as L
from quotactor.core.limits import LimitTable
from quotactor.core.queue_path import parse_queue_path
from quotactor.core.reference import ReferenceTracking
from quotactor.core.resources import Resource
from quotactor.ugm import UserGroupManager

USER_LIMITS = LimitTable({
    "root": [L(users=("*",), max_resources={"m": 12}, max_applications=2),
             L(groups=("g0", "g1"), max_applications=1000)],
    "root.a": [L(users=("u1",), max_resources={"m": 5})],
})
USERS = [UserGroup("u0", ["g0"]), UserGroup("u1", ["g1", "g0"]), UserGroup("u2")]

T = TypeVar("T")
WAIT = 10.0

change = st.builds(
    lambda inc, q, app, user, m, rm: (
        UsageIncrease(q, f"{user.user}-{app}", {"m": m}, user) if inc
        else UsageDecrease(q, f"{user.user}-{app}", {"m": m}, user, rm)
    ),
    st.booleans(), st.sampled_from(["root.a", "root.b", "root"]),
    st.sampled_from(["a1", "a2", "a3"]), st.sampled_from(USERS), st.integers(0, 6),
    st.booleans(),
)


def _reference_answers(ref: ReferenceTracking, changes: list[Any]) -> list[bool | None]:
    """What the reference model answers to `changes` made one by one, in order (None for a
    decrease)."""
    want: list[bool | None] = []
    for c in changes:
        parts = parse_queue_path(c.queue_path)
        if isinstance(c, UsageIncrease):
            want.append(ref.increase(parts, c.application_id, Resource(c.usage), c.user) is None)
        else:
            ref.decrease(parts, c.application_id, Resource(c.usage), c.user, c.remove_app)
            want.append(None)
    return want


@settings(max_examples=40, deadline=None)
@given(st.lists(change, max_size=40))
def test_a_batch_gives_the_answers_of_the_same_calls_made_one_by_one(changes) -> None:
    """Application ids are unique per user here, as in a partition: items of different users
    may then interleave in any order without changing the outcome."""
    ref = ReferenceTracking(USER_LIMITS)
    want = _reference_answers(ref, changes)
    with UserGroupManager.start(USER_LIMITS, timeout=20.0) as ugm:
        got = [None if r is None else r.ok for r in ugm.apply_batch(changes)]
        assert got == want
        assert ugm.users_usage() == ref.users_usage()
        assert ugm.groups_usage() == ref.groups_usage()


def test_one_invalid_item_rejects_the_whole_batch(ugm: UserGroupManager) -> None:
    good = UsageIncrease("root.a", "1", {"m": 1}, UserGroup("u"))
    for bad in (
        UsageIncrease("root..a", "1", {"m": 1}, UserGroup("u")),
        UsageIncrease("root.a", "", {"m": 1}, UserGroup("u")),
        UsageDecrease("root.a", "1", {"m": -1}, UserGroup("u")),
        ("root.a", "1", {"m": 1}, UserGroup("u")),
    ):
        with pytest.raises(InvalidRequest):
            ugm.apply_batch([good, bad])  # type: ignore[list-item]
    assert ugm.users_usage() == []
    assert ugm.apply_batch([]) == []


@pytest.mark.timeout(120)
def test_concurrent_batches_keep_limits_and_balance(start_ugm, run_concurrently) -> None:
    table = LimitTable({
        "root": [L(users=("*",), max_resources={"m": 40}),
                 L(groups=("g0", "g1"), max_resources={"m": 100}, max_applications=30)],
        "root.a": [L(users=("*",), max_applications=4)],
    })
    ugm = start_ugm(table)
    users = [UserGroup(f"u{i}", [f"g{i % 2}"]) for i in range(10)]
    held: list[dict[str, int]] = [{} for _ in range(6)]

    def worker(seed: int) -> None:
        rng = random.Random(seed)
        mine: list[UsageIncrease] = []
        for _ in range(40):
            batch: list[UsageIncrease | UsageDecrease] = []
            releasing = [mine.pop(rng.randrange(len(mine))) for _ in range(min(len(mine), 3))]
            batch += [UsageDecrease(c.queue_path, c.application_id, c.usage, c.user, True)
                      for c in releasing]
            adding = [UsageIncrease(rng.choice(["root.a", "root.b"]), f"{seed}-{rng.random()}",
                                    {"m": rng.randint(1, 9)}, rng.choice(users))
                      for _ in range(5)]
            results = ugm.apply_batch(batch + adding)
            for c in releasing:
                held[seed][c.user.user] -= c.usage["m"]
            for c, result in zip(adding, results[len(releasing):], strict=True):
                if result is not None and result.ok:
                    mine.append(c)
                    held[seed][c.user.user] = held[seed].get(c.user.user, 0) + c.usage["m"]

    run_concurrently([partial(worker, s) for s in range(6)])
    for user in users:
        want = sum(h.get(user.user, 0) for h in held)
        assert (ugm.get_user_resources(user.user) or {}).get("m", 0) == want
        assert want <= 40
    for group in ("g0", "g1"):
        usage = ugm.get_group_resources(group) or {}
        assert usage.get("m", 0) <= 100
    assert ugm.stats()["inflight"] == 0


def _off_main(fn: Callable[[], T]) -> T:
    with ThreadPoolExecutor(1) as executor:
        return executor.submit(fn).result(WAIT)


@contextmanager
def _wedged(ugm: UserGroupManager, group_name: str) -> Iterator[None]:
    """`group_name`'s tracker claimed by another thread, with a caller timeout short enough to
    give up on it; released, and the timeout restored, on the way out."""
    group = ugm._manager.groups[group_name]  # type: ignore[union-attr]
    assert _off_main(group._claim)
    ugm.timeout = 0.3
    try:
        yield
    finally:
        group._finish(64)
        ugm.timeout = 20.0


def _drained(ugm: UserGroupManager) -> None:
    """Nothing tracked and no tracker kept alive by a lost count."""
    assert ugm.users_usage() == []
    assert [g for g in ugm.groups_usage() if "resourceUsage" in g["queues"]] == []
    stats = ugm.stats()
    assert (stats["users"], stats["groups"], stats["inflight"]) == (0, 0, 0)


GROUP_LIMIT = LimitTable({"root": [L(groups=("dev",), max_resources={"m": 100})]})
SUE, BOB, ANN = UserGroup("sue", ["dev"]), UserGroup("bob", ["dev"]), UserGroup("ann", ["dev"])


@pytest.mark.timeout(60)
def test_a_batch_sends_a_busy_user_tracker_its_own_message_and_counts_stay_true(
    start_ugm: Any,
) -> None:
    """The batch holds the idle trackers (bob, ann) and decides their items at once; sue's
    tracker is busy (claimed by another thread), so her share waits in its inbox past the
    caller's timeout and is applied whole when the tracker runs again."""
    ugm: UserGroupManager = start_ugm(GROUP_LIMIT)
    assert ugm.increase_tracked_resource("root.a", "sue-0", {"m": 1}, SUE)
    sue = ugm._manager.users["sue"]  # type: ignore[union-attr]
    assert _off_main(sue._claim)
    ugm.timeout = 0.3
    batch = [UsageIncrease("root.a", f"{u.user}-1", {"m": 10}, u) for u in (BOB, SUE, ANN)]
    try:
        with pytest.raises(OperationTimeout):
            _off_main(lambda: ugm.apply_batch(batch))
        ugm.timeout = 20.0
        assert ugm.get_user_resources("bob") == {"m": 10}
        assert ugm.get_user_resources("ann") == {"m": 10}
    finally:
        sue._finish(64)  # it runs its inbox: the batch's share for sue
    ugm.timeout = 20.0
    assert ugm.get_user_resources("sue") == {"m": 11}
    assert ugm.get_group_resources("dev") == {"m": 31}
    ugm.apply_batch([UsageDecrease("root.a", "sue-0", {"m": 1}, SUE, True)] + [
        UsageDecrease(c.queue_path, c.application_id, c.usage, c.user, True) for c in batch])
    _drained(ugm)


@pytest.mark.timeout(60)
def test_a_batch_that_gives_up_on_a_wedged_group_changes_nothing(start_ugm: Any) -> None:
    """One group message for the batch's increases of that group: abandoned whole at the
    caller's deadline, so every user side is rolled back and the group applies none of it;
    a decrease in the same group batch is still applied."""
    ugm: UserGroupManager = start_ugm(GROUP_LIMIT)
    assert ugm.increase_tracked_resource("root.a", "ann-0", {"m": 5}, ANN)
    with _wedged(ugm, "dev"), pytest.raises(OperationTimeout, match="did not answer in time"):
        _off_main(lambda: ugm.apply_batch([
            UsageIncrease("root.a", "sue-1", {"m": 3}, SUE),
            UsageDecrease("root.a", "ann-0", {"m": 5}, ANN, True),
            UsageIncrease("root.a", "bob-1", {"m": 4}, BOB),
        ]))
    assert ugm.get_user_resources("sue") in (None, {})
    assert ugm.get_user_resources("bob") in (None, {})
    assert ugm.get_group_resources("dev") in (None, {})
    assert ugm.apply_batch([UsageIncrease("root.a", "sue-1", {"m": 3}, SUE)]) == [ACCEPTED]
    assert ugm.get_group_resources("dev") == {"m": 3}
    ugm.decrease_tracked_resource("root.a", "sue-1", {"m": 3}, SUE, remove_app=True)
    _drained(ugm)


@pytest.mark.timeout(120)
def test_batches_and_single_calls_on_the_same_users_and_apps_keep_every_invariant(
    start_ugm: Any, run_concurrently: Any,
) -> None:
    """Batches (holding their idle trackers) race single calls on the same users, groups and
    application ids, with trackers retired and revived all along: at the end usage is the sum
    of what each worker holds, no limit is exceeded, and after removing everything nothing is
    left (no phantom usage, no lost count)."""
    table = LimitTable({
        "root": [L(users=("*",), max_resources={"m": 30}),
                 L(groups=("g0", "g1"), max_resources={"m": 60})],
    })
    ugm: UserGroupManager = start_ugm(table)
    users = [UserGroup(f"u{i}", [f"g{i % 2}"]) for i in range(6)]

    def worker(seed: int) -> dict[tuple[str, str, str], int]:
        rng = random.Random(seed)
        mine: dict[tuple[str, str, str], int] = {}  # (queue, app, user) -> m
        for step in range(60):
            if rng.random() < 0.5:
                changes: list[UsageIncrease | UsageDecrease] = [
                    UsageDecrease(q, a, {"m": m}, users[int(u[1:])], True)
                    for (q, a, u), m in rng.sample(sorted(mine.items()), min(2, len(mine)))]
                adding = [UsageIncrease(rng.choice(["root.a", "root.b"]), f"w{seed}-{step}-{i}",
                                        {"m": rng.randint(1, 6)}, rng.choice(users))
                          for i in range(4)]
                results = ugm.apply_batch(changes + adding)
                for c in changes:
                    del mine[(c.queue_path, c.application_id, c.user.user)]
                for c, r in zip(adding, results[len(changes):], strict=True):
                    if r is not None and r.ok:
                        mine[(c.queue_path, c.application_id, c.user.user)] = c.usage["m"]
            elif mine and rng.random() < 0.5:
                (q, a, u), m = rng.choice(sorted(mine.items()))
                ugm.decrease_tracked_resource(q, a, {"m": m}, users[int(u[1:])], True)
                del mine[(q, a, u)]
            else:
                q, a = rng.choice(["root.a", "root.b"]), f"w{seed}-{step}"
                u, m = rng.choice(users), rng.randint(1, 6)
                if ugm.increase_tracked_resource(q, a, {"m": m}, u):
                    mine[(q, a, u.user)] = m
        return mine

    held = run_concurrently([partial(worker, s) for s in range(6)])
    for user in users:
        want = sum(m for h in held for (_, _, u), m in h.items() if u == user.user)
        assert (ugm.get_user_resources(user.user) or {}).get("m", 0) == want
        assert want <= 30
    for g in ("g0", "g1"):
        want = sum(m for h in held for (_, _, u), m in h.items() if int(u[1:]) % 2 == int(g[1]))
        assert (ugm.get_group_resources(g) or {}).get("m", 0) == want <= 60
    ugm.apply_batch([UsageDecrease(q, a, {"m": m}, users[int(u[1:])], True)
                     for h in held for (q, a, u), m in h.items()])
    _drained(ugm)


SHARED = LimitTable({
    "root": [L(groups=("g0",), max_resources={"m": 12}, max_applications=3),
             L(groups=("g1",), max_resources={"m": 9}),
             L(users=("*",), max_resources={"m": 8})],
})
SHARING = [UserGroup("u0", ["g0"]), UserGroup("u1", ["g0"]), UserGroup("u2", ["g1"]),
           UserGroup("u3", ["g1"]), UserGroup("u4")]
shared_change = st.builds(
    lambda inc, q, app, user, m, rm: (
        UsageIncrease(q, f"{user.user}-{app}", {"m": m}, user) if inc
        else UsageDecrease(q, f"{user.user}-{app}", {"m": m}, user, rm)
    ),
    st.booleans(), st.sampled_from(["root.a", "root.b"]), st.sampled_from(["a1", "a2"]),
    st.sampled_from(SHARING), st.integers(0, 6), st.booleans(),
)


@settings(max_examples=40, deadline=None)
@given(st.lists(shared_change, max_size=40))
@example([UsageIncrease("root.a", "u2-a1", {"m": 5}, SHARING[2]),  # g1: 5 of 9
          UsageIncrease("root.a", "u2-a2", {"m": 2}, SHARING[2]),  # g1: 7
          UsageIncrease("root.b", "u3-a1", {"m": 3}, SHARING[3])])  # refused: rounds took it
def test_a_held_batch_decides_in_the_callers_order_as_the_reference_model(changes) -> None:
    """With every tracker idle, a batch holds every user and group tracker it names and
    decides each item in the caller's order: the answers are the reference model's for the
    same items in the same order, even where users of one group compete for its limits (the
    order across users then matters)."""
    ref = ReferenceTracking(SHARED)
    want = _reference_answers(ref, changes)
    with UserGroupManager.start(SHARED, timeout=20.0) as ugm:
        got = _off_main(lambda: ugm.apply_batch(changes))
        assert [None if r is None else r.ok for r in got] == want
        assert ugm.users_usage() == ref.users_usage()
        assert ugm.groups_usage() == ref.groups_usage()
        assert ugm.stats()["users"] == len(ref.users)
        assert ugm.stats()["groups"] == len(ref.groups)


OPS = UserGroup("olga", ["ops"])
TWO_GROUPS = LimitTable({"root": [L(groups=("dev", "ops"), max_resources={"m": 100})]})


@pytest.mark.timeout(60)
def test_a_busy_group_holds_back_only_its_users_items(start_ugm: Any) -> None:
    """The batch holds every idle tracker: olga's items (group ops, idle) are decided at once,
    in order; sue's two items wait for her busy group (dev) as one group message, past the
    caller's timeout, and are abandoned whole; nothing of them is left, and everything drains."""
    ugm: UserGroupManager = start_ugm(TWO_GROUPS)
    assert ugm.increase_tracked_resource("root.a", "sue-0", {"m": 1}, SUE)
    with _wedged(ugm, "dev"):
        with pytest.raises(OperationTimeout, match="did not answer in time"):
            _off_main(lambda: ugm.apply_batch([
                UsageIncrease("root.a", "olga-1", {"m": 2}, OPS),
                UsageIncrease("root.a", "sue-1", {"m": 3}, SUE),
                UsageDecrease("root.a", "olga-1", {"m": 1}, OPS),
                UsageIncrease("root.a", "sue-2", {"m": 4}, SUE),
            ]))
        ugm.timeout = 20.0
        assert ugm.get_user_resources("olga") == {"m": 1}
        assert ugm.get_group_resources("ops") == {"m": 1}
    assert ugm.get_user_resources("sue") == {"m": 1}
    assert ugm.get_group_resources("dev") == {"m": 1}
    assert ugm.apply_batch([UsageDecrease("root.a", "olga-1", {"m": 1}, OPS, True),
                            UsageDecrease("root.a", "sue-0", {"m": 1}, SUE, True)]) == [None, None]
    _drained(ugm)


@pytest.mark.timeout(60)
def test_a_held_batch_leaves_its_emptied_trackers_idle_for_the_manager_to_retire(
    start_ugm: Any,
) -> None:
    """The removals of a batch empty three users and two groups: no report and no retirement
    on the way (the trackers stay listed, marked idle, so reusing them costs nothing); the next
    view retires them all, and a batch that uses them before that revives nothing."""
    ugm: UserGroupManager = start_ugm(TWO_GROUPS)
    adds = [UsageIncrease("root.a", f"{u.user}-1", {"m": 1}, u) for u in (SUE, BOB, OPS)]
    removals = [UsageDecrease(c.queue_path, c.application_id, c.usage, c.user, True)
                for c in adds]
    assert all(r is not None and r.ok for r in _off_main(lambda: ugm.apply_batch(adds)))
    manager = ugm._manager
    assert manager is not None
    trackers = {**manager.users, **manager.groups}
    _off_main(lambda: ugm.apply_batch(removals))
    assert {**manager.users, **manager.groups} == trackers and manager.retired == 0
    assert all(t.idle_at == t.routed == t.handled for t in trackers.values())
    assert all(r is not None and r.ok for r in _off_main(lambda: ugm.apply_batch(adds)))
    assert {**manager.users, **manager.groups} == trackers and manager.retired == 0
    _off_main(lambda: ugm.apply_batch(removals))
    assert ugm.stats()["retired"] == 5
    assert manager.users == manager.groups == {}
    _drained(ugm)


@pytest.mark.timeout(60)
def test_a_batch_takes_its_turn_at_a_group_another_batch_holds(
    start_ugm: Any, held_by_another_batch: Any, turn_queued: threading.Event,
) -> None:
    """Another caller's batch holds group dev: this batch decides olga's items (group ops) at
    once, then waits for dev's turn and decides sue's items in her order once dev is let go;
    counts stay true and everything drains."""
    from quotactor.actors.runtime import idle

    ugm: UserGroupManager = start_ugm(TWO_GROUPS)
    assert ugm.increase_tracked_resource("root.a", "sue-0", {"m": 1}, SUE)
    dev = ugm._manager.groups["dev"]  # type: ignore[union-attr]
    holder, release = held_by_another_batch([dev])
    with ThreadPoolExecutor(1) as executor:
        waiting = executor.submit(ugm.apply_batch, [
            UsageIncrease("root.a", "olga-1", {"m": 2}, OPS),
            UsageIncrease("root.a", "sue-1", {"m": 3}, SUE),
            UsageDecrease("root.a", "sue-0", {"m": 1}, SUE, True),
            UsageIncrease("root.a", "sue-2", {"m": 98}, SUE),
        ])
        assert turn_queued.wait(WAIT)
        assert ugm.get_group_resources("ops") == {"m": 2}  # decided before the wait
        assert not waiting.done()
        release.set()
        assert holder.result(WAIT) == [0]
        results = waiting.result(WAIT)
    assert [None if r is None else r.ok for r in results] == [True, True, None, False]
    assert ugm.get_user_resources("sue") == {"m": 3}
    assert ugm.get_group_resources("dev") == {"m": 3}
    assert idle(dev)
    assert ugm.apply_batch([UsageDecrease("root.a", "olga-1", {"m": 2}, OPS, True),
                            UsageDecrease("root.a", "sue-1", {"m": 3}, SUE, True)]) == [None, None]
    _drained(ugm)


@pytest.mark.timeout(120)
def test_batches_taking_turns_at_each_others_groups_keep_every_invariant(
    start_ugm: Any, run_concurrently: Any, shaken: None,
) -> None:
    """Six callers' batches over users of four groups (each batch names several, in random
    order): they wait for each other's groups in turn, in one order, so none waits for ever
    (the test's timeout) and every item is answered, and at the end every user's and group's
    usage is the sum of its live allocations, no limit is exceeded, and nothing is left
    claimed or in flight."""
    from quotactor.actors.runtime import idle

    groups = [f"g{i}" for i in range(4)]
    table = LimitTable({"root": [L(users=("*",), max_resources={"m": 30}),
                                 L(groups=tuple(groups), max_resources={"m": 80})]})
    ugm = start_ugm(table)
    users = [UserGroup(f"u{i}", [groups[i % 4]]) for i in range(16)]
    held: list[dict[str, int]] = [{} for _ in range(6)]

    def worker(seed: int) -> None:
        rng = random.Random(seed)
        mine: list[UsageIncrease] = []
        for _ in range(60):
            releasing = [mine.pop(rng.randrange(len(mine))) for _ in range(min(len(mine), 4))]
            adding = [UsageIncrease("root.a", f"{seed}-{rng.random()}",
                                    {"m": rng.randint(1, 9)}, rng.choice(users))
                      for _ in range(8)]
            batch: list[UsageIncrease | UsageDecrease] = [
                UsageDecrease(c.queue_path, c.application_id, c.usage, c.user, True)
                for c in releasing] + adding
            rng.shuffle(batch)
            results = ugm.apply_batch(batch)
            for c in releasing:
                held[seed][c.user.user] -= c.usage["m"]
            for c, result in zip(batch, results, strict=True):
                if isinstance(c, UsageIncrease) and result is not None and result.ok:
                    mine.append(c)
                    held[seed][c.user.user] = held[seed].get(c.user.user, 0) + c.usage["m"]

    run_concurrently([partial(worker, s) for s in range(6)])
    for user in users:
        want = sum(h.get(user.user, 0) for h in held)
        assert (ugm.get_user_resources(user.user) or {}).get("m", 0) == want <= 30
    for g in groups:
        want = sum(h.get(u.user, 0) for h in held for u in users if u.groups[0] == g)
        assert (ugm.get_group_resources(g) or {}).get("m", 0) == want <= 80
    assert ugm.stats()["inflight"] == 0
    manager = ugm._manager
    assert all(idle(ref) for ref in [manager, *manager.users.values(), *manager.groups.values()])

"""A caller interrupted by a signal handler's exception at random moments, over many seeds.

Python raises a signal handler's exception (Ctrl-C's `KeyboardInterrupt`, an alarm's) on the
main thread between any two bytecodes. Here an interval timer fires at a random moment of each
call (increases, decreases, removals, config switches, snapshots), and its handler raises.
After every interrupt the next call must answer within the caller's timeout; at the end the
usage must be consistent (every parent queue is the sum of its children, every group the sum of
its members, nothing negative, the limits reported are the ones enforced), everything must
drain to nothing, and `stop()` must return with no thread left (the `start_ugm` fixture checks
that).
"""

from __future__ import annotations

import random
import signal
from collections.abc import Callable
from functools import partial
from typing import Any

import pytest

from quotactor import UsageIncrease, UserGroup, UserGroupManager
from quotactor.core.limits import LimitEntry, LimitTable

pytestmark = pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs setitimer")

TIMEOUT = 10.0
"""The caller's timeout: far above the milliseconds an answer takes, so that only a claim an
interrupt left behind (it holds its tracker for good) makes a call miss it."""


def table(user_cap: int) -> LimitTable:
    return LimitTable({
        "root": [LimitEntry(groups=("g0",), max_resources={"m": 400}),
                 LimitEntry(groups=("g1",), max_resources={"m": 400}),
                 LimitEntry(users=("*",), max_resources={"m": user_cap})],
        "root.a": [LimitEntry(users=("*",), max_applications=2)],
    })


TABLE = table(60)
TABLES = [table(cap) for cap in (50, 60, 70)]  # switched by interrupted update_config calls
USERS = [UserGroup(f"u{i}", [f"g{i % 2}"]) for i in range(6)]
LEAVES = ["root.a.x", "root.a.y", "root.b.z"]  # usage only on leaves: parents = sum of children


def leaf_usage(ugm: UserGroupManager, user: UserGroup, queue: str) -> int:
    snapshot = ugm.user_usage(user.user)
    if snapshot is None:
        return 0
    node = snapshot["queues"]
    for depth in range(2, queue.count(".") + 2):
        path = ".".join(queue.split(".")[:depth])
        node = next((c for c in node.get("children", []) if c["queuePath"] == path), None)
        if node is None:
            return 0
    return int(node.get("resourceUsage", {}).get("m", 0))


def check_tree(node: dict[str, Any]) -> None:
    usage = node.get("resourceUsage", {})
    assert all(v >= 0 for v in usage.values()), node
    children = node.get("children", [])
    if children:
        total: dict[str, int] = {}
        running: set[str] = set()
        for child in children:
            check_tree(child)
            for k, v in child.get("resourceUsage", {}).items():
                total[k] = total.get(k, 0) + v
            running |= set(child.get("runningApplications", []))
        assert usage == total, node
        assert set(node.get("runningApplications", [])) == running, node


def check_consistent(ugm: UserGroupManager) -> None:
    users = ugm.users_usage()
    groups = {g["groupName"]: g for g in ugm.groups_usage()}
    members: dict[str, dict[str, int]] = {}
    running: dict[str, set[str]] = {}
    for snap in users:
        check_tree(snap["queues"])
        for app, group in snap.get("groups", {}).items():
            running.setdefault(group, set()).add(app)
        group = f"g{int(snap['userName'][1:]) % 2}"
        for k, v in snap["queues"].get("resourceUsage", {}).items():
            members.setdefault(group, {})[k] = members.setdefault(group, {}).get(k, 0) + v
    for name, snap in groups.items():
        check_tree(snap["queues"])
        assert snap["queues"].get("resourceUsage", {}) == members.get(name, {}), name
        assert set(snap.get("applications", [])) == running.get(name, set()), name
    assert ugm.stats()["inflight"] == 0


def answers_in_time(ugm: UserGroupManager, user: UserGroup) -> None:
    """A call on the user's trackers answers (it raises `OperationTimeout` if it does not
    within the caller's timeout)."""
    ugm.headroom("root.a.x", f"{user.user}-probe", user)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("seed", range(24))
def test_interrupted_callers_leave_nothing_claimed_and_usage_consistent(
    seed: int, start_ugm: Any, alarm: Any,
) -> None:
    rng = random.Random(seed)
    ugm: UserGroupManager = start_ugm(TABLE)
    ugm.timeout = TIMEOUT
    apps = {user.user: (f"{user.user}-app", rng.choice(LEAVES)) for user in USERS}
    try:
        for _ in range(60):
            user = rng.choice(USERS)
            app, queue = apps[user.user]
            have = leaf_usage(ugm, user, queue)
            roll = rng.random()
            op: Callable[[], Any]
            if roll < 0.08:
                op = partial(ugm.update_config, rng.choice(TABLES))
            elif roll < 0.14:
                op = ugm.users_usage
            elif roll < 0.22:  # a batch: every idle tracker held at once, on the relay
                op = partial(ugm.apply_batch, [
                    UsageIncrease(apps[u.user][1], apps[u.user][0], {"m": rng.randint(1, 5)}, u)
                    for u in rng.sample(USERS, 3)])
            elif roll < 0.55 or have == 0:
                op = partial(ugm.increase_tracked_resource, queue, app,
                             {"m": rng.randint(1, 9)}, user)
            elif roll < 0.85:
                op = partial(ugm.decrease_tracked_resource, queue, app,
                             {"m": rng.randint(1, have)}, user)
            else:
                op = partial(ugm.decrease_tracked_resource, queue, app, {"m": have}, user,
                             remove_app=True)
            alarm.attempt(op, rng.uniform(1e-6, 400e-6))
            answers_in_time(ugm, user)
        signal.setitimer(signal.ITIMER_REAL, 0)
        check_consistent(ugm)
        # the limits reported are the limits enforced, whatever switch an interrupt cut short
        cap = ugm.limit_table.user_limit("root", "nobody").max_resources["m"]
        assert ugm.headroom("root", "probe", UserGroup("nobody")) == {"m": cap}
        for user in USERS:
            app, queue = apps[user.user]
            ugm.decrease_tracked_resource(queue, app, {"m": leaf_usage(ugm, user, queue)}, user,
                                          remove_app=True)
        assert ugm.users_usage() == []
        assert [g for g in ugm.groups_usage() if "resourceUsage" in g["queues"]] == []
        stats = ugm.stats()
        assert (stats["users"], stats["groups"], stats["inflight"]) == (0, 0, 0)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    ugm.stop()  # raises OperationTimeout if an actor does not stop within the caller's timeout
    assert alarm.fired > 0  # about 20 per seed on an idle 2-core machine

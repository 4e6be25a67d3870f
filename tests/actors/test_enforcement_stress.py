"""Races against tight limits, and config flips during increases."""

from __future__ import annotations

import random
import threading
from collections import Counter
from functools import partial

import pytest

from quotactor import UserGroup
from quotactor.core.limits import LimitEntry as L
from quotactor.core.limits import LimitTable

TIGHT = LimitTable({
    "root": [L(users=("*",), max_resources={"m": 60}),
             L(groups=("g0", "g1"), max_resources={"m": 150}, max_applications=12)],
    "root.a": [L(users=("*",), max_resources={"m": 40}, max_applications=3),
               L(groups=("g0",), max_resources={"m": 90})],
    "root.a.x": [L(users=("u0", "u1"), max_resources={"m": 25})],
})
QUEUES = ["root.a.x", "root.a.y", "root.b", "root.a"]


def _violations(node: dict) -> list[str]:
    bad = []
    usage = node.get("resourceUsage", {})
    for name, cap in node.get("maxResources", {}).items():
        if usage.get(name, 0) > cap:
            bad.append(f"{node['queuePath']} {name} {usage.get(name)} > {cap}")
    cap_apps = node.get("maxApplications")
    if cap_apps and len(node.get("runningApplications", [])) > cap_apps:
        bad.append(f"{node['queuePath']} apps > {cap_apps}")
    for child in node.get("children", []):
        bad.extend(_violations(child))
    return bad


@pytest.mark.timeout(120)
def test_racing_increases_never_break_a_limit_and_usage_balances(
    start_ugm, run_concurrently, shaken,
) -> None:
    ugm = start_ugm(TIGHT)
    users = [UserGroup(f"u{i}", [f"g{i % 3}"]) for i in range(6)]
    ledgers: list[Counter] = [Counter() for _ in range(8)]
    refused = [0] * 8
    seen: list[str] = []

    def monitor(stop: threading.Event) -> None:
        while not stop.is_set():
            for snap in ugm.users_usage() + ugm.groups_usage():
                seen.extend(_violations(snap["queues"]))

    def worker(seed: int) -> None:
        rng = random.Random(seed)
        held: list[tuple[str, str, UserGroup, int]] = []
        for i in range(400):
            if held and rng.random() < 0.4:
                queue, app, user, amount = held.pop(rng.randrange(len(held)))
                ugm.decrease_tracked_resource(queue, app, {"m": amount}, user, remove_app=True)
                ledgers[seed][user.user] -= amount
                continue
            user = rng.choice(users)
            queue, app, amount = rng.choice(QUEUES), f"w{seed}-{i}", rng.randint(1, 12)
            if ugm.increase_tracked_resource(queue, app, {"m": amount}, user):
                held.append((queue, app, user, amount))
                ledgers[seed][user.user] += amount
            else:
                refused[seed] += 1

    run_concurrently([partial(worker, s) for s in range(8)], background=[monitor])
    assert seen == [], seen[:5]
    assert sum(refused) > 100, "limits were not tight enough to race"
    total = sum(ledgers, Counter())
    for user in users:
        got = ugm.get_user_resources(user.user)
        assert (got or {}).get("m", 0) == total[user.user], user.user
    for snap in ugm.users_usage() + ugm.groups_usage():
        assert _violations(snap["queues"]) == []


@pytest.mark.timeout(120)
def test_no_decision_mixes_limits_from_two_configs(start_ugm, run_concurrently, shaken) -> None:
    """Each table alone refuses every increase; only a user/group mix would accept one."""
    user_tight = LimitTable({"root.a": [L(users=("*",), max_resources={"m": 4}),
                                        L(groups=("dev",), max_resources={"m": 10**6})]})
    group_tight = LimitTable({"root.a": [L(users=("*",), max_resources={"m": 10**6}),
                                         L(groups=("dev",), max_resources={"m": 4})]})
    ugm = start_ugm(user_tight)
    flips = [0]

    def flipper(stop: threading.Event) -> None:
        while not stop.is_set():
            ugm.update_config(group_tight if flips[0] % 2 == 0 else user_tight)
            flips[0] += 1

    accepted = []

    def worker(seed: int) -> None:
        """At least 300 increases, and on until the flipper has switched 30 times."""
        i = 0
        while i < 300 or flips[0] < 30:
            user = UserGroup(f"u{seed}-{i % 7}", ["dev"])
            if ugm.increase_tracked_resource("root.a", f"a{seed}-{i}", {"m": 5}, user):
                accepted.append((seed, i))
            i += 1

    run_concurrently([partial(worker, s) for s in range(4)], background=[flipper])
    assert flips[0] >= 30, "the config must flip while increases run"
    assert accepted == []

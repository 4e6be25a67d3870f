"""Seeded concurrency stress: many threads, shared users and groups, constant retirement."""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass, field
from functools import partial

import pytest

from quotactor import UserGroup
from quotactor.actors import manager as manager_module
from quotactor.core.limits import LimitEntry, LimitTable
from quotactor.core.queue_path import ancestors, parse_queue_path

QUEUES = ["root", "root.a", "root.a.x", "root.a.y", "root.b", "root.b.z.w"]
GROUPS = ["g0", "g1", "g2", "g3", "g4"]
TABLE = LimitTable({
    "root.a": [LimitEntry(groups=("g1", "g2"), max_applications=10_000)],
    "root.b": [LimitEntry(groups=("*",), max_applications=10_000)],
    "root": [LimitEntry(groups=("g0",), max_applications=10_000)],
})


@dataclass
class App:
    user: UserGroup
    queue: str
    usage: dict[str, int] = field(default_factory=dict)
    running: bool = False


def _worker(ugm, seed: int, users: list[UserGroup], apps: dict[str, App]) -> None:
    rng = random.Random(seed)
    for step in range(700):
        name = f"t{seed}-app{rng.randrange(12)}"
        app = apps.get(name)
        if app is None or (not app.running and rng.random() < 0.5):
            app = apps[name] = App(rng.choice(users), rng.choice(QUEUES))
        roll = rng.random()
        if roll < 0.55 or not app.running:
            delta = {"memory": rng.randint(1, 100), "vcore": rng.randint(0, 3) * 100}
            assert ugm.increase_tracked_resource(app.queue, name, delta, app.user)
            app.running = True
            for k, v in delta.items():
                app.usage[k] = app.usage.get(k, 0) + v
        elif roll < 0.8:
            part = {k: rng.randint(0, v) for k, v in app.usage.items()}
            ugm.decrease_tracked_resource(app.queue, name, part, app.user)
            for k, v in part.items():
                app.usage[k] -= v
        else:
            ugm.decrease_tracked_resource(app.queue, name, app.usage, app.user,
                                          remove_app=True)
            app.usage, app.running = {}, False
        if step % 97 == 0:
            ugm.users_usage()


def _expected(apps: dict[str, App], key) -> dict[str, dict[str, tuple[dict, set]]]:
    """owner -> queue path -> (usage, running apps), summed over live apps."""
    out: dict[str, dict[str, tuple[dict, set]]] = defaultdict(dict)
    for name, app in apps.items():
        if not app.running:
            continue
        owner = key(name, app)
        if owner is None:
            continue
        for path in ancestors(parse_queue_path(app.queue)):
            usage, running = out[owner].setdefault(path, ({}, set()))
            for k, v in app.usage.items():
                if v:
                    usage[k] = usage.get(k, 0) + v
            running.add(name)
    return out


def _flatten(node: dict, into: dict[str, tuple[dict, set]]) -> None:
    if "resourceUsage" in node or "runningApplications" in node:
        into[node["queuePath"]] = (node.get("resourceUsage", {}),
                                   set(node.get("runningApplications", [])))
    for child in node.get("children", []):
        _flatten(child, into)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("warm", [0, 2, manager_module.WARM_TRACKERS])
def test_concurrent_updates_with_cleanup_keep_usage_equal_to_live_allocations(
    start_ugm, monkeypatch, run_concurrently, warm: int, shaken: None,
) -> None:
    """With no warm trackers (every retired tracker stopped), a few (reuse and eviction), and
    the default (reuse only)."""
    monkeypatch.setattr(manager_module, "WARM_TRACKERS", warm)
    ugm = start_ugm(TABLE)
    rng = random.Random(7)
    users = [UserGroup(f"u{i}", rng.sample(GROUPS, rng.randint(0, 2))) for i in range(24)]
    apps_per_thread: list[dict[str, App]] = [{} for _ in range(6)]
    run_concurrently([partial(_worker, ugm, seed, users, apps_per_thread[seed])
                      for seed in range(6)])

    apps = {name: app for part in apps_per_thread for name, app in part.items()}
    links = {}
    for snap in ugm.users_usage():
        links.update(snap.get("groups", {}))
    for name, app in apps.items():
        if app.running:
            want = TABLE.resolve_group(ancestors(parse_queue_path(app.queue)), app.user.groups)
            assert links.get(name) == want, name

    want_users = _expected(apps, lambda _, a: a.user.user)
    got_users = {}
    for snap in ugm.users_usage():
        flat: dict[str, tuple[dict, set]] = {}
        _flatten(snap["queues"], flat)
        if flat:
            got_users[snap["userName"]] = flat
    assert got_users == want_users

    want_groups = _expected(apps, lambda name, _: links.get(name))
    got_groups = {}
    for snap in ugm.groups_usage():
        flat = {}
        _flatten(snap["queues"], flat)
        if flat or snap.get("applications"):
            got_groups[snap["groupName"]] = flat
    assert got_groups == want_groups

    stats = ugm.stats()
    assert stats["inflight"] == 0
    assert stats["users"] == len(want_users), "an empty user tracker was not retired"
    assert stats["groups"] == len(want_groups), "an empty group tracker was not retired"
    assert stats["retired"] > 0, "the stress test should exercise retirement"

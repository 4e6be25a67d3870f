"""Known-user calls (`quotactor.actors.known`): a single change of a user whose tracker the
manager lists skips the manager (an allocation, a release, a new application's start, a
removal), and stays race-free against retirement."""

from __future__ import annotations

import random
import threading
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

import pytest

from quotactor import UserGroup, UserGroupManager
from quotactor.actors import manager as manager_module
from quotactor.actors.holding import holding
from quotactor.actors.known import NOT_KNOWN, apply_known
from quotactor.actors.manager import ManagerActor
from quotactor.core.decision import ACCEPTED
from quotactor.core.limits import LimitEntry, LimitTable
from quotactor.core.queue_path import ancestors, parse_queue_path
from quotactor.core.resources import Resource

SUE = UserGroup("sue", ["dev"])
TABLE = LimitTable({"root": [LimitEntry(groups=("dev",), max_resources={"m": 100})]})


def _off_main(work: Callable[[], Any]) -> Any:
    """Run `work` on a worker thread (the main thread never runs handlers inline)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(work).result(timeout=30)


def _count_routes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many items the manager routes from now on (one entry per `Route` or single
    call's item)."""
    routes: list[int] = []
    original, original_one = ManagerActor._route, ManagerActor.route_held

    def counted(self: ManagerActor, msg: Any) -> Any:
        routes.append(len(msg.items))
        return original(self, msg)

    def counted_one(self: ManagerActor, item: Any) -> Any:
        routes.append(1)
        return original_one(self, item)

    monkeypatch.setattr(ManagerActor, "_route", counted)
    monkeypatch.setattr(ManagerActor, "route_held", counted_one)
    return routes


@pytest.mark.timeout(60)
def test_a_listed_users_calls_skip_the_manager(
    start_ugm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first start lists the trackers through the manager; the allocations, releases,
    the removal and a second application's start and removal do not go through it, and they
    are enforced as routed ones are (the group's limit refuses the one too many)."""
    ugm: UserGroupManager = start_ugm(TABLE)
    routes = _count_routes(monkeypatch)

    def life() -> list[Any]:
        got: list[Any] = [ugm.increase_tracked_resource("root.a", "app-1", {"m": 10}, SUE)]
        got.append(ugm.increase_tracked_resource("root.a", "app-1", {"m": 80}, SUE))
        got.append(ugm.increase_tracked_resource("root.a", "app-1", {"m": 20}, SUE))  # > 100
        got.append(ugm.increase_tracked_resource("root.b", "app-2", {"m": 20}, SUE))  # > 100
        got.append(ugm.increase_tracked_resource("root.b", "app-2", {"m": 5}, SUE))
        ugm.decrease_tracked_resource("root.a", "app-1", {"m": 30}, SUE)
        got.append(ugm.get_user_resources("sue"))
        got.append(ugm.get_group_resources("dev"))
        ugm.decrease_tracked_resource("root.b", "app-2", {"m": 5}, SUE, remove_app=True)
        ugm.decrease_tracked_resource("root.a", "app-1", {"m": 60}, SUE, remove_app=True)
        return got

    assert _off_main(life) == [True, True, False, False, True, Resource({"m": 65}),
                               Resource({"m": 65})]
    assert routes == [1], "only the first start went through the manager"
    stats = ugm.stats()
    assert stats["users"] == stats["groups"] == stats["links"] == 0


@pytest.mark.timeout(60)
def test_a_refused_start_of_a_listed_user_links_nothing(start_ugm: Any) -> None:
    """A new application refused without the manager leaves no link behind; an accepted one
    is linked to the group the table chooses, and counts for it until removed."""
    ugm: UserGroupManager = start_ugm(TABLE)
    assert _off_main(lambda: ugm.increase_tracked_resource("root.a", "app-1", {"m": 90}, SUE))
    assert ugm.stats()["links"] == 1
    assert not _off_main(lambda: ugm.increase_tracked_resource("root.a", "app-2", {"m": 20},
                                                               SUE))
    assert ugm.stats()["links"] == 1
    assert _off_main(lambda: ugm.increase_tracked_resource("root.a", "app-3", {"m": 10}, SUE))
    assert ugm.stats()["links"] == 2
    [snap] = ugm.users_usage()
    assert snap["groups"] == {"app-1": "dev", "app-3": "dev"}
    assert ugm.get_group_resources("dev") == Resource({"m": 100})


@pytest.mark.timeout(60)
def test_a_start_on_idle_trackers_keeps_them_from_retirement(
    start_ugm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Trackers left idle (listed, empty) by a removal take a new application's start without
    the manager; it marks them busy again, so the next sweep retires neither and the usage
    stays counted."""
    ugm: UserGroupManager = start_ugm(TABLE)
    manager = ugm._manager
    assert manager is not None
    _off_main(lambda: ugm.increase_tracked_resource("root.a", "app-1", {"m": 1}, SUE))
    _off_main(lambda: ugm.decrease_tracked_resource("root.a", "app-1", {"m": 1}, SUE, True))
    user, group = manager.users["sue"], manager.groups["dev"]
    assert user.idle_at == user.handled == user.routed and group.idle_at == group.handled
    routes = _count_routes(monkeypatch)
    assert _off_main(lambda: ugm.increase_tracked_resource("root.a", "app-2", {"m": 7}, SUE))
    assert routes == []
    stats = ugm.stats()  # a view: the manager retires every idle tracker first
    assert stats["users"] == stats["groups"] == 1 and stats["retired"] == 0
    assert ugm.get_user_resources("sue") == ugm.get_group_resources("dev") == Resource({"m": 7})
    _off_main(lambda: ugm.decrease_tracked_resource("root.a", "app-2", {"m": 7}, SUE, True))
    stats = ugm.stats()
    assert stats["users"] == stats["groups"] == 0 and stats["retired"] == 2


@pytest.mark.timeout(60)
def test_a_busy_group_goes_through_the_manager(
    start_ugm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A group claimed by another thread: the allocation is routed (and decided by message
    once the group is free)."""
    ugm: UserGroupManager = start_ugm(TABLE)
    assert _off_main(lambda: ugm.increase_tracked_resource("root.a", "app-1", {"m": 1}, SUE))
    routes = _count_routes(monkeypatch)
    group = ugm._manager.groups["dev"]  # type: ignore[union-attr]
    claimed, release = threading.Event(), threading.Event()

    def hold() -> None:
        holding([group], lambda held: (claimed.set(), release.wait(10)))

    with ThreadPoolExecutor(2) as pool:
        holder = pool.submit(hold)
        assert claimed.wait(10)
        pending = pool.submit(ugm.increase_tracked_resource, "root.a", "app-1", {"m": 1}, SUE)
        release.set()
        assert pending.result(timeout=30)
        holder.result(timeout=30)
    assert routes == [1]
    assert ugm.get_group_resources("dev") == Resource({"m": 2})


@pytest.mark.timeout(60)
def test_a_retired_tracker_or_a_view_that_disagrees_is_never_decided_without_the_manager(
    start_ugm: Any,
) -> None:
    """A caller that finds a tracker retired after it looked it up gets NOT_KNOWN and changes
    nothing; so does one that finds a route to the tracker under way, the manager's link of
    the application missing, the group not listed, or the manager's views lock held."""
    ugm: UserGroupManager = start_ugm(TABLE)
    manager = ugm._manager
    assert manager is not None
    usage = Resource({"m": 1})

    def known(app: str) -> Any:
        return _off_main(lambda: apply_known(manager, (("root", "a"), app, usage, SUE)))

    _off_main(lambda: ugm.increase_tracked_resource("root.a", "app-1", {"m": 1}, SUE))
    tracker = manager.users["sue"]
    _off_main(lambda: ugm.decrease_tracked_resource("root.a", "app-1", {"m": 1}, SUE, True))
    ugm.stats()  # a view: the manager retires every idle tracker first
    assert "sue" not in manager.users and manager.warm_users["sue"] is tracker
    manager.users["sue"] = tracker  # as looked up by a caller before its retirement
    assert known("app-1") is NOT_KNOWN
    del manager.users["sue"]
    assert tracker.state.is_empty()

    _off_main(lambda: ugm.increase_tracked_resource("root.a", "app-2", {"m": 1}, SUE))
    assert manager.users["sue"] is tracker and tracker.idle_at < tracker.handled  # revived
    links = manager.user_states["sue"].links
    assert links is not None
    link = links.pop("app-2")  # views that disagree
    assert known("app-2") is NOT_KNOWN
    links["app-2"] = link
    tracker.routed += 1  # as while a route to it is under way
    assert known("app-2") is NOT_KNOWN
    assert known("app-3") is NOT_KNOWN
    tracker.routed -= 1
    group = manager.groups.pop("dev")  # as a group retired after the caller looked it up
    group_state = manager.group_states.pop("dev")
    assert known("app-2") is NOT_KNOWN
    manager.groups["dev"], manager.group_states["dev"] = group, group_state
    with manager.views_lock:  # the manager (or another caller) reads the views
        assert known("app-2") is NOT_KNOWN
    assert ugm.get_user_resources("sue") == Resource({"m": 1})
    assert known("app-2") == ACCEPTED  # and with every view agreeing, it is decided
    assert known("app-3") == ACCEPTED
    assert ugm.get_user_resources("sue") == ugm.get_group_resources("dev") == Resource({"m": 3})


# -- the stress test -------------------------------------------------------------------------

QUEUES = ["root.a", "root.a.x", "root.b", "root.b.y.z"]
GROUPS = ["g0", "g1", "g2"]
STRESS_TABLE = LimitTable({
    "root": [LimitEntry(users=("*",), max_resources={"m": 400}),
             LimitEntry(groups=("g0", "g1"), max_resources={"m": 700})],
    "root.a": [LimitEntry(groups=("*",), max_resources={"m": 500})],
})
USER_LIMIT, GROUP_LIMIT, WILDCARD_A = 400, 700, 500


def _worker(ugm: UserGroupManager, seed: int, users: list[UserGroup],
            live: dict[str, tuple[UserGroup, str, list[int]]]) -> int:
    """Start applications, allocate and release on them (most calls: known-user routing), and
    remove them (emptying users and groups: retirement). `live`: app -> (user, queue, sizes
    of its accepted allocations). Returns the number of refusals."""
    rng = random.Random(seed)
    refused = 0
    for step in range(2500):
        if not live or (len(live) < 3 and rng.random() < 0.3):
            name = f"t{seed}-app{step}"  # never reused: a refused start keeps its id bound
            user, queue, size = rng.choice(users), rng.choice(QUEUES), rng.randint(1, 40)
            if ugm.increase_tracked_resource(queue, name, {"m": size}, user):
                live[name] = (user, queue, [size])
            else:
                refused += 1
            continue
        name = rng.choice(sorted(live))
        user, queue, sizes = live[name]
        roll = rng.random()
        if roll < 0.5:
            size = rng.randint(1, 60)
            if ugm.increase_tracked_resource(queue, name, {"m": size}, user):
                sizes.append(size)
            else:
                refused += 1
        elif roll < 0.85 and len(sizes) > 1:
            ugm.decrease_tracked_resource(queue, name, {"m": sizes.pop()}, user)
        else:
            ugm.decrease_tracked_resource(queue, name, {"m": sum(sizes)}, user, remove_app=True)
            del live[name]
        if step % 97 == 0:
            ugm.stats()  # a view: every idle tracker retired, while the others run
    return refused


def _usage_by_path(node: dict[str, Any], into: dict[str, int]) -> None:
    used = node.get("resourceUsage", {}).get("m", 0)
    if used:
        into[node["queuePath"]] = used
    for child in node.get("children", []):
        _usage_by_path(child, into)


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.parametrize("warm", [0, 2, manager_module.WARM_TRACKERS])
def test_known_user_calls_racing_retirement_keep_every_count_true(
    start_ugm: Any, monkeypatch: pytest.MonkeyPatch, run_concurrently: Any, warm: int
) -> None:
    """Eight callers on six users and three groups: applications started, allocated and
    released on, removed (without the manager when the trackers are listed and idle; the users
    and groups they empty are idle, retired by the views (and, with `SWEEP_AT` at 2, by the
    sweep on the way) and revived all along, or stopped when `warm` is 0 or 2). At the end:
    every user's and group's usage is the sum of its live allocations on every level, no limit
    is exceeded, nothing empty is left live, every retired tracker is empty and idle, and both
    paths were taken."""
    monkeypatch.setattr(manager_module, "WARM_TRACKERS", warm)
    monkeypatch.setattr(manager_module, "SWEEP_AT", 2)
    routes = _count_routes(monkeypatch)
    ugm: UserGroupManager = start_ugm(STRESS_TABLE)
    rng = random.Random(11)
    users = [UserGroup(f"u{i}", rng.sample(GROUPS, rng.randint(0, 2))) for i in range(6)]
    lives: list[dict[str, tuple[UserGroup, str, list[int]]]] = [{} for _ in range(8)]
    refused = run_concurrently([partial(_worker, ugm, seed, users, lives[seed])
                                for seed in range(8)], timeout=200)

    live = {name: app for part in lives for name, app in part.items()}
    links: dict[str, str | None] = {}
    for snap in ugm.users_usage():
        links.update(snap.get("groups", {}))
    want_users: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    want_groups: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for name, (user, queue, sizes) in live.items():
        group = links.get(name)
        assert group == STRESS_TABLE.resolve_group(
            ancestors(parse_queue_path(queue)), user.groups), name
        for path in ancestors(parse_queue_path(queue)):
            want_users[user.user][path] += sum(sizes)
            if group is not None:
                want_groups[group][path] += sum(sizes)

    got_users: dict[str, dict[str, int]] = {}
    for snap in ugm.users_usage():
        got_users[snap["userName"]] = flat = {}
        _usage_by_path(snap["queues"], flat)
    got_groups: dict[str, dict[str, int]] = {}
    for snap in ugm.groups_usage():
        got_groups[snap["groupName"]] = flat = {}
        _usage_by_path(snap["queues"], flat)
    assert got_users == {u: dict(paths) for u, paths in want_users.items()}, "a lost update"
    assert {g: paths for g, paths in got_groups.items() if paths} == {
        g: dict(paths) for g, paths in want_groups.items()}, "a lost update"

    for paths in got_users.values():
        assert paths.get("root", 0) <= USER_LIMIT
    for group, paths in got_groups.items():
        if group in ("g0", "g1"):
            assert paths.get("root", 0) <= GROUP_LIMIT
        assert paths.get("root.a", 0) <= WILDCARD_A

    stats = ugm.stats()
    assert stats["inflight"] == 0
    assert stats["users"] == len({u.user for u, _, _ in live.values()}), "an empty user left"
    assert stats["groups"] == len(want_groups), "an empty group left live"
    assert stats["retired"] > 0, "the test should exercise retirement"
    manager = ugm._manager
    assert manager is not None
    for tracker in [*manager.warm_users.values(), *manager.warm_groups.values()]:
        assert tracker.idle_at == tracker.handled == tracker.routed
        assert tracker.state.is_empty()
    routed, calls = sum(routes), 8 * 2500  # each step of a worker is one call
    assert 0 < routed < calls - 1000, routed
    assert sum(refused) > 0, "the limits should refuse some increases"

"""Usage tracking through the actors (seed 000): creation, routing, links, cleanup."""

from __future__ import annotations

import pytest

from quotactor import InvalidRequest, Resource, UserGroup
from quotactor.actors.runtime import live_actors as runtime_live_actors
from quotactor.core.limits import LimitEntry
from quotactor.ugm import UserGroupManager

GB = 10**9
TESTER_AT_ROOT_TEST = {"root.test": [LimitEntry(groups=("tester",), max_applications=10)]}


def test_the_seed_example_gives_the_documented_rest_json(start_ugm) -> None:
    ugm = start_ugm(TESTER_AT_ROOT_TEST)
    user1 = UserGroup("user1", ["tester"])
    six = {"memory": 6 * GB, "vcore": 6000}
    assert ugm.increase_tracked_resource("root.default", "app1", six, user1)
    assert ugm.increase_tracked_resource("root.test", "app2", six, user1)
    assert ugm.users_usage() == [{
        "userName": "user1",
        "groups": {"app2": "tester"},
        "queues": {
            "queuePath": "root",
            "resourceUsage": {"memory": 12 * GB, "vcore": 12000},
            "runningApplications": ["app1", "app2"],
            "children": [
                {"queuePath": "root.default", "resourceUsage": six,
                 "runningApplications": ["app1"]},
                {"queuePath": "root.test", "resourceUsage": six,
                 "runningApplications": ["app2"]},
            ],
        },
    }]
    assert ugm.groups_usage() == [{
        "groupName": "tester",
        "applications": ["app2"],
        "queues": {
            "queuePath": "root",
            "resourceUsage": six,
            "runningApplications": ["app2"],
            "children": [{"queuePath": "root.test", "resourceUsage": six,
                          "runningApplications": ["app2"], "maxApplications": 10}],
        },
    }]
    assert ugm.user_usage("user1") == ugm.users_usage()[0]
    assert ugm.group_usage("tester") == ugm.groups_usage()[0]
    assert ugm.get_user_resources("user1") == {"memory": 12 * GB, "vcore": 12000}
    assert ugm.get_group_resources("tester") == six


def test_trackers_are_created_on_first_use_and_retired_when_empty(ugm: UserGroupManager) -> None:
    sue = UserGroup("sue", ["dev"])
    assert ugm.get_user_resources("sue") is None
    assert ugm.increase_tracked_resource("root.a.b", "app1", {"memory": 5}, sue)
    assert ugm.stats()["users"] == 1
    ugm.decrease_tracked_resource("root.a.b", "app1", {"memory": 5}, sue)
    assert ugm.user_usage("sue") is not None, "a running app keeps the tracker alive"
    ugm.decrease_tracked_resource("root.a.b", "app1", {}, sue, remove_app=True)
    assert ugm.user_usage("sue") is None
    assert ugm.stats() == {"users": 0, "groups": 0, "retired": 1, "links": 0, "inflight": 0}
    assert ugm.increase_tracked_resource("root.a", "app2", {"memory": 1}, sue)
    assert ugm.get_user_resources("sue") == {"memory": 1}
    assert ugm.user_usage("sue")["queues"]["runningApplications"] == ["app2"]
    assert ugm.stats()["users"] == 1


def test_running_applications_are_counted_per_node_until_removed(ugm: UserGroupManager) -> None:
    sue = UserGroup("sue")
    ugm.increase_tracked_resource("root.a", "app1", {"m": 1}, sue)
    ugm.increase_tracked_resource("root.b", "app2", {"m": 1}, sue)
    ugm.increase_tracked_resource("root.b", "app2", {"m": 1}, sue)
    queues = ugm.user_usage("sue")["queues"]
    assert queues["runningApplications"] == ["app1", "app2"]
    assert [c["runningApplications"] for c in queues["children"]] == [["app1"], ["app2"]]
    ugm.decrease_tracked_resource("root.b", "app2", {"m": 2}, sue, remove_app=True)
    queues = ugm.user_usage("sue")["queues"]
    assert queues["runningApplications"] == ["app1"]
    assert [c["queuePath"] for c in queues["children"]] == ["root.a"]


def test_an_app_keeps_its_group_and_a_removed_app_resolves_again(start_ugm) -> None:
    ugm = start_ugm({
        "root.a": [LimitEntry(groups=("dev", "ops"), max_applications=5)],
        "root": [LimitEntry(groups=("*",), max_applications=5)],
    })
    bob = UserGroup("bob", ["ops", "dev"])
    stranger = UserGroup("zed", ["nobody"])
    loner = UserGroup("amy")
    ugm.increase_tracked_resource("root.a", "app1", {"m": 1}, bob)
    ugm.increase_tracked_resource("root.x", "app2", {"m": 1}, bob)
    ugm.increase_tracked_resource("root.a", "app3", {"m": 1}, stranger)
    ugm.increase_tracked_resource("root.a", "app4", {"m": 1}, loner)
    assert ugm.user_usage("bob")["groups"] == {"app1": "dev", "app2": "*"}
    assert ugm.user_usage("zed")["groups"] == {"app3": "*"}
    assert "groups" not in ugm.user_usage("amy")
    assert ugm.group_usage("*")["applications"] == ["app2", "app3"]
    assert ugm.get_group_resources("*") == {"m": 2}
    assert ugm.get_group_resources("dev") == {"m": 1}


def test_decreases_for_unknown_users_apps_or_paths_are_logged_and_change_nothing(
    ugm: UserGroupManager,
) -> None:
    sue = UserGroup("sue", ["dev"])
    ugm.decrease_tracked_resource("root.a", "app1", {"m": 1}, sue, remove_app=True)
    assert ugm.users_usage() == []
    ugm.increase_tracked_resource("root.a", "app1", {"m": 5}, sue)
    before = ugm.users_usage()
    ugm.decrease_tracked_resource("root.a", "ghost", {"m": 1}, sue, remove_app=True)
    ugm.decrease_tracked_resource("root.zz", "app1", {"m": 1}, sue, remove_app=True)
    ugm.decrease_tracked_resource("root.a", "app1", {"m": 1}, UserGroup("nobody"))
    assert ugm.users_usage() == before
    assert ugm.increase_tracked_resource("root.a", "app1", {"m": 1}, sue), "actors still alive"


@pytest.mark.parametrize(
    ("path", "app", "usage", "user"),
    [
        ("", "app", {"m": 1}, UserGroup("u")),
        ("root..a", "app", {"m": 1}, UserGroup("u")),
        ("queue.a", "app", {"m": 1}, UserGroup("u")),
        ("root.a", "", {"m": 1}, UserGroup("u")),
        ("root.a", None, {"m": 1}, UserGroup("u")),
        ("root.a", "app", {"m": 1.5}, UserGroup("u")),
        ("root.a", "app", {"m": "1"}, UserGroup("u")),
        ("root.a", "app", [("m", 1)], UserGroup("u")),
        ("root.a", "app", {"m": 1}, "u"),
    ],
)
def test_invalid_arguments_raise_invalid_request_and_change_nothing(
    ugm: UserGroupManager, path: object, app: object, usage: object, user: object
) -> None:
    with pytest.raises(InvalidRequest):
        ugm.increase_tracked_resource(path, app, usage, user)  # type: ignore[arg-type]
    with pytest.raises(InvalidRequest):
        ugm.decrease_tracked_resource(path, app, usage, user)  # type: ignore[arg-type]
    assert ugm.users_usage() == []
    assert ugm.stats()["users"] == 0


def test_a_decrease_cannot_carry_negative_quantities(ugm: UserGroupManager) -> None:
    with pytest.raises(InvalidRequest):
        ugm.decrease_tracked_resource("root", "a", {"m": -1}, UserGroup("u"))


def test_an_increase_may_carry_a_negative_delta_for_an_in_place_resize(
    ugm: UserGroupManager,
) -> None:
    u = UserGroup("u")
    ugm.increase_tracked_resource("root.a", "app", {"m": 10}, u)
    assert ugm.increase_tracked_resource("root.a", "app", {"m": -4}, u)
    assert ugm.get_user_resources("u") == Resource({"m": 6})


def test_calls_after_stop_fail_clearly_and_stop_is_idempotent() -> None:
    ugm = UserGroupManager.start()
    ugm.stop()
    ugm.stop()
    with pytest.raises(RuntimeError):
        ugm.increase_tracked_resource("root", "a", {"m": 1}, UserGroup("u"))


def test_the_context_manager_stops_every_actor() -> None:
    def live_actors() -> int:
        return sum(runtime_live_actors().values())

    with UserGroupManager.start() as ugm:
        for i in range(5):
            ugm.increase_tracked_resource("root.q", f"a{i}", {"m": 1}, UserGroup(f"u{i}", ["g"]))
        assert live_actors() > 0
    assert live_actors() == 0


@pytest.mark.timeout(60)
def test_the_route_finds_each_listed_trackers_state_beside_it(
    start_ugm, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The manager keeps each listed tracker's state beside it (`user_states`,
    `group_states`: the compiled route reads those, and a listed state names its tracker)
    through creation, retirement, revival from the warm list and eviction from it, and a batch
    and single calls on top; a tracker's counts are its state's. Fails if a retirement or a
    revival leaves the two views apart."""
    from quotactor.actors import manager as manager_module
    from quotactor.core.changes import UsageDecrease, UsageIncrease

    monkeypatch.setattr(manager_module, "SWEEP_AT", 4)
    monkeypatch.setattr(manager_module, "WARM_TRACKERS", 3)
    ugm = start_ugm({"root": [LimitEntry(groups=("*",), max_resources={"memory": 100})]})
    manager = ugm._manager

    def in_step() -> None:
        assert {n: r.state for n, r in manager.users.items()} == manager.user_states
        assert {n: r.state for n, r in manager.groups.items()} == manager.group_states
        for name, ref in (*manager.users.items(), *manager.groups.items()):
            assert manager.user_states.get(name, manager.group_states.get(name)) is ref.state
            assert ref.state.tracker is ref  # the route's way from a state to its tracker
            assert (ref.routed, ref.handled, ref.idle_at) == (
                ref.state.routed, ref.state.handled, ref.state.idle_at)
        for ref in (*manager.warm_users.values(), *manager.warm_groups.values()):
            assert ref.state.tracker is None  # unlisted: no cycle left for the collector

    for round_ in range(3):
        users = [UserGroup(f"u{i}", [f"g{i % 5}"]) for i in range(12)]
        adds = [UsageIncrease("root.a", f"app{round_}-{i}", {"memory": 1}, u)
                for i, u in enumerate(users)]
        assert all(d.ok for d in ugm.apply_batch(adds))
        in_step()
        ugm.apply_batch([UsageDecrease(c.queue_path, c.application_id, c.usage, c.user, True)
                         for c in adds])
        in_step()
        for i, user in enumerate(users[:6]):  # single calls: revive the warm ones
            assert ugm.increase_tracked_resource("root.b", f"s{round_}-{i}", {"memory": 1}, user)
            in_step()
            ugm.decrease_tracked_resource("root.b", f"s{round_}-{i}", {"memory": 1}, user,
                                          remove_app=True)
        assert ugm.stats()["users"] == 0  # the sweep retired every idle one
        in_step()
    assert manager.retired > 30


@pytest.mark.timeout(60)
def test_emptied_trackers_are_retired_lazily_within_the_sweep_bound(
    start_ugm, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A user whose application ends is left listed, idle, until an answer needs it; but new
    users sweep the idle ones out once the listed trackers grow by `SWEEP_AT` (here 8) past
    those in use at the last sweep, so transient users never pile up; an idle user (its start
    refused) too."""
    from quotactor.actors import manager as manager_module

    monkeypatch.setattr(manager_module, "SWEEP_AT", 8)
    ugm = start_ugm({"root": [LimitEntry(users=("*",), max_resources={"memory": 10})]})
    manager = ugm._manager
    keep = UserGroup("keep", ["dev"])
    assert ugm.increase_tracked_resource("root.a", "kept", {"memory": 1}, keep)
    listed = []
    for i in range(200):
        user = UserGroup(f"u{i}", ["dev"])
        assert ugm.increase_tracked_resource("root.a", f"app{i}", {"memory": 1}, user)
        ugm.decrease_tracked_resource("root.a", f"app{i}", {"memory": 1}, user, remove_app=True)
        listed.append(len(manager.users))
    assert max(listed) <= 1 + 8 + 1 and manager.retired > 150
    loner = UserGroup("loner", [])
    assert not ugm.increase_tracked_resource("root.b", "big", {"memory": 100}, loner)
    assert "loner" in manager.users  # idle, listed
    assert manager.users["loner"] in manager.idle  # where a view's sweep finds it
    assert ugm.increase_tracked_resource("root.b", "big", {"memory": 1}, UserGroup("ann", []))
    assert ugm.stats()["users"] == 2  # keep and ann; every idle one retired by the view
    assert manager.idle == set()

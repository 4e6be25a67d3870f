"""Limit enforcement (seed 001): atomic increase-or-refuse, headroom, can_run_app."""

from __future__ import annotations

from quotactor import UserGroup
from quotactor.core.limits import LimitEntry as L

SUE = UserGroup("sue", ["dev", "test"])
BOB = UserGroup("bob", ["dev"])
ANN = UserGroup("ann", ["other"])


def test_a_named_user_gets_its_limit_and_other_users_each_get_the_wildcard(start_ugm) -> None:
    ugm = start_ugm({"root.a": [L(users=("sue",), max_resources={"m": 25}),
                                L(users=("*",), max_resources={"m": 10})]})
    assert ugm.increase_tracked_resource("root.a", "s1", {"m": 25}, SUE)
    assert not ugm.increase_tracked_resource("root.a", "s1", {"m": 1}, SUE)
    assert ugm.increase_tracked_resource("root.a", "b1", {"m": 10}, BOB)
    assert ugm.increase_tracked_resource("root.a", "a1", {"m": 10}, ANN), "wildcard is per user"
    assert not ugm.increase_tracked_resource("root.a", "a1", {"m": 1}, ANN)
    assert ugm.increase_tracked_resource("root.b", "a2", {"m": 100}, ANN), "other queue: free"


def test_named_groups_each_have_their_limit_and_the_wildcard_group_is_cumulative(
    start_ugm,
) -> None:
    ugm = start_ugm({"root": [L(groups=("dev",), max_resources={"m": 100}),
                              L(groups=("*",), max_resources={"m": 10})]})
    assert ugm.increase_tracked_resource("root.q", "x1", {"m": 6}, ANN)
    carl = UserGroup("carl", ["misc"])
    assert not ugm.increase_tracked_resource("root.q", "x2", {"m": 6}, carl), "shared * group"
    assert ugm.increase_tracked_resource("root.q", "x2", {"m": 4}, carl)
    assert ugm.increase_tracked_resource("root.q", "d1", {"m": 90}, BOB)
    assert ugm.get_group_resources("*") == {"m": 10}
    assert ugm.get_group_resources("dev") == {"m": 90}


def test_the_group_is_chosen_bottom_up_and_its_limits_apply_on_every_level(start_ugm) -> None:
    ugm = start_ugm({
        "root": [L(groups=("dev",), max_resources={"m": 50})],
        "root.a": [L(groups=("test",), max_resources={"m": 30})],
    })
    assert ugm.increase_tracked_resource("root.a.x", "s1", {"m": 30}, SUE)
    assert ugm.user_usage("sue")["groups"] == {"s1": "test"}
    assert not ugm.increase_tracked_resource("root.a.x", "s2", {"m": 1}, SUE), "test is full"
    assert ugm.increase_tracked_resource("root.b", "s3", {"m": 50}, SUE), "dev chosen at root"
    assert not ugm.increase_tracked_resource("root.b", "b1", {"m": 1}, BOB), "dev at root full"


def test_limits_at_several_levels_all_apply_leaf_to_root(start_ugm) -> None:
    ugm = start_ugm({
        "root": [L(users=("*",), max_resources={"m": 20}, max_applications=3)],
        "root.a": [L(users=("*",), max_resources={"m": 15})],
        "root.a.b": [L(users=("*",), max_resources={"m": 10})],
    })
    assert not ugm.decide_increase("root.a.b", "1", {"m": 11}, BOB).ok
    refusal = ugm.decide_increase("root.a.b", "1", {"m": 11}, BOB).refusal
    assert (refusal.queue_path, refusal.limit, refusal.kind) == ("root.a.b", "resources", "user")
    assert ugm.increase_tracked_resource("root.a.b", "1", {"m": 10}, BOB)
    refusal = ugm.decide_increase("root.a.c", "2", {"m": 6}, BOB).refusal
    assert refusal.queue_path == "root.a"
    assert ugm.increase_tracked_resource("root.a.c", "2", {"m": 5}, BOB)
    assert ugm.decide_increase("root.z", "3", {"m": 6}, BOB).refusal.queue_path == "root"
    assert ugm.increase_tracked_resource("root.z", "3", {"m": 5}, BOB)
    refusal = ugm.decide_increase("root.z", "4", {}, BOB).refusal
    assert (refusal.queue_path, refusal.limit) == ("root", "applications")


def test_max_applications_counts_only_new_apps(start_ugm) -> None:
    ugm = start_ugm({"root.a": [L(users=("bob",), max_applications=2)]})
    assert ugm.increase_tracked_resource("root.a", "1", {"m": 1}, BOB)
    assert ugm.increase_tracked_resource("root.a", "2", {"m": 1}, BOB)
    assert ugm.increase_tracked_resource("root.a", "1", {"m": 1}, BOB), "running app"
    assert not ugm.can_run_app("root.a", "3", BOB)
    assert ugm.can_run_app("root.a", "2", BOB)
    assert not ugm.increase_tracked_resource("root.a", "3", {"m": 1}, BOB)
    ugm.decrease_tracked_resource("root.a", "1", {"m": 2}, BOB, remove_app=True)
    assert ugm.can_run_app("root.a", "3", BOB)
    assert ugm.increase_tracked_resource("root.a", "3", {"m": 1}, BOB)


def test_app_refusal_names_the_limit_the_increase_would_name(start_ugm) -> None:
    """The read says which maxApplications holds a new app back, in the very words the
    refused increase uses, and names the user's limit before the group's."""
    ugm = start_ugm({"root.a": [L(users=("bob",), max_applications=1),
                                L(groups=("dev",), max_applications=1)]})
    assert ugm.app_refusal("root.a", "1", BOB) is None
    assert ugm.increase_tracked_resource("root.a", "1", {"m": 1}, BOB)
    assert ugm.app_refusal("root.a", "1", BOB) is None, "a running app runs"
    read = ugm.app_refusal("root.a", "2", BOB)
    assert read == ugm.decide_increase("root.a", "2", {"m": 1}, BOB).refusal
    assert (read.kind, read.name, read.limit, read.detail) == (
        "user", "bob", "applications", "1 running applications, maxApplications 1")
    group = ugm.app_refusal("root.a", "s1", SUE)
    assert group == ugm.decide_increase("root.a", "s1", {"m": 1}, SUE).refusal
    assert (group.kind, group.name) == ("group", "dev")


def test_a_group_refusal_leaves_the_user_unchanged_and_vice_versa(start_ugm) -> None:
    ugm = start_ugm({
        "root.a": [L(users=("sue",), max_resources={"m": 100}),
                   L(groups=("dev",), max_resources={"m": 10}, max_applications=1)],
    })
    assert ugm.increase_tracked_resource("root.a", "s1", {"m": 8}, SUE)
    users, groups = ugm.users_usage(), ugm.groups_usage()
    assert not ugm.increase_tracked_resource("root.a", "s1", {"m": 3}, SUE), "group memory"
    assert not ugm.increase_tracked_resource("root.a", "s2", {"m": 1}, SUE), "group apps"
    assert ugm.users_usage() == users and ugm.groups_usage() == groups
    ugm.update_config({"root.a": [L(users=("sue",), max_resources={"m": 8}),
                                  L(groups=("dev",), max_resources={"m": 100})]})
    users, groups = ugm.users_usage(), ugm.groups_usage()
    assert not ugm.increase_tracked_resource("root.a", "s1", {"m": 1}, SUE), "user memory"
    assert ugm.users_usage() == users and ugm.groups_usage() == groups


def test_only_the_resources_an_increase_adds_are_checked(start_ugm) -> None:
    ugm = start_ugm({"root": [L(users=("bob",), max_resources={"m": 10})]})
    assert ugm.increase_tracked_resource("root", "1", {"m": 10}, BOB)
    ugm.update_config({"root": [L(users=("bob",), max_resources={"m": 5})]})
    assert ugm.increase_tracked_resource("root", "1", {"vcore": 1000}, BOB)
    assert ugm.increase_tracked_resource("root", "1", {"m": -2}, BOB), "a shrink is allowed"
    assert not ugm.increase_tracked_resource("root", "1", {"m": 1, "vcore": 1}, BOB)


def test_a_zero_in_max_resources_means_none_allowed(start_ugm) -> None:
    ugm = start_ugm({"root": [L(users=("*",), max_resources={"gpu": 0, "m": 10})]})
    assert not ugm.increase_tracked_resource("root.a", "1", {"gpu": 1}, BOB)
    assert ugm.headroom("root.a", "1", BOB) == {"gpu": 0, "m": 10}


def test_headroom_is_the_minimum_of_user_and_group_over_all_levels(start_ugm) -> None:
    ugm = start_ugm({
        "root": [L(users=("sue",), max_resources={"m": 100, "v": 5})],
        "root.a": [L(groups=("test",), max_resources={"m": 30})],
    })
    assert ugm.headroom("root.b", "x", BOB) is None
    assert ugm.headroom("root.a", "x", SUE) == {"m": 30, "v": 5}
    ugm.increase_tracked_resource("root.a", "s1", {"m": 20, "v": 1}, SUE)
    ugm.increase_tracked_resource("root.a", "a1", {"m": 5}, UserGroup("z", ["test"]))
    assert ugm.headroom("root.a", "s1", SUE) == {"m": 5, "v": 4}
    assert ugm.headroom("root.b", "s9", SUE) == {"m": 80, "v": 4}


def test_reads_create_nothing(start_ugm) -> None:
    ugm = start_ugm({"root": [L(users=("*",), max_applications=1),
                              L(groups=("dev", "*"), max_applications=4)]})
    assert ugm.can_run_app("root.a.b", "1", BOB)
    assert ugm.headroom("root.a.b", "1", BOB) is None
    assert ugm.stats()["users"] == 0 and ugm.stats()["groups"] == 0
    assert ugm.users_usage() == []
    assert [g["groupName"] for g in ugm.groups_usage()] == ["*", "dev"]
    assert ugm.get_group_resources("dev") == {}


def test_config_named_users_and_groups_appear_with_their_limits_and_no_usage(start_ugm) -> None:
    ugm = start_ugm({"root.a": [L(users=("sue",), max_resources={"m": 5}),
                                L(groups=("dev",), max_applications=3)]})
    assert ugm.users_usage() == [{"userName": "sue", "queues": {
        "queuePath": "root", "children": [{"queuePath": "root.a", "maxResources": {"m": 5}}]}}]
    assert ugm.get_user_resources("sue") == {}
    assert ugm.get_user_resources("bob") is None
    assert ugm.group_usage("dev")["queues"]["children"] == [
        {"queuePath": "root.a", "maxApplications": 3}]

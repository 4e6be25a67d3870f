"""Limits changed at run time: never evict, never lose usage, never keep a stale limit.

Several cases here are ones Apache YuniKorn gets wrong; each test would catch the mistake.
"""

from __future__ import annotations

from quotactor import UserGroup
from quotactor.core.limits import LimitEntry as L

SUE = UserGroup("sue", ["dev"])
BOB = UserGroup("bob", ["dev"])


def test_raising_a_limit_lets_more_in(start_ugm) -> None:
    ugm = start_ugm({"root": [L(users=("sue",), max_resources={"m": 10})]})
    assert ugm.increase_tracked_resource("root.a", "1", {"m": 10}, SUE)
    assert not ugm.increase_tracked_resource("root.a", "1", {"m": 5}, SUE)
    ugm.update_config({"root": [L(users=("sue",), max_resources={"m": 15})]})
    assert ugm.increase_tracked_resource("root.a", "1", {"m": 5}, SUE)


def test_lowering_below_usage_evicts_nothing_and_blocks_until_usage_falls(start_ugm) -> None:
    ugm = start_ugm({"root": [L(users=("sue",), max_resources={"m": 10}, max_applications=2)]})
    assert ugm.increase_tracked_resource("root.a", "1", {"m": 6}, SUE)
    assert ugm.increase_tracked_resource("root.a", "2", {"m": 4}, SUE)
    ugm.update_config({"root": [L(users=("sue",), max_resources={"m": 5}, max_applications=1)]})
    assert ugm.get_user_resources("sue") == {"m": 10}
    assert ugm.headroom("root.a", "1", SUE) == {"m": -5}
    assert not ugm.increase_tracked_resource("root.a", "1", {"m": 1}, SUE)
    assert not ugm.can_run_app("root.a", "3", SUE)
    assert ugm.can_run_app("root.a", "1", SUE), "a running app still runs"
    ugm.decrease_tracked_resource("root.a", "2", {"m": 4}, SUE, remove_app=True)
    ugm.decrease_tracked_resource("root.a", "1", {"m": 2}, SUE)
    assert ugm.increase_tracked_resource("root.a", "1", {"m": 1}, SUE)


def test_removing_a_group_limit_keeps_the_group_usage_on_every_level(start_ugm) -> None:
    """YuniKorn wipes the group's usage up the whole path here (and orphans app links)."""
    ugm = start_ugm({"root.a.b": [L(groups=("dev",), max_resources={"m": 100})],
                     "root": [L(users=("*",), max_applications=10)]})
    assert ugm.increase_tracked_resource("root.a.b", "1", {"m": 7}, SUE)
    assert ugm.increase_tracked_resource("root.a", "2", {"m": 3}, BOB)
    before = ugm.group_usage("dev")
    ugm.update_config({"root": [L(users=("*",), max_applications=10)]})
    after = ugm.group_usage("dev")
    assert after["applications"] == ["1"]
    assert after["queues"]["resourceUsage"] == {"m": 7}
    assert after["queues"]["children"][0]["children"][0]["resourceUsage"] == {"m": 7}
    assert "maxResources" not in after["queues"]["children"][0]["children"][0]
    assert before["queues"]["resourceUsage"] == after["queues"]["resourceUsage"]
    assert ugm.user_usage("sue")["groups"] == {"1": "dev"}, "the app keeps its group"
    assert ugm.increase_tracked_resource("root.a.b", "1", {"m": 1}, SUE)
    assert ugm.get_group_resources("dev") == {"m": 8}
    ugm.decrease_tracked_resource("root.a.b", "1", {"m": 8}, SUE, remove_app=True)
    assert ugm.group_usage("dev") is None, "emptied and no longer named: retired"


def test_removing_a_user_limit_keeps_its_usage(start_ugm) -> None:
    ugm = start_ugm({"root.a": [L(users=("sue",), max_resources={"m": 10})]})
    assert ugm.increase_tracked_resource("root.a", "1", {"m": 9}, SUE)
    ugm.update_config({})
    assert ugm.get_user_resources("sue") == {"m": 9}
    assert ugm.increase_tracked_resource("root.a", "1", {"m": 50}, SUE)


def test_adding_and_removing_a_user_wildcard(start_ugm) -> None:
    ugm = start_ugm({})
    assert ugm.increase_tracked_resource("root.a", "1", {"m": 9}, BOB)
    ugm.update_config({"root.a": [L(users=("*",), max_resources={"m": 10})]})
    assert not ugm.increase_tracked_resource("root.a", "1", {"m": 2}, BOB)
    assert ugm.user_usage("bob")["queues"]["children"][0]["maxResources"] == {"m": 10}
    ugm.update_config({})
    assert ugm.increase_tracked_resource("root.a", "1", {"m": 2}, BOB)
    assert "maxResources" not in ugm.user_usage("bob")["queues"]["children"][0]


def test_removing_a_wildcard_applies_even_with_named_users_before_and_after(start_ugm) -> None:
    """YuniKorn leaves the stale wildcard on existing trackers in this case."""
    named = L(users=("sue",), max_resources={"m": 100})
    ugm = start_ugm({"root.a": [named, L(users=("*",), max_resources={"m": 5})]})
    assert ugm.increase_tracked_resource("root.a", "1", {"m": 5}, BOB)
    assert not ugm.increase_tracked_resource("root.a", "1", {"m": 1}, BOB)
    ugm.update_config({"root.a": [named]})
    assert ugm.increase_tracked_resource("root.a", "1", {"m": 1}, BOB)


def test_a_deeper_named_limit_survives_removing_a_limit_above_it(start_ugm) -> None:
    """YuniKorn's unlink can drop the deeper limit until the next reload."""
    deep = L(users=("sue",), max_resources={"m": 3})
    ugm = start_ugm({"root": [L(users=("sue",), max_resources={"m": 50})], "root.a.b": [deep]})
    ugm.update_config({"root.a.b": [deep]})
    assert not ugm.increase_tracked_resource("root.a.b", "1", {"m": 4}, SUE)
    assert ugm.user_usage("sue")["queues"]["children"][0]["children"][0]["maxResources"] == {
        "m": 3}


def test_changing_a_named_limit_while_a_wildcard_exists(start_ugm) -> None:
    wild = L(users=("*",), max_resources={"m": 5})
    ugm = start_ugm({"root": [L(users=("sue",), max_resources={"m": 20}), wild]})
    assert ugm.increase_tracked_resource("root", "1", {"m": 15}, SUE)
    ugm.update_config({"root": [L(users=("sue",), max_resources={"m": 16}), wild]})
    assert not ugm.increase_tracked_resource("root", "1", {"m": 2}, SUE)
    assert ugm.increase_tracked_resource("root", "1", {"m": 1}, SUE)
    ugm.update_config({"root": [wild]})
    assert not ugm.increase_tracked_resource("root", "1", {"m": 1}, SUE), "now the wildcard"
    assert ugm.headroom("root", "1", SUE) == {"m": -11}


def test_applying_the_same_limits_twice_changes_nothing(start_ugm) -> None:
    table = {"root.a": [L(users=("sue",), max_resources={"m": 10}),
                        L(groups=("dev",), max_applications=3)]}
    ugm = start_ugm(table)
    ugm.increase_tracked_resource("root.a", "1", {"m": 4}, SUE)
    users, groups = ugm.users_usage(), ugm.groups_usage()
    ugm.update_config(table)
    ugm.update_config(table)
    assert ugm.users_usage() == users and ugm.groups_usage() == groups


def test_a_group_limit_added_later_does_not_move_running_apps(start_ugm) -> None:
    ugm = start_ugm({})
    assert ugm.increase_tracked_resource("root.a", "1", {"m": 4}, SUE)
    ugm.update_config({"root.a": [L(groups=("dev",), max_resources={"m": 5})]})
    assert ugm.user_usage("sue").get("groups") is None
    assert ugm.increase_tracked_resource("root.a", "1", {"m": 4}, SUE), "app has no group"
    assert ugm.increase_tracked_resource("root.a", "2", {"m": 5}, SUE)
    assert not ugm.increase_tracked_resource("root.a", "3", {"m": 1}, SUE)

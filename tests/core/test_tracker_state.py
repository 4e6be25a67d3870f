from __future__ import annotations

from quotactor.core.limits import LimitEntry, LimitTable
from quotactor.core.queue_path import parse_queue_path as qp
from quotactor.core.resources import Resource
from quotactor.core.tracker import GroupTrackerState, UserTrackerState

EMPTY = LimitTable({})


def test_usage_aggregates_up_the_path_and_apps_run_at_every_level() -> None:
    user = UserTrackerState("sue")
    user.increase(qp("root.a.b"), "app1", Resource({"m": 5}), None)
    user.increase(qp("root.a"), "app2", Resource({"m": 1}), "dev")
    node_a = user.root.children["a"]
    assert user.root.usage == {"m": 6}
    assert node_a.usage == {"m": 6}
    assert node_a.children["b"].usage == {"m": 5}
    assert user.root.running == {"app1", "app2"}
    assert node_a.children["b"].running == {"app1"}
    assert user.app_groups == {"app1": None, "app2": "dev"}


def test_a_decrease_that_empties_nodes_removes_them_and_the_tracker_becomes_empty() -> None:
    user = UserTrackerState("sue")
    user.increase(qp("root.a.b"), "app1", Resource({"m": 5}), None)
    assert user.decrease(qp("root.a.b"), "app1", Resource({"m": 5}), remove_app=False)
    assert user.root.children["a"].children["b"].running == {"app1"}
    assert not user.is_empty()
    assert user.decrease(qp("root.a.b"), "app1", Resource(), remove_app=True)
    assert user.root.children == {}
    assert user.is_empty()


def test_a_decrease_on_an_untracked_path_or_unknown_app_changes_nothing() -> None:
    user = UserTrackerState("sue")
    user.increase(qp("root.a"), "app1", Resource({"m": 5}), None)
    assert not user.decrease(qp("root.a.b"), "app1", Resource({"m": 5}), remove_app=True)
    assert not user.decrease(qp("root.a"), "ghost", Resource({"m": 5}), remove_app=True)
    assert user.root.usage == {"m": 5}
    assert user.root.children["a"].usage == {"m": 5}
    assert user.app_groups == {"app1": None}


def test_the_group_link_is_set_once_and_dropped_with_the_app() -> None:
    user = UserTrackerState("sue")
    user.increase(qp("root.a"), "app1", Resource({"m": 1}), "dev")
    user.increase(qp("root.a"), "app1", Resource({"m": 1}), "ops")
    assert user.group_of("app1") == (True, "dev")
    user.decrease(qp("root.a"), "app1", Resource({"m": 2}), remove_app=True)
    assert user.group_of("app1") == (False, None)


def test_checks_go_leaf_to_root_and_count_only_new_apps_and_added_names() -> None:
    table = LimitTable({
        "root": [LimitEntry(users=("sue",), max_resources={"m": 10}, max_applications=2)],
        "root.a": [LimitEntry(users=("*",), max_resources={"m": 4})],
    })
    user = UserTrackerState("sue")
    leaf = user.check_increase(table, qp("root.a"), "app1", Resource({"m": 5}))
    assert leaf is not None and leaf.queue_path == "root.a"
    top = user.check_increase(table, qp("root.b"), "app1", Resource({"m": 11}))
    assert top is not None and top.queue_path == "root"
    user.increase(qp("root.b"), "app1", Resource({"m": 8}), None)
    user.increase(qp("root.b"), "app2", Resource({"m": 1}), None)
    refusal = user.check_increase(table, qp("root.b"), "app3", Resource({"m": 1}))
    assert refusal is not None and refusal.limit == "applications"
    assert user.check_increase(table, qp("root.b"), "app2", Resource({"m": 1})) is None
    assert user.check_increase(table, qp("root.b"), "app2", Resource({"x": 100})) is None
    assert user.check_increase(table, qp("root.b"), "app2", Resource({"m": -3})) is None


def test_headroom_is_the_minimum_over_limited_levels_and_none_when_unlimited() -> None:
    table = LimitTable({
        "root": [LimitEntry(groups=("dev",), max_resources={"m": 10, "v": 3})],
        "root.a": [LimitEntry(groups=("dev",), max_resources={"m": 4, "gpu": 0})],
    })
    group = GroupTrackerState("dev")
    assert group.headroom(EMPTY, qp("root.a")) is None
    group.increase(qp("root.b"), "app1", Resource({"m": 8}), "sue")
    assert group.headroom(table, qp("root.a")) == {"m": 2, "v": 3, "gpu": 0}
    assert group.headroom(table, qp("root.b")) == {"m": 2, "v": 3}


def test_snapshots_show_limits_on_every_limited_node_including_config_only_paths() -> None:
    table = LimitTable({"root.x.y": [LimitEntry(users=("sue",), max_applications=1)]})
    assert UserTrackerState("sue").snapshot(table) == {
        "userName": "sue",
        "queues": {"queuePath": "root", "children": [
            {"queuePath": "root.x", "children": [
                {"queuePath": "root.x.y", "maxApplications": 1}]}]},
    }

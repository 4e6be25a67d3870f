"""The compiled route on plain dictionaries: what a batch's sender claims comes from it."""

from __future__ import annotations

from typing import Any

from quotactor.core.identity import UserGroup
from quotactor.core.limits import LimitEntry as L
from quotactor.core.limits import LimitTable
from quotactor.core.resources import Resource
from quotactor.core.routing import Views, route
from quotactor.core.tracker import GroupTrackerState, UserTrackerState

TABLE = LimitTable({"root": [L(groups=("dev", "ops"), max_resources={"m": 100})]})


def _views() -> Views:
    user_states: dict[str, UserTrackerState] = {}
    group_states: dict[str, GroupTrackerState] = {}

    def new_user(name: str) -> object:
        state = user_states[name] = UserTrackerState(name)
        state.tracker = f"tracker of {name}"
        return state.tracker

    def new_group(name: str) -> object:
        state = group_states[name] = GroupTrackerState(name)
        state.tracker = f"tracker of group {name}"
        return state.tracker

    return Views("default", user_states, group_states, {}, new_user, new_group,
                 lambda name: False, tuple, tuple)


def _route(views: Views, items: list[tuple[Any, ...]]) -> tuple[list[Any], list[Any], int]:
    routed: list[Any] = []
    users: list[Any] = []
    groups: list[Any] = []
    route(views, items, TABLE, routed, [], [], users, groups)
    return users, groups, len(routed)


def test_each_route_names_every_tracker_of_its_items_once_in_the_order_first_named() -> None:
    sue, bob = UserGroup("sue", ["dev"]), UserGroup("bob", ["dev"])
    olga = UserGroup("olga", ["ops"])
    usage = Resource({"m": 1})
    views = _views()
    first = [(("root", "a"), "s1", usage, sue), (("root", "a"), "o1", usage, olga),
             (("root", "a"), "s2", usage, sue), (("root", "a"), "b1", usage, bob)]
    assert _route(views, first) == (
        ["tracker of sue", "tracker of olga", "tracker of bob"],
        ["tracker of group dev", "tracker of group ops"], 4)
    # The next route names them afresh (its own stamp), decreases included.
    second = [(("root", "a"), "b1", usage, bob, True), (("root", "a"), "s1", usage, sue, True),
              (("root", "a"), "b2", usage, bob)]
    assert _route(views, second) == (["tracker of bob", "tracker of sue"],
                                      ["tracker of group dev"], 3)

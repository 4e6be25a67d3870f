"""The compiled route on plain dictionaries: what a batch's sender claims comes from it."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from quotactor.core.identity import UserGroup
from quotactor.core.limits import LimitEntry as L
from quotactor.core.limits import LimitTable
from quotactor.core.resources import Resource
from quotactor.core.routing import Views, route, route_one
from quotactor.core.tracker import GroupTrackerState, UserTrackerState, settle_link

TABLE = LimitTable({"root": [L(groups=("dev", "ops"), max_resources={"m": 100})]})


def _views() -> Views:
    user_states: dict[str, UserTrackerState] = {}
    group_states: dict[str, GroupTrackerState] = {}
    views_lock = threading.Lock()

    def new_user(name: str) -> object:
        state = user_states[name] = UserTrackerState(name, views_lock)
        state.tracker = f"tracker of {name}"
        return state.tracker

    def new_group(name: str) -> object:
        state = group_states[name] = GroupTrackerState(name)
        state.tracker = f"tracker of group {name}"
        return state.tracker

    return Views(user_states, group_states, new_user, new_group, tuple, tuple)


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


def _groups_routed(views: Views, items: list[tuple[Any, ...]], table: LimitTable = TABLE
                   ) -> list[Any]:
    routed: list[Any] = []
    route(views, items, table, routed, [], [], [], [])
    return [message[4] for message in routed]


def test_a_removal_keeps_the_link_for_the_items_routed_after_it() -> None:
    """Whether the removal applies is the tracker's to say: a decrease routed after it still
    counts for the application's group (if the removal removed nothing, it runs on)."""
    sue = UserGroup("sue", ["dev"])
    usage = Resource({"m": 1})
    views = _views()
    assert _groups_routed(views, [(("root", "a"), "x", usage, sue),
                                  (("root", "b"), "x", usage, sue, True),
                                  (("root", "a"), "x", usage, sue, False)]) == ["dev"] * 3


def test_a_link_of_an_application_the_tracker_does_not_run_goes_once_its_items_are_handled(
) -> None:
    """A start routed (and, say, refused: the tracker never ran it) keeps its link while an
    item routed for the application is unhandled, whatever else the user has in flight, and
    loses it when its holder settles it after the last one: the next start chooses its group
    under the table of the day."""
    sue = UserGroup("sue", ["dev", "ops"])
    usage = Resource({"m": 1})
    views = _views()
    assert _groups_routed(views, [(("root", "a"), "c", usage, sue)]) == ["dev"]
    state = views.user_states["sue"]
    assert state.links is not None
    link = state.links["c"]
    ops_first = LimitTable({"root": [L(groups=("ops", "dev"), max_resources={"m": 100})]})
    assert _groups_routed(views, [(("root", "a"), "c", usage, sue),
                                  (("root", "a"), "other", usage, sue)], ops_first) == [
        "dev", "ops"]
    assert (link.routed, link.handled) == (2, 0)
    link.handled = 1  # the first start handled (refused), the second still on its way
    settle_link(state, "c", link)
    assert _groups_routed(views, [(("root", "a"), "c", usage, sue)], ops_first) == ["dev"]
    link.handled = 3  # every item of "c" handled; "other"'s are not: no matter
    state.app_groups["c"] = "dev"  # while the tracker runs "c", its link stays
    settle_link(state, "c", link)
    assert state.links["c"] is link
    del state.app_groups["c"]
    settle_link(state, "c", link)
    assert "c" not in state.links and "other" in state.links
    assert _groups_routed(views, [(("root", "a"), "c", usage, sue)], ops_first) == ["ops"]


def test_route_one_routes_a_single_item_as_route_does() -> None:
    """A single call's item: its message, None for a decrease of a user with nothing tracked,
    and its failure raised with nothing changed."""
    sue = UserGroup("sue", ["dev"])
    usage = Resource({"m": 1})
    views = _views()
    assert route_one(views, (("root", "a"), "s1", usage, UserGroup("ann", ["dev"]), True),
                     TABLE) is None
    msg = route_one(views, (("root", "a"), "s1", usage, sue), TABLE)
    assert (msg[2], msg[4], msg[9]) == ("s1", "dev", "tracker of sue")
    state = views.user_states["sue"]
    assert (state.routed, views.group_states["dev"].routed) == (1, 1)

    class Unhashable(str):
        __hash__ = None  # type: ignore[assignment]

    with pytest.raises(TypeError):
        route_one(views, (("root", "a"), Unhashable("s2"), usage, sue), TABLE)
    assert state.routed == 1 and state.links is not None
    assert {app: link.group for app, link in state.links.items()} == {"s1": "dev"}

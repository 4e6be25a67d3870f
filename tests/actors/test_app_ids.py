"""Application ids are unique in a partition: an id running for one user is refused for another.

Two users sharing an id would share one entry in their group: the first removal ends the
group's application for both, the second finds nothing to remove, and the group keeps usage
nobody owns, which refuses the next member.
"""

from __future__ import annotations

import pytest

from quotactor import InvalidRequest, UsageIncrease, UserGroup
from quotactor.core.limits import LimitEntry, LimitTable

TABLE = LimitTable({"root": [LimitEntry(groups=("dev",), max_resources={"m": 2})]})
SUE, BOB, CAROL = (UserGroup(name, ["dev"]) for name in ("sue", "bob", "carol"))


def test_an_id_running_for_another_user_is_refused_and_leaves_no_phantom_usage(
    start_ugm,
) -> None:
    ugm = start_ugm(TABLE)
    assert ugm.increase_tracked_resource("root.a", "app1", {"m": 1}, SUE)
    before = ugm.users_usage(), ugm.groups_usage()
    with pytest.raises(InvalidRequest, match="already running for user 'sue'"):
        ugm.increase_tracked_resource("root.a", "app1", {"m": 1}, BOB)
    assert (ugm.users_usage(), ugm.groups_usage()) == before
    ugm.decrease_tracked_resource("root.a", "app1", {"m": 1}, SUE, remove_app=True)
    ugm.decrease_tracked_resource("root.a", "app1", {"m": 1}, BOB, remove_app=True)
    assert ugm.get_group_resources("dev") in (None, {})
    assert ugm.increase_tracked_resource("root.a", "app2", {"m": 2}, CAROL)


def test_an_id_is_free_again_once_its_application_is_removed(start_ugm) -> None:
    ugm = start_ugm(TABLE)
    assert ugm.increase_tracked_resource("root.a", "app1", {"m": 1}, SUE)
    ugm.decrease_tracked_resource("root.a", "app1", {"m": 1}, SUE, remove_app=True)
    assert ugm.increase_tracked_resource("root.a", "app1", {"m": 1}, BOB)
    assert ugm.get_group_resources("dev") == {"m": 1}


def test_in_a_batch_the_conflicting_item_is_refused_and_the_others_applied(start_ugm) -> None:
    ugm = start_ugm(TABLE)
    assert ugm.increase_tracked_resource("root.a", "app1", {"m": 1}, SUE)
    with pytest.raises(InvalidRequest):
        ugm.apply_batch([UsageIncrease("root.a", "app2", {"m": 1}, BOB),
                         UsageIncrease("root.a", "app1", {"m": 1}, BOB)])
    assert ugm.get_user_resources("bob") == {"m": 1}
    assert ugm.get_group_resources("dev") == {"m": 2}

"""The user group manager where YuniKorn's own UGM tests say how it behaves, through the public
API: a refused increase binds nothing; one application id used by two users is two
applications (YuniKorn's `TestGetGroup` and `TestUpdateConfigWithWildCardUsersAndGroups` run
"app2" for two users, and "app1" for one user and then another), with a group's usage always
the sum of its members'; and a removal that fails at any step, on either build of the core,
leaves the user and the group both changed or both as they were.
"""

from __future__ import annotations

from typing import Any

import pytest

from quotactor import (
    QuotactorError,
    Scheduler,
    UsageDecrease,
    UsageIncrease,
    UserGroup,
    UserGroupManager,
)
from quotactor.core.errors import InvalidRequest
from quotactor.core.limits import LimitEntry, LimitTable
from quotactor.core.queue_path import parse_queue_path
from quotactor.core.reference import ReferenceTracking
from quotactor.core.resources import Resource

SUE, BOB, CAROL = (UserGroup(name, ["dev"]) for name in ("sue", "bob", "carol"))


def test_an_increase_refused_by_maxapplications_leaves_its_id_free_for_another_user(
    start_ugm: Any,
) -> None:
    ugm = start_ugm(LimitTable({"root.p": [LimitEntry(users=("sue",), max_applications=1)]}))
    assert ugm.increase_tracked_resource("root.p.c", "a", {"m": 1}, SUE)
    assert not ugm.increase_tracked_resource("root.p.c", "c", {"m": 1}, SUE)
    assert ugm.increase_tracked_resource("root.p.c", "c", {"m": 2}, BOB)
    assert ugm.get_user_resources("bob") == {"m": 2}
    assert ugm.get_user_resources("sue") == {"m": 1}


def _group_of(ugm: UserGroupManager, app: str) -> str | None:
    (group,) = [g["groupName"] for g in ugm.groups_usage() if app in g.get("applications", ())]
    return str(group)


def test_a_refused_increase_links_no_group_for_a_later_one(start_ugm: Any) -> None:
    """Sue's refused start of "c" chose group dev; the limits then move root.p to group ops:
    her next start of "c" counts for ops, as if the refused one had never been."""
    ann = UserGroup("sue", ["dev", "ops"])
    before = LimitTable({"root.p": [LimitEntry(users=("sue",), max_applications=1),
                                    LimitEntry(groups=("dev",), max_resources={"m": 100})]})
    after = LimitTable({"root.p": [LimitEntry(users=("sue",), max_applications=1),
                                   LimitEntry(groups=("ops",), max_resources={"m": 100})]})
    ugm = start_ugm(before)
    assert ugm.increase_tracked_resource("root.x", "keep", {"m": 1}, ann)  # sue stays busy
    assert ugm.increase_tracked_resource("root.p.q", "a", {"m": 1}, ann)
    assert not ugm.increase_tracked_resource("root.p.q", "c", {"m": 1}, ann)
    ugm.update_config(after)
    ugm.decrease_tracked_resource("root.p.q", "a", {"m": 1}, ann, remove_app=True)
    assert ugm.increase_tracked_resource("root.p.q", "c", {"m": 1}, ann)
    assert _group_of(ugm, "c") == "ops"


def test_one_id_for_two_users_is_tracked_per_user_as_testgetgroup_does(start_ugm: Any) -> None:
    """YuniKorn's `TestGetGroup`, part 4: test2 (in test_root) and test3 (in no limited group)
    both run app2; each user tracks it, and test_root only test2's."""
    ugm = start_ugm(LimitTable({
        "root": [LimitEntry(groups=("test_root",), max_resources={"memory": 50})],
        "root.parent": [LimitEntry(groups=("test_parent",), max_resources={"memory": 50})],
    }))
    test1 = UserGroup("test1", ["test", "test_root"])
    test2 = UserGroup("test2", ["test", "test_root"])
    test3 = UserGroup("test3", ["test"])
    usage = {"memory": 5}
    assert ugm.increase_tracked_resource("root.parent.leaf", "app1", usage, test1)
    assert ugm.increase_tracked_resource("root.parent.leaf", "app2", usage, test2)
    assert ugm.increase_tracked_resource("root.parent.leaf", "app2", usage, test3)
    assert [u["userName"] for u in ugm.users_usage()] == ["test1", "test2", "test3"]
    assert ugm.get_user_resources("test3") == {"memory": 5}
    assert ugm.group_usage("test_root")["applications"] == ["app1", "app2"]
    assert ugm.get_group_resources("test_root") == {"memory": 10}


def test_one_id_for_two_members_counts_twice_and_is_removed_by_each(start_ugm: Any) -> None:
    """`TestUpdateConfigWithWildCardUsersAndGroups`: app1 for user1, then for user2, both in
    group1. The group's usage is the sum of its members', and each member's removal takes
    only its own share."""
    user1, user2 = UserGroup("user1", ["group1"]), UserGroup("user2", ["group1"])
    ugm = start_ugm(LimitTable({"root.parent": [
        LimitEntry(users=("*",), max_resources={"memory": 70}),
        LimitEntry(groups=("group1",), max_resources={"memory": 100}),
    ]}))
    for _ in range(5):
        assert ugm.increase_tracked_resource("root.parent.leaf", "app1", {"memory": 10}, user1)
    for _ in range(3):
        assert ugm.increase_tracked_resource("root.parent.leaf", "app1", {"memory": 10}, user2)
    assert ugm.get_group_resources("group1") == {"memory": 80}
    group = ugm.group_usage("group1")
    assert group["applications"] == ["app1", "app1"]
    assert group["queues"]["runningApplications"] == ["app1", "app1"]
    assert not ugm.increase_tracked_resource("root.parent.leaf", "app1", {"memory": 30}, user2)

    ugm.decrease_tracked_resource("root.parent.leaf", "app1", {"memory": 50}, user1,
                                  remove_app=True)
    assert ugm.get_user_resources("user1") is None
    assert ugm.get_group_resources("group1") == {"memory": 30}
    assert ugm.group_usage("group1")["applications"] == ["app1"]
    ugm.decrease_tracked_resource("root.parent.leaf", "app1", {"memory": 30}, user2,
                                  remove_app=True)
    assert ugm.users_usage() == []
    assert "applications" not in ugm.group_usage("group1")
    assert ugm.get_group_resources("group1") == {}


def test_a_group_counts_each_members_application_against_maxapplications(
    start_ugm: Any,
) -> None:
    ugm = start_ugm(LimitTable({"root": [LimitEntry(groups=("dev",), max_applications=2)]}))
    assert ugm.increase_tracked_resource("root.a", "c", {"m": 1}, SUE)
    assert ugm.app_refusal("root.a", "c", BOB) is None  # room for one more
    assert ugm.increase_tracked_resource("root.a", "c", {"m": 1}, BOB)
    assert ugm.app_refusal("root.a", "c", SUE) is None  # sue's c runs already
    refusal = ugm.app_refusal("root.a", "c", CAROL)  # carol's c would be a third
    assert refusal is not None and refusal.kind == "group" and refusal.limit == "applications"
    assert not ugm.increase_tracked_resource("root.a", "c", {"m": 1}, CAROL)
    assert ugm.increase_tracked_resource("root.a", "c", {"m": 1}, BOB)  # bob's runs


def test_a_batch_with_one_id_for_two_users_applies_both(start_ugm: Any) -> None:
    ugm = start_ugm(LimitTable({"root": [LimitEntry(groups=("dev",), max_resources={"m": 9})]}))
    results = ugm.apply_batch([UsageIncrease("root.a", "x", {"m": 1}, SUE),
                               UsageIncrease("root.a", "x", {"m": 2}, BOB)])
    assert [result is not None and result.ok for result in results] == [True, True]
    assert ugm.get_group_resources("dev") == {"m": 3}
    ugm.apply_batch([UsageDecrease("root.a", "x", {"m": 1}, SUE, remove_app=True)])
    assert ugm.get_group_resources("dev") == {"m": 2}
    assert ugm.get_user_resources("bob") == {"m": 2}


def test_the_reference_model_tracks_one_id_for_two_users_alike() -> None:
    table = LimitTable({"root": [LimitEntry(groups=("dev",), max_applications=2)]})
    ref = ReferenceTracking(table)
    parts = parse_queue_path("root.a")
    assert ref.increase(parts, "c", Resource({"m": 1}), SUE) is None
    assert ref.increase(parts, "c", Resource({"m": 2}), BOB) is None
    assert ref.increase(parts, "c", Resource({"m": 1}), CAROL) is not None
    ref.decrease(parts, "c", Resource({"m": 1}), SUE, remove_app=True)
    (dev,) = ref.groups_usage()
    assert dev["applications"] == ["c"] and dev["queues"]["resourceUsage"] == {"m": 2}


def test_the_scheduler_still_refuses_a_second_application_with_an_id() -> None:
    with Scheduler.start() as scheduler:
        scheduler.submit("c", SUE, queue="root.a")
        with pytest.raises(InvalidRequest, match="already exists"):
            scheduler.submit("c", BOB, queue="root.a")


class FlakyId(str):
    """An application id whose hash raises on its `fail_at`-th use (counted on the class)."""

    uses = 0
    fail_at = 0

    def __hash__(self) -> int:
        FlakyId.uses += 1
        if FlakyId.uses == FlakyId.fail_at:
            raise RuntimeError(f"hash fault at use {FlakyId.uses}")
        return str.__hash__(self)

    def __eq__(self, other: object) -> bool:
        return str.__eq__(self, other)


FAULT_TABLE = LimitTable({"root": [LimitEntry(groups=("dev",), max_resources={"m": 1000})]})
REMOVALS = {
    "single": lambda ugm, app: ugm.decrease_tracked_resource(
        "root.a", app, {"m": 2}, SUE, remove_app=True),
    "batch": lambda ugm, app: ugm.apply_batch([
        UsageDecrease("root.a", app, {"m": 2}, SUE, remove_app=True)]),
}


@pytest.mark.parametrize("how", sorted(REMOVALS))
def test_a_removal_failing_at_any_step_changes_user_and_group_alike(how: str) -> None:
    """The fault at every use of the id's hash in turn, until the removal gets through: each
    failed one changes neither the user nor the group, and a plain removal afterwards leaves
    nothing behind (no group usage that no member owns, no tracker kept alive)."""
    steps = 0
    for fail_at in range(1, 200):
        with UserGroupManager.start(FAULT_TABLE, timeout=20.0) as ugm:
            assert ugm.increase_tracked_resource("root.a", "app", {"m": 2}, SUE)
            assert ugm.increase_tracked_resource("root.a", "other", {"m": 1}, SUE)
            before = ugm.users_usage(), ugm.groups_usage()
            FlakyId.uses, FlakyId.fail_at = 0, fail_at
            try:
                REMOVALS[how](ugm, FlakyId("app"))
            except QuotactorError:
                failed = True
            else:
                failed = False
            finally:
                FlakyId.fail_at = 0
            after = ugm.users_usage(), ugm.groups_usage()
            if failed:
                assert after == before, f"fault at use {fail_at}"
            else:
                assert ugm.get_user_resources("sue") == ugm.get_group_resources("dev") == {"m": 1}
            ugm.decrease_tracked_resource("root.a", "app", {"m": 2}, SUE, remove_app=True)
            ugm.decrease_tracked_resource("root.a", "other", {"m": 1}, SUE, remove_app=True)
            assert ugm.users_usage() == [], f"fault at use {fail_at}"
            assert ugm.get_group_resources("dev") == {}, f"fault at use {fail_at}"
            assert ugm.stats()["users"] == 0, f"fault at use {fail_at}"
        if not failed:
            break
        steps += 1
    assert steps > 3  # the fault was reached at several steps before one got through


@pytest.mark.parametrize("batched", [False, True])
def test_a_removal_that_removes_nothing_keeps_the_group_in_step(
    start_ugm: Any, batched: bool,
) -> None:
    """A removal on a queue path the application does not use changes neither side; the
    application's later decreases still reach its group, alone or in the same batch."""
    ugm = start_ugm(FAULT_TABLE)
    assert ugm.increase_tracked_resource("root.a", "x", {"m": 3}, SUE)
    changes = [UsageDecrease("root.b", "x", {"m": 1}, SUE, remove_app=True),
               UsageDecrease("root.a", "x", {"m": 1}, SUE)]
    if batched:
        ugm.apply_batch(changes)
    else:
        for change in changes:
            ugm.apply_batch([change])
    assert ugm.get_user_resources("sue") == ugm.get_group_resources("dev") == {"m": 2}

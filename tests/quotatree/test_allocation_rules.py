"""MCAD's allocation rules, one at a time, on small trees.

Trees are written as `{node: (parent, quota, hard)}`; every tree here is called "T" and has
one resource, cpu, unless a test says otherwise.
"""

from __future__ import annotations

from typing import Any

import pytest

from quotactor.quotatree import Mode, QuotaTreeError

T = "T"


def test_a_consumer_is_charged_at_its_group_leaf_when_it_fits(build: Any) -> None:
    qm = build.manager(T, {"R": (None, 10, False), "L": ("R", 2, False)})
    response = build.place(qm, T, "c", "L", 2)
    assert (response.allocated, response.message, response.preempted_ids) == (True, "", set())
    assert qm.allocated_node(T, "c") == "L"
    assert build.allocated(qm, T) == {"R": 2, "L": 2}


def test_a_consumer_that_does_not_fit_borrows_at_the_lowest_soft_ancestor_that_fits(
    build: Any,
) -> None:
    qm = build.manager(T, {"R": (None, 10, False), "M": ("R", 3, False),
                           "L": ("M", 1, False)})
    build.place(qm, T, "c", "L", 2)
    assert qm.allocated_node(T, "c") == "M"
    assert build.allocated(qm, T) == {"R": 2, "M": 2, "L": 0}


def test_a_consumer_may_sit_at_a_hard_node_but_never_above_it(build: Any) -> None:
    qm = build.manager(T, {"R": (None, 10, False), "H": ("R", 3, True),
                           "L": ("H", 1, False)})
    assert build.place(qm, T, "fits-at-h", "L", 2).allocated
    assert qm.allocated_node(T, "fits-at-h") == "H"
    refused = build.place(qm, T, "needs-r", "L", 2)
    assert not refused.allocated
    assert refused.message == "Failed to allocate quota on quota designation 'T'"
    assert build.allocated(qm, T) == {"R": 2, "H": 2, "L": 0}


def test_a_hard_leaf_keeps_its_consumers_inside_it(build: Any) -> None:
    qm = build.manager(T, {"R": (None, 10, False), "L": ("R", 1, True)})
    assert not build.place(qm, T, "c", "L", 2).allocated


def test_strictly_lower_priority_consumers_slide_up_to_make_room_at_the_group_node(
    build: Any,
) -> None:
    qm = build.manager(T, {"R": (None, 10, False), "L": ("R", 2, False)})
    build.place(qm, T, "low", "L", 2, priority=0)
    response = build.place(qm, T, "high", "L", 2, priority=1)
    assert response.allocated and response.preempted_ids == set()
    assert build.nodes_of(qm, T) == {"low": "R", "high": "L"}
    assert build.allocated(qm, T) == {"R": 4, "L": 2}


def test_equal_priority_consumers_stay_and_the_newcomer_borrows_instead(build: Any) -> None:
    qm = build.manager(T, {"R": (None, 10, False), "L": ("R", 2, False)})
    build.place(qm, T, "first", "L", 2, priority=1)
    build.place(qm, T, "second", "L", 2, priority=1)
    assert build.nodes_of(qm, T) == {"first": "L", "second": "R"}


def test_an_ancestor_slides_up_any_of_its_consumers_to_absorb_a_request(build: Any) -> None:
    qm = build.manager(T, {"R": (None, 10, False), "M": ("R", 3, False),
                           "L1": ("M", 1, False), "L2": ("M", 2, False)})
    build.place(qm, T, "vip", "L1", 2, priority=5)
    assert qm.allocated_node(T, "vip") == "M"
    response = build.place(qm, T, "low", "L2", 2, priority=0)
    assert response.allocated and response.preempted_ids == set()
    assert build.nodes_of(qm, T) == {"vip": "R", "low": "L2"}
    assert build.allocated(qm, T) == {"R": 4, "M": 2, "L1": 0, "L2": 2}


def test_a_hard_node_never_slides_its_consumers_up(build: Any) -> None:
    qm = build.manager(T, {"R": (None, 10, False), "M": ("R", 3, True),
                           "L1": ("M", 1, False), "L2": ("M", 2, False)})
    build.place(qm, T, "vip", "L1", 2, priority=5)
    assert not build.place(qm, T, "low", "L2", 2).allocated
    assert build.nodes_of(qm, T) == {"vip": "M"}


def test_a_borrower_at_the_root_is_preempted_for_a_consumer_below_whatever_its_priority(
    build: Any,
) -> None:
    qm = build.manager(T, {"R": (None, 2, False), "L1": ("R", 1, False),
                           "L2": ("R", 2, False)})
    build.place(qm, T, "borrower", "L1", 2, priority=5)
    assert qm.allocated_node(T, "borrower") == "R"
    response = build.place(qm, T, "owner", "L2", 2, priority=0)
    assert response.allocated and response.preempted_ids == {"borrower"}
    assert not qm.is_allocated(T, "borrower")
    assert build.nodes_of(qm, T) == {"owner": "L2"}


@pytest.mark.parametrize("protection", [{"ctype": 1}, {"unpreemptable": True}])
def test_root_preemption_spares_other_types_and_unpreemptable_consumers(
    build: Any, protection: dict[str, Any]
) -> None:
    qm = build.manager(T, {"R": (None, 2, False), "L1": ("R", 1, False),
                           "L2": ("R", 2, False)})
    build.place(qm, T, "borrower", "L1", 2, priority=5, **protection)
    assert not build.place(qm, T, "owner", "L2", 2).allocated
    assert build.nodes_of(qm, T) == {"borrower": "R"}


def test_unpreemptable_consumers_still_slide_up(build: Any) -> None:
    qm = build.manager(T, {"R": (None, 10, False), "L": ("R", 2, False)})
    build.place(qm, T, "pinned", "L", 2, unpreemptable=True)
    assert build.place(qm, T, "high", "L", 2, priority=1).allocated
    assert build.nodes_of(qm, T) == {"pinned": "R", "high": "L"}


def _hard_pocket(build: Any) -> Any:
    """L (2) under a hard H (2): a consumer there can neither borrow nor be slid past H."""
    return build.manager(T, {"R": (None, 10, False), "H": ("R", 2, True),
                             "L": ("H", 2, False)})


def test_priority_preemption_needs_a_positive_priority(build: Any) -> None:
    qm = _hard_pocket(build)
    build.place(qm, T, "negative", "L", 2, priority=-1)
    assert not build.place(qm, T, "zero", "L", 2, priority=0).allocated
    response = build.place(qm, T, "one", "L", 2, priority=1)
    assert response.allocated and response.preempted_ids == {"negative"}
    assert build.nodes_of(qm, T) == {"one": "L"}


@pytest.mark.parametrize("protection", [
    {"unpreemptable": True}, {"ctype": 1}, {"priority": 3},
])
def test_priority_preemption_spares_unpreemptable_other_type_and_not_lower_consumers(
    build: Any, protection: dict[str, Any]
) -> None:
    qm = _hard_pocket(build)
    build.place(qm, T, "victim", "L", 2, **{"priority": 0, **protection})
    assert not build.place(qm, T, "high", "L", 2, priority=3).allocated
    assert build.nodes_of(qm, T) == {"victim": "L"}


def test_priority_preemption_only_looks_at_the_newcomers_own_path(build: Any) -> None:
    qm = build.manager(T, {"R": (None, 2, True), "L1": ("R", 2, False),
                           "L2": ("R", 2, False)})
    build.place(qm, T, "sibling", "L2", 2, priority=0)
    assert not build.place(qm, T, "high", "L1", 2, priority=9).allocated
    assert build.nodes_of(qm, T) == {"sibling": "L2"}


def test_priority_preemption_takes_higher_nodes_first(build: Any) -> None:
    qm = build.manager(T, {"R": (None, 10, False), "H": ("R", 4, True),
                           "L": ("H", 2, False)})
    build.place(qm, T, "at-leaf", "L", 2)
    build.place(qm, T, "at-h", "L", 2)
    assert build.nodes_of(qm, T) == {"at-leaf": "L", "at-h": "H"}
    response = build.place(qm, T, "high", "L", 2, priority=1)
    assert response.allocated and response.preempted_ids == {"at-h"}
    assert build.nodes_of(qm, T) == {"at-leaf": "H", "high": "L"}
    assert build.allocated(qm, T) == {"R": 4, "H": 4, "L": 2}


def test_slide_up_candidates_are_taken_greedily_in_charge_order(build: Any) -> None:
    qm = build.manager(T, {"R": (None, 4, False), "L0": ("R", 0, False),
                           "L1": ("R", 3, False)})
    for cid, size in (("small-1", 1), ("small-2", 1), ("big", 2)):
        build.place(qm, T, cid, "L0", size)
    assert qm.tree_state(T)["R"]["consumers"] == ["small-1", "small-2", "big"]
    response = build.place(qm, T, "owner", "L1", 3)
    assert response.preempted_ids == {"small-1", "small-2", "big"}


def test_arrival_order_decides_among_equal_borrowers(build: Any) -> None:
    qm = build.manager(T, {"R": (None, 3, False), "L0": ("R", 0, False),
                           "L1": ("R", 3, False)})
    build.place(qm, T, "earlier", "L0", 1)
    build.place(qm, T, "later", "L0", 1)
    response = build.place(qm, T, "owner", "L1", 2)
    assert response.preempted_ids == {"earlier"}
    assert build.nodes_of(qm, T) == {"later": "R", "owner": "L1"}


def test_every_resource_must_fit(build: Any) -> None:
    qm = build.manager(T, {"R": (None, {"cpu": 4, "memory": 8}, True),
                           "L": ("R", {"cpu": 4, "memory": 8}, False)},
                       resources=("cpu", "memory"))
    assert build.place(qm, T, "a", "L", {"cpu": 2, "memory": 6}).allocated
    assert not build.place(qm, T, "b", "L", {"cpu": 1, "memory": 3}).allocated
    assert build.place(qm, T, "c", "L", {"cpu": 2, "memory": 2}).allocated
    assert qm.tree_state(T)["R"]["allocated"] == {"cpu": 4, "memory": 8}


def test_resources_unknown_to_the_tree_are_ignored_and_missing_ones_are_zero(
    build: Any,
) -> None:
    qm = build.manager(T, {"R": (None, {"cpu": 4, "memory": 8}, True)},
                       resources=("cpu", "memory"))
    assert build.place(qm, T, "a", "R", {"memory": 8, "gpu": 99}).allocated
    assert qm.tree_state(T)["R"]["allocated"] == {"cpu": 0, "memory": 8}


@pytest.mark.parametrize("group", ["M", "nowhere", ""])
def test_a_group_that_is_not_a_leaf_is_refused_in_normal_mode(build: Any, group: str) -> None:
    qm = build.manager(T, {"R": (None, 10, False), "M": ("R", 5, False),
                           "L": ("M", 5, False)})
    response = build.place(qm, T, "c", group, 1)
    assert not response.allocated
    assert response.message == "Failed to allocate quota on quota designation 'T'"


def test_a_departure_slides_consumers_down_one_level_per_node_of_its_path(build: Any) -> None:
    qm = build.manager(T, {"R": (None, 10, False), "M": ("R", 2, False),
                           "L": ("M", 2, False), "S": ("R", 2, False)})
    build.place(qm, T, "first", "L", 2)
    build.place(qm, T, "waiting", "L", 2)
    build.place(qm, T, "other", "S", 2)
    build.place(qm, T, "other-waiting", "S", 2)
    assert build.nodes_of(qm, T) == {"first": "L", "waiting": "R", "other": "S",
                                     "other-waiting": "R"}
    assert qm.deallocate(T, "first")
    assert build.nodes_of(qm, T) == {"waiting": "M", "other": "S", "other-waiting": "R"}
    assert build.allocated(qm, T) == {"R": 6, "M": 2, "L": 0, "S": 2}


def test_a_departure_slides_down_only_consumers_that_fit(build: Any) -> None:
    qm = build.manager(T, {"R": (None, 10, False), "L": ("R", 2, False)})
    build.place(qm, T, "small", "L", 2)
    build.place(qm, T, "too-big", "L", 3)
    build.place(qm, T, "fits", "L", 1)
    assert build.nodes_of(qm, T) == {"small": "L", "too-big": "R", "fits": "R"}
    qm.deallocate(T, "small")
    assert build.nodes_of(qm, T) == {"too-big": "R", "fits": "L"}
    assert build.allocated(qm, T) == {"R": 4, "L": 1}


def test_a_consumer_is_not_allocated_twice_on_a_tree(build: Any) -> None:
    qm = build.manager(T, {"R": (None, 10, False)})
    build.place(qm, T, "c", "R", 1)
    response = qm.allocate(T, "c")
    assert not response.allocated
    assert response.message == "consumer c already allocated on tree T"
    assert build.allocated(qm, T) == {"R": 1}


def test_a_consumer_without_an_entry_for_the_tree_is_refused(build: Any) -> None:
    qm = build.manager(T, {"R": (None, 10, False)})
    response = build.place(qm, T, "c", "R", 1)
    qm.add_tree_from_json(build.tree_doc("U", {"R": (None, 10, False)}))
    response = qm.allocate("U", "c")
    assert not response.allocated
    assert response.message == "failure creating consumer c on tree U"


def test_deallocation_of_a_consumer_that_is_not_allocated_returns_false(build: Any) -> None:
    qm = build.manager(T, {"R": (None, 10, False)})
    qm.add_consumer(build.consumer("c", T, "R", 1))
    assert not qm.deallocate(T, "c")
    assert not qm.deallocate(T, "never-added")
    qm.allocate(T, "c")
    assert qm.deallocate(T, "c") and not qm.deallocate(T, "c")


def test_maintenance_mode_forces_allocation_at_the_group_node_ignoring_quotas(
    build: Any,
) -> None:
    qm = build.manager(T, {"R": (None, 4, False), "M": ("R", 2, False),
                           "L": ("M", 2, False)}, mode=Mode.MAINTENANCE)
    assert build.place(qm, T, "big", "M", 5, unpreemptable=True).allocated
    assert build.place(qm, T, "small", "L", 1).allocated
    assert build.allocated(qm, T) == {"R": 6, "M": 6, "L": 1}
    refused = build.place(qm, T, "ghost", "X", 1)
    assert refused.message == "failed force allocate consumer ghost on node X"
    qm.set_mode(Mode.NORMAL)
    assert not build.place(qm, T, "normal", "L", 1).allocated
    assert qm.deallocate(T, "big")
    assert build.place(qm, T, "after", "L", 1).allocated
    assert build.allocated(qm, T) == {"R": 2, "M": 2, "L": 2}


def test_normal_allocations_preempt_a_forced_over_commitment_at_the_root(build: Any) -> None:
    qm = build.manager(T, {"R": (None, 4, False), "M": ("R", 2, False),
                           "L": ("M", 2, False)}, mode=Mode.MAINTENANCE)
    build.place(qm, T, "big", "M", 5)
    qm.set_mode(Mode.NORMAL)
    response = build.place(qm, T, "normal", "L", 1)
    assert response.allocated and response.preempted_ids == {"big"}
    assert build.allocated(qm, T) == {"R": 1, "M": 1, "L": 1}


def test_the_manager_starts_in_maintenance_mode(build: Any) -> None:
    from quotactor.quotatree import QuotaManager

    qm = QuotaManager()
    assert qm.mode() is Mode.MAINTENANCE
    assert qm.mode_string() == "mode set to Maintenance"
    assert qm.set_mode(Mode.NORMAL) and qm.mode_string() == "mode set to Normal"
    with pytest.raises(QuotaTreeError):
        qm.set_mode(0)  # type: ignore[arg-type]


def test_unknown_tree_and_consumer_names_raise(build: Any) -> None:
    qm = build.manager(T, {"R": (None, 10, False)})
    with pytest.raises(QuotaTreeError, match="invalid tree name X"):
        qm.allocate("X", "c")
    with pytest.raises(QuotaTreeError, match="consumer c does not exist, create and add first"):
        qm.allocate(T, "c")
    for call in (qm.deallocate, qm.is_allocated, qm.allocated_node):
        with pytest.raises(QuotaTreeError):
            call("X", "c")

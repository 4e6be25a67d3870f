"""try_allocate / undo_allocate on a single tree, and the manager modes around them."""

from __future__ import annotations

from typing import Any

import pytest

from quotactor.quotatree import Mode, QuotaManager, QuotaTreeError

T = "T"
NODES = {"R": (None, 4, False), "L1": ("R", 2, False), "L2": ("R", 2, False)}


def _busy(build: Any) -> QuotaManager:
    """L1 full with `a`, `borrower` from L1 at the root, L2 empty."""
    qm = build.manager(T, NODES)
    build.place(qm, T, "a", "L1", 2)
    build.place(qm, T, "borrower", "L1", 2)
    assert build.nodes_of(qm, T) == {"a": "L1", "borrower": "R"}
    return qm


def test_undo_after_a_successful_try_restores_the_exact_prior_state(build: Any) -> None:
    qm = _busy(build)
    before = qm.tree_state(T)
    qm.add_consumer(build.consumer("owner", T, "L2", 2))
    response = qm.try_allocate(T, "owner")
    assert response.allocated and response.preempted_ids == {"borrower"}
    assert not qm.is_allocated(T, "borrower")
    assert qm.undo_allocate(T, "owner")
    assert qm.tree_state(T) == before
    assert qm.is_allocated(T, "borrower") and not qm.is_allocated(T, "owner")
    assert qm.allocated_node(T, "borrower") == "R"


def test_undo_puts_slid_consumers_back_in_their_old_charge_order(build: Any) -> None:
    qm = build.manager(T, {"R": (None, 10, False), "L": ("R", 3, False)})
    for cid in ("x", "y", "z"):
        build.place(qm, T, cid, "L", 1)
    build.place(qm, T, "w", "L", 1)
    before = qm.tree_state(T)
    assert before["L"]["consumers"] == ["x", "y", "z"]
    qm.add_consumer(build.consumer("high", T, "L", 2, priority=1))
    assert qm.try_allocate(T, "high").allocated
    assert qm.tree_state(T)["R"]["consumers"] == ["w", "x", "y"]
    assert qm.undo_allocate(T, "high")
    assert qm.tree_state(T) == before


def test_a_try_that_does_not_fit_changes_nothing_and_its_undo_succeeds(build: Any) -> None:
    qm = _busy(build)
    before = qm.tree_state(T)
    qm.add_consumer(build.consumer("huge", T, "L2", 3))
    assert not qm.try_allocate(T, "huge").allocated
    assert qm.tree_state(T) == before
    assert qm.undo_allocate(T, "huge")
    assert qm.tree_state(T) == before


def test_an_accepted_try_needs_no_further_call(build: Any) -> None:
    qm = _busy(build)
    qm.add_consumer(build.consumer("owner", T, "L2", 2))
    qm.try_allocate(T, "owner")
    qm.add_consumer(build.consumer("next", T, "L2", 0))
    qm.allocate(T, "next")
    assert not qm.undo_allocate(T, "owner")
    assert qm.is_allocated(T, "owner")


@pytest.mark.parametrize("change", ["allocate", "deallocate", "update_tree", "try_allocate"])
def test_undo_is_refused_once_the_tree_changed_after_the_try(build: Any, change: str) -> None:
    qm = _busy(build)
    qm.add_consumer(build.consumer("owner", T, "L2", 1))
    qm.add_consumer(build.consumer("other", T, "L2", 1))
    qm.try_allocate(T, "owner")
    if change == "allocate":
        qm.allocate(T, "other")
    elif change == "deallocate":
        qm.deallocate(T, "a")
    elif change == "update_tree":
        qm.update_tree(T)
    else:
        qm.try_allocate(T, "other")
    assert not qm.undo_allocate(T, "owner")
    assert qm.is_allocated(T, "owner")


def test_undo_of_another_consumer_than_the_one_tried_is_refused(build: Any) -> None:
    qm = _busy(build)
    qm.add_consumer(build.consumer("owner", T, "L2", 1))
    qm.try_allocate(T, "owner")
    assert not qm.undo_allocate(T, "a")
    assert qm.undo_allocate(T, "owner")


def test_changes_to_another_tree_do_not_disturb_a_pending_try(build: Any) -> None:
    qm = _busy(build)
    qm.add_tree_from_json(build.tree_doc("U", {"R": (None, 5, False)}))
    qm.add_consumer(build.consumer("owner", T, "L2", 1))
    qm.add_consumer(build.consumer("elsewhere", "U", "R", 1))
    qm.try_allocate(T, "owner")
    qm.allocate("U", "elsewhere")
    assert qm.undo_allocate(T, "owner")


def test_try_allocate_is_refused_in_maintenance_mode(build: Any) -> None:
    qm = build.manager(T, NODES, mode=Mode.MAINTENANCE)
    qm.add_consumer(build.consumer("c", T, "L1", 1))
    response = qm.try_allocate(T, "c")
    assert (response.allocated, response.message) == (False, "manager is not in normal mode")
    assert not qm.is_allocated(T, "c")
    assert not qm.undo_allocate(T, "c")


def test_try_of_an_already_allocated_consumer_is_refused_and_undo_leaves_it(
    build: Any,
) -> None:
    qm = _busy(build)
    response = qm.try_allocate(T, "a")
    assert response.message == "consumer a already allocated on tree T"
    assert not qm.undo_allocate(T, "a")
    assert qm.is_allocated(T, "a")


def test_undo_with_an_unknown_tree_or_consumer_raises(build: Any) -> None:
    qm = _busy(build)
    with pytest.raises(QuotaTreeError):
        qm.undo_allocate("X", "a")
    with pytest.raises(QuotaTreeError):
        qm.undo_allocate(T, "nobody")

"""MCAD's defects (Q1-Q7 in the notes, and two more found on the way), each fixed here."""

from __future__ import annotations

from typing import Any

from quotactor.quotatree import Mode, QuotaManager

T = "T"


def test_q1_a_failed_priority_retry_restores_the_consumers_it_preempted(build: Any) -> None:
    """MCAD leaves the victims of phase 2 out of the tree when the retry fails."""
    qm = build.manager(T, {"R": (None, 9, False), "S": ("R", 8, False),
                           "H": ("R", 2, True), "L": ("H", 2, False)})
    build.place(qm, T, "big", "S", 8, priority=5)
    build.place(qm, T, "victim", "L", 1)
    before = qm.tree_state(T)
    response = build.place(qm, T, "high", "L", 2, priority=1)
    assert not response.allocated and response.preempted_ids == set()
    assert qm.tree_state(T) == before
    assert qm.is_allocated(T, "victim") and qm.allocated_node(T, "victim") == "L"


def test_q2_victims_of_a_priority_round_are_reported_when_the_retry_recovers_inside(
    build: Any,
) -> None:
    """MCAD clears the preempted list when the retry undoes a partial placement."""
    qm = build.manager(T, {"R": (None, 100, False), "K": ("R", 3, True),
                           "M": ("K", 2, False), "L1": ("M", 1, False),
                           "L2": ("M", 2, False)})
    build.place(qm, T, "w", "L2", 2, priority=5)
    build.place(qm, T, "v", "L1", 1)
    assert build.nodes_of(qm, T) == {"w": "L2", "v": "K"}
    response = build.place(qm, T, "c", "L1", 1, priority=1)
    assert response.allocated and response.preempted_ids == {"v"}
    assert not qm.is_allocated(T, "v")
    assert build.nodes_of(qm, T) == {"w": "L2", "c": "K"}
    assert build.allocated(qm, T) == {"R": 3, "K": 3, "M": 2, "L1": 0, "L2": 2}


def test_q3_undo_after_a_try_with_a_group_that_is_not_a_leaf_changes_nothing(
    build: Any,
) -> None:
    """MCAD's undo returns True there but empties the controller's consumer map."""
    qm = build.manager(T, {"R": (None, 4, False), "L": ("R", 2, False)})
    build.place(qm, T, "a", "L", 1)
    before = qm.tree_state(T)
    qm.add_consumer(build.consumer("wrong-group", T, "R", 1))
    response = qm.try_allocate(T, "wrong-group")
    assert not response.allocated
    assert response.message == "Failed to take a state snapshot of tree 'T'"
    assert qm.undo_allocate(T, "wrong-group")
    assert qm.tree_state(T) == before
    assert qm.is_allocated(T, "a")
    assert qm.deallocate(T, "a")


def test_q4_a_second_undo_is_a_no_op_that_returns_false(build: Any) -> None:
    """MCAD's second undo empties the consumer map."""
    qm = build.manager(T, {"R": (None, 4, False), "L": ("R", 2, False)})
    build.place(qm, T, "a", "L", 1)
    qm.add_consumer(build.consumer("b", T, "L", 1))
    before = qm.tree_state(T)
    qm.try_allocate(T, "b")
    assert qm.undo_allocate(T, "b")
    assert not qm.undo_allocate(T, "b")
    assert qm.tree_state(T) == before and qm.is_allocated(T, "a")


def _forest(build: Any) -> QuotaManager:
    qm = QuotaManager()
    qm.add_tree_from_json(build.tree_doc("t1", {"R": (None, 4, False)}))
    qm.add_tree_from_json(build.tree_doc("t2", {"X": (None, 4, False)}))
    qm.add_forest("F")
    qm.add_tree_to_forest("F", "t1")
    qm.add_tree_to_forest("F", "t2")
    qm.set_mode(Mode.NORMAL)
    return qm


def test_q5_a_forest_consumer_naming_a_tree_outside_the_forest_uses_the_intersection(
    build: Any,
) -> None:
    """MCAD panics on the tree it has no controller for."""
    qm = _forest(build)
    qm.add_tree_from_json(build.tree_doc("outside", {"O": (None, 1, False)}))
    qm.add_consumer(build.forest_consumer("c", {
        "t1": ("R", {"cpu": 1}), "t2": ("X", {"cpu": 1}), "outside": ("O", {"cpu": 1}),
    }))
    response = qm.allocate_forest("F", "c")
    assert response.allocated
    assert qm.is_allocated("t1", "c") and qm.is_allocated("t2", "c")
    assert not qm.is_allocated("outside", "c")
    assert qm.is_allocated_forest("F", "c")


def test_q6_update_all_updates_every_tree_and_forest(build: Any) -> None:
    """MCAD's UpdateAll deadlocks on its own mutex."""
    qm = _forest(build)
    qm.add_tree_from_json(build.tree_doc("alone", {"A": (None, 1, False)}))
    qm.tree_cache("alone").add_node_spec("A", {"parent": "nil", "quota": {"cpu": "7"}})
    qm.tree_cache("t1").add_node_spec("R", {"parent": "nil", "quota": {"cpu": "9"}})
    result = qm.update_all()
    assert result.tree_unallocated == {"alone": []}
    assert set(result.tree_responses) == {"alone"}
    assert result.forest_unallocated == {"F": []}
    assert set(result.forest_responses["F"]) == {"t1", "t2"}
    assert qm.tree_state("alone")["A"]["quota"] == {"cpu": 7}
    assert qm.tree_state("t1")["R"]["quota"] == {"cpu": 9}


def test_q7_a_forest_try_works_while_a_consumer_sits_at_an_internal_group(
    build: Any,
) -> None:
    """MCAD's forest snapshot fails if any consumer's group is not a leaf."""
    qm = QuotaManager()
    qm.add_tree_from_json(build.tree_doc("t1", {"R": (None, 9, False), "L": ("R", 9, False)}))
    qm.add_forest("F")
    qm.add_tree_to_forest("F", "t1")
    qm.add_consumer(build.forest_consumer("forced", {"t1": ("R", {"cpu": 1})}))
    assert qm.allocate_forest("F", "forced").allocated
    qm.set_mode(Mode.NORMAL)
    qm.add_consumer(build.forest_consumer("c", {"t1": ("L", {"cpu": 1})}))
    before = qm.tree_state("t1")
    assert qm.try_allocate_forest("F", "c").allocated
    assert qm.undo_allocate_forest("F", "c")
    assert qm.tree_state("t1") == before


def test_a_failed_forest_allocation_puts_victims_back_exactly_where_they_were(
    build: Any,
) -> None:
    """MCAD re-allocates them with the normal algorithm, which may place them elsewhere."""
    qm = QuotaManager()
    qm.add_tree_from_json(build.tree_doc("t1", {"R": (None, 3, False), "L0": ("R", 0, False),
                                                "L1": ("R", 3, False)}))
    qm.add_tree_from_json(build.tree_doc("t2", {"X": (None, 1, True)}))
    qm.add_forest("F")
    qm.add_tree_to_forest("F", "t1")
    qm.add_tree_to_forest("F", "t2")
    qm.set_mode(Mode.NORMAL)
    for cid in ("b1", "b2", "b3"):
        build.place(qm, "t1", cid, "L0", 1)
    build.place(qm, "t2", "full", "X", 1)
    before = qm.tree_state("t1"), qm.tree_state("t2")
    qm.add_consumer(build.forest_consumer("c", {"t1": ("L1", {"cpu": 2}),
                                                "t2": ("X", {"cpu": 1})}))
    response = qm.allocate_forest("F", "c")
    assert not response.allocated
    assert response.message == "Failed to allocate quota on quota designation 't2'"
    assert (qm.tree_state("t1"), qm.tree_state("t2")) == before
    assert all(qm.is_allocated("t1", cid) for cid in ("b1", "b2", "b3"))


def test_a_forced_forest_allocation_with_a_missing_node_allocates_nowhere(
    build: Any,
) -> None:
    """MCAD keeps the partial allocation while answering that it failed."""
    qm = _forest(build)
    qm.set_mode(Mode.MAINTENANCE)
    qm.add_consumer(build.forest_consumer("c", {"t1": ("R", {"cpu": 9}),
                                                "t2": ("nowhere", {"cpu": 1})}))
    response = qm.allocate_forest("F", "c")
    assert not response.allocated
    assert response.message == "failed force allocate consumer c on node nowhere"
    assert not qm.is_allocated("t1", "c")
    assert build.allocated(qm, "t1") == {"R": 0}

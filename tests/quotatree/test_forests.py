"""Forests: allocation on several trees together or on none, their management and updates."""

from __future__ import annotations

import json
from typing import Any

import pytest

from quotactor.quotatree import ConsumerInfo, Mode, QuotaManager, QuotaTreeError

TEST_TREE = json.dumps({
    "kind": "QuotaTree", "metadata": {"name": "test-tree"},
    "spec": {"resourceNames": ["cpu", "memory"], "nodes": {
        "A": {"parent": "nil", "quota": {"cpu": "12", "memory": "256"}},
        "B": {"parent": "A", "quota": {"cpu": "4", "memory": "64"}},
        "C": {"parent": "A", "quota": {"cpu": "4", "memory": "64"}},
    }},
})
SERVICE_TREE = json.dumps({
    "kind": "QuotaTree", "metadata": {"name": "service-tree"},
    "spec": {"resourceNames": ["count"], "nodes": {
        "root": {"parent": "nil", "quota": {"count": "12"}},
        "X": {"parent": "root", "quota": {"count": "5"}},
        "Y": {"parent": "root", "quota": {"count": "5"}},
        "Z": {"parent": "Y", "quota": {"count": "6"}},
    }},
})
FOREST = "testForest"


def _job(cid: str, group: str = "B", cpu: int = 4, service: str | None = "X", count: int = 3,
         priority: int = 0) -> ConsumerInfo:
    trees: list[dict[str, Any]] = [{"treeName": "test-tree", "groupID": group,
                                    "request": {"cpu": cpu, "memory": 32},
                                    "priority": priority}]
    if service is not None:
        trees.append({"treeName": "service-tree", "groupID": service,
                      "request": {"count": count}, "priority": priority})
    return ConsumerInfo.from_json({"kind": "Consumer", "metadata": {"name": cid},
                                   "spec": {"id": cid, "trees": trees}})


@pytest.fixture
def qm() -> QuotaManager:
    manager = QuotaManager()
    manager.add_forest(FOREST)
    for doc in (TEST_TREE, SERVICE_TREE):
        manager.add_tree_to_forest(FOREST, manager.add_tree_from_json(doc))
    manager.set_mode(Mode.NORMAL)
    return manager


def _states(qm: QuotaManager) -> tuple[Any, Any]:
    return qm.tree_state("test-tree"), qm.tree_state("service-tree")


def test_a_forest_consumer_is_allocated_on_every_tree(qm: QuotaManager) -> None:
    qm.add_consumer(_job("F-1"))
    response = qm.allocate_forest(FOREST, "F-1")
    assert (response.allocated, response.message) == (True, "")
    assert qm.allocated_node("test-tree", "F-1") == "B"
    assert qm.allocated_node("service-tree", "F-1") == "X"
    assert qm.is_allocated_forest(FOREST, "F-1")
    again = qm.allocate_forest(FOREST, "F-1")
    assert again.message == "consumer F-1 already allocated on forest testForest"
    assert qm.deallocate_forest(FOREST, "F-1")
    assert not qm.is_allocated("test-tree", "F-1") and not qm.is_allocated("service-tree", "F-1")
    assert not qm.deallocate_forest(FOREST, "F-1")


def test_a_forest_allocation_that_fails_on_one_tree_changes_no_tree(qm: QuotaManager) -> None:
    qm.add_consumer(_job("F-1"))
    qm.allocate_forest(FOREST, "F-1")
    before = _states(qm)
    qm.add_consumer(_job("too-many", group="C", count=10))
    response = qm.allocate_forest(FOREST, "too-many")
    assert not response.allocated
    assert response.message == "Failed to allocate quota on quota designation 'service-tree'"
    assert _states(qm) == before
    assert not qm.is_allocated("test-tree", "too-many")


def test_a_consumer_preempted_on_one_tree_leaves_every_tree_of_the_forest(
    qm: QuotaManager,
) -> None:
    qm.add_consumer(_job("borrower", group="B", cpu=0, service="Z", count=7))
    assert qm.allocate_forest(FOREST, "borrower").allocated
    assert qm.allocated_node("service-tree", "borrower") == "root"
    qm.add_consumer(_job("owner", group="C", cpu=1, service="X", count=5))
    qm.add_consumer(_job("owner-2", group="C", cpu=1, service="Z", count=5))
    assert qm.allocate_forest(FOREST, "owner").allocated
    response = qm.allocate_forest(FOREST, "owner-2")
    assert response.allocated and response.preempted_ids == {"borrower"}
    assert not qm.is_allocated("test-tree", "borrower")
    assert not qm.is_allocated("service-tree", "borrower")
    assert qm.tree_state("test-tree")["A"]["allocated"] == {"cpu": 2, "memory": 64}


def test_a_consumer_whose_spec_lacks_a_forest_tree_is_allocated_on_the_others(
    qm: QuotaManager,
) -> None:
    qm.add_consumer(_job("partial", service=None))
    assert qm.allocate_forest(FOREST, "partial").allocated
    assert qm.is_allocated("test-tree", "partial")
    assert not qm.is_allocated_forest(FOREST, "partial")
    again = qm.allocate_forest(FOREST, "partial")
    assert again.message == "consumer partial already allocated on forest testForest"
    assert qm.tree_state("test-tree")["B"]["allocated"] == {"cpu": 4, "memory": 32}


def test_a_consumer_naming_no_tree_of_the_forest_is_refused(qm: QuotaManager) -> None:
    qm.add_consumer(ConsumerInfo.from_json({"kind": "Consumer", "spec": {"id": "x", "trees": [
        {"treeName": "elsewhere", "groupID": "A", "request": {"cpu": 1}}]}}))
    response = qm.allocate_forest(FOREST, "x")
    assert response.message == "consumer x requests no tree of forest testForest"


def test_a_forest_consumer_without_a_group_for_a_tree_is_refused(qm: QuotaManager) -> None:
    qm.add_consumer(_job("no-group", service=""))
    before = _states(qm)
    response = qm.allocate_forest(FOREST, "no-group")
    assert response.message == "No quota designations provided for 'service-tree'"
    assert _states(qm) == before


def test_undo_of_a_forest_try_restores_every_tree(qm: QuotaManager) -> None:
    qm.add_consumer(_job("F-1"))
    qm.allocate_forest(FOREST, "F-1")
    before = _states(qm)
    qm.add_consumer(_job("F-5", group="C"))
    assert qm.try_allocate_forest(FOREST, "F-5").allocated
    assert qm.is_allocated_forest(FOREST, "F-5")
    assert qm.undo_allocate_forest(FOREST, "F-5")
    assert _states(qm) == before and not qm.undo_allocate_forest(FOREST, "F-5")


def test_undo_of_mcads_invalid_forest_consumer_succeeds_and_changes_nothing(
    qm: QuotaManager,
) -> None:
    qm.add_consumer(_job("F-1"))
    qm.allocate_forest(FOREST, "F-1")
    before = _states(qm)
    qm.add_consumer(ConsumerInfo.from_json({"kind": "Consumer", "spec": {"id": "F-6", "trees": [
        {"treeName": "test-tree", "groupID": "F", "request": {"cpu": 2, "memory": 16}},
        {"treeName": "unknown-tree", "groupID": "X", "request": {"count": 3}}]}}))
    response = qm.try_allocate_forest(FOREST, "F-6")
    assert response.message == "Failed to take a state snapshot of tree 'test-tree'"
    assert qm.undo_allocate_forest(FOREST, "F-6")
    assert _states(qm) == before


def test_undo_of_a_forest_try_is_refused_after_one_of_its_trees_changed(
    qm: QuotaManager,
) -> None:
    qm.add_consumer(_job("F-5", group="C"))
    qm.add_consumer(_job("other", service=None, cpu=1))
    qm.try_allocate_forest(FOREST, "F-5")
    qm.allocate("test-tree", "other")
    assert not qm.undo_allocate_forest(FOREST, "F-5")
    assert qm.is_allocated_forest(FOREST, "F-5")


def test_maintenance_mode_forces_forest_consumers_and_its_try_can_be_undone(
    qm: QuotaManager,
) -> None:
    qm.set_mode(Mode.MAINTENANCE)
    qm.add_consumer(_job("huge", cpu=40, count=50))
    assert qm.allocate_forest(FOREST, "huge").allocated
    assert qm.tree_state("service-tree")["X"]["allocated"] == {"count": 50}
    qm.add_consumer(_job("tried", group="A", service="root"))
    before = _states(qm)
    assert qm.try_allocate_forest(FOREST, "tried").allocated
    assert qm.allocated_node("test-tree", "tried") == "A"
    assert qm.undo_allocate_forest(FOREST, "tried")
    assert _states(qm) == before


def test_forests_are_listed_and_managed_by_name(qm: QuotaManager, build: Any) -> None:
    qm.add_tree_from_json(build.tree_doc("third", {"R": (None, 1, False)}))
    qm.add_forest("other")
    qm.add_tree_to_forest("other", "third")
    assert qm.forest_names() == ["other", FOREST]
    assert qm.forest_tree_names() == {"other": ["third"],
                                      FOREST: ["service-tree", "test-tree"]}
    with pytest.raises(QuotaTreeError, match="duplicate forest name other"):
        qm.add_forest("other")
    with pytest.raises(QuotaTreeError, match="unknown forest name nope"):
        qm.add_tree_to_forest("nope", "third")
    with pytest.raises(QuotaTreeError, match="unknown tree name nope"):
        qm.add_tree_to_forest("other", "nope")
    with pytest.raises(QuotaTreeError, match="forest other does not include tree test-tree"):
        qm.delete_tree_from_forest("other", "test-tree")
    qm.delete_tree_from_forest(FOREST, "test-tree")
    assert qm.forest_tree_names()[FOREST] == ["service-tree"]
    qm.delete_forest("other")
    with pytest.raises(QuotaTreeError, match="forest other does not exist"):
        qm.delete_forest("other")
    assert qm.tree_names() == ["service-tree", "test-tree", "third"]
    for call in (qm.allocate_forest, qm.deallocate_forest, qm.is_allocated_forest,
                 qm.try_allocate_forest, qm.undo_allocate_forest):
        with pytest.raises(QuotaTreeError, match="invalid forest name other"):
            call("other", "x")


def test_deleting_a_tree_does_not_detach_it_from_its_forest(qm: QuotaManager) -> None:
    qm.add_consumer(_job("F-1"))
    qm.allocate_forest(FOREST, "F-1")
    with pytest.raises(QuotaTreeError, match="consumer\\(s\\) allocated in tree test-tree"):
        qm.delete_tree("test-tree")
    qm.deallocate_forest(FOREST, "F-1")
    qm.delete_tree("test-tree")
    assert qm.tree_names() == ["service-tree"]
    assert qm.forest_tree_names()[FOREST] == ["service-tree", "test-tree"]
    assert qm.allocate_forest(FOREST, "F-1").allocated


def test_a_forest_update_removes_consumers_unallocated_on_any_tree_from_all(
    qm: QuotaManager,
) -> None:
    qm.add_consumer(_job("F-1"))
    qm.allocate_forest(FOREST, "F-1")
    cache = qm.tree_cache("service-tree")
    for node in cache.node_names():
        cache.delete_node(node)
    ids, responses = qm.update_forest(FOREST)
    assert ids == ["F-1"]
    assert responses["service-tree"].root_node_name == ""
    assert responses["test-tree"].is_clean()
    assert not qm.is_allocated("test-tree", "F-1")
    assert qm.tree_state("test-tree")["A"]["allocated"] == {"cpu": 0, "memory": 0}

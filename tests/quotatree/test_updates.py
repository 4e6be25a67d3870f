"""Tree caches and update_tree: consumers re-placed on a changed tree, never evicted."""

from __future__ import annotations

from typing import Any

import pytest

from quotactor.quotatree import (
    Mode,
    NodeSpec,
    QuotaManager,
    QuotaTreeError,
    TreeCacheCreateResponse,
)

T = "T"
NODES = {"R": (None, 6, False), "M": ("R", 4, False), "L1": ("M", 2, False),
         "L2": ("M", 2, False), "S": ("R", 2, False)}


def _loaded(build: Any) -> QuotaManager:
    qm = build.manager(T, NODES)
    build.place(qm, T, "a", "L1", 2)
    build.place(qm, T, "b", "L1", 2)
    build.place(qm, T, "s", "S", 2)
    assert build.nodes_of(qm, T) == {"a": "L1", "b": "M", "s": "S"}
    return qm


def test_an_update_without_changes_keeps_every_consumer_where_it_was(build: Any) -> None:
    qm = _loaded(build)
    before = qm.tree_state(T)
    ids, response = qm.update_tree(T)
    assert ids == []
    assert response == TreeCacheCreateResponse(T, "R", ())
    assert response.is_clean()
    assert qm.tree_state(T) == before


def test_shrinking_a_quota_evicts_nobody_and_later_allocations_see_the_overcommitment(
    build: Any,
) -> None:
    qm = _loaded(build)
    qm.tree_cache(T).add_node_spec("M", {"parent": "R", "quota": {"cpu": "1"}})
    assert qm.update_tree(T)[0] == []
    assert build.nodes_of(qm, T) == {"a": "L1", "b": "M", "s": "S"}
    assert qm.tree_state(T)["M"] == {"parent": "R", "hard": False, "quota": {"cpu": 1},
                                     "allocated": {"cpu": 4}, "consumers": ["b"]}
    assert not build.place(qm, T, "new", "L2", 1, unpreemptable=True).allocated
    assert qm.deallocate(T, "b")
    assert build.allocated(qm, T) == {"R": 4, "M": 2, "L1": 2, "L2": 0, "S": 2}


def test_renamed_nodes_carry_their_consumers_and_children(build: Any) -> None:
    qm = _loaded(build)
    cache = qm.tree_cache(T)
    cache.rename_node("M", "Middle")
    cache.rename_node("L1", "Leaf")
    assert cache.renamed_node("M") == "Middle"
    assert cache.node_spec("Leaf") == NodeSpec("Middle", False, {"cpu": 2})
    qm.update_tree(T)
    assert build.nodes_of(qm, T) == {"a": "Leaf", "b": "Middle", "s": "S"}
    assert qm.allocated_node(T, "b") == "Middle"
    assert qm.deallocate(T, "a")
    assert build.nodes_of(qm, T) == {"b": "Leaf", "s": "S"}


def test_renames_chain_before_an_update(build: Any) -> None:
    qm = _loaded(build)
    cache = qm.tree_cache(T)
    cache.rename_node("L1", "B")
    cache.rename_node("B", "C")
    qm.update_tree(T)
    assert qm.allocated_node(T, "a") == "C"


@pytest.mark.parametrize(("old", "new", "reason"), [
    ("M", "M", "invalid nodeName"), ("nope", "X", "does not exist"),
    ("M", "S", "node with name S already exists"),
])
def test_a_bad_rename_is_refused_and_changes_nothing(build: Any, old: str, new: str,
                                                     reason: str) -> None:
    qm = _loaded(build)
    cache = qm.tree_cache(T)
    with pytest.raises(QuotaTreeError, match=reason):
        cache.rename_node(old, new)
    assert cache.node_names() == ["L1", "L2", "M", "R", "S"]


def test_a_consumer_whose_node_disappeared_goes_to_its_group_node(build: Any) -> None:
    qm = _loaded(build)
    cache = qm.tree_cache(T)
    cache.add_node_spec("L1", {"parent": "R", "quota": {"cpu": "2"}})
    cache.add_node_spec("L2", {"parent": "R", "quota": {"cpu": "2"}})
    cache.delete_node("M")
    qm.update_tree(T)
    assert build.nodes_of(qm, T) == {"a": "L1", "b": "L1", "s": "S"}
    assert build.allocated(qm, T) == {"R": 6, "L1": 4, "L2": 0, "S": 2}


def test_a_consumer_whose_group_disappeared_goes_to_the_root(build: Any) -> None:
    qm = _loaded(build)
    qm.tree_cache(T).delete_node("S")
    ids, response = qm.update_tree(T)
    assert ids == [] and response.is_clean()
    assert qm.allocated_node(T, "s") == "R"


def test_a_group_that_became_internal_holds_its_consumers_there(build: Any) -> None:
    qm = _loaded(build)
    qm.tree_cache(T).add_node_spec("L1a", {"parent": "L1", "quota": {"cpu": "1"}})
    qm.update_tree(T)
    assert build.nodes_of(qm, T) == {"a": "L1", "b": "L1", "s": "S"}
    refused = build.place(qm, T, "new", "L1", 1)
    assert not refused.allocated
    assert qm.deallocate(T, "a") and qm.deallocate(T, "b")


def test_consumers_are_unallocated_only_when_the_new_tree_is_empty(build: Any) -> None:
    qm = _loaded(build)
    qm.tree_cache(T).clear()
    ids, response = qm.update_tree(T)
    assert ids == ["a", "b", "s"]
    assert response == TreeCacheCreateResponse(T, "", ())
    assert not response.is_clean()
    assert qm.dump(T) == "QuotaTree T: \nnull"
    assert qm.tree_state(T) == {}
    assert not qm.is_allocated(T, "a")


def test_dangling_nodes_are_reported_and_left_out(build: Any) -> None:
    qm = _loaded(build)
    cache = qm.tree_cache(T)
    cache.add_node_specs_from_json(
        '{"Orphan": {"parent": "Missing", "quota": {"cpu": "1"}},'
        ' "Root2": {"parent": "nil", "quota": {"cpu": "1"}},'
        ' "Kid": {"parent": "Root2", "quota": {"cpu": "1"}}}'
    )
    ids, response = qm.update_tree(T)
    assert ids == []
    assert response.root_node_name == "R"
    assert response.dangling_node_names == ("Kid", "Orphan", "Root2")
    assert "Orphan" not in qm.tree_state(T)


def test_an_invalid_node_spec_is_refused_and_none_of_its_batch_is_added(build: Any) -> None:
    qm = _loaded(build)
    cache = qm.tree_cache(T)
    with pytest.raises(QuotaTreeError, match="node Bad: quota is missing"):
        cache.add_node_specs({"Good": {"parent": "R", "quota": {"cpu": "1"}},
                              "Bad": {"parent": "R"}})
    with pytest.raises(QuotaTreeError, match="node Empty: node spec is invalid"):
        cache.add_node_spec("Empty", {})
    assert cache.node_names() == ["L1", "L2", "M", "R", "S"]


def test_a_pending_resource_change_fails_normal_allocations_until_the_update(
    build: Any,
) -> None:
    qm = _loaded(build)
    cache = qm.tree_cache(T)
    cache.add_resource_name("memory")
    assert cache.resource_names() == ("cpu", "memory")
    assert not build.place(qm, T, "new", "L2", {"cpu": 1, "memory": 1}).allocated
    cache.add_node_spec("L2", {"parent": "M", "quota": {"cpu": "2", "memory": "4"}})
    for node in ("R", "M"):
        cache.add_node_spec(node, {"parent": NODES[node][0] or "nil",
                                   "quota": {"cpu": str(NODES[node][1]), "memory": "4"}})
    qm.update_tree(T)
    assert qm.tree_state(T)["M"]["allocated"] == {"cpu": 4, "memory": 0}
    assert qm.allocate(T, "new").allocated
    assert qm.tree_state(T)["L2"]["allocated"] == {"cpu": 1, "memory": 1}


def test_a_tree_added_by_name_is_built_through_its_cache(build: Any) -> None:
    qm = QuotaManager()
    assert qm.add_tree_by_name("Incremental") == "Incremental"
    assert qm.tree_state("Incremental") == {}
    cache = qm.tree_cache("Incremental")
    assert cache.resource_names() == ("cpu", "memory", "nvidia.com/gpu")
    cache.add_tree_info_from_json('{"name": "Incremental", "resourceNames": ["cpu"]}')
    assert cache.resource_names() == ("cpu",)
    cache.add_node_specs_from_json('{"Root": {"parent": "nil", "quota": {"cpu": "10"}},'
                                   ' "Org-A": {"parent": "Root", "quota": {"cpu": "4"}}}')
    ids, response = qm.update_tree("Incremental")
    assert ids == [] and response.is_clean()
    qm.set_mode(Mode.NORMAL)
    assert build.place(qm, "Incremental", "c", "Org-A", {"cpu": 3}).allocated
    with pytest.raises(QuotaTreeError, match="this cache is Incremental"):
        cache.add_tree_info_from_json('{"name": "Other"}')


def test_tree_management_refuses_bad_names_and_busy_trees(build: Any) -> None:
    qm = _loaded(build)
    with pytest.raises(QuotaTreeError, match="invalid tree name"):
        qm.add_tree_by_name("")
    with pytest.raises(QuotaTreeError, match="tree T already exists"):
        qm.add_tree_by_name(T)
    with pytest.raises(QuotaTreeError, match="consumer\\(s\\) allocated in tree T"):
        qm.delete_tree(T)
    for cid in ("a", "b", "s"):
        qm.deallocate(T, cid)
    qm.delete_tree(T)
    assert qm.tree_names() == []
    for call in (qm.update_tree, qm.tree_cache, qm.delete_tree, qm.dump, qm.tree_state):
        with pytest.raises(QuotaTreeError, match="invalid tree name T"):
            call(T)


def test_consumer_specs_are_added_once_and_removed_without_deallocating(build: Any) -> None:
    qm = _loaded(build)
    assert qm.consumer_ids() == ["a", "b", "s"]
    with pytest.raises(QuotaTreeError, match="consumer a already exists"):
        qm.add_consumer(build.consumer("a", T, "L1", 1))
    assert qm.remove_consumer("a")
    assert qm.consumer_ids() == ["b", "s"] and qm.is_allocated(T, "a")
    with pytest.raises(QuotaTreeError, match="consumer a does not exist"):
        qm.remove_consumer("a")
    assert qm.deallocate(T, "a")

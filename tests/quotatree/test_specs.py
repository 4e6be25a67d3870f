"""Reading MCAD's QuotaTree and Consumer JSON: what is accepted, what is refused and why."""

from __future__ import annotations

import json
from typing import Any

import pytest

from quotactor.quotatree import ConsumerInfo, QuotaManager, QuotaTreeError

README_TREE = {
    "kind": "QuotaTree",
    "metadata": {"name": "TestTree"},
    "spec": {
        "resourceNames": ["cpu", "memory"],
        "nodes": {
            "A": {"parent": "nil", "hard": "true", "quota": {"cpu": "10", "memory": "256"}},
            "B": {"parent": "A", "hard": "true", "quota": {"cpu": "2", "memory": "64"}},
            "C": {"parent": "A", "hard": "false", "quota": {"cpu": "6", "memory": "64"}},
        },
    },
}


def _tree(**changes: Any) -> dict[str, Any]:
    doc = json.loads(json.dumps(README_TREE))
    nodes = doc["spec"]["nodes"]
    for node, spec in changes.items():
        if spec is None:
            del nodes[node]
        else:
            nodes[node] = spec
    return doc


def test_the_readme_tree_is_read_with_sorted_resource_names_and_string_values() -> None:
    qm = QuotaManager()
    assert qm.add_tree_from_json(json.dumps(README_TREE)) == "TestTree"
    state = qm.tree_state("TestTree")
    assert list(state) == ["A", "B", "C"]
    assert state["A"] == {"parent": None, "hard": True, "quota": {"cpu": 10, "memory": 256},
                          "allocated": {"cpu": 0, "memory": 0}, "consumers": []}
    assert state["C"]["hard"] is False and state["C"]["parent"] == "A"
    assert qm.tree_names() == ["TestTree"]


def test_plain_json_numbers_and_booleans_are_accepted_too() -> None:
    qm = QuotaManager()
    qm.add_tree_from_json(_tree(C={"parent": "A", "hard": True, "quota": {"cpu": 6}}))
    assert qm.tree_state("TestTree")["C"]["quota"] == {"cpu": 6, "memory": 0}
    assert qm.tree_state("TestTree")["C"]["hard"] is True


def test_a_missing_hard_flag_means_soft_and_a_missing_resource_means_zero() -> None:
    qm = QuotaManager()
    qm.add_tree_from_json(_tree(C={"parent": "A", "quota": {"cpu": "6"}}))
    assert qm.tree_state("TestTree")["C"]["hard"] is False
    assert qm.tree_state("TestTree")["C"]["quota"]["memory"] == 0


def test_no_resource_names_means_mcads_defaults() -> None:
    doc = _tree()
    del doc["spec"]["resourceNames"]
    qm = QuotaManager()
    qm.add_tree_from_json(doc)
    assert list(qm.tree_state("TestTree")["A"]["quota"]) == ["cpu", "memory", "nvidia.com/gpu"]


@pytest.mark.parametrize(("doc", "reason"), [
    ("{not json", "invalid JSON"),
    (json.dumps({**README_TREE, "kind": "Tree"}), "invalid kind: Tree"),
    (json.dumps({**README_TREE, "metadata": {"name": ""}}), "invalid tree name"),
    (json.dumps({**README_TREE, "metadata": {}}), "invalid tree name"),
    (_tree(C={"parent": "A", "hard": "false"}), "node C: quota is missing"),
    (_tree(C={}), "node C: node spec is invalid"),
    (_tree(C={"parent": "X", "quota": {"cpu": "1"}}), "node C: unknown parent X"),
    (_tree(C={"parent": "D", "quota": {}}, D={"parent": "C", "quota": {}}),
     "nodes in a parent cycle: C, D"),
    (_tree(C={"parent": "C", "quota": {}}), "nodes in a parent cycle: C"),
    (_tree(C={"parent": "nil", "quota": {}}), "more than one root: A, C"),
    (_tree(A=None, B=None, C=None), "no nodes"),
    (_tree(**{"": {"parent": "A", "quota": {}}}), "node names must be non-empty"),
    (_tree(C={"parent": "A", "quota": {"cpu": "six"}}), "quota for cpu must be"),
    (_tree(C={"parent": "A", "quota": {"cpu": "-1"}}), "quota for cpu must be"),
    (_tree(C={"parent": "A", "hard": "maybe", "quota": {}}), "hard must be"),
    (json.dumps({**README_TREE, "spec": {"resourceNames": ["cpu", ""], "nodes": {}}}),
     "resourceNames must be a list of non-empty strings"),
])
def test_a_bad_tree_spec_is_refused_with_its_reason_and_nothing_changes(
    doc: Any, reason: str
) -> None:
    qm = QuotaManager()
    with pytest.raises(QuotaTreeError, match=reason):
        qm.add_tree_from_json(doc)
    assert qm.tree_names() == []


def test_a_duplicate_tree_is_refused_and_the_first_one_stays() -> None:
    qm = QuotaManager()
    qm.add_tree_from_json(json.dumps(README_TREE))
    with pytest.raises(QuotaTreeError, match="tree TestTree already exists; delete first"):
        qm.add_tree_from_json(_tree(C=None))
    assert list(qm.tree_state("TestTree")) == ["A", "B", "C"]


def test_quota_tree_error_is_a_value_error() -> None:
    assert issubclass(QuotaTreeError, ValueError)


CONSUMER = {
    "kind": "Consumer",
    "metadata": {"name": "consumer-data"},
    "spec": {"id": "job-1", "trees": [
        {"treeName": "ContextTree", "groupID": "Context-4", "request": {"cpu": 2},
         "priority": 0},
        {"treeName": "ServiceTree", "groupID": "Srvc-X", "request": {"cpu": 2, "disk": 1},
         "priority": 3, "type": 1, "unPreemptable": True},
    ]},
}


def test_a_forest_consumer_keeps_one_entry_per_tree_with_mcads_defaults() -> None:
    info = ConsumerInfo.from_json(json.dumps(CONSUMER))
    assert info.id == "job-1"
    context, service = info.trees
    assert (context.tree_name, context.group_id, dict(context.request)) == (
        "ContextTree", "Context-4", {"cpu": 2})
    assert (context.priority, context.ctype, context.unpreemptable) == (0, 0, False)
    assert (service.priority, service.ctype, service.unpreemptable) == (3, 1, True)
    assert info.tree_spec("ServiceTree") is service
    assert info.tree_spec("Other") is None


def test_the_readme_consumer_sample_with_its_trees_colon_typo_has_no_trees() -> None:
    doc = {"kind": "Consumer", "metadata": {"name": "consumer-data"},
           "spec": {"id": "consumer-1", "trees:": [{"treeName": "ExampleTree"}]}}
    assert ConsumerInfo.from_json(doc).trees == ()


@pytest.mark.parametrize(("change", "reason"), [
    ({"kind": "Job"}, "consumer invalid kind: Job"),
    ({"spec": {"id": ""}}, "missing consumer ID"),
    ({"spec": {"trees": []}}, "missing consumer ID"),
    ({"spec": {"id": "x", "trees": [{"treeName": "T", "request": {"cpu": "2"}}]}},
     "request cpu: expected an integer"),
    ({"spec": {"id": "x", "trees": [{"treeName": "T", "request": {"cpu": -2}}]}},
     "request cpu: must be at least 0"),
    ({"spec": {"id": "x", "trees": [{"treeName": "T", "priority": "high"}]}},
     "priority: expected an integer"),
    ({"spec": {"id": "x", "trees": {"treeName": "T"}}}, "trees must be a list"),
])
def test_a_bad_consumer_spec_is_refused_with_its_reason(change: dict[str, Any],
                                                        reason: str) -> None:
    with pytest.raises(QuotaTreeError, match=reason):
        ConsumerInfo.from_json({**CONSUMER, **change})


def test_a_consumer_file_that_cannot_be_read_is_a_quota_tree_error(tmp_path: Any) -> None:
    with pytest.raises(QuotaTreeError, match="cannot read consumer file"):
        ConsumerInfo.from_file(tmp_path / "missing.json")

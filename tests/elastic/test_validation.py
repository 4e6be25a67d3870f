"""Koordinator's webhook rules: every refusal is a QuotaError and changes nothing."""

from __future__ import annotations

import pytest

from quotactor.elastic import (
    DEFAULT_QUOTA,
    ROOT_QUOTA,
    SYSTEM_QUOTA,
    ElasticQuotaManager,
    QuotaError,
    QuotaSpec,
)


def tree() -> ElasticQuotaManager:
    """dept (parent, min cpu 10) with team-a (min 6) and team-b (min 4); solo at the root."""
    eq = ElasticQuotaManager(total={"cpu": 100})
    eq.upsert(QuotaSpec("dept", is_parent=True, min={"cpu": 10}, max={"cpu": 50}))
    eq.upsert(QuotaSpec("team-a", parent="dept", min={"cpu": 6}, max={"cpu": 50}))
    eq.upsert(QuotaSpec("team-b", parent="dept", min={"cpu": 4}, max={"cpu": 50}))
    eq.upsert(QuotaSpec("solo", min={"cpu": 1}, max={"cpu": 10}))
    return eq


def refused(eq: ElasticQuotaManager, spec: QuotaSpec, message: str) -> None:
    before = (eq.specs(), eq.statuses())
    with pytest.raises(QuotaError, match=message):
        eq.upsert(spec)
    assert (eq.specs(), eq.statuses()) == before


def test_min_names_must_be_within_max() -> None:
    refused(tree(), QuotaSpec("temp", min={"memory": 1}, max={"cpu": 10}),
            "resourceKey memory of quota temp is included in min, which is not included in max")


def test_min_must_not_exceed_max() -> None:
    refused(tree(), QuotaSpec("temp", min={"cpu": 12}, max={"cpu": 10}),
            "resourceKey cpu of quota temp min 12 > max 10")


def test_negative_values_are_refused() -> None:
    refused(tree(), QuotaSpec("temp", max={"cpu": -1}), "negative max")
    refused(tree(), QuotaSpec("temp", max={"cpu": 1}, shared_weight={"cpu": -1}),
            "negative shared weight")


def test_children_mins_must_fit_in_the_parents_min_below_the_first_level() -> None:
    refused(tree(), QuotaSpec("team-c", parent="dept", min={"cpu": 1}, max={"cpu": 5}),
            "children's min of quota dept")


def test_the_sum_counts_names_missing_from_the_parents_min_as_zero() -> None:
    eq = tree()
    eq.upsert(QuotaSpec("dept", is_parent=True, min={"cpu": 10}, max={"cpu": 50, "gpu": 4}))
    refused(eq, QuotaSpec("team-a", parent="dept", min={"cpu": 6, "gpu": 1},
                          max={"cpu": 50, "gpu": 4}), "children's min of quota dept")


def test_a_parent_cannot_lower_its_min_below_its_childrens() -> None:
    refused(tree(), QuotaSpec("dept", is_parent=True, min={"cpu": 9}, max={"cpu": 50}),
            "children's min of quota dept")


def test_first_level_mins_may_exceed_the_cluster() -> None:
    eq = tree()
    eq.upsert(QuotaSpec("huge", min={"cpu": 1000}, max={"cpu": 1000}))
    assert eq.runtime("huge") == {}


def test_the_parent_must_exist_and_be_a_parent_quota() -> None:
    refused(tree(), QuotaSpec("x", parent="nowhere", max={"cpu": 1}), "does not exist")
    refused(tree(), QuotaSpec("x", parent="solo", max={"cpu": 1}), "is not a parent quota")
    refused(tree(), QuotaSpec("x", parent=DEFAULT_QUOTA, max={"cpu": 1}), "not a parent quota")


def test_a_child_cannot_have_resource_names_its_parent_lacks() -> None:
    refused(tree(), QuotaSpec("team-a", parent="dept", min={"cpu": 6},
                              max={"cpu": 50, "gpu": 1}), "not included in the max of its parent")


def test_a_parent_cannot_drop_a_name_its_children_use() -> None:
    refused(tree(), QuotaSpec("dept", is_parent=True, min={"cpu": 10}, max={"gpu": 1}),
            "included in min, which is not included in max")


def test_moving_a_quota_under_its_own_descendant_is_a_cycle() -> None:
    eq = tree()
    eq.upsert(QuotaSpec("sub", parent="dept", is_parent=True, max={"cpu": 50}))
    refused(eq, QuotaSpec("dept", parent="sub", is_parent=True, min={"cpu": 10},
                          max={"cpu": 50}), "cycle")
    refused(eq, QuotaSpec("sub", parent="sub", is_parent=True, max={"cpu": 50}), "cycle")


def test_a_quota_may_move_to_another_parent_when_the_rules_still_hold() -> None:
    eq = tree()
    eq.upsert(QuotaSpec("dept2", is_parent=True, min={"cpu": 6}, max={"cpu": 50}))
    eq.upsert(QuotaSpec("team-a", parent="dept2", min={"cpu": 6}, max={"cpu": 50}))
    assert eq.status("dept2").children == ("team-a",)
    assert eq.status("dept").children == ("team-b",)


def test_is_parent_is_fixed_while_children_or_pods_exist() -> None:
    eq = tree()
    refused(eq, QuotaSpec("dept", is_parent=False, min={"cpu": 10}, max={"cpu": 50}),
            "must stay a parent")
    eq.add_pod("p", "solo", {"cpu": 1})
    refused(eq, QuotaSpec("solo", is_parent=True, min={"cpu": 1}, max={"cpu": 10}),
            "cannot become a parent")
    eq.remove_pod("p")
    eq.upsert(QuotaSpec("solo", is_parent=True, min={"cpu": 1}, max={"cpu": 10}))


def test_a_parent_quota_cannot_run_pods() -> None:
    eq = tree()
    with pytest.raises(QuotaError, match="parent quota"):
        eq.add_pod("p", "dept", {"cpu": 1})
    assert not eq.admit("dept", {"cpu": 1}).ok


def test_removing_a_quota_with_children_or_pods_is_refused() -> None:
    eq = tree()
    with pytest.raises(QuotaError, match="child quotas"):
        eq.remove("dept")
    eq.add_pod("p", "team-a", {"cpu": 1})
    with pytest.raises(QuotaError, match="pods"):
        eq.remove("team-a")
    eq.remove_pod("p")
    eq.remove("team-a")
    eq.remove("team-b")
    eq.remove("dept")
    assert "dept" not in eq.quota_names()


def test_the_special_groups_are_protected() -> None:
    eq = tree()
    for name in (ROOT_QUOTA, SYSTEM_QUOTA, DEFAULT_QUOTA):
        with pytest.raises(QuotaError, match="cannot be removed"):
            eq.remove(name)
    refused(eq, QuotaSpec(SYSTEM_QUOTA, max={"cpu": 1}), "cannot be modified")
    refused(eq, QuotaSpec(ROOT_QUOTA, is_parent=True), "cannot be modified")
    refused(eq, QuotaSpec(DEFAULT_QUOTA, is_parent=True), "must stay a leaf")


def test_unknown_quotas_and_pods_are_named_in_the_error() -> None:
    eq = tree()
    with pytest.raises(QuotaError, match="quota ghost does not exist"):
        eq.remove("ghost")
    with pytest.raises(QuotaError, match="quota ghost does not exist"):
        eq.runtime("ghost")
    with pytest.raises(QuotaError, match="pod ghost does not exist"):
        eq.assign_pod("ghost")


def test_bad_pods_are_refused() -> None:
    eq = tree()
    eq.add_pod("p", "solo", {"cpu": 1})
    with pytest.raises(QuotaError, match="already exists"):
        eq.add_pod("p", "solo", {"cpu": 1})
    with pytest.raises(QuotaError, match="negative"):
        eq.add_pod("q", "solo", {"cpu": -1})
    with pytest.raises(QuotaError, match="integer"):
        eq.add_pod("q", "solo", {"cpu": 1.5})  # type: ignore[dict-item]
    with pytest.raises(QuotaError, match="priority"):
        eq.add_pod("q", "solo", {"cpu": 1}, priority="high")  # type: ignore[arg-type]


def test_a_bad_spec_value_is_a_quota_error() -> None:
    with pytest.raises(QuotaError):
        QuotaSpec("x", max={"cpu": "10"})  # type: ignore[dict-item]
    with pytest.raises(QuotaError):
        QuotaSpec("")

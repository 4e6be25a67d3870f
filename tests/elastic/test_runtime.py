"""Requests bottom-up and runtimes top-down through the manager, special groups included."""

from __future__ import annotations

from quotactor.core.resources import Resource
from quotactor.elastic import (
    DEFAULT_QUOTA,
    ROOT_QUOTA,
    SYSTEM_QUOTA,
    ElasticQuotaManager,
    QuotaSpec,
    compute_figures,
)


def cpu(n: int) -> Resource:
    return Resource({"cpu": n})


def seed_example() -> ElasticQuotaManager:
    """Seed 002: total 100; A lends, B, C and D share 45 by weights 60/50/80."""
    eq = ElasticQuotaManager(total=cpu(100))
    for name, low, weight, request in (("A", 10, 40, 5), ("B", 15, 60, 20), ("C", 20, 50, 40),
                                       ("D", 15, 80, 70)):
        eq.upsert(QuotaSpec(name, min=cpu(low), max=cpu(100), shared_weight=cpu(weight)))
        eq.add_pod(f"{name}-pod", name, cpu(request))
    return eq


def assert_matches_full_recompute(eq: ElasticQuotaManager) -> None:
    expected = compute_figures(eq.specs(), eq.pods(), eq.total, eq.scale_min)
    for status in eq.statuses():
        figures = expected[status.name]
        assert (status.request, status.limited_request, status.used, status.runtime,
                status.effective_min) == (figures.request, figures.limited_request,
                                          figures.used, figures.runtime,
                                          figures.effective_min), status.name


def test_the_seed_example_runtimes_are_5_20_35_40() -> None:
    eq = seed_example()
    assert [eq.runtime(n)["cpu"] for n in "ABCD"] == [5, 20, 35, 40]
    assert eq.runtime(ROOT_QUOTA) == cpu(100)
    assert_matches_full_recompute(eq)


def test_the_seed_example_recomputes_when_a_lender_wants_its_min_back() -> None:
    eq = seed_example()
    eq.add_pod("A-more", "A", cpu(5))
    assert [eq.runtime(n)["cpu"] for n in "ABCD"] == [10, 20, 33, 37]
    eq.remove_pod("A-more")
    assert [eq.runtime(n)["cpu"] for n in "ABCD"] == [5, 20, 35, 40]


def test_the_weight_defaults_to_max() -> None:
    eq = ElasticQuotaManager(total=cpu(90))
    eq.upsert(QuotaSpec("small", max=cpu(100)))
    eq.upsert(QuotaSpec("large", max=cpu(200)))
    eq.add_pod("s", "small", cpu(100))
    eq.add_pod("l", "large", cpu(200))
    assert (eq.runtime("small"), eq.runtime("large")) == (cpu(30), cpu(60))


def test_a_parents_request_is_the_sum_of_its_childrens_limited_requests() -> None:
    eq = ElasticQuotaManager(total=cpu(1000))
    eq.upsert(QuotaSpec("dept", is_parent=True, max=cpu(500)))
    eq.upsert(QuotaSpec("capped", parent="dept", max=cpu(10)))
    eq.upsert(QuotaSpec("free", parent="dept", max=cpu(500)))
    eq.add_pod("a", "capped", cpu(50))
    eq.add_pod("b", "free", cpu(30))
    assert eq.request("capped") == cpu(50)
    assert eq.status("capped").limited_request == cpu(10)
    assert eq.request("dept") == cpu(40)
    assert (eq.runtime("dept"), eq.runtime("capped"), eq.runtime("free")) == (
        cpu(40), cpu(10), cpu(30))


def test_a_quota_that_does_not_lend_asks_its_parent_for_its_whole_min() -> None:
    eq = ElasticQuotaManager(total=cpu(100))
    eq.upsert(QuotaSpec("dept", is_parent=True, min=cpu(40), max=cpu(100)))
    eq.upsert(QuotaSpec("keeper", parent="dept", min=cpu(30), max=cpu(100), allow_lent=False))
    eq.upsert(QuotaSpec("other", min=cpu(0), max=cpu(100)))
    eq.add_pod("p", "keeper", cpu(5))
    eq.add_pod("q", "other", cpu(100))
    assert eq.request("keeper") == cpu(30)
    assert eq.request("dept") == cpu(30)
    assert eq.runtime("keeper") == cpu(30)
    assert eq.runtime("other") == cpu(70)


def test_mins_are_scaled_when_the_cluster_shrinks_and_restored_when_it_grows() -> None:
    eq = ElasticQuotaManager(total=cpu(100))
    eq.upsert(QuotaSpec("a", min=cpu(60), max=cpu(100)))
    eq.upsert(QuotaSpec("b", min=cpu(40), max=cpu(100)))
    eq.add_pod("pa", "a", cpu(100))
    eq.add_pod("pb", "b", cpu(100))
    assert (eq.runtime("a"), eq.runtime("b")) == (cpu(60), cpu(40))
    eq.set_total(cpu(50))
    assert (eq.status("a").effective_min, eq.status("b").effective_min) == (cpu(30), cpu(20))
    assert (eq.runtime("a"), eq.runtime("b")) == (cpu(30), cpu(20))
    eq.set_total(cpu(100))
    assert (eq.status("a").effective_min, eq.status("b").effective_min) == (cpu(60), cpu(40))
    assert (eq.runtime("a"), eq.runtime("b")) == (cpu(60), cpu(40))


def test_without_scaling_the_mins_are_kept_even_beyond_the_total() -> None:
    eq = ElasticQuotaManager(total=cpu(50), scale_min=False)
    eq.upsert(QuotaSpec("a", min=cpu(60), max=cpu(100)))
    eq.upsert(QuotaSpec("b", min=cpu(40), max=cpu(100)))
    eq.add_pod("pa", "a", cpu(100))
    eq.add_pod("pb", "b", cpu(100))
    assert (eq.runtime("a"), eq.runtime("b")) == (cpu(60), cpu(40))


def test_scaling_applies_below_the_first_level_against_the_parents_runtime() -> None:
    eq = ElasticQuotaManager(total=cpu(100))
    eq.upsert(QuotaSpec("dept", is_parent=True, min=cpu(40), max=cpu(100)))
    eq.upsert(QuotaSpec("x", parent="dept", min=cpu(20), max=cpu(100), shared_weight=cpu(0)))
    eq.upsert(QuotaSpec("y", parent="dept", min=cpu(20), max=cpu(100)))
    eq.add_pod("px", "x", cpu(20))
    eq.add_pod("py", "y", cpu(10))
    eq.set_total(cpu(20))
    assert eq.runtime("dept") == cpu(20)
    assert eq.status("x").effective_min == cpu(10)
    assert eq.runtime("x") + eq.runtime("y") == cpu(20)


def test_the_system_groups_used_is_taken_off_the_total_and_it_is_never_limited() -> None:
    eq = seed_example()
    eq.add_pod("kube-proxy", SYSTEM_QUOTA, cpu(10_000))
    assert eq.admit(SYSTEM_QUOTA, cpu(10_000)).ok
    eq.assign_pod("kube-proxy")
    assert eq.runtime(ROOT_QUOTA) == {}
    eq.remove_pod("kube-proxy")
    eq.add_pod("dns", SYSTEM_QUOTA, cpu(10))
    eq.assign_pod("dns")
    assert eq.available() == cpu(90)
    assert [eq.runtime(n).get("cpu", 0) for n in "ABCD"] == [5, 20, 31, 34]
    assert_matches_full_recompute(eq)


def test_pods_without_a_quota_go_to_the_default_group_whose_used_is_off_the_total() -> None:
    eq = seed_example()
    eq.add_pod("stray", None, cpu(10))
    assert eq.pod("stray").quota == DEFAULT_QUOTA
    assert eq.admit(None, cpu(1000)).ok
    eq.assign_pod("stray")
    assert eq.used(DEFAULT_QUOTA) == cpu(10)
    assert eq.runtime(ROOT_QUOTA) == cpu(90)


def test_the_default_group_is_limited_once_it_is_given_a_max() -> None:
    eq = ElasticQuotaManager(total=cpu(100))
    eq.upsert(QuotaSpec(DEFAULT_QUOTA, max=cpu(5)))
    assert eq.admit(None, cpu(5)).ok
    assert not eq.admit(None, cpu(6)).ok


def test_a_pod_naming_a_missing_quota_waits_in_default_and_moves_when_it_appears() -> None:
    eq = ElasticQuotaManager(total=cpu(100))
    eq.add_pod("early", "late-team", cpu(7))
    eq.assign_pod("early")
    assert eq.pod("early").quota == DEFAULT_QUOTA
    eq.upsert(QuotaSpec("late-team", max=cpu(50)))
    assert eq.pod("early").quota == "late-team"
    assert (eq.request("late-team"), eq.used("late-team")) == (cpu(7), cpu(7))
    assert eq.used(DEFAULT_QUOTA) == {}
    assert_matches_full_recompute(eq)


def test_requests_only_count_the_names_of_the_quotas_max() -> None:
    eq = ElasticQuotaManager(total={"cpu": 100, "memory": 100})
    eq.upsert(QuotaSpec("cpu-only", max=cpu(50)))
    eq.add_pod("p", "cpu-only", {"cpu": 10, "memory": 99})
    assert eq.request("cpu-only") == cpu(10)
    assert eq.admit("cpu-only", {"cpu": 1, "memory": 10**9}).ok


def test_a_name_of_max_the_cluster_lacks_gets_runtime_zero_and_blocks() -> None:
    eq = ElasticQuotaManager(total=cpu(100))
    eq.upsert(QuotaSpec("gpu-team", max={"cpu": 10, "gpu": 4}))
    eq.add_pod("p", "gpu-team", {"cpu": 1, "gpu": 1})
    assert eq.runtime("gpu-team") == cpu(1)
    decision = eq.admit("gpu-team", {"gpu": 1})
    assert not decision.ok and decision.exceeded == ("gpu",)


def test_moving_and_removing_quotas_keeps_every_figure_consistent() -> None:
    eq = ElasticQuotaManager(total={"cpu": 100, "memory": 1000})
    eq.upsert(QuotaSpec("d1", is_parent=True, min={"cpu": 30}, max={"cpu": 100, "memory": 800}))
    eq.upsert(QuotaSpec("d2", is_parent=True, min={"cpu": 30}, max={"cpu": 100, "memory": 800}))
    eq.upsert(QuotaSpec("t", parent="d1", min={"cpu": 20}, max={"cpu": 90, "memory": 500},
                        allow_lent=False))
    eq.upsert(QuotaSpec("u", parent="d1", max={"cpu": 90, "memory": 500}))
    eq.add_pod("a", "t", {"cpu": 60, "memory": 300})
    eq.add_pod("b", "u", {"cpu": 60, "memory": 300})
    eq.assign_pod("a")
    assert_matches_full_recompute(eq)
    eq.upsert(QuotaSpec("t", parent="d2", min={"cpu": 20}, max={"cpu": 90, "memory": 500},
                        allow_lent=False))
    assert eq.used("d2") == {"cpu": 60, "memory": 300}
    assert eq.used("d1") == {}
    assert_matches_full_recompute(eq)
    eq.remove_pod("b")
    eq.remove("u")
    assert_matches_full_recompute(eq)


def test_a_pod_change_splits_only_the_parents_on_its_path() -> None:
    eq = ElasticQuotaManager(total=cpu(10_000))
    for d in range(10):
        eq.upsert(QuotaSpec(f"d{d}", is_parent=True, max=cpu(1000)))
        for t in range(10):
            eq.upsert(QuotaSpec(f"d{d}t{t}", parent=f"d{d}", max=cpu(100)))
            eq.add_pod(f"p{d}-{t}", f"d{d}t{t}", cpu(5))
    eq.statuses()
    before = eq.split_count
    eq.add_pod("new", "d3t4", cpu(5))
    assert eq.runtime("d3t4") == cpu(10)
    assert eq.split_count - before == 2, "the root and d3, nothing else"


def test_assigning_or_a_change_beyond_max_needs_no_split_at_all() -> None:
    eq = ElasticQuotaManager(total=cpu(100))
    eq.upsert(QuotaSpec("a", max=cpu(10)))
    eq.add_pod("p", "a", cpu(20))
    eq.statuses()
    before = eq.split_count
    eq.assign_pod("p")
    eq.add_pod("q", "a", cpu(5))
    eq.statuses()
    assert eq.split_count == before

"""Admission, in-quota preemption, over-use revocation and the over-use monitor."""

from __future__ import annotations

import pytest

from quotactor.core.resources import Resource
from quotactor.elastic import (
    DEFAULT_QUOTA,
    ElasticQuotaManager,
    OveruseMonitor,
    QuotaError,
    QuotaSpec,
)


def cpu(n: int) -> Resource:
    return Resource({"cpu": n})


def team(total: int = 10, low: int = 4) -> ElasticQuotaManager:
    """One quota `t` alone in the cluster: its runtime is min(request, total)."""
    eq = ElasticQuotaManager(total=cpu(total))
    eq.upsert(QuotaSpec("t", min=cpu(low), max=cpu(100)))
    return eq


def running(eq: ElasticQuotaManager, pod_id: str, amount: int, priority: int = 0,
            preemptible: bool = True, quota: str = "t") -> None:
    eq.add_pod(pod_id, quota, cpu(amount), priority, preemptible)
    eq.assign_pod(pod_id)


def test_admission_checks_used_plus_request_against_the_runtime() -> None:
    eq = team()
    eq.add_pod("p", "t", cpu(6))
    assert eq.runtime("t") == cpu(6)
    assert eq.admit("t", cpu(6)).ok
    eq.assign_pod("p")
    decision = eq.admit("t", cpu(1))
    assert not decision.ok and not decision
    assert decision.quota == "t" and decision.exceeded == ("cpu",)
    assert "Insufficient quotas" in decision.reason and "exceeded: cpu" in decision.reason


def test_non_preemptible_pods_only_run_within_min() -> None:
    eq = team(low=4)
    eq.add_pod("big", "t", cpu(8))
    assert eq.admit("t", cpu(4), non_preemptible=True).ok
    decision = eq.admit("t", cpu(5), non_preemptible=True)
    assert not decision.ok and "non-preemptible" in decision.reason
    assert eq.admit("t", cpu(5)).ok


def test_non_preemptible_pods_get_nothing_of_a_name_min_does_not_guarantee() -> None:
    eq = ElasticQuotaManager(total={"cpu": 10, "memory": 10})
    eq.upsert(QuotaSpec("t", min=cpu(4), max={"cpu": 10, "memory": 10}))
    eq.add_pod("p", "t", {"cpu": 1, "memory": 1})
    assert not eq.admit("t", {"cpu": 1, "memory": 1}, non_preemptible=True).ok


def test_reserve_admits_and_assigns_in_one_step() -> None:
    eq = team()
    eq.add_pod("a", "t", cpu(6))
    eq.add_pod("b", "t", cpu(6))
    assert eq.reserve("a").ok
    assert eq.pod("a").assigned
    assert not eq.reserve("b").ok
    assert not eq.pod("b").assigned
    assert eq.reserve("a").ok, "an assigned pod stays admitted"


def test_victims_are_lower_priority_preemptible_pods_of_the_same_quota() -> None:
    eq = team(total=10)
    eq.upsert(QuotaSpec("other", max=cpu(100)))
    running(eq, "low", 4, priority=1)
    running(eq, "pinned", 2, priority=1, preemptible=False)
    running(eq, "peer", 4, priority=5)
    running(eq, "foreign", 1, priority=0, quota="other")
    eq.add_pod("new", "t", cpu(4), priority=5)
    eq.set_total(cpu(14))
    assert eq.runtime("t") == cpu(13)
    assert eq.preemption_victims("new", ["low", "pinned", "peer", "foreign", "ghost"]) == [
        "low"]


def test_the_most_important_candidates_are_reprieved_while_the_pod_still_fits() -> None:
    eq = team(total=10)
    running(eq, "a", 3, priority=1)
    running(eq, "b", 3, priority=2)
    running(eq, "c", 3, priority=3)
    eq.add_pod("new", "t", cpu(5), priority=10)
    assert eq.runtime("t") == cpu(10)
    # all out: 0 + 5; c back: 8; b back: 11 > 10, victim; a back: 11, victim.
    assert eq.preemption_victims("new", ["a", "b", "c"]) == ["a", "b"]


def test_a_less_important_candidate_is_spared_if_it_still_fits_after_others() -> None:
    eq = team(total=10)
    running(eq, "a", 1, priority=1)
    running(eq, "b", 3, priority=2)
    running(eq, "c", 3, priority=3)
    eq.add_pod("new", "t", cpu(5), priority=10)
    assert eq.preemption_victims("new", ["c", "a", "b"]) == ["b"]


def test_no_victims_when_evicting_all_candidates_would_not_be_enough() -> None:
    eq = team(total=10)
    running(eq, "a", 2, priority=1)
    running(eq, "high", 8, priority=9)
    eq.add_pod("new", "t", cpu(5), priority=5)
    assert eq.preemption_victims("new", ["a", "high"]) == []


def test_pods_in_the_default_group_do_not_preempt_unless_enabled() -> None:
    for enabled, expected in ((False, []), (True, ["low"])):
        eq = ElasticQuotaManager(total=cpu(10), default_quota_preemption=enabled)
        eq.upsert(QuotaSpec(DEFAULT_QUOTA, max=cpu(4)))
        running(eq, "low", 4, priority=0, quota=DEFAULT_QUOTA)
        eq.add_pod("new", None, cpu(4), priority=5)
        assert eq.preemption_victims("new", ["low"]) == expected


def test_an_assigned_pod_cannot_be_a_preemptor() -> None:
    eq = team()
    running(eq, "a", 1)
    with pytest.raises(QuotaError, match="already assigned"):
        eq.preemption_victims("a", [])


def borrowed_then_reclaimed() -> ElasticQuotaManager:
    """`t` borrowed all 10 cpu; then `lender` (min 6) asks for its min back."""
    eq = ElasticQuotaManager(total=cpu(10))
    eq.upsert(QuotaSpec("t", max=cpu(10)))
    eq.upsert(QuotaSpec("lender", min=cpu(6), max=cpu(10)))
    running(eq, "t-low", 3, priority=1)
    running(eq, "t-mid", 2, priority=2)
    running(eq, "t-pinned", 1, priority=0, preemptible=False)
    running(eq, "t-high", 4, priority=3)
    eq.add_pod("lend-back", "lender", cpu(6))
    return eq


def test_revocation_takes_the_least_important_until_used_fits_then_gives_back() -> None:
    eq = borrowed_then_reclaimed()
    assert (eq.used("t"), eq.runtime("t")) == (cpu(10), cpu(4))
    assert eq.over_runtime() == ["t"]
    # take t-low (3) and t-mid (2): used 5 > 4, so t-high (4) goes too -> used 1;
    # then give back the most important that still fit: t-high? 5 > 4, no; t-mid: 3, yes.
    assert eq.revoke_list("t") == ["t-low", "t-high"]


def test_revocation_returns_everything_it_tried_when_that_is_still_not_enough() -> None:
    eq = ElasticQuotaManager(total=cpu(10))
    eq.upsert(QuotaSpec("t", max=cpu(10)))
    eq.upsert(QuotaSpec("lender", min=cpu(10), max=cpu(10)))
    running(eq, "pinned", 5, preemptible=False)
    running(eq, "low", 5, priority=1)
    eq.add_pod("back", "lender", cpu(10))
    assert eq.revoke_list("t") == ["low"]


def test_nothing_is_revoked_from_a_quota_within_its_runtime() -> None:
    eq = team()
    running(eq, "a", 3)
    assert eq.revoke_list("t") == [] and eq.over_runtime() == []


def test_the_monitor_reports_only_after_the_delay_and_then_restarts_its_timer() -> None:
    now = [0.0]
    monitor = OveruseMonitor(delay=120.0, clock=lambda: now[0])
    assert monitor.observe(["t"]) == {}
    now[0] = 120.0
    assert monitor.observe(["t"]) == {}, "strictly longer than the delay"
    now[0] = 121.0
    assert monitor.observe(["t", "u"]) == {"t": 121.0}
    now[0] = 200.0
    assert monitor.observe(["t", "u"]) == {}
    assert monitor.observe([]) == {}
    now[0] = 400.0
    assert monitor.observe(["t"]) == {}, "a quota back within runtime starts over"


def test_a_negative_delay_is_refused() -> None:
    with pytest.raises(ValueError, match="negative"):
        OveruseMonitor(delay=-1.0)

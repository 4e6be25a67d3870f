"""Fair sharing: dominant resource shares and fair preemption, from Kueue's own cases.

Shares come from pkg/cache/scheduler/fair_sharing_test.go `TestDominantResourceShare`; victims
from pkg/scheduler/preemption/preemption_fair_test.go `TestFairPreemptions` (kueue ff69552e).
Kueue reports a share rounded up to an integer (and MaxInt for a borrowing queue of weight 0);
the tests compare that rounding of the engine's exact share.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest

from quotactor.kueue import Cohort, KueueManager, ResourceFlavor
from quotactor.kueue.preemption import (
    IN_CLUSTER_QUEUE,
    IN_COHORT_FAIR_SHARING,
    IN_COHORT_RECLAMATION,
    LESS_THAN_INITIAL_SHARE,
    LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,
)
from quotactor.kueue.tree import dominant_resource_share

GPU = "example.com/gpu"


def rounded(m: KueueManager, name: str) -> tuple[float, str]:
    node = m.cluster.nodes.get(name) or m.cluster.cohort_nodes[name]
    drs = dominant_resource_share(node)
    share = drs.weighted()
    return (share if math.isinf(share) else math.ceil(share)), drs.resource


def two_queues(k: SimpleNamespace, cq_quota: dict[str, Any], lender_quota: dict[str, Any],
               weight: float = 1.0, lender_weight: float = 1.0) -> KueueManager:
    m = KueueManager(fair_sharing=True)
    m.apply(ResourceFlavor("default"),
            k.cq("cq", k.rg(k.fq("default", cq_quota)), cohort="test-cohort", weight=weight),
            k.cq("lending-cq", k.rg(k.fq("default", lender_quota)), cohort="test-cohort",
                 weight=lender_weight))
    return m


def charge(k: SimpleNamespace, m: KueueManager, usage: dict[str, str], cq: str = "cq") -> None:
    k.admit(m, k.wl("usage", k.pod_set(1, requests=usage)), cq)


@pytest.mark.parametrize(("case", "usage", "cq_quota", "lender_quota", "weights", "want"), [
    ("usage below nominal", {"cpu": "1", GPU: "2"}, {"cpu": "2", GPU: "5"},
     {"cpu": "8", GPU: "5"}, (1, 1), (0, "")),
    ("usage above nominal", {"cpu": "3", GPU: "7"}, {"cpu": "2", GPU: "5"},
     {"cpu": "8", GPU: "5"}, (1, 1), (200, GPU)),
    ("usage slightly above nominal in a cohort with large quotas", {GPU: "501"}, {GPU: "500"},
     {GPU: "1000"}, (1, 300), (1, GPU)),
    ("usage way above nominal in a cohort with large quotas and weights", {GPU: "800"},
     {GPU: "500"}, {GPU: "1000"}, (300, 300), (1, GPU)),
    ("one resource above nominal", {"cpu": "3", GPU: "3"}, {"cpu": "2", GPU: "5"},
     {"cpu": "8", GPU: "5"}, (1, 1), (100, "cpu")),
    ("above nominal with integer weight", {GPU: "7"}, {GPU: "5"}, {GPU: "5"}, (2, 1),
     (100, GPU)),
    ("above nominal with decimal weight", {GPU: "7"}, {GPU: "5"}, {GPU: "5"}, (0.5, 1),
     (400, GPU)),
    ("above nominal with zero weight", {GPU: "7"}, {GPU: "5"}, {GPU: "10"}, (0, 1),
     (math.inf, GPU)),
], ids=lambda v: v if isinstance(v, str) and " " in v else "")
def test_dominant_resource_share(k: SimpleNamespace, case: str, usage: dict[str, str],
                                 cq_quota: dict[str, str], lender_quota: dict[str, str],
                                 weights: tuple[float, float], want: tuple[float, str]) -> None:
    """Kueue: TestDominantResourceShare, the case named `case`."""
    m = two_queues(k, cq_quota, lender_quota, *weights)
    charge(k, m, usage)
    assert rounded(m, "cq") == want
    assert rounded(m, "lending-cq") == (0, "")
    assert rounded(m, "test-cohort") == (0, "")


def test_share_with_an_incoming_workload(k: SimpleNamespace) -> None:
    """Kueue: TestDominantResourceShare "usage with workload above nominal" (the share the
    queue would have with the workload admitted)."""
    m = two_queues(k, {"cpu": "2", GPU: "5"}, {"cpu": "8", GPU: "5"})
    charge(k, m, {"cpu": "1", GPU: "2"})
    with m.cluster.adding("cq", {("default", "cpu"): 4000, ("default", GPU): 4}):
        assert rounded(m, "cq") == (300, "cpu")


def test_share_over_several_flavors(k: SimpleNamespace) -> None:
    """Kueue: TestDominantResourceShare "multiple flavors" (what is lendable sums over
    flavors; a flavor under nominal adds nothing borrowed)."""
    m = KueueManager(fair_sharing=True)
    m.apply(*(ResourceFlavor(f) for f in ("default", "on-demand", "spot")),
            k.cq("cq", k.rg(k.fq("on-demand", cpu="20"), k.fq("spot", cpu="80")),
                 cohort="test-cohort"),
            k.cq("lending-cq", k.rg(k.fq("default", cpu="100")), cohort="test-cohort"))
    m.restore(k.wl("usage", k.pod_set(1, "od", cpu="25"), k.pod_set(1, "sp", cpu="5")), "cq",
              {"od": {"cpu": "on-demand"}, "sp": {"cpu": "spot"}})
    assert rounded(m, "cq") == (25, "cpu")


@pytest.mark.parametrize(("case", "root_quota", "child_limit", "want_cq", "want_child"), [
    ("cohort has resource share", "45", None, (100, GPU), (50, GPU)),
    ("resource share defined for resources only available at the root cohort", "50", None,
     (200, GPU), (100, GPU)),
    ("resource share affected by borrowing limit", "50", "10", (1000, GPU), (200, GPU)),
], ids=lambda v: v if isinstance(v, str) and " " in v else "")
def test_share_in_a_cohort_tree(k: SimpleNamespace, case: str, root_quota: str,
                                child_limit: str | None, want_cq: tuple[int, str],
                                want_child: tuple[int, str]) -> None:
    """Kueue: TestDominantResourceShare, the case named `case`."""
    nominal = "5" if case == "cohort has resource share" else "0"
    child_groups = ((k.rg(k.fq("default", {GPU: ("0", child_limit)})),)
                    if child_limit else ())
    m = KueueManager(fair_sharing=True)
    m.apply(ResourceFlavor("default"),
            Cohort("root", None, (k.rg(k.fq("default", {GPU: root_quota})),)),
            Cohort("child-cohort", "root", child_groups,
                   1.0 if child_limit else 2.0),
            k.cq("cq", k.rg(k.fq("default", {GPU: nominal})), cohort="child-cohort"))
    charge(k, m, {GPU: "10"})
    assert rounded(m, "cq") == want_cq
    assert rounded(m, "child-cohort") == want_child
    assert rounded(m, "root") == (0, "")


# -- fair preemption ---------------------------------------------------------------------

def base_queues(k: SimpleNamespace) -> list[Any]:
    """TestFairPreemptions' `baseCQs`."""
    policy = {"within": "LowerPriority", "reclaim": "Any", "borrow": "LowerPriority",
              "threshold": -3}
    return [*(k.cq(n, k.rg(k.fq("default", cpu="3")), cohort="all", **policy) for n in "abc"),
            k.cq("preemptible", k.rg(k.fq("default", cpu="0")), cohort="all")]


@dataclass(frozen=True)
class FairCase:
    kueue_case: str
    admitted: list[tuple[str, str, str, int]]  # name, cq, cpu, priority
    incoming: tuple[str, str]  # cq, cpu
    want: dict[str, str]
    strategies: tuple[str, ...] = (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, LESS_THAN_INITIAL_SHARE)


def units(cq: str, names: str, priority: int = 0) -> list[tuple[str, str, str, int]]:
    return [(f"{cq}{n}", cq, "1", priority) for n in names]


FAIR_CASES = [
    FairCase("reclaim nominal from user using the most",
             units("a", "123") + units("b", "12345") + units("c", "1"), ("c", "1"),
             {"b1": IN_COHORT_RECLAMATION}),
    FairCase("can reclaim from queue using less, if taking the latest workload from user "
             "using the most isn't enough",
             [("a1", "a", "3", 0), ("a2", "a", "1", 0), ("b1", "b", "2", 0),
              ("b2", "b", "3", 0)], ("c", "3"), {"a1": IN_COHORT_RECLAMATION}),
    FairCase("reclaim borrowable quota from user using the most",
             units("a", "123") + units("b", "12345") + units("c", "1"), ("a", "1"),
             {"b1": IN_COHORT_FAIR_SHARING}),
    FairCase("preempt one from each CQ borrowing",
             [("a1", "a", "0.5", 0), ("a2", "a", "0.5", 0), ("a3", "a", "3", 0),
              ("b1", "b", "0.5", 0), ("b2", "b", "0.5", 0), ("b3", "b", "3", 0)], ("c", "2"),
             {"a1": IN_COHORT_RECLAMATION, "b1": IN_COHORT_RECLAMATION}),
    FairCase("can't preempt when everyone under nominal",
             units("a", "123") + units("b", "123") + units("c", "123"), ("c", "1"), {}),
    FairCase("can't preempt when it would switch the imbalance",
             units("a", "123") + units("b", "12345"), ("a", "2"), {}),
    FairCase("can preempt lower priority workloads from same CQ",
             [("a1-low", "a", "1", -1), ("a2-low", "a", "1", -1), *units("a", "34"),
              *units("b", "12345")], ("a", "2"),
             {"a1-low": IN_CLUSTER_QUEUE, "a2-low": IN_CLUSTER_QUEUE}),
    FairCase("can preempt a combination of same CQ and highest user",
             [("a-low", "a", "1", -1), *units("a", "23"), *units("b", "123456")], ("a", "2"),
             {"a-low": IN_CLUSTER_QUEUE, "b1": IN_COHORT_FAIR_SHARING}),
    FairCase("preempt huge workload if there is no other option, as long as the target CQ "
             "gets a lower share", [("b1", "b", "9", 0)], ("a", "2"),
             {"b1": IN_COHORT_RECLAMATION}),
    FairCase("can't preempt huge workload if the incoming is also huge",
             [("a1", "a", "2", 0), ("b1", "b", "7", 0)], ("a", "5"), {}),
    FairCase("can't preempt 2 smaller workloads if the incoming is huge",
             [("b1", "b", "2", 0), ("b2", "b", "2", 0), ("b3", "b", "3", 0)], ("a", "6"), {}),
    FairCase("preempt from target and others even if over nominal",
             [("a1-low", "a", "2", -1), ("a2-low", "a", "1", -1), ("b1", "b", "3", 0),
              ("b2", "b", "3", 0)], ("a", "4"),
             {"a1-low": IN_CLUSTER_QUEUE, "b1": IN_COHORT_FAIR_SHARING}),
    FairCase("prefer to preempt workloads that don't make the target CQ have the biggest share",
             [("b1", "b", "2", 0), ("b2", "b", "1", 0), ("b3", "b", "2", 0),
              ("c1", "c", "1", 0)], ("a", "3.5"), {"b2": IN_COHORT_FAIR_SHARING}),
    FairCase("preempt from different cluster queues if the end result has a smaller max share",
             [("b1", "b", "2", 0), ("b2", "b", "2.5", 0), ("c1", "c", "2", 0),
              ("c2", "c", "2.5", 0)], ("a", "3.5"),
             {"b1": IN_COHORT_FAIR_SHARING, "c1": IN_COHORT_FAIR_SHARING}),
    FairCase("scenario above does not flap",
             [("a1", "a", "3.5", 0), ("b2", "b", "2.5", 0), ("c2", "c", "2.5", 0)],
             ("b", "2"), {}),
    FairCase("cannot preempt if it would make the candidate CQ go under nominal after "
             "preempting one element",
             [("b1", "b", "3", 0), ("b2", "b", "3", 0), ("c1", "c", "3", 0)], ("a", "4"), {}),
    FairCase("workloads under priority threshold not capriciously preempted",
             units("a", "123") + units("b", "123")
             + [(f"preemptible{i}", "preemptible", "1", -3) for i in (1, 2, 3)], ("a", "2"),
             {}),
    FairCase("preempt lower priority first, even if big",
             [("a1", "a", "3", 0), ("b-low", "b", "5", 0), ("b-high", "b", "1", 1)],
             ("a", "1"), {"b-low": IN_COHORT_FAIR_SHARING}, (LESS_THAN_INITIAL_SHARE,)),
    FairCase("preempt workload that doesn't transfer the imbalance, even if high priority",
             [("a1", "a", "3", 0), ("b-low", "b", "5", 0), ("b-high", "b", "1", 1)],
             ("a", "1"), {"b-high": IN_COHORT_FAIR_SHARING},
             (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,)),
]


@pytest.mark.parametrize("case", FAIR_CASES, ids=[c.kueue_case for c in FAIR_CASES])
def test_fair_preemption_targets(k: SimpleNamespace, case: FairCase) -> None:
    """Kueue: preemption_fair_test.go TestFairPreemptions, the case of the same name."""
    m = k.manager(*base_queues(k), flavors=("default",), fair_sharing=True)
    for name, cq, cpu, priority in case.admitted:
        k.admit(m, k.wl(name, priority=priority, cpu=cpu), cq)
    cq, cpu = case.incoming
    incoming = k.wl(f"{cq}-incoming", cpu=cpu)
    assert k.targets(m, incoming, cq, {"cpu": ("default", "Preempt")},
                     case.strategies) == case.want


def test_fair_sharing_orders_heads_by_share(k: SimpleNamespace) -> None:
    """With fair sharing, the head whose queue would have the lower share after admission
    goes first (Kueue's tournament), whatever the classical order would say."""
    m = k.manager(*base_queues(k)[:3], flavors=("default",), fair_sharing=True)
    k.admit(m, k.wl("b-big", cpu="5"), "b")
    m.submit(k.wl("from-b", queue="q-b", priority=5, cpu="2"))
    m.submit(k.wl("from-c", queue="q-c", cpu="3"))
    first = m.schedule().admitted
    assert first[0] == "default/from-c"
    assert m.share("b") > m.share("c") == 0.0
    assert m.share("all") == 0.0

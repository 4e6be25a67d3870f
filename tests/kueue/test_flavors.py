"""Flavor assignment, re-expressed from Kueue's flavor assigner tests.

Cases name the Kueue test they come from (pkg/scheduler/flavorassigner/flavorassigner_test.go
at kubernetes-sigs/kueue ff69552e). Kueue's tests stub the preemption oracle; here it is the
real preemptor, so where Kueue stubs "preemption possible" the ClusterQueue gets
`withinClusterQueue: LowerPriority` and its usage belongs to a lower-priority workload, which
makes the real answer the stubbed one. Flavor names use hyphens where Kueue's use underscores.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from quotactor.kueue import KueueManager, ResourceFlavor, Taint, Toleration, Workload
from quotactor.kueue.api import FlavorFungibility
from quotactor.kueue.cluster import Record
from quotactor.kueue.flavors import FIT, NO_FIT, PREEMPT_MODE, Assignment, assign, is_preferred
from quotactor.kueue.preemption import NO_CANDIDATES, PREEMPT

SPOT = Taint("instance", "spot", "NoSchedule")
TOLERATE_SPOT = Toleration("instance", "Equal", "spot", "NoSchedule")
FLAVORS = [
    ResourceFlavor("default"), ResourceFlavor("one", {"type": "one"}),
    ResourceFlavor("two", {"type": "two"}), ResourceFlavor("b-one", {"b_type": "one"}),
    ResourceFlavor("b-two", {"b_type": "two"}), ResourceFlavor("tainted", node_taints=(SPOT,)),
    ResourceFlavor("taint-and-toleration", node_taints=(SPOT,), tolerations=(TOLERATE_SPOT,)),
    ResourceFlavor("label-x-a", {"x": "a"}), ResourceFlavor("label-xy-b", {"x": "b", "y": "k"}),
]


def setup(k: SimpleNamespace, *queues: Any) -> KueueManager:
    m = KueueManager()
    m.apply(*FLAVORS, *queues)
    return m


def use(k: SimpleNamespace, m: KueueManager, cq: str, **by_flavor: dict[str, str]) -> None:
    """Charge `cq` with a priority -1 workload per flavor (Kueue's clusterQueueUsage)."""
    for flavor, requests in by_flavor.items():
        name = f"used-{cq}-{flavor}"
        k.admit(m, k.wl(name, priority=-1, **requests), cq, dict.fromkeys(requests, flavor))


def run(m: KueueManager, cq: str, workload: Workload) -> Assignment:
    return assign(m.cluster, Record(workload, 10**6, workload.priority or 0), cq)


def flavors(a: Assignment) -> dict[str, dict[str, str]]:
    return {p.name: {c.resource: c.flavor for c in p.flavors} for p in a.pod_sets}


def test_single_flavor_fits(k: SimpleNamespace) -> None:
    """Kueue: TestAssignFlavors "single flavor, fits"."""
    m = setup(k, k.cq("cq", k.rg(k.fq("default", cpu="1", memory="2Mi"))))
    a = run(m, "cq", k.wl("w", cpu="1", memory="1Mi"))
    assert a.mode == FIT
    assert flavors(a) == {"main": {"cpu": "default", "memory": "default"}}
    assert a.usage == {("default", "cpu"): 1000, ("default", "memory"): 2**20}


def test_single_flavor_fits_tainted_flavor(k: SimpleNamespace) -> None:
    """Kueue: TestAssignFlavors "single flavor, fits tainted flavor" (the pod tolerates)."""
    m = setup(k, k.cq("cq", k.rg(k.fq("tainted", cpu="4"))))
    a = run(m, "cq", k.wl("w", k.pod_set(1, tolerations=(TOLERATE_SPOT,), cpu="1")))
    assert (a.mode, flavors(a)) == (FIT, {"main": {"cpu": "tainted"}})
    assert run(m, "cq", k.wl("intolerant", cpu="1")).mode == NO_FIT


def test_single_flavor_fits_tainted_flavor_with_toleration(k: SimpleNamespace) -> None:
    """Kueue: TestAssignFlavors "single flavor, fits tainted flavor with toleration" (the
    flavor tolerates its own taint)."""
    m = setup(k, k.cq("cq", k.rg(k.fq("taint-and-toleration", cpu="4"))))
    a = run(m, "cq", k.wl("w", cpu="1"))
    assert (a.mode, flavors(a)) == (FIT, {"main": {"cpu": "taint-and-toleration"}})


def test_single_flavor_used_resources_does_not_fit(k: SimpleNamespace) -> None:
    """Kueue: TestAssignFlavors "single flavor, used resources, doesn't fit"."""
    m = setup(k, k.cq("cq", k.rg(k.fq("default", cpu="4"))))
    use(k, m, "cq", default={"cpu": "3"})
    a = run(m, "cq", k.wl("w", cpu="2"))
    assert (a.mode, flavors(a)) == (PREEMPT_MODE, {"main": {"cpu": "default"}})
    assert a.reasons() == ["insufficient unused quota for cpu in flavor default, 1 more needed"]


def test_multiple_resource_groups_fits(k: SimpleNamespace) -> None:
    """Kueue: TestAssignFlavors "multiple resource groups, fits"."""
    m = setup(k, k.cq("cq", k.rg(k.fq("one", cpu="2"), k.fq("two", cpu="4")),
                      k.rg(k.fq("b-one", memory="1Gi"), k.fq("b-two", memory="5Gi"))))
    a = run(m, "cq", k.wl("w", cpu="3", memory="10Mi"))
    assert (a.mode, flavors(a)) == (FIT, {"main": {"cpu": "two", "memory": "b-one"}})
    assert a.usage == {("two", "cpu"): 3000, ("b-one", "memory"): 10 * 2**20}


def test_multiple_resource_groups_one_could_fit_with_preemption_other_does_not(
        k: SimpleNamespace) -> None:
    """Kueue: TestAssignFlavors "multiple resource groups, one could fit with preemption,
    other doesn't fit"."""
    m = setup(k, k.cq("cq", k.rg(k.fq("one", cpu="3")), k.rg(k.fq("b-one", memory="1Mi"))))
    use(k, m, "cq", one={"cpu": "1"})
    a = run(m, "cq", k.wl("w", cpu="3", memory="10Mi"))
    assert a.mode == NO_FIT
    assert ("insufficient quota for memory in flavor b-one, previously considered podsets "
            "requests (0) + current podset request (10Mi) > maximum capacity (1Mi)"
            in a.reasons())


def test_multiple_resource_groups_with_multiple_resources_fits(k: SimpleNamespace) -> None:
    """Kueue: TestAssignFlavors "multiple resource groups with multiple resources, fits"."""
    m = setup(k, k.cq("cq", k.rg(k.fq("one", cpu="2", memory="1Gi"),
                                 k.fq("two", cpu="4", memory="15Mi")),
                      k.rg(k.fq("b-one", {"example.com/gpu": "4"}),
                           k.fq("b-two", {"example.com/gpu": "2"}))))
    a = run(m, "cq", k.wl("w", k.pod_set(1, requests={"cpu": "3", "memory": "10Mi",
                                                      "example.com/gpu": "3"})))
    assert (a.mode, flavors(a)) == (FIT, {"main": {"cpu": "two", "memory": "two",
                                                   "example.com/gpu": "b-one"}})


def test_multiple_resources_in_a_group_does_not_fit(k: SimpleNamespace) -> None:
    """Kueue: TestAssignFlavors "multiple resources in a group, doesn't fit"."""
    m = setup(k, k.cq("cq", k.rg(k.fq("one", cpu="2", memory="1Gi"),
                                 k.fq("two", cpu="4", memory="5Mi"))))
    a = run(m, "cq", k.wl("w", cpu="3", memory="10Mi"))
    assert a.mode == NO_FIT
    assert a.usage == {}


def test_multiple_flavors_fits_while_skipping_tainted_flavor(k: SimpleNamespace) -> None:
    """Kueue: TestAssignFlavors "multiple flavors, fits while skipping tainted flavor"."""
    m = setup(k, k.cq("cq", k.rg(k.fq("tainted", cpu="4"), k.fq("two", cpu="4"))))
    a = run(m, "cq", k.wl("w", cpu="3"))
    assert (a.mode, flavors(a)) == (FIT, {"main": {"cpu": "two"}})


def test_multiple_flavors_fits_a_node_selector(k: SimpleNamespace) -> None:
    """Kueue: TestAssignFlavors "multiple flavors, fits a node selector" (keys no flavor
    has are ignored)."""
    m = setup(k, k.cq("cq", k.rg(k.fq("one", cpu="4"), k.fq("two", cpu="4"))))
    w = k.wl("w", k.pod_set(1, node_selector={"type": "two", "ignored1": "foo"}, cpu="1"))
    assert flavors(run(m, "cq", w)) == {"main": {"cpu": "two"}}


def test_flavors_with_different_label_keys_use_their_own_keys(k: SimpleNamespace) -> None:
    """Kueue: TestAssignFlavors "multiple flavors with different label keys, selector only
    uses flavor's own keys"."""
    m = setup(k, k.cq("cq", k.rg(k.fq("label-x-a", cpu="4"), k.fq("label-xy-b", cpu="4"))))
    w = k.wl("w", k.pod_set(1, node_selector={"x": "a", "y": "g"}, cpu="1"))
    assert flavors(run(m, "cq", w)) == {"main": {"cpu": "label-x-a"}}


def test_labelless_flavor_matches_a_labeled_selector(k: SimpleNamespace) -> None:
    """Kueue: TestAssignFlavors "labelless flavor in group with labeled flavor, workload uses
    labeled selector"."""
    m = setup(k, k.cq("cq", k.rg(k.fq("default", cpu="4"), k.fq("two", cpu="4"))))
    w = k.wl("w", k.pod_set(1, node_selector={"type": "two"}, cpu="1"))
    assert flavors(run(m, "cq", w)) == {"main": {"cpu": "default"}}


def test_multiple_flavors_does_not_fit_node_selector(k: SimpleNamespace) -> None:
    """Kueue: TestAssignFlavors "multiple flavors, doesn't fit node affinity" (as a node
    selector: node affinity terms are not modelled)."""
    m = setup(k, k.cq("cq", k.rg(k.fq("one", cpu="4"), k.fq("two", cpu="4"))))
    w = k.wl("w", k.pod_set(1, node_selector={"type": "three"}, cpu="1"))
    a = run(m, "cq", w)
    assert a.mode == NO_FIT
    assert "flavor one doesn't match node affinity" in a.reasons()


def test_multiple_specs_fit_different_flavors(k: SimpleNamespace) -> None:
    """Kueue: TestAssignFlavors "multiple specs, fit different flavors"."""
    m = setup(k, k.cq("cq", k.rg(k.fq("one", cpu="4"), k.fq("two", cpu="10"))))
    a = run(m, "cq", k.wl("w", k.pod_set(1, "driver", cpu="5"), k.pod_set(1, "worker", cpu="3")))
    assert flavors(a) == {"driver": {"cpu": "two"}, "worker": {"cpu": "one"}}
    assert a.usage == {("one", "cpu"): 3000, ("two", "cpu"): 5000}


def test_multiple_specs_fits_borrowing(k: SimpleNamespace) -> None:
    """Kueue: TestAssignFlavors "multiple specs, fits borrowing"."""
    m = setup(k, k.cq("cq", k.rg(k.fq("default", cpu=("2", "98"), memory="2Gi")),
                      cohort="test-cohort"),
              k.cq("secondary", k.rg(k.fq("default", cpu="198", memory="198Gi")),
                   cohort="test-cohort"))
    a = run(m, "cq", k.wl("w", k.pod_set(1, "driver", cpu="4", memory="1Gi"),
                          k.pod_set(1, "worker", cpu="6", memory="4Gi")))
    assert a.mode == FIT
    assert a.borrowing == 1
    assert a.usage == {("default", "cpu"): 10000, ("default", "memory"): 5 * 2**30}


def test_not_enough_space_to_borrow(k: SimpleNamespace) -> None:
    """Kueue: TestAssignFlavors "not enough space to borrow" (the lender keeps all its
    quota: lendingLimit 0)."""
    m = setup(k, k.cq("cq", k.rg(k.fq("one", cpu="1")), cohort="test-cohort"),
              k.cq("secondary", k.rg(k.fq("one", cpu=("10", None, "0"))), cohort="test-cohort"))
    use(k, m, "secondary", one={"cpu": "9"})
    assert run(m, "cq", k.wl("w", cpu="2")).mode == NO_FIT


def test_past_min_but_can_preempt_in_cluster_queue(k: SimpleNamespace) -> None:
    """Kueue: TestAssignFlavors "past min, but can preempt in ClusterQueue"."""
    m = setup(k, k.cq("cq", k.rg(k.fq("one", cpu="2")), within="LowerPriority"))
    use(k, m, "cq", one={"cpu": "1"})
    a = run(m, "cq", k.wl("w", cpu="2"))
    assert (a.mode, flavors(a)) == (PREEMPT_MODE, {"main": {"cpu": "one"}})
    assert a.usage == {("one", "cpu"): 2000}


def test_past_min_but_can_preempt_in_cohort_and_cluster_queue(k: SimpleNamespace) -> None:
    """Kueue: TestAssignFlavors "past min, but can preempt in cohort and ClusterQueue"."""
    m = setup(k, k.cq("cq", k.rg(k.fq("one", cpu="3")), cohort="test-cohort",
                      within="LowerPriority", reclaim="Any"),
              k.cq("secondary", k.rg(k.fq("one", cpu="7")), cohort="test-cohort"))
    use(k, m, "cq", one={"cpu": "2"})
    use(k, m, "secondary", one={"cpu": "8"})
    a = run(m, "cq", k.wl("w", cpu="2"))
    assert (a.mode, flavors(a)) == (PREEMPT_MODE, {"main": {"cpu": "one"}})


def test_can_only_preempt_flavors_that_match_affinity(k: SimpleNamespace) -> None:
    """Kueue: TestAssignFlavors "can only preempt flavors that match affinity"."""
    m = setup(k, k.cq("cq", k.rg(k.fq("one", cpu="4"), k.fq("two", cpu="4")),
                      within="LowerPriority"))
    use(k, m, "cq", one={"cpu": "3"}, two={"cpu": "3"})
    a = run(m, "cq", k.wl("w", k.pod_set(1, node_selector={"type": "two"}, cpu="2")))
    assert (a.mode, flavors(a)) == (PREEMPT_MODE, {"main": {"cpu": "two"}})


def test_each_pod_set_requires_preemption_on_a_different_flavor(k: SimpleNamespace) -> None:
    """Kueue: TestAssignFlavors "each podset requires preemption on a different flavor"."""
    m = setup(k, k.cq("cq", k.rg(k.fq("one", cpu="4"), k.fq("tainted", cpu="10")),
                      within="LowerPriority"))
    use(k, m, "cq", one={"cpu": "3"}, tainted={"cpu": "3"})
    workers = k.pod_set(10, "workers", tolerations=(TOLERATE_SPOT,), cpu="1")
    a = run(m, "cq", k.wl("w", k.pod_set(1, "launcher", cpu="2"), workers))
    assert a.mode == PREEMPT_MODE
    assert flavors(a) == {"launcher": {"cpu": "one"}, "workers": {"cpu": "tainted"}}


def test_resource_not_listed_in_cluster_queue(k: SimpleNamespace) -> None:
    """Kueue: TestAssignFlavors "resource not listed in clusterQueue"."""
    m = setup(k, k.cq("cq", k.rg(k.fq("one", cpu="4"))))
    a = run(m, "cq", k.wl("w", k.pod_set(1, requests={"example.com/gpu": "1"})))
    assert a.mode == NO_FIT
    assert a.reasons() == ["resource example.com/gpu unavailable in ClusterQueue"]


def test_zero_request_for_a_resource_not_in_cluster_queue_succeeds(k: SimpleNamespace) -> None:
    """Kueue: TestAssignFlavors "zero resource request not in clusterQueue should succeed"."""
    m = setup(k, k.cq("cq", k.rg(k.fq("default", cpu="4"))))
    a = run(m, "cq", k.wl("w", k.pod_set(1, requests={"cpu": "1", "example.com/gpu": "0"})))
    assert (a.mode, flavors(a)) == (FIT, {"main": {"cpu": "default"}})


def test_zero_request_for_a_resource_in_cluster_queue_gets_a_flavor(k: SimpleNamespace) -> None:
    """Kueue: TestAssignFlavors "zero resource request defined in clusterQueue should get
    flavor assigned"."""
    m = setup(k, k.cq("cq", k.rg(k.fq("default", {"cpu": "4", "example.com/gpu": "4"}))))
    a = run(m, "cq", k.wl("w", k.pod_set(1, requests={"cpu": "1", "example.com/gpu": "0"})))
    assert flavors(a) == {"main": {"cpu": "default", "example.com/gpu": "default"}}


@pytest.mark.parametrize(("pods_quota", "mode"), [("3", FIT), ("2", NO_FIT)],
                         ids=["num pods fit", "num pods don't fit"])
def test_num_pods(k: SimpleNamespace, pods_quota: str, mode: str) -> None:
    """Kueue: TestAssignFlavors "num pods fit" / "num pods don't fit" (a `pods` quota
    counts each pod set's pods)."""
    m = setup(k, k.cq("cq", k.rg(k.fq("default", pods=pods_quota, cpu="10"))))
    a = run(m, "cq", k.wl("w", k.pod_set(3, cpu="1")))
    assert a.mode == mode
    if mode == FIT:
        assert a.usage == {("default", "pods"): 3, ("default", "cpu"): 3000}


def two_flavor_queue(k: SimpleNamespace, **kw: Any) -> Any:
    return k.cq("cq", k.rg(k.fq("one", pods="10", cpu="10"), k.fq("two", pods="10", cpu="10")),
                within="LowerPriority", **kw)


def test_preempt_before_try_next_flavor(k: SimpleNamespace) -> None:
    """Kueue: TestAssignFlavors "preempt before try next flavor" (whenCanPreempt:
    MayStopSearch stops at the first flavor that preemption makes room in)."""
    m = setup(k, two_flavor_queue(k, when_borrow="MayStopSearch", when_preempt="MayStopSearch"))
    use(k, m, "cq", one={"cpu": "2"})
    a = run(m, "cq", k.wl("w", cpu="9"))
    assert a.mode == PREEMPT_MODE
    assert flavors(a) == {"main": {"cpu": "one", "pods": "one"}}
    assert {c.resource: c.mode for c in a.pod_sets[0].flavors} == {"cpu": PREEMPT_MODE,
                                                                   "pods": FIT}


def test_preempt_before_try_next_flavor_with_deprecated_names(k: SimpleNamespace) -> None:
    """Kueue: TestAssignFlavors "preempt before try next flavor; using WhenCanBorrow=..."
    (Kueue's old spellings Borrow/Preempt mean MayStopSearch)."""
    m = setup(k, two_flavor_queue(k, when_borrow="Borrow", when_preempt="Preempt"))
    use(k, m, "cq", one={"cpu": "2"})
    assert flavors(run(m, "cq", k.wl("w", cpu="9"))) == {"main": {"cpu": "one", "pods": "one"}}


def test_preempt_try_next_flavor(k: SimpleNamespace) -> None:
    """Kueue: TestAssignFlavors "preempt try next flavor" (the default TryNextFlavor)."""
    m = setup(k, two_flavor_queue(k))
    use(k, m, "cq", one={"cpu": "2"})
    a = run(m, "cq", k.wl("w", cpu="9"))
    assert (a.mode, flavors(a)) == (FIT, {"main": {"cpu": "two", "pods": "two"}})


def borrow_queues(k: SimpleNamespace, two_cpu: str, **fungibility: str) -> list[Any]:
    return [k.cq("cq", k.rg(k.fq("one", pods="10", cpu=("10", "1")),
                            k.fq("two", pods="10", cpu=two_cpu)),
                 cohort="test-cohort", **fungibility),
            k.cq("secondary", k.rg(k.fq("one", cpu="1")), cohort="test-cohort")]


@pytest.mark.parametrize(("case", "two_cpu", "fungibility", "want", "borrowing"), [
    ("borrow try next flavor, found the first flavor", "1",
     {"when_borrow": "TryNextFlavor", "when_preempt": "TryNextFlavor"}, "one", 1),
    ("borrow try next flavor, found the second flavor", "10",
     {"when_borrow": "TryNextFlavor", "when_preempt": "TryNextFlavor"}, "two", 0),
    ("borrow before try next flavor", "10", {}, "one", 1),
], ids=lambda v: v if isinstance(v, str) and " " in v else "")
def test_borrowing_and_fungibility(k: SimpleNamespace, case: str, two_cpu: str,
                                   fungibility: dict[str, str], want: str,
                                   borrowing: int) -> None:
    """Kueue: TestAssignFlavors, the case named `case`."""
    m = setup(k, *borrow_queues(k, two_cpu, **fungibility))
    use(k, m, "cq", one={"cpu": "2"})
    a = run(m, "cq", k.wl("w", cpu="9"))
    assert (a.mode, flavors(a)) == (FIT, {"main": {"cpu": want, "pods": want}})
    assert a.borrowing == borrowing


@pytest.mark.parametrize(("case", "two_cpu", "want", "borrowing"), [
    ("lend try next flavor, found the second flavor", "10", "two", 0),
    ("lend try next flavor, found the first flavor", "1", "one", 1),
], ids=lambda v: v if isinstance(v, str) and " " in v else "")
def test_lending_and_fungibility(k: SimpleNamespace, case: str, two_cpu: str, want: str,
                                 borrowing: int) -> None:
    """Kueue: TestAssignFlavors, the case named `case` (a lending limit keeps part of the
    quota local; using the lent part counts as borrowing)."""
    m = setup(k, k.cq("cq", k.rg(k.fq("one", pods="10", cpu=("10", None, "1")),
                                 k.fq("two", pods="10", cpu=(two_cpu, None, "0"))),
                      cohort="test-cohort", when_borrow="TryNextFlavor",
                      when_preempt="TryNextFlavor"),
              k.cq("secondary", k.rg(k.fq("one", cpu="1")), cohort="test-cohort"))
    use(k, m, "cq", one={"cpu": "2"})
    a = run(m, "cq", k.wl("w", cpu="9"))
    assert (a.mode, flavors(a)) == (FIT, {"main": {"cpu": want, "pods": want}})
    assert a.borrowing == borrowing


NO_FIT_MODE, FIT_MODE = 0, 4
BOTH_TRY = {"when_can_borrow": "TryNextFlavor", "when_can_preempt": "TryNextFlavor"}


@pytest.mark.parametrize(("case", "a", "b", "preference", "want"), [
    ("feature gate disabled prioritises preemption", (FIT_MODE, 0), (PREEMPT, 0), None, True),
    ("explicit BorrowingOverPreemption prioritises borrowing distance", (PREEMPT, 1),
     (FIT_MODE, 2), "BorrowingOverPreemption", False),
    ("explicit PreemptionOverBorrowing prioritises lower preemption", (PREEMPT, 1),
     (FIT_MODE, 2), "PreemptionOverBorrowing", True),
    ("explicit PreemptionOverBorrowing breaks borrowing ties with preemption", (PREEMPT, 1),
     (FIT_MODE, 1), "PreemptionOverBorrowing", False),
    ("explicit PreemptionOverBorrowing rejects no-candidate flavor before borrowing "
     "comparison", (NO_CANDIDATES, 1), (FIT_MODE, 2), "PreemptionOverBorrowing", False),
    ("explicit PreemptionOverBorrowing prefers fit over shallower-borrowing no-candidate "
     "flavor", (FIT_MODE, 2), (NO_CANDIDATES, 1), "PreemptionOverBorrowing", True),
    ("no-candidate flavor remains preferable to no-fit flavor", (NO_CANDIDATES, 1),
     (NO_FIT_MODE, 0), None, True),
    ("no-fit flavor remains worse than no-candidate flavor", (NO_FIT_MODE, 0),
     (NO_CANDIDATES, 1), None, False),
    ("no-candidate flavors retain borrowing preference", (NO_CANDIDATES, 1),
     (NO_CANDIDATES, 2), "PreemptionOverBorrowing", True),
    ("no-candidate flavors retain borrowing preference in reverse", (NO_CANDIDATES, 2),
     (NO_CANDIDATES, 1), "PreemptionOverBorrowing", False),
], ids=lambda v: v if isinstance(v, str) and " " in v else "")
def test_is_preferred(case: str, a: tuple[int, int], b: tuple[int, int],
                      preference: str | None, want: bool) -> None:
    """Kueue: flavorassigner_test.go TestIsPreferred, the case named `case`."""
    assert is_preferred(a, b, FlavorFungibility(**BOTH_TRY, preference=preference)) is want

"""Kueue's object rules: each refusal names the object and the field, and changes nothing.

Cases named after Kueue's webhook tests come from pkg/webhooks/clusterqueue_webhook_test.go
and cohort_webhook_test.go (`TestValidateClusterQueue`, `TestValidateCohort`, kueue ff69552e).
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from quotactor.kueue import (
    BorrowWithinCohort,
    ClusterQueue,
    Cohort,
    FlavorFungibility,
    KueueError,
    KueueManager,
    LabelRequirement,
    LabelSelector,
    LocalQueue,
    Preemption,
    ResourceFlavor,
    ResourceGroup,
    Taint,
    Workload,
    WorkloadPriorityClass,
)


def cq_error(cq: ClusterQueue) -> str:
    with pytest.raises(KueueError) as info:
        KueueManager().apply(cq)
    return str(info.value)


def test_valid_queues_are_accepted(k: SimpleNamespace) -> None:
    """Kueue: TestValidateClusterQueue "built-in resources with qualified names", "in cohort",
    "extended resources with qualified names", "flavor quota with zero value", "flavor quota
    with borrowingLimit 0", "flavor quota with lendingLimit 0", "multiple resource groups",
    "valid preemption with borrowWithinCohort", "flavorFungibility preference ... with both
    TryNextFlavor is valid"."""
    m = KueueManager()
    m.apply(
        k.cq("builtin", k.rg(k.fq("default", cpu="0", memory="0", pods="0"))),
        k.cq("in-cohort", cohort="prod"),
        k.cq("extended", k.rg(k.fq("default", {"example.com/gpu": "2"}))),
        k.cq("limits-zero", k.rg(k.fq("x86", cpu=("1", "0", "0"))), cohort="prod"),
        k.cq("groups", k.rg(k.fq("alpha", cpu="0", memory="0"), k.fq("beta", cpu="0",
                                                                      memory="0")),
             k.rg(k.fq("gamma", {"example.com/gpu": "0"}))),
        k.cq("bwc", cohort="prod", reclaim="LowerPriority", borrow="LowerPriority",
             threshold=10),
        k.cq("pref", when_borrow="TryNextFlavor", when_preempt="TryNextFlavor",
             preference="PreemptionOverBorrowing"),
    )
    assert len(m.cluster.cluster_queues) == 7


@pytest.mark.parametrize(("case", "build", "field"), [
    ("flavor quota with negative value",
     lambda k: k.cq("cq", k.rg(k.fq("x86", cpu="-1"))),
     "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota"),
    ("flavor quota with negative borrowingLimit",
     lambda k: k.cq("cq", k.rg(k.fq("x86", cpu=("1", "-1"))), cohort="c"),
     "spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit"),
    ("flavor quota with negative lendingLimit",
     lambda k: k.cq("cq", k.rg(k.fq("x86", cpu=("1", None, "-1"))), cohort="c"),
     "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit"),
    ("flavor quota with lendingLimit and empty cohort",
     lambda k: k.cq("cq", k.rg(k.fq("x86", cpu=("1", None, "1")))),
     "lendingLimit: must be nil when cohort is empty"),
    ("flavor quota with borrowingLimit and empty cohort",
     lambda k: k.cq("cq", k.rg(k.fq("x86", cpu=("1", "1")))),
     "borrowingLimit: must be nil when cohort is empty"),
    ("flavor quota with lendingLimit greater than nominalQuota",
     lambda k: k.cq("cq", k.rg(k.fq("x86", cpu=("1", None, "2"))), cohort="c"),
     "lendingLimit: must be less than or equal to the nominalQuota"),
    ("invalid resource name",
     lambda k: k.cq("cq", k.rg(k.fq("x86", {"@cpu": "1"}))),
     "spec.resourceGroups[0].coveredResources[0]"),
    ("resource in more than one resource group",
     lambda k: k.cq("cq", k.rg(k.fq("alpha", cpu="0")), k.rg(k.fq("beta", cpu="0"))),
     "spec.resourceGroups[1].coveredResources[0]: Duplicate value: 'cpu'"),
    ("flavor in more than one resource group",
     lambda k: k.cq("cq", k.rg(k.fq("alpha", cpu="0")), k.rg(k.fq("alpha", memory="0"))),
     "spec.resourceGroups[1].flavors[0].name: Duplicate value: 'alpha'"),
    ("flavorFungibility preference set but whenCanPreempt != TryNextFlavor",
     lambda k: k.cq("cq", when_borrow="TryNextFlavor", when_preempt="MayStopSearch",
                    preference="BorrowingOverPreemption"),
     "spec.flavorFungibility.preference"),
    ("flavorFungibility preference set but whenCanBorrow != TryNextFlavor",
     lambda k: k.cq("cq", when_borrow="MayStopSearch", when_preempt="TryNextFlavor",
                    preference="PreemptionOverBorrowing"),
     "requires both whenCanBorrow and whenCanPreempt to be TryNextFlavor"),
], ids=lambda v: v if isinstance(v, str) and " " in v else "")
def test_invalid_queues_name_the_field(k: SimpleNamespace, case: str, build: object,
                                       field: str) -> None:
    """Kueue: TestValidateClusterQueue, the case named `case`."""
    message = cq_error(build(k))  # type: ignore[operator]
    assert message.startswith("ClusterQueue cq: ")
    assert field in message


def test_resources_in_a_different_order_than_covered(k: SimpleNamespace) -> None:
    """Kueue: TestValidateClusterQueue "resources in a flavor in different order"."""
    group = ResourceGroup(("cpu", "memory"), (k.fq("alpha", memory="0", cpu="0"),))
    message = cq_error(ClusterQueue("cq", (group,)))
    assert "flavors[0].resources[0].name: Invalid value 'memory': must match the name in " \
           "coveredResources" in message


def test_namespace_selector_with_invalid_expressions() -> None:
    """Kueue: TestValidateClusterQueue "namespaceSelector with invalid expressions"."""
    selector = LabelSelector(match_expressions=(LabelRequirement("key", "In", ()),))
    message = cq_error(ClusterQueue("cq", namespace_selector=selector))
    assert "spec.namespaceSelector.matchExpressions[0].values" in message


def test_reclaim_never_with_borrow_within_cohort_is_refused() -> None:
    """Kueue's CEL rule: reclaimWithinCohort=Never and borrowWithinCohort.policy!=Never."""
    bad = ClusterQueue("cq", cohort="c", preemption=Preemption(
        "Never", "Never", BorrowWithinCohort("LowerPriority")))
    assert "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never" in cq_error(bad)


@pytest.mark.parametrize(("queue", "field"), [
    (ClusterQueue("Bad_Name"), "metadata.name"),
    (ClusterQueue("cq", queueing_strategy="LIFO"), "spec.queueingStrategy"),
    (ClusterQueue("cq", preemption=Preemption("Any")), "spec.preemption.withinClusterQueue"),
    (ClusterQueue("cq", preemption=Preemption(reclaim_within_cohort="LowerOrNewerEqualPriority")),
     "spec.preemption.reclaimWithinCohort"),
    (ClusterQueue("cq", flavor_fungibility=FlavorFungibility("Sometimes")),
     "spec.flavorFungibility.whenCanBorrow"),
    (ClusterQueue("cq", fair_weight=-1.0), "spec.fairSharing.weight"),
    (ClusterQueue("cq", fair_weight=1e-10), "weight must be > 10e-9"),
])
def test_enums_names_and_weights(queue: ClusterQueue, field: str) -> None:
    assert field in cq_error(queue)


def test_cohort_rules(k: SimpleNamespace) -> None:
    """Kueue: TestValidateCohort: limits only with a parent; a lending limit above the
    cohort's own quota is allowed (its subtree may lend more)."""
    m = KueueManager()
    with pytest.raises(KueueError, match=r"Cohort root: .*borrowingLimit: must be nil when "
                                         r"parent is empty"):
        m.apply(Cohort("root", None, (k.rg(k.fq("x86", cpu=("1", "1"))),)))
    m.apply(Cohort("root"), Cohort("child", "root", (k.rg(k.fq("x86", cpu=("1", "1", "5"))),)))
    assert set(m.cluster.cohorts) == {"root", "child"}


def test_cohort_cycles_are_refused_and_nothing_changes() -> None:
    m = KueueManager()
    m.apply(Cohort("a", "b"))
    with pytest.raises(KueueError, match="form a cycle"):
        m.apply(Cohort("b", "a"))
    assert set(m.cluster.cohorts) == {"a"}
    with pytest.raises(KueueError, match="its own parent"):
        m.apply(Cohort("c", "c"))


def test_one_bad_object_applies_none(k: SimpleNamespace) -> None:
    m = KueueManager()
    with pytest.raises(KueueError, match="ClusterQueue bad"):
        m.apply(ResourceFlavor("default"), k.cq("good"), ClusterQueue("bad", queueing_strategy="x"))
    assert m.objects() == []


def test_flavor_local_queue_and_priority_class_rules() -> None:
    m = KueueManager()
    with pytest.raises(KueueError, match=r"ResourceFlavor gpu: spec.nodeTaints\[0\].effect"):
        m.apply(ResourceFlavor("gpu", node_taints=(Taint("k", "v", "Sometimes"),)))
    with pytest.raises(KueueError, match=r"LocalQueue default/q: spec\.clusterQueue"):
        m.apply(LocalQueue("default", "q", ""))
    with pytest.raises(KueueError, match="WorkloadPriorityClass high: value"):
        m.apply(WorkloadPriorityClass("high", 2**40))
    assert m.objects() == []


def test_workload_rules(k: SimpleNamespace) -> None:
    m = KueueManager()
    m.apply(ResourceFlavor("default"), k.cq("cq", k.rg(k.fq("default", cpu="4"))),
            LocalQueue("default", "q", "cq"))
    with pytest.raises(KueueError, match=r"Workload default/w: spec.podSets\[1\].name: "
                                         "Duplicate value"):
        m.submit(k.wl("w", k.pod_set(1, cpu="1"), k.pod_set(1, cpu="1")))
    with pytest.raises(KueueError, match=r"spec\.podSets: must have between 1 and 18 items"):
        m.submit(k.wl("w", *(k.pod_set(1, f"p{i}", cpu="1") for i in range(19))))
    with pytest.raises(KueueError, match=r"spec.podSets\[0\].count"):
        m.submit(k.wl("w", k.pod_set(-1, cpu="1")))
    with pytest.raises(KueueError, match="WorkloadPriorityClass nope not found"):
        m.submit(Workload("w", "q", (k.pod_set(1, cpu="1"),), priority_class="nope"))
    m.submit(k.wl("w", cpu="1"))
    with pytest.raises(KueueError, match="already exists"):
        m.submit(k.wl("w", cpu="1"))
    assert m.pending() == ["default/w"]


def test_deletes(k: SimpleNamespace) -> None:
    m = KueueManager()
    m.apply(ResourceFlavor("default"), k.cq("cq", k.rg(k.fq("default", cpu="4"))),
            LocalQueue("default", "q", "cq"))
    m.submit(k.wl("w", cpu="1"))
    m.admit_pending()
    with pytest.raises(KueueError, match="still has admitted workloads"):
        m.delete("ClusterQueue", "cq")
    with pytest.raises(KueueError, match="unknown kind"):
        m.delete("Queue", "cq")
    with pytest.raises(KueueError, match="LocalQueue nope not found"):
        m.delete("LocalQueue", "nope")
    m.finish("default/w")
    m.delete("ClusterQueue", "cq")
    m.submit(k.wl("v", cpu="1"))
    assert "doesn't exist" in m.workload("default/v").message

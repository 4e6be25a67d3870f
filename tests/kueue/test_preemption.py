"""Victim selection, re-expressed from Kueue's preemption tests.

Each case names the Kueue test it comes from (pkg/scheduler/preemption/preemption_test.go,
`TestPreemption`, at kubernetes-sigs/kueue ff69552e, see docs/kueue.md): the same queues,
admitted workloads, incoming workload and flavor assignment, and the victims and reasons Kueue
expects. Object names use hyphens where Kueue's tests use underscores or capitals (those are
not valid Kubernetes names, and this engine validates names).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pytest

from quotactor.kueue import Cohort
from quotactor.kueue.preemption import (
    IN_CLUSTER_QUEUE,
    IN_COHORT_RECLAIM_WHILE_BORROWING,
    IN_COHORT_RECLAMATION,
)

LP, LONEP, ANY, NEVER = "LowerPriority", "LowerOrNewerEqualPriority", "Any", "Never"


def default_queues(k: SimpleNamespace) -> list[Any]:
    """Kueue's `defaultClusterQueues` of TestPreemption."""
    cq, rg, fq = k.cq, k.rg, k.fq
    bwc = {"borrow": LP, "threshold": 0}
    return [
        cq("standalone", rg(fq("default", cpu="6")),
           rg(fq("alpha", memory="3Gi"), fq("beta", memory="3Gi")), within=LP),
        cq("c1", rg(fq("default", cpu=("6", "6"), memory=("3Gi", "3Gi"))), cohort="cohort",
           within=LP, reclaim=LP),
        cq("c2", rg(fq("default", cpu=("6", "6"), memory=("3Gi", "3Gi"))), cohort="cohort",
           within=NEVER, reclaim=ANY),
        cq("d1", rg(fq("default", cpu="6", memory="3Gi")), cohort="cohort-no-limits",
           within=LP, reclaim=LP),
        cq("d2", rg(fq("default", cpu="6", memory="3Gi")), cohort="cohort-no-limits",
           within=NEVER, reclaim=ANY),
        cq("l1", rg(fq("default", cpu=("6", "12"), memory=("3Gi", "6Gi"))), cohort="legion",
           within=LP, reclaim=LP),
        cq("prevent-starvation", rg(fq("default", cpu="6")), within=LONEP),
        cq("a-standard", rg(fq("default", cpu=("1", "12"))), cohort="with-common-cq",
           within=NEVER, reclaim=LP, **bwc),
        cq("b-standard", rg(fq("default", cpu=("1", "12"))), cohort="with-common-cq",
           within=LP, reclaim=ANY, **bwc),
        cq("a-best-effort", rg(fq("default", cpu=("1", "12"))), cohort="with-common-cq",
           within=NEVER, reclaim=LP, **bwc),
        cq("b-best-effort", rg(fq("default", cpu=("0", "13"))), cohort="with-common-cq",
           within=NEVER, reclaim=LP, **bwc),
        cq("common", rg(fq("default", cpu="10")), cohort="with-common-cq"),
        cq("lend1", rg(fq("default", cpu=("6", None, "4"))), cohort="cohort-lend",
           within=LP, reclaim=LP),
        cq("lend2", rg(fq("default", cpu=("6", None, "2"))), cohort="cohort-lend",
           within=LP, reclaim=LP),
        cq("a", rg(fq("default", cpu="2", memory="2")), cohort="cohort-three", within=LP,
           reclaim=ANY),
        cq("b", rg(fq("default", cpu="2", memory="2")), cohort="cohort-three"),
        cq("c", rg(fq("default", cpu="2", memory="2")), cohort="cohort-three"),
    ]


@dataclass(frozen=True)
class Admitted:
    name: str
    cq: str
    requests: dict[str, str]
    priority: int = 0
    flavors: dict[str, str] = field(default_factory=dict)
    at: float = 0.0
    created: float = 0.0


@dataclass(frozen=True)
class Case:
    kueue_case: str
    target_cq: str
    admitted: list[Admitted]
    incoming: dict[str, str]
    assignment: dict[str, tuple[str, str]]
    want: dict[str, str]
    priority: int = 0
    created: float = 0.0


def cpu(name: str, cq: str, amount: str, priority: int = 0, at: float = 0.0,
        created: float = 0.0) -> Admitted:
    return Admitted(name, cq, {"cpu": amount}, priority, at=at, created=created)


PREEMPT_CPU = {"cpu": ("default", "Preempt")}

CASES = [
    Case("preempt lowest priority", "standalone",
         [cpu("low", "standalone", "2", -1), cpu("mid", "standalone", "2"),
          cpu("high", "standalone", "2", 1)],
         {"cpu": "2"}, PREEMPT_CPU, {"low": IN_CLUSTER_QUEUE}, priority=1),
    Case("preempt multiple", "standalone",
         [cpu("low", "standalone", "2", -1), cpu("mid", "standalone", "2"),
          cpu("high", "standalone", "2", 1)],
         {"cpu": "3"}, PREEMPT_CPU, {"low": IN_CLUSTER_QUEUE, "mid": IN_CLUSTER_QUEUE},
         priority=1),
    Case("no preemption for low priority", "standalone",
         [cpu("low", "standalone", "3", -1), cpu("mid", "standalone", "3")],
         {"cpu": "1"}, PREEMPT_CPU, {}, priority=-1),
    Case("not enough low priority workloads", "standalone",
         [cpu("low", "standalone", "3", -1), cpu("mid", "standalone", "3")],
         {"cpu": "4"}, PREEMPT_CPU, {}),
    Case("some free quota, preempt low priority", "standalone",
         [cpu("low", "standalone", "1", -1), cpu("mid", "standalone", "1"),
          cpu("high", "standalone", "3", 1)],
         {"cpu": "2"}, PREEMPT_CPU, {"low": IN_CLUSTER_QUEUE}, priority=1),
    Case("minimal set excludes low priority", "standalone",
         [cpu("low", "standalone", "1", -1), cpu("mid", "standalone", "2"),
          cpu("high", "standalone", "3", 1)],
         {"cpu": "2"}, PREEMPT_CPU, {"mid": IN_CLUSTER_QUEUE}, priority=1),
    Case("only preempt workloads using the chosen flavor", "standalone",
         [Admitted("low", "standalone", {"memory": "2Gi"}, -1, {"memory": "alpha"}),
          Admitted("mid", "standalone", {"memory": "1Gi"}, 0, {"memory": "beta"}),
          Admitted("high", "standalone", {"memory": "1Gi"}, 1, {"memory": "beta"})],
         {"cpu": "1", "memory": "2Gi"},
         {"cpu": ("default", "Fit"), "memory": ("beta", "Preempt")},
         {"mid": IN_CLUSTER_QUEUE}, priority=1),
    Case("reclaim quota from borrower", "c1",
         [cpu("c1-low", "c1", "3", -1), cpu("c2-mid", "c2", "3"), cpu("c2-high", "c2", "6", 1)],
         {"cpu": "3"}, PREEMPT_CPU, {"c2-mid": IN_COHORT_RECLAMATION}, priority=1),
    Case("reclaim quota if workload requests 0 resources for a resource at nominal quota",
         "c1",
         [Admitted("c1-low", "c1", {"cpu": "3", "memory": "3Gi"}, -1),
          cpu("c2-mid", "c2", "3"), cpu("c2-high", "c2", "6", 1)],
         {"cpu": "3", "memory": "0"},
         {"cpu": ("default", "Preempt"), "memory": ("default", "Fit")},
         {"c2-mid": IN_COHORT_RECLAMATION}, priority=1),
    Case("no workloads borrowing", "c1",
         [cpu("c1-high", "c1", "4", 1), cpu("c2-low-1", "c2", "4", -1)],
         {"cpu": "4"}, PREEMPT_CPU, {}, priority=1),
    Case("not enough workloads borrowing", "c1",
         [cpu("c1-high", "c1", "4", 1), cpu("c2-low-1", "c2", "4", -1),
          cpu("c2-low-2", "c2", "4", -1)],
         {"cpu": "4"}, PREEMPT_CPU, {}, priority=1),
    Case("preempting locally and borrowing other resources in cohort, without cohort "
         "candidates", "c1",
         [cpu("c1-low", "c1", "4", -1), cpu("c2-low-1", "c2", "4", -1),
          cpu("c2-high-2", "c2", "4", 1)],
         {"cpu": "4", "memory": "5Gi"},
         {"cpu": ("default", "Preempt"), "memory": ("default", "Preempt")},
         {"c1-low": IN_CLUSTER_QUEUE}, priority=1),
    Case("preempting locally and borrowing same resource in cohort", "c1",
         [cpu("c1-med", "c1", "4"), cpu("c1-low", "c1", "4", -1),
          cpu("c2-low-1", "c2", "4", -1)],
         {"cpu": "4"}, PREEMPT_CPU, {"c1-low": IN_CLUSTER_QUEUE}, priority=1),
    Case("preempting locally and borrowing same resource in cohort; no borrowing limit in "
         "the cohort", "d1",
         [cpu("d1-med", "d1", "4"), cpu("d1-low", "d1", "4", -1),
          cpu("d2-low-1", "d2", "4", -1)],
         {"cpu": "4"}, PREEMPT_CPU, {"d1-low": IN_CLUSTER_QUEUE}, priority=1),
    Case("preempting locally and borrowing other resources in cohort, with cohort "
         "candidates", "c1",
         [cpu("c1-med", "c1", "4"), cpu("c2-low-1", "c2", "5", -1),
          cpu("c2-low-2", "c2", "1", -1), cpu("c2-low-3", "c2", "1", -1)],
         {"cpu": "2", "memory": "5Gi"},
         {"cpu": ("default", "Preempt"), "memory": ("default", "Preempt")},
         {"c1-med": IN_CLUSTER_QUEUE}, priority=1),
    Case("preempting locally and not borrowing same resource in 1-queue cohort", "l1",
         [cpu("l1-med", "l1", "4"), cpu("l1-low", "l1", "2", -1)],
         {"cpu": "4"}, PREEMPT_CPU, {"l1-med": IN_CLUSTER_QUEUE}, priority=1),
    Case("do not reclaim borrowed quota from same priority for "
         "withinCohort=ReclaimFromLowerPriority", "c1",
         [cpu("c1", "c1", "2"), cpu("c2-1", "c2", "4"), cpu("c2-2", "c2", "4")],
         {"cpu": "4"}, PREEMPT_CPU, {}),
    Case("reclaim borrowed quota from same priority for withinCohort=ReclaimFromAny", "c2",
         [cpu("c1-1", "c1", "4"), cpu("c1-2", "c1", "4", 1), cpu("c2", "c2", "2")],
         {"cpu": "4"}, PREEMPT_CPU, {"c1-1": IN_COHORT_RECLAMATION}),
    Case("preempt from all ClusterQueues in cohort", "c1",
         [cpu("c1-low", "c1", "3", -1), cpu("c1-mid", "c1", "2"), cpu("c2-low", "c2", "3", -1),
          cpu("c2-mid", "c2", "4")],
         {"cpu": "4"}, PREEMPT_CPU,
         {"c1-low": IN_CLUSTER_QUEUE, "c2-low": IN_COHORT_RECLAMATION}),
    Case("can't preempt workloads in ClusterQueue for withinClusterQueue=Never", "c2",
         [cpu("c2-low", "c2", "3", -1)],
         {"cpu": "4"}, PREEMPT_CPU, {}, priority=1),
    Case("preempt newer workloads with the same priority", "prevent-starvation",
         [cpu("wl1", "prevent-starvation", "2", 2, at=0.0),
          cpu("wl2", "prevent-starvation", "2", 1, at=1.0, created=100.0),
          cpu("wl3", "prevent-starvation", "2", 1, at=0.0, created=100.0)],
         {"cpu": "2"}, PREEMPT_CPU, {"wl2": IN_CLUSTER_QUEUE}, priority=1, created=85.0),
    Case("use BorrowWithinCohort; allow preempting a lower-priority workload from another "
         "ClusterQueue while borrowing", "a-standard",
         [cpu("a-best-effort-low", "a-best-effort", "10", -1),
          cpu("b-best-effort-low", "b-best-effort", "1", -1)],
         {"cpu": "10"}, PREEMPT_CPU,
         {"a-best-effort-low": IN_COHORT_RECLAIM_WHILE_BORROWING}),
    Case("use BorrowWithinCohort; don't allow preempting a lower-priority workload with "
         "priority above MaxPriorityThreshold, if borrowing is required even after the "
         "preemption", "a-standard",
         [cpu("b-standard", "b-standard", "10", 1)],
         {"cpu": "10"}, PREEMPT_CPU, {}, priority=2),
    Case("use BorrowWithinCohort; allow preempting a lower-priority workload with priority "
         "above MaxPriorityThreshold, if borrowing is not required after the preemption",
         "a-standard",
         [cpu("b-standard", "b-standard", "13", 1)],
         {"cpu": "1"}, PREEMPT_CPU, {"b-standard": IN_COHORT_RECLAMATION}, priority=2),
    Case("use BorrowWithinCohort; don't allow for preemption of lower-priority workload "
         "from the same ClusterQueue", "a-standard",
         [cpu("a-standard", "a-standard", "13", 1)],
         {"cpu": "1"}, PREEMPT_CPU, {}, priority=2),
    Case("use BorrowWithinCohort; only preempt from CQ if no workloads below threshold and "
         "already above nominal", "b-standard",
         [cpu("a-standard-1", "a-standard", "10", 1), cpu("a-standard-2", "a-standard", "1", 1),
          cpu("b-standard-1", "b-standard", "1", 1), cpu("b-standard-2", "b-standard", "1", 2)],
         {"cpu": "1"}, PREEMPT_CPU, {"b-standard-1": IN_CLUSTER_QUEUE}, priority=3),
    Case("use BorrowWithinCohort; preempt from CQ and from other CQs with workloads below "
         "threshold", "b-standard",
         [cpu("b-standard-high", "b-standard", "10", 2),
          cpu("b-standard-mid", "b-standard", "1", 1),
          cpu("a-best-effort-low", "a-best-effort", "1", -1),
          cpu("a-best-effort-lower", "a-best-effort", "1", -2)],
         {"cpu": "2"}, PREEMPT_CPU,
         {"a-best-effort-lower": IN_COHORT_RECLAIM_WHILE_BORROWING,
          "b-standard-mid": IN_CLUSTER_QUEUE}, priority=2),
    Case("reclaim quota from lender", "lend1",
         [cpu("lend1-low", "lend1", "3", -1), cpu("lend2-mid", "lend2", "3"),
          cpu("lend2-high", "lend2", "4", 1)],
         {"cpu": "3"}, PREEMPT_CPU, {"lend2-mid": IN_COHORT_RECLAMATION}, priority=1),
    Case("preempt from all ClusterQueues in cohort-lend", "lend1",
         [cpu("lend1-low", "lend1", "3", -1), cpu("lend1-mid", "lend1", "2"),
          cpu("lend2-low", "lend2", "3", -1), cpu("lend2-mid", "lend2", "4")],
         {"cpu": "4"}, PREEMPT_CPU,
         {"lend1-low": IN_CLUSTER_QUEUE, "lend2-low": IN_COHORT_RECLAMATION}),
    Case("cannot preempt from other ClusterQueues if exceeds requestable quota including "
         "lending limit", "lend1",
         [cpu("lend2-low", "lend2", "10", -1)],
         {"cpu": "9"}, PREEMPT_CPU, {}),
    Case("preemptions from cq when target queue is exhausted for the single requested "
         "resource", "a",
         [cpu("a1", "a", "1", -2), cpu("a2", "a", "1", -2), cpu("a3", "a", "1", -1),
          cpu("b1", "b", "1"), cpu("b2", "b", "1"), cpu("b3", "b", "1")],
         {"cpu": "2"}, PREEMPT_CPU, {"a1": IN_CLUSTER_QUEUE, "a2": IN_CLUSTER_QUEUE}),
    Case("preemptions from cq when target queue is exhausted for two requested resources",
         "a",
         [Admitted(n, c, {"cpu": "1", "memory": "1"}, p) for n, c, p in (
             ("a1", "a", -2), ("a2", "a", -2), ("a3", "a", -1), ("b1", "b", 0),
             ("b2", "b", 0), ("b3", "b", 0))],
         {"cpu": "2", "memory": "2"},
         {"cpu": ("default", "Preempt"), "memory": ("default", "Preempt")},
         {"a1": IN_CLUSTER_QUEUE, "a2": IN_CLUSTER_QUEUE}),
    Case("preemptions from cq when target queue is exhausted for one requested resource, "
         "but not the other", "a",
         [cpu("a1", "a", "1", -2), cpu("a2", "a", "1", -2), cpu("a3", "a", "1", -1),
          cpu("b1", "b", "1"), cpu("b2", "b", "1"), cpu("b3", "b", "1")],
         {"cpu": "2", "memory": "2"},
         {"cpu": ("default", "Preempt"), "memory": ("default", "Preempt")},
         {"a1": IN_CLUSTER_QUEUE, "a2": IN_CLUSTER_QUEUE}),
    Case("allow preemption from other cluster queues if target cq is not exhausted for the "
         "requested resource", "a",
         [cpu("a1", "a", "1", -1), cpu("b1", "b", "1"), cpu("b2", "b", "1"),
          cpu("b3", "b", "1"), cpu("b4", "b", "1"), cpu("b5", "b", "1", -1)],
         {"cpu": "2"}, PREEMPT_CPU, {"a1": IN_CLUSTER_QUEUE, "b5": IN_COHORT_RECLAMATION}),
]


@pytest.mark.parametrize("case", CASES, ids=[c.kueue_case for c in CASES])
def test_preemption_targets(k: SimpleNamespace, case: Case) -> None:
    """Kueue: preemption_test.go TestPreemption, the case of the same name."""
    m = k.manager(*default_queues(k))
    for a in case.admitted:
        workload = k.wl(a.name, priority=a.priority, created=a.created, **a.requests)
        k.admit(m, workload, a.cq, a.flavors or None, at=a.at)
    incoming = k.wl("in", priority=case.priority, created=case.created, **case.incoming)
    assert k.targets(m, incoming, case.target_cq, case.assignment) == case.want


def test_each_pod_set_preempts_a_different_flavor(k: SimpleNamespace) -> None:
    """Kueue: TestPreemption "each podset preempts a different flavor"."""
    from quotactor.kueue.cluster import Record
    from quotactor.kueue.preemption import get_targets

    m = k.manager(*default_queues(k))
    k.admit(m, k.wl("low-alpha", priority=-1, memory="2Gi"), "standalone", {"memory": "alpha"})
    k.admit(m, k.wl("low-beta", priority=-1, memory="2Gi"), "standalone", {"memory": "beta"})
    incoming = k.wl("in", k.pod_set(1, "launcher", memory="2Gi"),
                    k.pod_set(2, "workers", memory="1Gi"))
    usage = {("alpha", "memory"): 2 * 2**30, ("beta", "memory"): 2 * 2**30}
    found = get_targets(m.cluster, Record(incoming, 99, 0), "standalone",
                        frozenset(usage), usage)
    assert {t.record.workload.name: t.reason for t in found} == {
        "low-alpha": IN_CLUSTER_QUEUE, "low-beta": IN_CLUSTER_QUEUE}


def test_long_range_preemption(k: SimpleNamespace) -> None:
    """Kueue: TestPreemption "long range preemption" (two cohorts under a common root)."""
    m = k.manager(
        k.cq("cq-left", k.rg(k.fq("default", cpu="10")), cohort="cohort-left", reclaim=ANY),
        k.cq("cq-right", k.rg(k.fq("default", cpu="0")), cohort="cohort-right"),
        cohorts=(Cohort("cohort-left", "root"), Cohort("cohort-right", "root")))
    k.admit(m, k.wl("to-be-preempted", cpu="5"), "cq-right")
    incoming = k.wl("in", cpu="8")
    assert k.targets(m, incoming, "cq-left", PREEMPT_CPU) == {
        "to-be-preempted": IN_COHORT_RECLAMATION}


def test_targets_leave_the_tree_as_they_found_it(k: SimpleNamespace, used: Any) -> None:
    """Choosing victims is a simulation: every usage is as before."""
    m = k.manager(*default_queues(k))
    k.admit(m, k.wl("c1-low", priority=-1, cpu="3"), "c1")
    k.admit(m, k.wl("c2-mid", cpu="3"), "c2")
    k.admit(m, k.wl("c2-high", priority=1, cpu="6"), "c2")
    before = {name: used(m, name) for name in ("c1", "c2")}
    shares = [m.cohort_usage("cohort").to_dict()]
    assert k.targets(m, k.wl("in", priority=1, cpu="3"), "c1", PREEMPT_CPU)
    assert {name: used(m, name) for name in ("c1", "c2")} == before
    assert [m.cohort_usage("cohort").to_dict()] == shares

"""Scheduling cycles, re-expressed from Kueue's scheduler tests.

Cases name the Kueue test they come from (pkg/scheduler/scheduler_test.go `TestSchedule` at
kubernetes-sigs/kueue ff69552e): the same queues, namespaces and workloads, one scheduling
cycle, and the admissions and the workloads left (in the queue, or set aside as inadmissible)
that Kueue expects. Queue names use lowercase and hyphens where Kueue's tests do not.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from quotactor.kueue import (
    Cohort,
    KueueManager,
    LabelRequirement,
    LabelSelector,
    LocalQueue,
    ResourceFlavor,
)

LP, ANY = "LowerPriority", "Any"


def dep(value: str) -> LabelSelector:
    return LabelSelector(match_expressions=(LabelRequirement("dep", "In", (value,)),))


def schedule_setup(k: SimpleNamespace, *extra: Any, cohorts: tuple[Cohort, ...] = ()
                   ) -> KueueManager:
    """TestSchedule's flavors, ClusterQueues, LocalQueues and namespaces, plus `extra`."""
    cq, rg, fq = k.cq, k.rg, k.fq
    m = KueueManager()
    # Kueue's test gives `sales` a borrowing limit of 0 without a cohort, which its webhook
    # (and this engine) refuses; without a cohort it means the same.
    sales = cq("sales", rg(fq("default", cpu="50")), strategy="StrictFIFO")
    alpha = cq("eng-alpha", rg(fq("on-demand", cpu=("50", "50")), fq("spot", cpu=("100", "0"))),
               cohort="eng", strategy="StrictFIFO")
    beta = cq("eng-beta", rg(fq("on-demand", cpu=("50", "10")), fq("spot", cpu=("0", "100"))),
              rg(fq("model-a", {"example.com/gpu": ("20", "0")})), cohort="eng",
              strategy="StrictFIFO", within=LP, reclaim=ANY)
    lend_a = cq("lend-a", rg(fq("default", cpu=("3", None, "2"))), cohort="lend")
    lend_b = cq("lend-b", rg(fq("default", cpu=("2", None, "2"))), cohort="lend")
    queues = [sales, alpha, beta, lend_a, lend_b]
    from dataclasses import replace
    queues = [replace(q, namespace_selector=dep({"sales": "sales", "eng-alpha": "eng",
                                                 "eng-beta": "eng"}.get(q.name, "lend")))
              for q in queues]
    m.apply(*(ResourceFlavor(f) for f in ("default", "on-demand", "spot", "model-a")),
            *cohorts, *queues, *extra,
            LocalQueue("sales", "main", "sales"), LocalQueue("sales", "blocked", "eng-alpha"),
            LocalQueue("eng-alpha", "main", "eng-alpha"),
            LocalQueue("eng-beta", "main", "eng-beta"),
            LocalQueue("lend", "lend-a-queue", "lend-a"),
            LocalQueue("lend", "lend-b-queue", "lend-b"))
    for name, label in (("eng-alpha", "eng"), ("eng-beta", "eng"), ("eng-gamma", "eng"),
                        ("sales", "sales"), ("lend", "lend")):
        m.set_namespace(name, {"dep": label})
    return m


def flavors_of(m: KueueManager, key: str) -> dict[str, str]:
    admission = m.workload(key).admission
    assert admission is not None, f"{key} is not admitted"
    return {r: f for p in admission.pod_sets for r, f in p.flavors}


def test_single_cluster_queue_full(k: SimpleNamespace) -> None:
    """Kueue: TestSchedule "single clusterQueue full" (StrictFIFO keeps the head queued)."""
    m = schedule_setup(k)
    m.restore(k.wl("assigned", k.pod_set(40, "one", cpu="1"), namespace="sales"), "sales")
    m.submit(k.wl("new", k.pod_set(11, "one", cpu="1"), queue="main", namespace="sales"))
    result = m.schedule()
    assert result.admitted == ()
    assert m.pending("sales") == ["sales/new"]
    assert m.inadmissible() == []
    assert "insufficient unused quota for cpu in flavor default, 1 more needed" in \
        m.workload("sales/new").message


def test_failed_to_match_cluster_queue_selector(k: SimpleNamespace) -> None:
    """Kueue: TestSchedule "failed to match clusterQueue selector"."""
    m = schedule_setup(k)
    m.submit(k.wl("new", k.pod_set(1, "one", cpu="1"), queue="blocked", namespace="sales"))
    m.schedule()
    assert m.inadmissible("eng-alpha") == ["sales/new"]
    assert "doesn't match ClusterQueue selector" in m.workload("sales/new").message


def test_admit_in_different_cohorts(k: SimpleNamespace) -> None:
    """Kueue: TestSchedule "admit in different cohorts"."""
    m = schedule_setup(k)
    m.submit(k.wl("new", k.pod_set(1, "one", cpu="1"), queue="main", namespace="sales"))
    m.submit(k.wl("new", k.pod_set(51, "one", cpu="1"), queue="main", namespace="eng-alpha"))
    assert sorted(m.schedule().admitted) == ["eng-alpha/new", "sales/new"]
    assert flavors_of(m, "eng-alpha/new") == {"cpu": "on-demand"}
    assert flavors_of(m, "sales/new") == {"cpu": "default"}


@pytest.mark.parametrize(("case", "alpha", "beta", "admitted"), [
    ("admit in same cohort with no borrowing", 40, 40, ["eng-alpha/new", "eng-beta/new"]),
    ("cannot borrow if cohort was assigned and would result in overadmission", 45, 56,
     ["eng-alpha/new"]),
    ("can borrow if cohort was assigned and will not result in overadmission", 45, 55,
     ["eng-alpha/new", "eng-beta/new"]),
], ids=lambda v: v if isinstance(v, str) and " " in v else "")
def test_two_queues_of_one_cohort_in_one_cycle(k: SimpleNamespace, case: str, alpha: int,
                                               beta: int, admitted: list[str]) -> None:
    """Kueue: TestSchedule, the case named `case` (the one not borrowing goes first; the
    other is admitted only if it still fits)."""
    m = schedule_setup(k)
    m.submit(k.wl("new", k.pod_set(alpha, "one", cpu="1"), queue="main", namespace="eng-alpha"))
    m.submit(k.wl("new", k.pod_set(beta, "one", cpu="1"), queue="main", namespace="eng-beta"))
    assert sorted(m.schedule().admitted) == admitted
    for key in admitted:
        assert flavors_of(m, key) == {"cpu": "on-demand"}
    if len(admitted) == 1:
        assert m.pending("eng-beta") == ["eng-beta/new"]
        assert m.inadmissible() == []


def test_workload_exceeds_lending_limit_when_borrowing_in_cohort(k: SimpleNamespace) -> None:
    """Kueue: TestSchedule "workload exceeds lending limit when borrow in cohort"."""
    m = schedule_setup(k)
    m.restore(k.wl("a", namespace="lend", cpu="2"), "lend-b")
    m.submit(k.wl("b", queue="lend-b-queue", namespace="lend", cpu="3"))
    assert m.schedule().admitted == ()
    assert m.inadmissible("lend-b") == ["lend/b"]


def lender_and_borrower(k: SimpleNamespace, lending: str) -> list[Any]:
    eng = dep("eng")
    from dataclasses import replace
    return [
        replace(k.cq("cq-lender", k.rg(k.fq("on-demand", cpu=("10", None, lending))),
                     cohort="child"), namespace_selector=eng),
        replace(k.cq("cq-borrower", k.rg(k.fq("on-demand", cpu=("5", "10"))), cohort="child"),
                namespace_selector=eng),
        LocalQueue("eng-alpha", "lq-lender", "cq-lender"),
        LocalQueue("eng-alpha", "lq-borrower", "cq-borrower"),
    ]


@pytest.mark.parametrize(("case", "lending", "wanted", "admitted"), [
    ("hierarchical cohort respects lending limit when borrowing", "3", "4", False),
    ("hierarchical cohort allows borrowing up to lending limit", "5", "5", True),
], ids=lambda v: v if isinstance(v, str) and " " in v else "")
def test_hierarchical_lending_limit(k: SimpleNamespace, case: str, lending: str, wanted: str,
                                   admitted: bool) -> None:
    """Kueue: TestSchedule, the case named `case` (ROOT > CHILD > lender, borrower)."""
    m = schedule_setup(k, *lender_and_borrower(k, lending),
                       cohorts=(Cohort("root"), Cohort("child", "root")))
    m.restore(k.wl("wl-existing", namespace="eng-alpha", cpu="5"), "cq-borrower")
    m.submit(k.wl("wl-pending", queue="lq-borrower", namespace="eng-alpha", cpu=wanted))
    m.schedule()
    if admitted:
        assert m.admitted("cq-borrower") == ["eng-alpha/wl-existing", "eng-alpha/wl-pending"]
    else:
        assert m.inadmissible("cq-borrower") == ["eng-alpha/wl-pending"]


def test_workload_borrowing_less_is_scheduled_first(k: SimpleNamespace) -> None:
    """Kueue: TestSchedule "in a hierarchical cohort, workload borrowing less is scheduled
    first" (even against a higher priority)."""
    m = schedule_setup(
        k, k.cq("guaranteed", k.rg(k.fq("default", cpu="0")), cohort="guaranteed"),
        k.cq("best-effort", k.rg(k.fq("default", cpu="0")), cohort="root"),
        LocalQueue("eng-alpha", "lq-guaranteed", "guaranteed"),
        LocalQueue("eng-alpha", "lq-best-effort", "best-effort"),
        cohorts=(Cohort("root"), Cohort("guaranteed", "root", (k.rg(k.fq("default", cpu="4")),))))
    m.submit(k.wl("guaranteed", queue="lq-guaranteed", namespace="eng-alpha", cpu="4"))
    m.submit(k.wl("best-effort", queue="lq-best-effort", namespace="eng-alpha", priority=3,
                  cpu="4"))
    assert m.schedule().admitted == ("eng-alpha/guaranteed",)
    assert m.pending("best-effort") == ["eng-alpha/best-effort"]
    assert m.inadmissible() == []


@pytest.mark.parametrize(("case", "reclaim", "b_admitted"), [
    ("capacity not blocked when lending clusterqueue can reclaim (ReclaimWithinCohort=Any)",
     ANY, True),
    ("capacity blocked when lending clusterqueue not guaranteed to reclaim "
     "(ReclaimWithinCohort=LowerPriority)", LP, False),
    ("capacity blocked when lending clusterqueue not guaranteed to reclaim "
     "(ReclaimWithinCohort=Never)", "Never", False),
], ids=lambda v: v if isinstance(v, str) and " " in v else "")
def test_capacity_held_for_a_workload_waiting_to_preempt(k: SimpleNamespace, case: str,
                                                          reclaim: str, b_admitted: bool) -> None:
    """Kueue: TestSchedule, the case named `case`: a head needing preemption without victims
    holds its queue's unused quota for the cycle unless it can always reclaim it later."""
    m = schedule_setup(
        k, k.cq("cluster-queue-a", k.rg(k.fq("on-demand", gpu="2")), cohort="root",
                reclaim=reclaim),
        k.cq("cluster-queue-b", k.rg(k.fq("on-demand", gpu="0")), cohort="root"),
        LocalQueue("eng-alpha", "lq", "cluster-queue-a"),
        LocalQueue("eng-beta", "lq", "cluster-queue-b"))
    m.restore(k.wl("a1-admitted", namespace="eng-alpha", gpu="1"), "cluster-queue-a")
    m.submit(k.wl("a2-pending", queue="lq", namespace="eng-alpha", gpu="2"))
    m.submit(k.wl("b1-pending", queue="lq", namespace="eng-beta", gpu="1"))
    result = m.schedule()
    assert m.inadmissible("cluster-queue-a") == ["eng-alpha/a2-pending"]
    if b_admitted:
        assert result.admitted == ("eng-beta/b1-pending",)
    else:
        assert result.admitted == ()
        assert m.pending("cluster-queue-b") == ["eng-beta/b1-pending"]
        assert m.inadmissible("cluster-queue-b") == []


def three_queues(k: SimpleNamespace) -> list[Any]:
    group = k.rg(k.fq("default", r1=("10", "10"), r2=("10", "10")))
    return [k.cq(f"cq{i}", group, cohort="co", within=LP, reclaim=ANY) for i in (1, 2, 3)] + [
        LocalQueue("sales", f"lq{i}", f"cq{i}") for i in (1, 2, 3)]


@pytest.mark.parametrize(("case", "second", "admitted"), [
    ("two workloads can borrow different resources from the same flavor in the same cycle",
     ("r2", "16"), ["sales/wl1", "sales/wl2"]),
    ("two workloads can borrow the same resources from the same flavor in the same cycle if "
     "fits in the cohort quota", ("r1", "14"), ["sales/wl1", "sales/wl2"]),
    ("only one workload can borrow one resources from the same flavor in the same cycle if "
     "cohort quota cannot fit", ("r1", "16"), ["sales/wl1"]),
], ids=lambda v: v if isinstance(v, str) and " " in v else "")
def test_borrowing_in_one_cycle(k: SimpleNamespace, case: str, second: tuple[str, str],
                                admitted: list[str]) -> None:
    """Kueue: TestSchedule, the case named `case`."""
    from dataclasses import replace
    queues = [replace(q, namespace_selector=LabelSelector()) if hasattr(q, "cohort") else q
              for q in three_queues(k)]
    m = schedule_setup(k, *queues)
    m.submit(k.wl("wl1", k.pod_set(1, requests={"r1": "16"}), queue="lq1", namespace="sales",
                  priority=-1))
    m.submit(k.wl("wl2", k.pod_set(1, requests={second[0]: second[1]}), queue="lq2",
                  namespace="sales", priority=-2))
    assert sorted(m.schedule().admitted) == admitted
    if len(admitted) == 1:
        assert m.pending("cq2") == ["sales/wl2"]


def test_workload_should_not_fit_in_nonexistent_cluster_queue(k: SimpleNamespace) -> None:
    """Kueue: TestSchedule "workload should not fit in nonexistent clusterQueue"."""
    m = schedule_setup(k, LocalQueue("sales", "cq-nonexistent-queue", "nonexistent-cq"))
    m.submit(k.wl("foo", queue="cq-nonexistent-queue", namespace="sales", cpu="1"))
    assert m.admit_pending().admitted == ()
    assert m.pending() == ["sales/foo"]


def test_workload_should_not_fit_in_queue_with_nonexistent_flavor(k: SimpleNamespace) -> None:
    """Kueue: TestSchedule "workload should not fit in clusterQueue with nonexistent
    flavor" (the ClusterQueue is inactive)."""
    m = schedule_setup(
        k, k.cq("flavor-nonexistent-cq", k.rg(k.fq("nonexistent-flavor", cpu="50")),
                strategy="StrictFIFO"),
        LocalQueue("sales", "flavor-nonexistent-queue", "flavor-nonexistent-cq"))
    m.submit(k.wl("foo", queue="flavor-nonexistent-queue", namespace="sales", cpu="1"))
    m.schedule()
    assert m.inadmissible("flavor-nonexistent-cq") == ["sales/foo"]
    assert "inactive" in m.workload("sales/foo").message

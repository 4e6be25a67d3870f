"""The quota tree's accounting, re-expressed from Kueue's cache tests
(pkg/cache/scheduler/snapshot_test.go `TestSnapshotAddRemoveWorkloadWithLendingLimit`,
resource_node_test.go `TestCohortLendable`, kueue ff69552e): what a cohort holds of its
queues' usage when lending limits keep part of their quota local."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from quotactor.kueue import KueueManager
from quotactor.kueue.tree import available, potential_available

CPU = ("default", "cpu")
WORKLOADS = {"lend-a-1": ("lend-a", "1"), "lend-a-2": ("lend-a", "9"),
             "lend-a-3": ("lend-a", "6"), "lend-b-1": ("lend-b", "4")}
ALL = tuple(WORKLOADS)


def lending(k: SimpleNamespace) -> KueueManager:
    m = k.manager(k.cq("lend-a", k.rg(k.fq("default", cpu=("10", None, "4"))), cohort="lend",
                       within="LowerPriority", reclaim="LowerPriority"),
                  k.cq("lend-b", k.rg(k.fq("default", cpu=("10", None, "6"))), cohort="lend",
                       reclaim="Any"), flavors=("default",))
    for name in ALL:
        add(k, m, name)
    return m


def add(k: SimpleNamespace, m: KueueManager, name: str) -> None:
    cq, cpu = WORKLOADS[name]
    k.admit(m, k.wl(name, cpu=cpu), cq)


@pytest.mark.parametrize(("case", "remove", "put_back", "want"), [
    ("remove all then add all", ALL, ALL, (10_000, 16_000, 4_000)),
    ("remove all", ALL, (), (0, 0, 0)),
    ("remove workload, but still using quota over GuaranteedQuota", ("lend-a-2",), (),
     (1_000, 7_000, 4_000)),
    ("remove wokload, using same quota as GuaranteedQuota", ("lend-a-1", "lend-a-2"), (),
     (0, 6_000, 4_000)),
    ("remove workload, using less quota than GuaranteedQuota", ("lend-a-2", "lend-a-3"), (),
     (0, 1_000, 4_000)),
    ("remove all then add workload, using less quota than GuaranteedQuota", ALL,
     ("lend-a-1",), (0, 1_000, 0)),
    ("remove all then add workload, using same quota as GuaranteedQuota", ALL,
     ("lend-a-3",), (0, 6_000, 0)),
    ("remove all then add workload, using quota over GuaranteedQuota", ALL, ("lend-a-2",),
     (3_000, 9_000, 0)),
], ids=lambda v: v if isinstance(v, str) and " " in v else "")
def test_cohort_usage_with_lending_limits(k: SimpleNamespace, case: str,
                                          remove: tuple[str, ...], put_back: tuple[str, ...],
                                          want: tuple[int, int, int]) -> None:
    """Kueue: TestSnapshotAddRemoveWorkloadWithLendingLimit, the case named `case`: (cohort,
    lend-a, lend-b) usage; the cohort's quota stays 10 (what the two may lend)."""
    m = lending(k)
    for name in remove:
        m.finish(f"default/{name}")
    for name in put_back:
        add(k, m, name)
    cohort, a, b = m.cluster.cohort_nodes["lend"], m.cluster.node("lend-a"), m.cluster.node(
        "lend-b")
    assert (cohort.usage.get(CPU, 0), a.usage.get(CPU, 0), b.usage.get(CPU, 0)) == want
    assert (cohort.subtree[CPU], a.subtree[CPU], b.subtree[CPU]) == (10_000, 10_000, 10_000)


def test_cohort_lendable(k: SimpleNamespace) -> None:
    """Kueue: resource_node_test.go TestCohortLendable (what a cohort may lend sums its
    queues' lendable quota, per resource)."""
    m = k.manager(k.cq("cq1", k.rg(k.fq("default", {"cpu": ("8", None, "8"),
                                                   "example.com/gpu": ("3", None, "3")})),
                       cohort="test-cohort"),
                  k.cq("cq2", k.rg(k.fq("default", {"cpu": ("2", None, "2")})),
                       cohort="test-cohort"), flavors=("default",))
    cohort = m.cluster.cohort_nodes["test-cohort"]
    assert cohort.subtree == {("default", "cpu"): 10_000, ("default", "example.com/gpu"): 3}


def test_what_a_queue_can_use_now_and_ever(k: SimpleNamespace) -> None:
    """lend-a keeps 6 for itself and may use what lend-b lends (6): 16 at most; with lend-b
    using 8 of its 10 (so lending only 2 more), lend-a can use 12 now."""
    m = k.manager(k.cq("lend-a", k.rg(k.fq("default", cpu=("10", None, "4"))), cohort="lend"),
                  k.cq("lend-b", k.rg(k.fq("default", cpu=("10", None, "6"))), cohort="lend"),
                  flavors=("default",))
    a = m.cluster.node("lend-a")
    assert potential_available(a, CPU) == 16_000
    k.admit(m, k.wl("b", cpu="8"), "lend-b")
    assert available(a, CPU) == 12_000
    k.admit(m, k.wl("a", cpu="11"), "lend-a")
    assert available(a, CPU) == 1_000
    # 19 of the 20 cores are used: b, below its nominal quota, gets the last one only
    # (reclaiming the rest would take preemption)
    assert available(m.cluster.node("lend-b"), CPU) == 1_000

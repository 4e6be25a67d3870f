"""A workload's life through the engine: queueing strategies, preemption in a cycle,
requeueing when quota is released, eviction, and the usage views."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from quotactor.kueue import KueueError, KueueManager


def one_queue(k: SimpleNamespace, strategy: str, **policy: str) -> KueueManager:
    return k.manager(k.cq("cq", k.rg(k.fq("default", cpu="4")), strategy=strategy, **policy))


def test_strict_fifo_head_blocks_the_queue(k: SimpleNamespace) -> None:
    m = one_queue(k, "StrictFIFO")
    m.submit(k.wl("big", queue="q-cq", cpu="6", created=1))
    m.submit(k.wl("small", queue="q-cq", cpu="1", created=2))
    assert m.admit_pending().admitted == ()
    assert m.pending("cq") == ["default/big", "default/small"]


def test_best_effort_fifo_lets_the_next_one_through_and_retries_when_quota_frees(
        k: SimpleNamespace) -> None:
    m = one_queue(k, "BestEffortFIFO")
    m.submit(k.wl("first", queue="q-cq", cpu="3", created=0))
    m.submit(k.wl("big", queue="q-cq", cpu="4", created=1))
    m.submit(k.wl("small", queue="q-cq", cpu="1", created=2))
    result = m.admit_pending()
    assert result.admitted == ("default/first", "default/small")
    assert m.inadmissible("cq") == ["default/big"]
    m.finish("default/first")
    assert m.inadmissible() == []  # released quota gives set-aside heads another chance
    m.finish("default/small")
    assert m.admit_pending().admitted == ("default/big",)


def test_priority_orders_the_queue(k: SimpleNamespace) -> None:
    m = one_queue(k, "StrictFIFO")
    m.submit(k.wl("old-low", queue="q-cq", cpu="3", created=0))
    m.submit(k.wl("new-high", queue="q-cq", cpu="3", created=5, priority=10))
    assert m.pending("cq") == ["default/new-high", "default/old-low"]
    assert m.admit_pending().admitted == ("default/new-high",)


def test_preemption_evicts_victims_and_admits_in_the_same_cycle(k: SimpleNamespace) -> None:
    m = one_queue(k, "BestEffortFIFO", within="LowerPriority")
    m.submit(k.wl("low", queue="q-cq", cpu="3", priority=0))
    m.admit_pending()
    m.submit(k.wl("high", queue="q-cq", cpu="3", priority=5))
    result = m.schedule()
    assert result.admitted == ("default/high",)
    assert [(p.workload, p.by, p.reason) for p in result.preempted] == [
        ("default/low", "default/high", "InClusterQueue")]
    low = m.workload("default/low")
    assert (low.state, low.preemptions) == ("Pending", 1)
    assert "Preempted to accommodate default/high" in low.message


def test_borrowing_lent_and_cohort_views(k: SimpleNamespace) -> None:
    m = k.manager(k.cq("a", k.rg(k.fq("default", cpu=("4", "4"))), cohort="co"),
                  k.cq("b", k.rg(k.fq("default", cpu=("4", None, "2"))), cohort="co"))
    m.submit(k.wl("w", queue="q-a", cpu="6"))
    assert m.admit_pending().admitted == ("default/w",)
    a, b = (m.cluster_queue_usage(n).resources[0] for n in "ab")
    assert (a.used, a.borrowed, a.lent) == (6000, 2000, 0)
    assert (b.used, b.borrowed, b.lent) == (0, 0, 2000)
    cohort = m.cohort_usage("co")
    assert (cohort.resources[0].subtree_quota, cohort.resources[0].used) == (8000, 6000)
    assert cohort.cluster_queues == ("a", "b")
    # b keeps 2 for itself: a cannot take more
    m.submit(k.wl("more", queue="q-a", cpu="1"))
    assert m.admit_pending().admitted == ()


def test_evict_and_unknown_workloads(k: SimpleNamespace) -> None:
    m = one_queue(k, "BestEffortFIFO")
    m.submit(k.wl("w", queue="q-cq", cpu="1"))
    with pytest.raises(KueueError, match="not admitted"):
        m.evict("default/w")
    m.admit_pending()
    m.evict("default/w")
    assert m.workload("default/w").state == "Pending"
    assert m.cluster_queue_usage("cq").resources[0].used == 0
    with pytest.raises(KueueError, match="Workload default/nope not found"):
        m.workload("default/nope")
    with pytest.raises(KueueError, match="ClusterQueue nope not found"):
        m.cluster_queue_usage("nope")


def test_a_queue_change_requeues_and_moves_workloads(k: SimpleNamespace) -> None:
    m = one_queue(k, "BestEffortFIFO")
    m.submit(k.wl("big", queue="q-cq", cpu="6"))
    m.admit_pending()
    assert m.inadmissible() == ["default/big"]
    m.apply(k.cq("cq", k.rg(k.fq("default", cpu="8"))))
    assert m.inadmissible() == []
    assert m.admit_pending().admitted == ("default/big",)


def test_attempt_admits_one_workload_with_its_victims(k: SimpleNamespace) -> None:
    m = one_queue(k, "BestEffortFIFO", within="LowerPriority")
    m.submit(k.wl("low", queue="q-cq", cpu="3"))
    assert m.attempt("default/low").admitted
    m.submit(k.wl("high", queue="q-cq", cpu="3", priority=5))
    asked: list[tuple[str, ...]] = []

    def no_room(victims: tuple[str, ...]) -> bool:
        asked.append(victims)
        return False

    refused = m.attempt("default/high", no_room)
    assert (refused.admitted, refused.blocked_by) == (False, "room")
    assert asked == [("default/low",)]
    assert m.admitted() == ["default/low"]  # nothing changed
    done = m.attempt("default/high", lambda victims: True)
    assert done.admitted and [p.workload for p in done.preempted] == ["default/low"]
    assert m.pending() == ["default/low"]
    with pytest.raises(KueueError, match="already admitted"):
        m.attempt("default/high")


def test_attempt_reasons(k: SimpleNamespace) -> None:
    m = one_queue(k, "StrictFIFO")
    m.submit(k.wl("first", queue="q-cq", cpu="6", created=0))
    m.submit(k.wl("second", queue="q-cq", cpu="1", created=1))
    assert "maximum capacity" in m.attempt("default/first").reason
    assert m.attempt("default/first").blocked_by == "quota"
    assert m.attempt("default/second").reason == (
        "waits behind default/first, the head of StrictFIFO ClusterQueue cq")
    assert m.attempt("default/second").blocked_by == "head"
    m.submit(k.wl("lost", queue="nowhere", cpu="1"))
    assert "doesn't exist" in m.attempt("default/lost").reason
    assert m.attempt("default/lost").blocked_by == "queue"


def test_never_fits(k: SimpleNamespace) -> None:
    m = k.manager(k.cq("a", k.rg(k.fq("one", cpu=("4", "2")), k.fq("two", cpu="5")),
                       cohort="co"),
                  k.cq("b", k.rg(k.fq("one", cpu="4")), cohort="co"))
    assert m.never_fits(k.wl("w", queue="q-a", cpu="6")) is None  # 4 + borrowing 2
    assert m.never_fits(k.wl("w", k.pod_set(1, "x", cpu="6"), k.pod_set(1, "y", cpu="5"),
                             queue="q-a")) is None  # the second pod set goes to `two`
    assert "can ever hold of cpu (6000)" in str(m.never_fits(k.wl("w", queue="q-a", cpu="7")))
    assert "no quota for memory" in str(m.never_fits(k.wl("w", queue="q-a", memory="1")))
    assert "doesn't exist" in str(m.never_fits(k.wl("w", queue="nope", cpu="1")))

"""The actor and its facade under concurrent callers; the monitor driven by a fake clock."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from quotactor.actors.runtime import WorkerPool, call, deliver, stop
from quotactor.actors.served import Change, Read
from quotactor.core.resources import Resource
from quotactor.elastic import (
    ElasticQuotaActor,
    ElasticQuotaService,
    OveruseReport,
    QuotaError,
    QuotaSpec,
    compute_figures,
)
from quotactor.elastic.manager import ElasticQuotaManager

Start = Callable[..., ElasticQuotaService]


def cpu(n: int) -> Resource:
    return Resource({"cpu": n})


def test_concurrent_reservations_never_overcommit_a_quota(start_service: Start) -> None:
    service = start_service(cpu(100))
    service.upsert(QuotaSpec("t", min=cpu(5), max=cpu(10)))

    def worker(thread: int) -> int:
        admitted = 0
        for index in range(6):
            pod_id = f"{thread}-{index}"
            service.add_pod(pod_id, "t", cpu(1))
            admitted += service.reserve(pod_id).ok
        return admitted

    with ThreadPoolExecutor(max_workers=8) as pool:
        admitted = sum(f.result(timeout=30) for f in [pool.submit(worker, t) for t in range(8)])
    assert admitted == 10
    assert service.used("t") == cpu(10)
    assert service.runtime("t") == cpu(10)


def test_concurrent_changes_end_in_a_state_a_full_recompute_agrees_with(
        start_service: Start) -> None:
    service = start_service({"cpu": 60, "memory": 600})
    service.upsert(QuotaSpec("dept", is_parent=True, min={"cpu": 20}, max={"cpu": 60,
                                                                         "memory": 600}))
    for name in ("a", "b", "c"):
        service.upsert(QuotaSpec(name, parent="dept", min={"cpu": 5},
                                 max={"cpu": 40, "memory": 400}))
    service.upsert(QuotaSpec("solo", min={"cpu": 10}, max={"cpu": 30}))
    quotas = itertools.cycle(["a", "b", "c", "solo", None])

    def worker(thread: int, quota: str | None) -> None:
        for index in range(25):
            pod_id = f"{thread}-{index}"
            service.add_pod(pod_id, quota, {"cpu": 1 + index % 3, "memory": 7}, index % 4)
            if index % 2:
                service.reserve(pod_id)
            if index % 5 == 0:
                service.remove_pod(pod_id)
            if index % 7 == 0:
                service.set_total({"cpu": 50 + index, "memory": 600})

    with ThreadPoolExecutor(max_workers=6) as pool:
        futures = [pool.submit(worker, t, next(quotas)) for t in range(6)]
        for future in futures:
            future.result(timeout=30)
    statuses = service.statuses()
    total = service.view()["total"]
    expected = compute_figures(service.specs(), service.pods(), total)
    for status in statuses:
        assert (status.request, status.used, status.runtime) == (
            expected[status.name].request, expected[status.name].used,
            expected[status.name].runtime), status.name
    assert len(service.pods()) == 6 * 20


def test_a_refusal_reaches_the_caller_and_the_actor_keeps_serving(start_service: Start) -> None:
    service = start_service(cpu(10))
    with pytest.raises(QuotaError, match="min 12 > max 10"):
        service.upsert(QuotaSpec("t", min=cpu(12), max=cpu(10)))
    with pytest.raises(QuotaError, match="does not exist"):
        service.runtime("t")
    service.upsert(QuotaSpec("t", max=cpu(10)))
    assert service.admit("t", cpu(1)).ok is False, "nothing requested yet: runtime 0"


def test_messages_told_to_the_actor_never_kill_it() -> None:
    pool = WorkerPool("elastic-test", 1)
    actor = ElasticQuotaActor(pool)
    try:
        deliver(actor, "junk")  # type: ignore[arg-type]
        deliver(actor, Change(ElasticQuotaManager.remove, ("ghost",)))
        deliver(actor, Read(lambda manager: 1 / 0))
        assert "koordinator-root-quota" in call(
            actor, Read(ElasticQuotaManager.quota_names), 10)
        assert actor.is_alive()
    finally:
        stop(actor).get(10)
        pool.shutdown()


def test_the_monitor_reports_a_quota_over_runtime_only_after_the_delay(
        start_service: Start, clock: Callable[[], float]) -> None:
    reports: list[OveruseReport] = []
    service = start_service(cpu(10), overuse_delay=60.0, clock=clock,
                            on_overuse=reports.append)
    service.upsert(QuotaSpec("t", max=cpu(10)))
    service.upsert(QuotaSpec("lender", min=cpu(6), max=cpu(10)))
    for pod_id, priority in (("t-low", 1), ("t-high", 2)):
        service.add_pod(pod_id, "t", cpu(5), priority)
        service.assign_pod(pod_id)
    service.add_pod("back", "lender", cpu(6))
    assert service.check_overuse() == []
    clock.advance(60.0)  # type: ignore[attr-defined]
    assert service.check_overuse() == []
    clock.advance(1.0)  # type: ignore[attr-defined]
    (report,) = service.check_overuse()
    assert (report.quota, report.over_for, report.used, report.runtime, report.revoke) == (
        "t", 61.0, cpu(10), cpu(4), ("t-low", "t-high"))
    assert reports == [report]
    assert service.check_overuse() == [], "the timer starts over after a report"


def test_the_periodic_check_runs_on_its_own_and_stops_with_the_service(
        start_service: Start) -> None:
    ticks = itertools.count()
    reported: Future[OveruseReport] = Future()

    def report_once(report: OveruseReport) -> None:
        if not reported.done():
            reported.set_result(report)

    service = start_service(cpu(10), overuse_delay=0.5, clock=lambda: float(next(ticks)),
                            check_interval=0.01, on_overuse=report_once)
    service.upsert(QuotaSpec("t", max=cpu(10)))
    service.add_pod("p", "t", cpu(5))
    service.assign_pod("p")
    service.remove_pod("p")
    service.add_pod("q", "t", cpu(1))
    service.assign_pod("q")
    service.set_total(cpu(0))
    assert reported.result(timeout=20).quota == "t"
    service.stop()
    assert not [t for t in threading.enumerate() if t.name == "quotactor-elastic-monitor"]
    with pytest.raises(RuntimeError, match="stopped"):
        service.runtime("t")


def test_a_callback_that_fails_is_logged_and_the_actor_survives(
        start_service: Start, clock: Callable[[], float]) -> None:
    def explode(report: OveruseReport) -> None:
        raise RuntimeError("boom")

    service = start_service(cpu(0), overuse_delay=0.0, clock=clock, on_overuse=explode)
    service.upsert(QuotaSpec("t", max=cpu(10)))
    service.add_pod("p", "t", cpu(1))
    service.assign_pod("p")
    service.check_overuse()
    clock.advance(1.0)  # type: ignore[attr-defined]
    assert [r.quota for r in service.check_overuse()] == ["t"]
    assert service.used("t") == cpu(1)

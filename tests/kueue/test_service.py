"""The actor-served facade: concurrent callers, steps that raise, interrupted callers, stop.

Each fault test drives a `KueueService` and, in lockstep, a plain `KueueManager` (the
reference). After every operation the service's state must be the reference's before the
operation (it did not happen, or was refused) or after it (it happened, whole): never between.
"""

from __future__ import annotations

import contextlib
import random
import signal
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

import pytest

from quotactor.actors.runtime import live_actors
from quotactor.core.errors import QuotactorError
from quotactor.kueue import (
    ClusterQueue,
    FlavorQuotas,
    KueueError,
    KueueManager,
    KueueService,
    LocalQueue,
    PodSet,
    Preemption,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    Workload,
)
from quotactor.kueue.cluster import Cluster
from tests.faults import run_with_faults

Op = Callable[[Any], Any]
TEAMS = ("a", "b", "c")


def queue(name: str, nominal: int) -> ClusterQueue:
    quota = ResourceQuota("cpu", nominal, 8000 if name != "c" else None, 2000)
    return ClusterQueue(name, (ResourceGroup(("cpu",), (FlavorQuotas("default", (quota,)),)),),
                        cohort="all", preemption=Preemption("LowerPriority", "Any"))


def setup(target: Any) -> None:
    target.apply(ResourceFlavor("default"), *(queue(t, 6000) for t in TEAMS),
                 *(LocalQueue("default", f"q-{t}", t) for t in TEAMS))


def state(target: Any) -> tuple[Any, ...]:
    return (target.workloads(), target.cluster_queue_usages(), target.cohort_usages(),
            target.pending(), target.inadmissible())


def next_op(rng: random.Random, keys: list[str], serial: int) -> Op:
    roll = rng.random()
    if roll < 0.4 or not keys:
        workload = Workload(f"w{serial}", f"q-{rng.choice(TEAMS)}",
                            (PodSet("main", rng.randint(1, 3), {"cpu": 1000 * rng.randint(1, 3)}),),
                            priority=rng.randint(0, 2), created=float(serial))
        keys.append(workload.key)
        return lambda m: m.submit(workload)
    if roll < 0.7:
        return lambda m: m.admit_pending()
    key = rng.choice(keys)
    if roll < 0.8:
        return lambda m: m.evict(key)
    if roll < 0.92:
        keys.remove(key)
        return lambda m: m.finish(key)
    team, nominal = rng.choice(TEAMS), 1000 * rng.randint(2, 10)
    return lambda m: m.apply(queue(team, nominal))


def apply(op: Op, target: Any) -> None:
    with contextlib.suppress(KueueError):
        op(target)


def consistent(target: Any) -> None:
    """Usage is the sum of the admitted workloads, and nobody is above its limits."""
    admitted = [w for w in target.workloads() if w.state == "Admitted"]
    for usage in target.cluster_queue_usages():
        for row in usage.resources:
            total = sum(dict(w.admission.usage).get((row.flavor, row.resource), 0)
                        for w in admitted if w.cluster_queue == usage.name)
            assert row.used == total


@pytest.fixture
def start_service() -> Iterator[Callable[..., KueueService]]:
    started: list[KueueService] = []

    def start(**kwargs: Any) -> KueueService:
        service = KueueService.start(timeout=20.0, **kwargs)
        started.append(service)
        return service

    yield start
    for service in started:
        service.stop()
    assert live_actors() == {}


def test_the_service_does_what_the_manager_does(
        start_service: Callable[..., KueueService]) -> None:
    service = start_service()
    reference = KueueManager()
    for target in (service, reference):
        setup(target)
    rng = random.Random(7)
    keys: list[str] = []
    for serial in range(80):
        op = next_op(rng, keys, serial)
        apply(op, service)
        apply(op, reference)
        assert state(service) == state(reference)
    consistent(service)
    with pytest.raises(KueueError, match="Workload default/nope not found"):
        service.finish("default/nope")


def test_concurrent_callers_see_one_consistent_engine(
        start_service: Callable[..., KueueService]) -> None:
    service = start_service()
    setup(service)

    def team(name: str) -> int:
        admitted = 0
        for i in range(25):
            service.submit(Workload(f"{name}-{i}", f"q-{name}",
                                    (PodSet("main", 1, {"cpu": 1000}),), priority=i % 3))
            admitted += len(service.admit_pending().admitted)
            if i % 4 == 3:
                for key in service.admitted(name)[:2]:
                    service.finish(key)
        return admitted

    with ThreadPoolExecutor(len(TEAMS)) as pool:
        results = list(pool.map(team, TEAMS))
    assert sum(results) > 0
    consistent(service)
    cohort = service.cohort_usage("all").resources[0]
    assert cohort.used <= cohort.subtree_quota


@pytest.mark.timeout(120)
@pytest.mark.parametrize("target", ["charge", "release", "rebuild"])
@pytest.mark.parametrize("seed", range(3))
def test_a_step_that_raises_leaves_the_engine_as_before(
        seed: int, target: str, start_service: Callable[..., KueueService],
        inject_fault: Any) -> None:
    fault = inject_fault(Cluster, target)
    rng = random.Random(seed)
    service = start_service()
    reference = KueueManager()
    setup(service)
    setup(reference)
    failed = run_with_faults(service, reference, fault, rng, next_op, state, KueueError)
    consistent(service)
    assert failed > 0 and fault.raised == failed


@pytest.mark.timeout(120)
@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs setitimer")
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("seed", range(4))
def test_interrupted_callers_leave_whole_operations(
        seed: int, start_service: Callable[..., KueueService], alarm: Any) -> None:
    rng = random.Random(seed)
    service = start_service()
    reference = KueueManager()
    setup(service)
    setup(reference)
    keys: list[str] = []
    try:
        for serial in range(50):
            op = next_op(rng, keys, serial)
            before = state(reference)
            alarm.attempt(partial(op, service), rng.uniform(1e-6, 150e-6), (KueueError,))
            now = state(service)  # queued behind the interrupted operation: it is done
            if now != before:
                apply(op, reference)
                assert now == state(reference), f"operation {serial} left half-done"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    consistent(service)
    service.stop()


def test_stop_leaves_no_thread_and_no_actor() -> None:
    before = {t.ident for t in threading.enumerate()}
    service = KueueService.start(timeout=10.0)
    setup(service)
    with ThreadPoolExecutor(4) as pool:
        futures = [pool.submit(service.submit, Workload(f"w{i}", "q-a",
                                                        (PodSet("main", 1, {"cpu": 1}),)))
                   for i in range(20)]
        for future in futures:
            future.result(timeout=10)
    assert len(service.pending()) == 20
    service.stop()
    service.stop()
    assert not service.running
    assert {t.ident for t in threading.enumerate()} <= before
    assert live_actors() == {}
    with pytest.raises(QuotactorError, match="stopped"):
        service.pending()

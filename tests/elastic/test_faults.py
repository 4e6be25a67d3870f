"""The elastic-quota actor under faults: interrupted callers, steps that raise, timeouts, stop.

Each test drives an `ElasticQuotaService` and, in lockstep, a plain `ElasticQuotaManager` (the
reference). After every operation the service's state must be the reference's before the
operation (it did not happen, or was refused) or after it (it happened, whole): never between.
"""

from __future__ import annotations

import contextlib
import random
import signal
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

import pytest

from quotactor.actors.runtime import live_actors
from quotactor.core.errors import OperationTimeout, QuotactorError
from quotactor.elastic import (
    ElasticQuotaManager,
    ElasticQuotaService,
    QuotaError,
    QuotaSpec,
    compute_figures,
)
from quotactor.elastic.engine import RuntimeEngine
from tests.faults import run_with_faults

TIMEOUT = 10.0
"""The callers' timeout: far above the milliseconds an answer takes, so that only an actor an
interrupt wedged makes a call (which raises `OperationTimeout` then) miss it."""
QUOTAS = ["a", "b", "solo", None]
Op = Callable[[Any], Any]


def setup(target: Any) -> None:
    target.upsert(QuotaSpec("dept", is_parent=True, min={"cpu": 20}, max={"cpu": 60}))
    for name in ("a", "b"):
        target.upsert(QuotaSpec(name, parent="dept", min={"cpu": 5}, max={"cpu": 40}))
    target.upsert(QuotaSpec("solo", min={"cpu": 10}, max={"cpu": 30}))


def state(target: Any) -> tuple[Any, ...]:
    return (target.statuses(), target.pods(), target.specs(), target.view())


def next_op(rng: random.Random, pods: list[str], serial: int) -> Op:
    """A random change, as a function of a manager or a service (they share the API)."""
    roll = rng.random()
    if roll < 0.35 or not pods:
        pod_id, quota = f"p{serial}", rng.choice(QUOTAS)
        request, priority = {"cpu": rng.randint(1, 6)}, rng.randint(0, 3)
        pods.append(pod_id)
        return lambda m: m.add_pod(pod_id, quota, request, priority)
    pod_id = rng.choice(pods)
    if roll < 0.55:
        return lambda m: m.reserve(pod_id)
    if roll < 0.65:
        return lambda m: m.assign_pod(pod_id)
    if roll < 0.75:
        return lambda m: m.unassign_pod(pod_id)
    if roll < 0.8:
        pods.remove(pod_id)
        return lambda m: m.remove_pod(pod_id)
    if roll < 0.86:
        total = {"cpu": rng.randint(30, 80)}
        return lambda m: m.set_total(total)
    cap = rng.randint(10, 40)
    return lambda m: m.upsert(QuotaSpec("b", parent="dept", min={"cpu": 5}, max={"cpu": cap}))


def apply(op: Op, target: Any) -> None:
    with contextlib.suppress(QuotaError):
        op(target)


def consistent(service: ElasticQuotaService) -> None:
    expected = compute_figures(service.specs(), service.pods(), service.view()["total"])
    for status in service.statuses():
        figures = expected[status.name]
        assert (status.request, status.used, status.runtime) == (
            figures.request, figures.used, figures.runtime), status.name


@pytest.mark.timeout(120)
@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs setitimer")
# An alarm landing in a garbage-collector callback (hypothesis installs one) is swallowed by the
# interpreter as "unraisable": the caller is not interrupted then, which the test allows.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("seed", range(12))
def test_interrupted_callers_never_wedge_the_actor_and_leave_whole_operations(
        seed: int, start_service: Callable[..., ElasticQuotaService], alarm: Any) -> None:
    rng = random.Random(seed)
    service = start_service({"cpu": 60})
    service.timeout = TIMEOUT
    reference = ElasticQuotaManager({"cpu": 60})
    setup(service)
    setup(reference)
    pods: list[str] = []
    try:
        for serial in range(60):
            op = next_op(rng, pods, serial)
            before = state(reference)
            alarm.attempt(partial(op, service), rng.uniform(1e-6, 150e-6), (QuotaError,))
            now = state(service)  # queued behind the interrupted operation: it is done
            if now != before:
                apply(op, reference)
                assert now == state(reference), f"operation {serial} left half-done"
        consistent(service)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    service.stop()  # raises OperationTimeout if the actor does not stop within TIMEOUT
    assert alarm.fired > 0  # about 30 per seed (733 over the 24 seeds of both files, idle machine)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("target", ["charge", "_add_used", "update"])
@pytest.mark.parametrize("seed", range(3))
def test_a_step_that_raises_leaves_the_quotas_as_before_with_a_public_error(
        seed: int, target: str, start_service: Callable[..., ElasticQuotaService],
        inject_fault: Any) -> None:
    fault = inject_fault(RuntimeEngine, target)
    rng = random.Random(seed)
    service = start_service({"cpu": 60})
    reference = ElasticQuotaManager({"cpu": 60})
    setup(service)
    setup(reference)
    failed = run_with_faults(service, reference, fault, rng, next_op, state, QuotaError)
    consistent(service)
    assert failed > 0 and fault.raised == failed


def test_every_wait_has_the_callers_timeout_and_the_late_operation_still_lands(
        start_service: Callable[..., ElasticQuotaService]) -> None:
    release = threading.Event()
    entered = threading.Event()

    def hold(report: Any) -> None:
        entered.set()
        release.wait(20)

    service = start_service({"cpu": 0}, overuse_delay=0.0, on_overuse=hold)
    service.upsert(QuotaSpec("t", max={"cpu": 10}))
    service.add_pod("p", "t", {"cpu": 1})
    service.assign_pod("p")
    service.check_overuse()  # starts the over-use timer; the next check reports
    with ThreadPoolExecutor(1) as pool:
        check = pool.submit(service.check_overuse)  # the callback holds the actor
        assert entered.wait(10)
        service.timeout = 0.2
        for caller in (lambda: service.add_pod("late", "t", {"cpu": 1}),  # main thread
                       lambda: pool_call(service.used, "t")):  # another thread
            with pytest.raises(OperationTimeout):
                caller()
            # It gave up while the actor was held: had it waited for it instead, the hold
            # (up to 20 s, under the default 30 s timeout) would have ended and it answered.
            assert not check.done()
        release.set()
        assert [r.quota for r in check.result(timeout=10)] == ["t"]
    service.timeout = 10.0
    assert service.pod("late").quota == "t", "a timed-out operation is applied later, whole"


def pool_call(function: Callable[..., Any], *args: Any) -> Any:
    with ThreadPoolExecutor(1) as other:
        return other.submit(function, *args).result(timeout=10)


def test_stop_leaves_no_thread_and_no_actor_from_any_caller() -> None:
    before = {t.ident for t in threading.enumerate()}
    service = ElasticQuotaService.start({"cpu": 10}, check_interval=0.01, timeout=10.0)
    service.upsert(QuotaSpec("t", max={"cpu": 10}))
    with ThreadPoolExecutor(4) as pool:
        futures = [pool.submit(service.add_pod, f"p{i}", "t", {"cpu": 1}) for i in range(20)]
        for future in futures:
            future.result(timeout=10)
    assert service.used("t") == {}
    service.stop()
    service.stop()
    assert {t.ident for t in threading.enumerate()} <= before
    assert live_actors() == {}
    with pytest.raises(QuotactorError, match="stopped"):
        service.pods()

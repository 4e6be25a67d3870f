"""Releases the scheduler asks its shim for take effect only when the shim confirms them."""

from __future__ import annotations

from quotactor import UserGroup
from quotactor.scheduler import (
    Allocation,
    ApplicationState,
    Ask,
    Gang,
    SchedulerOptions,
    TaskGroup,
)

S = ApplicationState
SUE = UserGroup("sue", ["dev"])
CONFIRMING = SchedulerOptions(shim_confirms_releases=True)


def usage(s) -> dict[str, int]:
    found = s.ugm().get_user_resources("sue")
    return {} if found is None else dict(found)


def queue_usage(s, path: str = "root.q") -> dict[str, int]:
    return dict(s.queue(path).allocated)


def test_a_replaced_placeholder_is_asked_for_and_swapped_only_on_confirmation(
    start_scheduler,
) -> None:
    s = start_scheduler(options=CONFIRMING)
    asked = []
    s.add_release_listener(asked.extend)
    s.add_node("n1", {"vcore": 8000})
    s.submit("g1", SUE, queue="root.q",
             gang=Gang((TaskGroup("tg", 2, {"vcore": 2000}),), timeout=600))
    assert len(s.schedule()) == 2
    assert usage(s) == {"vcore": 4000}
    s.add_ask("g1", Ask("real-0", {"vcore": 1500}, task_group="tg"))
    assert s.schedule() == []  # nothing is booked before the shim confirms
    [request] = asked
    assert (request.termination, request.replacement) == ("PLACEHOLDER_REPLACED", "real-0")
    assert usage(s) == queue_usage(s) == {"vcore": 4000}
    s.schedule()
    assert len(asked) == 1  # asked once, however many cycles pass
    released, made = s.confirm_release("g1", request.allocation_key)
    assert released.placeholder and isinstance(made, Allocation)
    assert (made.key, made.node_id, made.placeholder) == ("real-0", released.node_id, False)
    assert usage(s) == queue_usage(s) == {"vcore": 3500}
    assert s.pending_releases() == []


def test_placeholder_timeout_asks_the_shim_and_usage_waits_for_the_confirmations(
    start_scheduler, clock, assert_balanced,
) -> None:
    s = start_scheduler(options=CONFIRMING)
    asked = []
    s.add_release_listener(asked.extend)
    s.add_node("n1", {"vcore": 2000})  # room for two of the three placeholders
    s.submit("g1", SUE, queue="root.q",
             gang=Gang((TaskGroup("tg", 3, {"vcore": 1000}),), style="Hard", timeout=60))
    s.schedule()
    clock.advance(61)
    s.schedule()
    assert sorted(r.termination for r in asked) == ["TIMEOUT"] * 2
    assert usage(s) == queue_usage(s) == {"vcore": 2000}
    assert s.application("g1").state is S.FAILING
    for request in asked:
        s.confirm_release("g1", request.allocation_key)
    assert usage(s) == {} and s.application("g1").state is S.FAILED
    assert_balanced(s)


def test_embedded_without_a_shim_the_scheduler_releases_at_once(start_scheduler, clock) -> None:
    s = start_scheduler()
    asked = []
    s.add_release_listener(asked.extend)
    s.add_node("n1", {"vcore": 8000})
    s.submit("g1", SUE, queue="root.q",
             gang=Gang((TaskGroup("tg", 2, {"vcore": 1000}),), timeout=60))
    s.schedule()
    clock.advance(61)
    s.schedule()
    assert asked == [] and usage(s) == {}


def test_a_soft_gang_resumes_only_once_its_placeholders_are_confirmed_gone(
    start_scheduler, clock,
) -> None:
    s = start_scheduler(options=CONFIRMING)
    asked = []
    s.add_release_listener(asked.extend)
    s.add_node("n1", {"vcore": 1000})  # one of the two placeholders fits
    s.submit("g1", SUE, queue="root.q", asks=[Ask("real", {"vcore": 500})],
             gang=Gang((TaskGroup("tg", 2, {"vcore": 1000}),), timeout=60))
    s.schedule()
    clock.advance(61)
    s.schedule()
    [request] = asked
    assert s.application("g1").state is S.RESUMING and usage(s) == {"vcore": 1000}
    s.schedule()
    assert s.application("g1").allocations[0].placeholder  # nothing placed meanwhile
    s.confirm_release("g1", request.allocation_key)
    assert s.application("g1").state is not S.RESUMING and usage(s) == {}
    s.schedule()
    assert [a.key for a in s.application("g1").allocations] == ["real"]
    assert usage(s) == {"vcore": 500}


def test_releasing_an_allocation_settles_the_request_for_it(start_scheduler, clock) -> None:
    s = start_scheduler(options=CONFIRMING)
    s.add_node("n1", {"vcore": 1000})
    s.submit("g1", SUE, queue="root.q",
             gang=Gang((TaskGroup("tg", 2, {"vcore": 1000}),), style="Hard", timeout=60))
    s.schedule()
    clock.advance(61)
    s.schedule()
    assert len(s.pending_releases()) == 1
    s.remove_node("n1")  # the RM's own removal releases it as well
    assert s.pending_releases() == [] and usage(s) == {}
    assert s.application("g1").state is S.FAILED

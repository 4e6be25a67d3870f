"""The application state machine of seed 003: every state, and the trigger that reaches it."""

from __future__ import annotations

import pytest

from quotactor import InvalidRequest, UserGroup
from quotactor.scheduler import (
    ApplicationState,
    Ask,
    Gang,
    InvalidTransition,
    TaskGroup,
    Trigger,
)
from quotactor.scheduler.objects.states import next_state

S = ApplicationState
SUE = UserGroup("sue", ["dev"])
ONE = {"vcore": 1000}


def test_the_transition_table_is_yunikorns() -> None:
    assert next_state(S.NEW, Trigger.RUN) is S.ACCEPTED
    assert next_state(S.ACCEPTED, Trigger.RUN) is S.STARTING
    assert next_state(S.STARTING, Trigger.RUN) is S.RUNNING
    assert next_state(S.COMPLETING, Trigger.RUN) is S.RUNNING
    assert next_state(S.RESUMING, Trigger.RUN) is S.ACCEPTED
    assert next_state(S.RUNNING, Trigger.COMPLETE) is S.COMPLETING
    assert next_state(S.COMPLETING, Trigger.COMPLETE) is S.COMPLETED
    assert next_state(S.NEW, Trigger.REJECT) is S.REJECTED
    assert next_state(S.RUNNING, Trigger.FAIL) is S.FAILING
    assert next_state(S.FAILING, Trigger.FAIL) is S.FAILED
    assert next_state(S.ACCEPTED, Trigger.RESUME) is S.RESUMING
    for ended in (S.COMPLETED, S.FAILED, S.REJECTED):
        assert next_state(ended, Trigger.EXPIRE) is S.EXPIRED


@pytest.mark.parametrize(("state", "trigger"), [
    (S.ACCEPTED, Trigger.REJECT), (S.NEW, Trigger.COMPLETE), (S.COMPLETED, Trigger.RUN),
    (S.FAILED, Trigger.FAIL), (S.RUNNING, Trigger.RESUME), (S.EXPIRED, Trigger.EXPIRE),
])
def test_a_trigger_the_state_does_not_accept_is_refused(state, trigger) -> None:
    with pytest.raises(InvalidTransition):
        next_state(state, trigger)


def test_an_application_is_new_until_its_first_ask_makes_it_accepted(start_scheduler) -> None:
    s = start_scheduler()
    assert s.submit("a1", SUE, queue="root.q").state is S.NEW
    s.add_ask("a1", Ask("k1", ONE))
    assert s.application("a1").state is S.ACCEPTED


def test_the_first_allocation_starts_it_and_the_second_makes_it_running(start_scheduler) -> None:
    s = start_scheduler()
    s.add_node("n1", {"vcore": 1000})
    s.submit("a1", SUE, queue="root.q", asks=[Ask("k1", ONE), Ask("k2", ONE)])
    s.schedule()
    assert s.application("a1").state is S.STARTING
    s.add_node("n2", {"vcore": 1000})
    s.schedule()
    assert s.application("a1").state is S.RUNNING


def test_starting_turns_running_by_itself_after_five_minutes(start_scheduler, clock) -> None:
    s = start_scheduler()
    s.add_node("n1", {"vcore": 4000})
    s.submit("a1", SUE, queue="root.q", asks=[Ask("k1", ONE)])
    s.schedule()
    clock.advance(299)
    s.run_timers()
    assert s.application("a1").state is S.STARTING
    clock.advance(1)
    s.run_timers()
    assert s.application("a1").state is S.RUNNING


def test_the_state_aware_disable_tag_skips_starting(start_scheduler) -> None:
    s = start_scheduler()
    s.add_node("n1", {"vcore": 4000})
    s.submit("a1", SUE, queue="root.q", tags={"application.stateaware.disable": "true"},
             asks=[Ask("k1", ONE)])
    s.schedule()
    states = [e.message for e in s.events("a1") if e.kind == "state"]
    assert s.application("a1").state is S.RUNNING
    assert any("Accepted -> Starting" in m for m in states)


def test_last_release_completes_then_completed_then_expired(start_scheduler, clock) -> None:
    s = start_scheduler()
    s.add_node("n1", {"vcore": 4000})
    s.submit("a1", SUE, queue="root.q", asks=[Ask("k1", ONE)])
    s.schedule()
    s.release("a1", "k1")
    assert s.application("a1").state is S.COMPLETING
    clock.advance(30)
    s.run_timers()
    assert s.application("a1").state is S.COMPLETED
    assert s.queue("root").applications == ()
    clock.advance(3 * 24 * 3600)
    s.run_timers()
    with pytest.raises(InvalidRequest):
        s.application("a1")


def test_a_new_ask_while_completing_brings_it_back_to_running(start_scheduler, clock) -> None:
    s = start_scheduler()
    s.add_node("n1", {"vcore": 4000})
    s.submit("a1", SUE, queue="root.q", asks=[Ask("k1", ONE)])
    s.schedule()
    s.release("a1", "k1")
    clock.advance(10)
    s.add_ask("a1", Ask("k2", ONE))
    assert s.application("a1").state is S.RUNNING
    clock.advance(60)
    s.schedule()
    assert s.application("a1").state is S.RUNNING


def test_an_application_no_rule_places_is_rejected_and_later_expires(start_scheduler,
                                                                      clock) -> None:
    s = start_scheduler()
    info = s.submit("a1", SUE)
    assert info.state is S.REJECTED
    assert "no placement rule matched" in info.rejected_message
    clock.advance(3 * 24 * 3600)
    s.run_timers()
    assert s.applications(state="rejected") == []


def test_failing_releases_everything_then_the_application_is_failed(start_scheduler) -> None:
    s = start_scheduler()
    s.add_node("n1", {"vcore": 4000})
    s.submit("a1", SUE, queue="root.q", asks=[Ask("k1", ONE), Ask("k2", ONE), Ask("k3", ONE)])
    s.schedule()
    s.add_ask("a1", Ask("k4", {"vcore": 9000}))
    s.fail("a1", "pod crashed")
    info = s.application("a1")
    assert info.state is S.FAILED
    assert info.allocations == () and info.asks == ()
    assert [e.message for e in s.events("a1") if e.kind == "state"][-2:] == [
        "Running -> Failing: pod crashed", "Failing -> Failed: all allocations released"]


def test_an_accepted_application_can_fail_without_allocations(start_scheduler) -> None:
    s = start_scheduler()
    s.submit("a1", SUE, queue="root.q", asks=[Ask("k1", ONE)])
    s.fail("a1", "gone")
    assert s.application("a1").state is S.FAILED
    with pytest.raises(InvalidRequest):
        s.fail("a1", "again")


def test_a_soft_gang_that_times_out_resumes_and_is_accepted_again(start_scheduler,
                                                                   clock) -> None:
    s = start_scheduler()
    s.add_node("n1", {"vcore": 2000})
    gang = Gang((TaskGroup("tg", 3, ONE),), style="Soft", timeout=60)
    s.submit("a1", SUE, queue="root.q", gang=gang, asks=[Ask("real", ONE, task_group="tg")])
    s.schedule()
    assert s.application("a1").state is S.ACCEPTED
    clock.advance(60)
    s.run_timers()
    states = [e.message.split(":")[0] for e in s.events("a1") if e.kind == "state"]
    assert states[-2:] == ["Accepted -> Resuming", "Resuming -> Accepted"]
    assert s.application("a1").state is S.ACCEPTED


def test_the_state_log_records_every_state_with_its_time(start_scheduler, clock) -> None:
    s = start_scheduler()
    s.add_node("n1", {"vcore": 4000})
    s.submit("a1", SUE, queue="root.q", asks=[Ask("k1", ONE)])
    clock.advance(5)
    s.schedule()
    log = s.application_view("a1")["stateLog"]
    assert [(e["time"] // 10**9, e["applicationState"]) for e in log] == [
        (1000, "New"), (1000, "Accepted"), (1005, "Starting")]


def test_asks_are_refused_once_the_application_has_ended(start_scheduler) -> None:
    s = start_scheduler()
    s.submit("a1", SUE, queue="root.q", asks=[Ask("k1", ONE)])
    s.fail("a1", "")
    with pytest.raises(InvalidRequest):
        s.add_ask("a1", Ask("k2", ONE))


def test_an_ended_application_id_can_be_reused_without_inheriting_its_timers(
    start_scheduler, clock,
) -> None:
    s = start_scheduler()
    s.add_node("n1", {"vcore": 4000})
    s.submit("a1", SUE, queue="root.q", asks=[Ask("k1", ONE)])
    s.fail("a1", "")
    clock.advance(10)
    s.submit("a1", SUE, queue="root.q", asks=[Ask("k1", ONE), Ask("k2", ONE)])
    s.schedule()
    clock.advance(3 * 24 * 3600)
    s.run_timers()
    assert s.application("a1").state is S.RUNNING

"""Tracker integration exactly as seed 000 defines it, and why an application waits."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from quotactor import UserGroup
from quotactor.scheduler import ApplicationState, Ask

CONFIG = """
partitions:
  - name: default
    placementrules:
      - name: provided
        create: true
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: team
            resources:
              max: {vcore: 10}
            limits:
              - limit: sue
                users: [sue]
                maxresources: {vcore: 3}
                maxapplications: 2
              - limit: dev group
                groups: [dev]
                maxresources: {vcore: 5}
          - name: small
            resources:
              max: {vcore: 2}
"""

SUE = UserGroup("sue", ["dev"])
BOB = UserGroup("bob", ["dev"])
ANN = UserGroup("ann", ["ops"])
ONE = {"vcore": 1000}
S = ApplicationState


def running_for(scheduler, user: str) -> list[str]:
    usage = scheduler.ugm().user_usage(user)
    return [] if usage is None else usage["queues"].get("runningApplications", [])


@pytest.fixture
def ugm_calls(monkeypatch) -> Callable[[Any], list[tuple[str, str]]]:
    """Record the user group manager calls of a scheduler's default partition, in order."""

    def spy(scheduler) -> list[tuple[str, str]]:
        calls: list[tuple[str, str]] = []
        ugm = scheduler.ugm()
        for name in ("decide_increase", "decrease_tracked_resource", "headroom", "can_run_app"):
            original = getattr(ugm, name)

            def wrapper(*args: Any, _name: str = name, _original: Any = original,
                        **kwargs: Any) -> Any:
                calls.append((_name, args[1]))
                return _original(*args, **kwargs)

            monkeypatch.setattr(ugm, name, wrapper)
        return calls

    return spy


def test_the_first_allocation_makes_the_application_running_for_user_group_and_queue(
    start_scheduler,
) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 8000})
    s.submit("a1", SUE, queue="root.team", asks=[Ask("k1", ONE)])
    assert running_for(s, "sue") == []
    s.schedule()
    assert running_for(s, "sue") == ["a1"]
    assert s.ugm().group_usage("dev")["applications"] == ["a1"]
    assert s.queue("root.team").running_applications == {"a1"}
    assert s.application("a1").running


def test_the_last_release_with_nothing_pending_ends_the_application(start_scheduler) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 8000})
    s.submit("a1", SUE, queue="root.team", asks=[Ask("k1", ONE), Ask("k2", ONE)])
    s.schedule()
    s.release("a1", "k1")
    assert running_for(s, "sue") == ["a1"]
    s.release("a1", "k2")
    assert s.ugm().user_usage("sue")["queues"] == {"queuePath": "root", "children": [
        {"queuePath": "root.team", "maxResources": {"vcore": 3000}, "maxApplications": 2}]}
    assert s.ugm().group_usage("dev")["queues"].get("runningApplications") is None
    assert s.queue("root.team").running_applications == frozenset()


def test_a_release_that_leaves_asks_pending_keeps_the_application_running(
    start_scheduler,
) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", ONE)
    s.submit("a1", SUE, queue="root.team", asks=[Ask("k1", ONE), Ask("k2", ONE)])
    s.schedule()
    s.remove_node("n1")
    assert s.application("a1").state is S.STARTING
    assert running_for(s, "sue") == ["a1"]
    assert s.ugm().get_user_resources("sue") == {}
    s.remove_ask("a1", "k2")
    assert running_for(s, "sue") == []


def test_completing_back_to_running_counts_the_application_again(start_scheduler) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 8000})
    s.submit("a1", SUE, queue="root.team", asks=[Ask("k1", ONE)])
    s.schedule()
    s.release("a1", "k1")
    assert s.application("a1").state is S.COMPLETING
    assert running_for(s, "sue") == []
    s.add_ask("a1", Ask("restarted", ONE))
    assert s.application("a1").state is S.RUNNING
    assert running_for(s, "sue") == ["a1"]
    assert s.queue("root.team").running_applications == {"a1"}
    s.schedule()
    assert s.ugm().get_user_resources("sue") == ONE


def test_failing_ends_the_application_for_its_user_group_and_queue(start_scheduler) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 8000})
    s.submit("a1", SUE, queue="root.team", asks=[Ask("k1", ONE), Ask("k2", ONE)])
    s.schedule()
    s.fail("a1", "boom")
    assert s.application("a1").state is S.FAILED
    assert running_for(s, "sue") == []
    assert s.ugm().get_group_resources("dev") in (None, {})
    assert s.queue("root.team").allocated == {}


def test_the_user_and_group_go_first_and_a_queue_refusal_rolls_them_back(
    start_scheduler, ugm_calls,
) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 8000})
    s.submit("a1", ANN, queue="root.small", asks=[Ask("k1", ONE)])
    s.schedule()
    calls = ugm_calls(s)
    wait = s.resize("a1", "k1", {"vcore": 3000})
    assert (wait.kind, wait.name, wait.limit) == ("queue", "root.small", "resources")
    assert calls == [("decide_increase", "a1"), ("decrease_tracked_resource", "a1")]
    assert s.ugm().get_user_resources("ann") == ONE
    assert s.queue("root.small").allocated == ONE
    assert s.application("a1").allocations[0].resource == ONE
    assert s.resize("a1", "k1", {"vcore": 2000}) is None
    assert s.ugm().get_user_resources("ann") == {"vcore": 2000}
    assert s.resize("a1", "k1", {"vcore": 500}) is None
    assert s.ugm().get_user_resources("ann") == {"vcore": 500}
    assert s.nodes_view()[0]["allocated"] == {"vcore": 500}


def test_a_tracker_refusal_leaves_the_queue_untouched(start_scheduler, ugm_calls) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 8000})
    s.submit("a1", SUE, queue="root.team", asks=[Ask(f"k{i}", ONE) for i in range(5)])
    calls = ugm_calls(s)
    s.schedule()
    assert s.queue("root.team").allocated == {"vcore": 3000}
    assert calls.count(("decide_increase", "a1")) == 4, "three placed, one refused"
    assert calls.count(("headroom", "a1")) == 1, "the rest screened by one headroom read"


def test_a_refused_application_stays_accepted_and_runs_when_room_appears(start_scheduler) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 8000})
    for app in ("a1", "a2", "a3"):
        s.submit(app, SUE, queue="root.team", asks=[Ask("k", ONE)])
    s.schedule()
    assert s.application("a3").state is S.ACCEPTED
    wait = s.why_pending("a3")
    assert (wait.kind, wait.name, wait.limit) == ("user", "sue", "applications")
    s.schedule()
    assert s.application("a3").state is S.ACCEPTED
    s.release("a1", "k")
    assert [a.application_id for a in s.schedule()] == ["a3"]
    assert s.application("a3").state is S.STARTING


def test_why_it_waits_user_limit_group_limit_queue_limit_or_no_node(start_scheduler) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 9000})
    s.submit("sue1", SUE, queue="root.team", asks=[Ask(f"k{i}", ONE) for i in range(4)])
    s.submit("bob1", BOB, queue="root.team", asks=[Ask(f"k{i}", ONE) for i in range(3)])
    s.submit("ann1", ANN, queue="root.small", asks=[Ask(f"k{i}", ONE) for i in range(3)])
    s.submit("ann2", ANN, queue="root.big", asks=[Ask("huge", {"vcore": 50000})])
    s.schedule()
    reasons = {app: s.why_pending(app) for app in ("sue1", "bob1", "ann1", "ann2")}
    assert (reasons["sue1"].kind, reasons["sue1"].name) == ("user", "sue")
    assert (reasons["bob1"].kind, reasons["bob1"].name) == ("group", "dev")
    assert (reasons["ann1"].kind, reasons["ann1"].name) == ("queue", "root.small")
    assert (reasons["ann2"].kind, reasons["ann2"].limit) == ("node", "capacity")
    assert str(reasons["sue1"]) == ("user limit sue (resources) at root.team:"
                                     " vcore usage 3000 + 1000 above maxResources 3000")
    waiting = [e for e in s.events("bob1") if e.kind == "waiting"]
    assert len(waiting) == 1 and "group limit dev" in waiting[0].message


def test_the_queue_maximum_is_reported_before_user_and_group_limits(start_scheduler) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 20000})
    s.submit("ann1", ANN, queue="root.team", asks=[Ask(f"k{i}", ONE) for i in range(7)])
    s.submit("sue1", SUE, queue="root.team", asks=[Ask(f"k{i}", ONE) for i in range(3)])
    s.schedule()
    assert s.queue("root.team").allocated == {"vcore": 10000}
    s.add_ask("sue1", Ask("more", ONE))
    s.schedule()
    wait = s.why_pending("sue1")
    assert (wait.kind, wait.name) == ("queue", "root.team"), "user sue is full as well"


def test_applications_without_pending_asks_cost_no_tracker_calls(start_scheduler,
                                                                   ugm_calls) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 9000})
    for i in range(5):
        s.submit(f"a{i}", ANN, queue="root.other", asks=[Ask("k", ONE)])
    s.schedule()
    calls = ugm_calls(s)
    s.schedule()
    s.schedule()
    assert calls == []


def test_a_blocked_application_is_not_asked_about_again_until_usage_falls(
    start_scheduler, ugm_calls,
) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 9000})
    s.submit("a1", SUE, queue="root.team", asks=[Ask("k", {"vcore": 3000})])
    s.submit("a2", SUE, queue="root.team", asks=[Ask("k", ONE)])
    s.schedule()
    calls = ugm_calls(s)
    for _ in range(3):
        s.schedule()
    assert calls == []
    s.release("a1", "k")
    s.schedule()
    assert ("decide_increase", "a2") in calls
    assert s.application("a2").allocated == ONE

"""Required-node (daemon-set) preemption: a pinned ask reserves its node and preempts there."""

from __future__ import annotations

import pytest

from quotactor import UserGroup
from quotactor.scheduler import Ask, SchedulerOptions

SUE = UserGroup("sue", ["dev"])
BOB = UserGroup("bob", ["ops"])
ONE = {"vcore": 1000}
CONFIG = """
partitions:
  - name: default
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: batch
          - name: system
"""


def fill(s, clock, node: str = "n1", count: int = 4, app: str = "batch-app",
         **ask_options) -> None:
    """`count` one-vcore allocations of `app` in root.batch on `node`, one second apart."""
    s.submit(app, BOB, queue="root.batch")
    for i in range(count):
        options = {k: v[i] if isinstance(v, list) else v for k, v in ask_options.items()}
        s.add_ask(app, Ask(f"b{i}", ONE, **options))
        s.schedule()
        clock.advance(1)
    assert {a["nodeId"] for a in s.application_view(app)["allocations"]} == {node}


def victims(s) -> list[str]:
    return sorted(r.allocation_key for r in s.release_requests())


def test_a_pinned_ask_reserves_its_node_then_preempts_there_without_delay_or_guarantee(
        start_scheduler, clock, assert_books):
    """The scenario of YuniKorn's "DaemonSet scheduling using simple preemptor" design: a
    logging daemon-set pod arrives for a full node; it reserves the node in its first cycle,
    the next cycle's reserved step finds the node still full and preempts there, and once
    the shim has released the victim the pod is placed on its node."""
    s = start_scheduler(CONFIG)  # no guarantee anywhere, default preemption delay 30 s
    s.add_node("n1", {"vcore": 4000})
    fill(s, clock)
    s.add_node("n2", {"vcore": 4000})
    s.submit("ds", SUE, queue="root.system", asks=[Ask("ds-n1", ONE, required_node="n1")])
    s.schedule()
    assert s.node_view("n1")["reservations"] == ["n1|ds-n1"]
    assert s.node_view("n2")["isReserved"] is False
    assert victims(s) == []  # the reservation first, the preemption in the next cycle
    s.schedule()
    assert victims(s) == ["b3"]  # the newest
    assert s.preemption_counts()["requiredNode"] == 1
    assert s.application_view("ds")["requests"][0]["triggeredPreemption"] is True
    wait = s.why_pending("ds")
    assert wait is not None and wait.kind == "preemption" and wait.name == "n1"
    assert s.queue("root.batch").allocated == {"vcore": 4000}  # until the shim confirms
    assert_books(s)
    s.schedule()
    assert victims(s) == []  # only once
    s.release("batch-app", "b3")
    s.schedule()
    placed = s.application_view("ds")["allocations"]
    assert [(a["allocationKey"], a["nodeId"]) for a in placed] == [("ds-n1", "n1")]
    assert s.node_view("n1")["isReserved"] is False
    assert_books(s)


def test_the_victims_skip_pinned_higher_priority_and_already_preempted_allocations(
        start_scheduler, clock):
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 4000})
    s.submit("batch-app", BOB, queue="root.batch", asks=[
        Ask("pinned", ONE, required_node="n1"), Ask("high", ONE, priority=9)])
    s.schedule()
    clock.advance(1)
    s.add_ask("batch-app", Ask("low", ONE, priority=1))
    s.add_ask("batch-app", Ask("other", {"memory": 1000}))  # shares no resource type
    s.add_ask("batch-app", Ask("last", ONE, priority=1))
    s.schedule()
    s.submit("ds", SUE, queue="root.system",
             asks=[Ask("ds", {"vcore": 2000}, priority=5, required_node="n1")])
    s.schedule()
    s.schedule()
    assert victims(s) == ["last", "low"]
    s.submit("ds2", SUE, queue="root.system",
             asks=[Ask("ds2", ONE, priority=5, required_node="n1")])
    s.schedule()
    s.schedule()
    assert victims(s) == []  # the rest is pinned, of a higher priority, or preempted
    assert any(e.kind == "preemption-failed" for e in s.events("ds2"))
    assert sorted(s.node_view("n1")["reservations"]) == ["n1|ds", "n1|ds2"]  # one node, two


def test_victims_are_taken_until_they_alone_cover_the_ask(start_scheduler, clock):
    """YuniKorn collects victims until their own sum covers the ask, not counting the node's
    free room: with one vcore free a two-vcore ask still takes two one-vcore victims."""
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 4000})
    fill(s, clock, count=3)
    s.submit("ds", SUE, queue="root.system",
             asks=[Ask("ds", {"vcore": 2000}, required_node="n1")])
    s.schedule()
    s.schedule()
    assert victims(s) == ["b1", "b2"]


def test_the_order_is_ordinary_then_opted_out_then_originators_lowest_priority_newest(
        start_scheduler, clock):
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 6000})
    fill(s, clock, count=6, priority=[0, 0, 1, 0, 0, 0],
         allow_preempt_self=[True, True, True, False, True, True],
         originator=[False, False, False, False, True, False])
    # ordinary: b5 (newest, prio 0), b1, b0 (prio 0), b2 (prio 1); then b3 opted out, b4 last
    taken = []
    for size in range(1, 7):
        s.submit(f"ds{size}", SUE, queue="root.system",
                 asks=[Ask("ds", {"vcore": 1000 * size}, priority=5, required_node="n1")])
    s.schedule()
    s.schedule()
    for request in s.release_requests():
        taken.append((request.preemptor_application, request.allocation_key))
    # reservations are served oldest first; each preemptor takes from what is left
    assert taken == [("ds1", "b5"), ("ds2", "b1"), ("ds2", "b0"), ("ds3", "b2"),
                     ("ds3", "b3"), ("ds3", "b4")]


def test_a_pinned_ask_cancels_an_unpinned_reservation_of_its_node(start_scheduler, clock):
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 4000})
    fill(s, clock, count=2)
    s.submit("big", BOB, queue="root.batch", asks=[Ask("big", {"vcore": 4000})])
    clock.advance(5)
    s.schedule()
    assert s.node_view("n1")["reservations"] == ["n1|big"]
    s.submit("ds", SUE, queue="root.system", asks=[Ask("ds", ONE, required_node="n1")])
    s.schedule()
    assert s.application_view("ds")["allocations"][0]["nodeId"] == "n1"  # it fitted
    counts = s.preemption_counts()
    assert counts["reservationsCancelled"] == 1
    assert any(e.kind == "unreserved" and "cancelled" in e.message for e in s.events("big"))
    # as in YuniKorn, the big ask, still fitting no node, reserves again after the walk
    assert counts["reservations"] == 2 and s.node_view("n1")["reservations"] == ["n1|big"]


def test_preemption_switched_off_does_not_stop_required_node_preemption(start_scheduler,
                                                                       clock):
    s = start_scheduler(CONFIG.replace("  - name: default\n",
                                       "  - name: default\n    preemption: {enabled: false}\n"))
    s.add_node("n1", {"vcore": 4000})
    fill(s, clock)
    s.submit("ds", SUE, queue="root.system", asks=[Ask("ds", ONE, required_node="n1")])
    s.schedule()
    s.schedule()
    assert victims(s) == ["b3"]


def test_a_queue_limit_holds_the_pinned_ask_back_from_preempting(start_scheduler, clock):
    s = start_scheduler(CONFIG.replace("- name: system",
                                       "- name: system\n            resources:"
                                       " {max: {vcore: 1}}"))
    s.add_node("n1", {"vcore": 4000})
    fill(s, clock)
    s.add_node("n2", {"vcore": 1000})
    s.submit("sys", SUE, queue="root.system", asks=[Ask("s0", ONE)])
    s.schedule()
    s.submit("ds", SUE, queue="root.system", asks=[Ask("ds", ONE, required_node="n1")])
    for _ in range(3):
        s.schedule()
        clock.advance(60)
    assert victims(s) == []
    assert s.why_pending("ds").kind == "queue"


def test_the_default_preemptor_never_takes_pinned_allocations(start_scheduler, clock):
    s = start_scheduler(CONFIG.replace("- name: system", "- name: system\n"
                                       "            resources: {guaranteed: {vcore: 4}}"))
    s.add_node("n1", {"vcore": 4000})
    s.submit("batch-app", BOB, queue="root.batch",
             asks=[Ask(f"p{i}", ONE, required_node="n1") for i in range(4)])
    s.schedule()
    s.submit("urgent", SUE, queue="root.system", asks=[Ask("u", ONE)])
    clock.advance(60)
    s.schedule()
    assert victims(s) == []


def test_an_interrupted_required_node_preemption_leaves_nothing_half_done(
        start_scheduler, clock, monkeypatch, assert_books):
    from quotactor.scheduler.preemption import victims as marking

    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 4000})
    fill(s, clock)
    s.submit("ds", SUE, queue="root.system",
             asks=[Ask("ds", {"vcore": 2000}, required_node="n1")])
    s.schedule()
    real = marking.mark_victim
    calls = []

    def flaky(*args, **kwargs):
        calls.append(args[1].key)
        if len(calls) == 2:
            raise KeyboardInterrupt
        real(*args, **kwargs)

    monkeypatch.setattr(marking, "mark_victim", flaky)
    with pytest.raises(KeyboardInterrupt):
        s.schedule()
    assert s.release_requests() == []
    assert not any(a["preempted"] for a in s.application_view("batch-app")["allocations"])
    assert s.application_view("ds")["requests"][0]["triggeredPreemption"] is False
    assert s.preemption_counts()["requiredNode"] == 0
    assert_books(s)
    monkeypatch.setattr(marking, "mark_victim", real)
    s.schedule()
    assert victims(s) == ["b2", "b3"]


def test_a_remote_shim_is_asked_to_release_required_node_victims(start_scheduler, clock):
    s = start_scheduler(CONFIG, options=SchedulerOptions(shim_confirms_releases=True))
    s.add_node("n1", {"vcore": 4000})
    fill(s, clock)
    s.submit("ds", SUE, queue="root.system", asks=[Ask("ds", ONE, required_node="n1")])
    s.schedule()
    s.schedule()
    (request,) = s.pending_releases()
    assert request.termination == "PREEMPTED_BY_SCHEDULER" and "must run there" in \
        request.message
    assert [r.reason for r in s.release_requests()] == ["required-node"]


def test_an_unschedulable_node_with_room_is_waited_for_not_preempted_on(start_scheduler,
                                                                        clock):
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 4000})
    fill(s, clock)
    s.submit("ds", SUE, queue="root.system", asks=[Ask("ds", ONE, required_node="n1")])
    s.schedule()  # reserved
    s.release("batch-app", "b0")
    s.update_node("n1", schedulable=False)
    s.schedule()
    s.schedule()
    assert victims(s) == [] and s.application_view("ds")["allocations"] == []
    s.update_node("n1", schedulable=True)
    s.schedule()
    assert s.application_view("ds")["allocations"][0]["nodeId"] == "n1"

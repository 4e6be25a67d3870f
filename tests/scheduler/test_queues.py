"""Queues: recursive maximums, guaranteed shares, maxapplications, sorting, dynamic queues."""

from __future__ import annotations

import pytest

from quotactor import InvalidRequest, UserGroup
from quotactor.scheduler import ApplicationState, Ask

SUE = UserGroup("sue", ["dev"])
BOB = UserGroup("bob", ["dev"])
ONE = {"vcore": 1000}

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
          - name: parent
            resources:
              max: {vcore: 4}
            queues:
              - name: a
                resources:
                  max: {vcore: 3}
                  guaranteed: {vcore: 1}
              - name: b
                resources:
                  guaranteed: {vcore: 2}
          - name: limited
            maxapplications: 2
          - name: nogpu
            resources:
              max: {gpu: 0}
          - name: fair
            properties:
              application.sort.policy: fair
            queues:
              - name: inherits
          - name: unsorted
            properties:
              application.sort.priority: disabled
          - name: tmpl
            parent: true
            childtemplate:
              maxapplications: 1
              resources:
                max: {vcore: 2}
              properties:
                application.sort.policy: fair
          - name: low
          - name: high
            properties:
              priority.offset: "10"
"""


def test_a_leaf_maximum_holds_its_applications_back(start_scheduler) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 8000})
    s.submit("a1", SUE, queue="root.parent.a", asks=[Ask(f"k{i}", ONE) for i in range(4)])
    assert len(s.schedule()) == 3
    wait = s.why_pending("a1")
    assert (wait.kind, wait.name, wait.limit) == ("queue", "root.parent.a", "resources")
    assert s.queue("root.parent.a").allocated == {"vcore": 3000}


def test_maximums_are_enforced_recursively_up_the_hierarchy(start_scheduler) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 8000})
    s.submit("a1", SUE, queue="root.parent.a", asks=[Ask(f"k{i}", ONE) for i in range(3)])
    s.submit("b1", BOB, queue="root.parent.b", asks=[Ask(f"k{i}", ONE) for i in range(3)])
    s.schedule()
    assert s.queue("root.parent").allocated == {"vcore": 4000}
    assert s.queue_allocated("root.parent") == {"vcore": 4000}
    assert s.queue_allocated("root.parent.a") == s.queue("root.parent.a").allocated
    with pytest.raises(InvalidRequest, match=r"no queue 'root\.nope'"):
        s.queue_allocated("root.nope")
    waiting = [a for a in ("a1", "b1") if s.application(a).asks]
    assert waiting and all(s.why_pending(a).name in ("root.parent", "root.parent.a")
                           for a in waiting)
    assert any(s.why_pending(a).name == "root.parent" for a in waiting)


def test_a_zero_maximum_forbids_that_resource(start_scheduler) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 8000, "gpu": 4})
    s.submit("a1", SUE, queue="root.nogpu", asks=[Ask("g", {"vcore": 1000, "gpu": 1}),
                                                  Ask("c", ONE)])
    assert [a.key for a in s.schedule()] == ["c"]
    assert s.why_pending("a1").name == "root.nogpu"


def test_capacity_is_shared_in_proportion_to_guarantees(start_scheduler) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 3000})
    s.submit("a1", SUE, queue="root.parent.a", asks=[Ask(f"k{i}", ONE) for i in range(3)])
    s.submit("b1", BOB, queue="root.parent.b", asks=[Ask(f"k{i}", ONE) for i in range(3)])
    s.schedule()
    assert s.queue("root.parent.a").allocated == {"vcore": 1000}
    assert s.queue("root.parent.b").allocated == {"vcore": 2000}


def test_maxapplications_holds_a_new_application_until_one_finishes(start_scheduler) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 8000})
    for app in ("x1", "x2", "x3"):
        s.submit(app, SUE, queue="root.limited", asks=[Ask("k", ONE)])
    s.schedule()
    assert s.application("x3").state is ApplicationState.ACCEPTED
    wait = s.why_pending("x3")
    assert (wait.kind, wait.name, wait.limit) == ("queue", "root.limited", "applications")
    s.add_ask("x1", Ask("more", ONE))
    s.schedule()
    assert s.application("x1").allocated == {"vcore": 2000}, "a running app is not held back"
    s.release("x2", "k")
    assert [a.application_id for a in s.schedule()] == ["x3"]


def test_fifo_serves_the_earliest_application_first(start_scheduler, clock) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", ONE)
    s.submit("late", SUE, queue="root.low", asks=[Ask("k", ONE)])
    clock.advance(1)
    s.submit("later", BOB, queue="root.low", asks=[Ask("k", ONE)])
    assert [a.application_id for a in s.schedule()] == ["late"]


def test_fair_sorting_serves_the_application_using_least(start_scheduler, clock) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 3000})
    s.submit("big", SUE, queue="root.fair.inherits",
             asks=[Ask(f"k{i}", ONE) for i in range(3)])
    s.schedule()
    s.add_node("n2", {"vcore": 2000})
    s.release("big", "k0")
    clock.advance(1)
    s.add_ask("big", Ask("again", ONE))
    s.submit("small", BOB, queue="root.fair.inherits", asks=[Ask("k", ONE), Ask("k2", ONE)])
    made = [a.application_id for a in s.schedule()]
    assert made[:2] == ["small", "small"]


def test_children_inherit_the_sort_policy_of_their_parent(start_scheduler) -> None:
    s = start_scheduler(CONFIG)
    assert s.queue("root.fair.inherits").properties["application.sort.policy"] == "fair"


def test_higher_priority_asks_go_first_unless_priority_sorting_is_off(start_scheduler,
                                                                        clock) -> None:
    s = start_scheduler(CONFIG)
    t = start_scheduler(CONFIG)
    for scheduler, queue in ((s, "root.low"), (t, "root.unsorted")):
        scheduler.add_node("n1", ONE)
        scheduler.submit("early", SUE, queue=queue, asks=[Ask("k", ONE, priority=1)])
    clock.advance(1)
    for scheduler, queue in ((s, "root.low"), (t, "root.unsorted")):
        scheduler.submit("urgent", BOB, queue=queue, asks=[Ask("k", ONE, priority=100)])
    assert [a.application_id for a in s.schedule()] == ["urgent"]
    assert [a.application_id for a in t.schedule()] == ["early"]


def test_a_priority_offset_puts_a_queue_ahead(start_scheduler) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", ONE)
    s.submit("plain", SUE, queue="root.low", asks=[Ask("k", ONE)])
    s.submit("boosted", BOB, queue="root.high", asks=[Ask("k", ONE)])
    assert [a.application_id for a in s.schedule()] == ["boosted"]


def test_dynamic_queues_start_from_the_child_template_and_go_when_empty(start_scheduler,
                                                                        clock) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 8000})
    s.submit("d1", SUE, queue="root.tmpl.sue", asks=[Ask(f"k{i}", ONE) for i in range(3)])
    queue = s.queue("root.tmpl.sue")
    assert (queue.managed, queue.max_applications, dict(queue.max_resources)) == (
        False, 1, {"vcore": 2000})
    assert queue.properties["application.sort.policy"] == "fair"
    assert len(s.schedule()) == 2
    s.submit("d2", SUE, queue="root.tmpl.sue", asks=[Ask("k", ONE)])
    s.schedule()
    assert s.why_pending("d2").limit == "applications"
    s.remove_application("d1")
    s.remove_application("d2")
    assert [q.path for q in s.queues() if q.path.startswith("root.tmpl")] == ["root.tmpl"]


def test_an_application_cannot_go_to_a_parent_queue(start_scheduler) -> None:
    s = start_scheduler(CONFIG)
    info = s.submit("p1", SUE, queue="root.parent")
    assert info.state is ApplicationState.REJECTED
    assert info.rejected_message == "queue root.parent is not a leaf queue"


def test_a_leaf_queue_cannot_get_dynamic_children(start_scheduler) -> None:
    s = start_scheduler(CONFIG)
    info = s.submit("p1", SUE, queue="root.low.child")
    assert info.state is ApplicationState.REJECTED
    assert "root.low is a leaf queue" in info.rejected_message

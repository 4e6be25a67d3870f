"""The default preemptor cancels the reservations of old lower-priority asks (YuniKorn 1.7+).

YuniKorn's preemptor (`pkg/scheduler/objects/preemption.go`, read at be3bb487) takes a reserved
ask's age as the time since its creation shifted by the reservation wait timeout (an hour) and
the reservation delay (2 s), and cancels the reservation once that age exceeds the timeout: so
more than 2 h 2 s after the ask was created, however young the reservation itself.
"""

from __future__ import annotations

import pytest

from quotactor import UserGroup
from quotactor.scheduler import Ask

SUE = UserGroup("sue", ["dev"])
BOB = UserGroup("bob", ["ops"])
ONE = {"vcore": 1000}
HOUR = 3600
CONFIG = """
partitions:
  - name: default
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: gold
            resources: {guaranteed: {vcore: 4}}
            properties: {preemption.delay: 10s}
          - name: batch
          - name: big
"""


def reserved_node(s, clock, big_priority: int = 0, big_resource=None) -> float:
    """One node full of batch work, reserved by a big ask of root.big (no guarantee, so it
    cannot preempt); returns when the reservation was made."""
    s.add_node("n1", {"vcore": 4000})
    s.submit("batch-app", BOB, queue="root.batch", asks=[Ask(f"b{i}", ONE) for i in range(4)])
    s.schedule()
    s.submit("big", BOB, queue="root.big",
             asks=[Ask("big", big_resource or {"vcore": 4000}, priority=big_priority)])
    clock.advance(2)
    s.schedule()
    assert s.node_view("n1")["reservations"] == ["n1|big"]
    return clock.now()


def victims(s) -> list[str]:
    return sorted(r.allocation_key for r in s.release_requests())


def test_a_young_ask_blocks_the_preemptor_an_old_ones_reservation_is_cancelled(
        start_scheduler, clock, assert_books):
    """YUNIKORN-3092's case: a node reserved by a low-priority ask that cannot preempt would
    block a guaranteed queue's high-priority ask for good; once the reserved ask is old, its
    reservation gives way to the preemptor."""
    s = start_scheduler(CONFIG)
    made = reserved_node(s, clock)
    s.submit("urgent", SUE, queue="root.gold", asks=[Ask("u", ONE, priority=10)])
    clock.advance(30)
    s.schedule()
    assert victims(s) == []  # the node is reserved, the reservation is young
    due = made - 2 + 2 * HOUR + 2  # the ask was made 2 s before its reservation
    assert s.next_contention_check() == due  # a simulator comes back then
    clock.advance(due - clock.now())
    s.schedule()
    assert victims(s) == []  # exactly the age is not more than it
    clock.advance(15)
    s.schedule()
    assert victims(s) == ["b0"]  # all four are as new: the key decides
    assert s.node_view("n1")["reservations"] == ["n1|u"]
    assert s.application_view("big")["hasReserved"] is False
    assert s.preemption_counts()["reservationsCancelled"] == 1
    assert any("cancelled" in e.message and "urgent" in e.message for e in s.events("big"))
    assert s.why_pending("big").kind == "node"
    s.release("batch-app", "b0")
    s.schedule()
    assert s.application_view("urgent")["allocations"][0]["nodeId"] == "n1"
    assert_books(s)


@pytest.mark.parametrize("big_priority", [10, 11])
def test_a_reservation_of_the_same_or_a_higher_priority_is_kept(start_scheduler, clock,
                                                                big_priority):
    s = start_scheduler(CONFIG)
    reserved_node(s, clock, big_priority=big_priority)
    s.submit("urgent", SUE, queue="root.gold", asks=[Ask("u", ONE, priority=10)])
    clock.advance(2 * HOUR)
    s.schedule()
    assert victims(s) == []
    assert s.node_view("n1")["reservations"] == ["n1|big"]
    assert s.preemption_counts()["reservationsCancelled"] == 0


def test_a_preemptors_reservation_is_never_cancelled(start_scheduler, clock):
    s = start_scheduler(CONFIG.replace("          - name: big\n",
                                       "          - name: big\n"
                                       "            resources: {guaranteed: {vcore: 4}}\n"))
    s.add_node("n1", {"vcore": 4000})
    s.submit("batch-app", BOB, queue="root.batch", asks=[Ask(f"b{i}", ONE) for i in range(4)])
    s.schedule()
    s.submit("big", BOB, queue="root.big", asks=[Ask("big", {"vcore": 2000})])
    clock.advance(40)
    s.schedule()
    assert victims(s) == ["b0", "b1"]  # big preempted and holds n1 for its victims
    s.submit("urgent", SUE, queue="root.gold", asks=[Ask("u", ONE, priority=10)])
    clock.advance(2 * HOUR)
    s.schedule()
    assert victims(s) == []
    assert s.node_view("n1")["reservations"] == ["n1|big"]


def test_a_pinned_asks_reservation_is_never_cancelled(start_scheduler, clock):
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 4000})
    s.submit("batch-app", BOB, queue="root.batch",
             asks=[Ask(f"b{i}", ONE, priority=20) for i in range(4)])
    s.schedule()
    s.submit("ds", BOB, queue="root.big", asks=[Ask("ds", ONE, required_node="n1")])
    s.schedule()
    s.schedule()
    assert s.node_view("n1")["reservations"] == ["n1|ds"]  # its victims are of priority 20
    s.submit("urgent", SUE, queue="root.gold", asks=[Ask("u", ONE, priority=30)])
    clock.advance(2 * HOUR)
    s.schedule()
    assert victims(s) == []
    assert s.node_view("n1")["reservations"] == ["n1|ds"]


def test_an_unusable_node_still_loses_its_old_reservation(start_scheduler, clock):
    """YuniKorn cancels while it looks at the nodes, before it checks that the preemptor
    could use the node: a reservation of a node too small for the preemptor goes too."""
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 1000})
    s.submit("batch-app", BOB, queue="root.batch", asks=[Ask("b0", ONE)])
    s.schedule()
    s.add_node("n2", {"vcore": 4000})
    s.submit("batch-2", BOB, queue="root.batch", asks=[Ask(f"c{i}", ONE) for i in range(4)])
    s.schedule()
    s.submit("small", BOB, queue="root.big", asks=[Ask("s", ONE)])
    s.submit("big", BOB, queue="root.big", asks=[Ask("big", {"vcore": 4000})])
    clock.advance(3)
    s.schedule()
    reserved = {n["nodeID"]: n["reservations"] for n in s.nodes_view()}
    assert reserved == {"n1": ["n1|s"], "n2": ["n2|big"]}
    s.submit("urgent", SUE, queue="root.gold", asks=[Ask("u", {"vcore": 2000}, priority=10)])
    clock.advance(2 * HOUR + 1)
    s.schedule()
    assert victims(s) == ["c0", "c1"]
    assert s.preemption_counts()["reservationsCancelled"] == 2


def test_an_old_asks_young_reservation_is_cancelled_at_once(start_scheduler, clock):
    """The age is the ask's, not the reservation's: an ask that waited hours before it could
    reserve (its node was unschedulable) gives a reservation of seconds up at once."""
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 4000})
    s.submit("batch-app", BOB, queue="root.batch", asks=[Ask(f"b{i}", ONE) for i in range(4)])
    s.schedule()
    s.update_node("n1", schedulable=False)
    s.submit("big", BOB, queue="root.big", asks=[Ask("big", {"vcore": 4000})])
    clock.advance(3 * HOUR)
    s.schedule()
    assert s.node_view("n1")["reservations"] == []
    s.update_node("n1", schedulable=True)
    s.schedule()
    assert s.node_view("n1")["reservations"] == ["n1|big"]
    s.submit("urgent", SUE, queue="root.gold", asks=[Ask("u", ONE, priority=10)])
    clock.advance(15)
    s.schedule()
    assert victims(s) == ["b0"]
    assert s.preemption_counts()["reservationsCancelled"] == 1

"""Reservations: a big ask holds a node so small ones cannot starve it; use and expiry."""

from __future__ import annotations

from quotactor import UserGroup
from quotactor.scheduler import Ask

SUE = UserGroup("sue", ["dev"])
BOB = UserGroup("bob", ["ops"])
ONE = {"vcore": 1000}
BIG = {"vcore": 4000}
CONFIG = """
partitions:
  - name: default
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: small
          - name: big
"""


def busy_node(s, clock, node: str = "n1") -> None:
    """`node` (4 vcores) full of four one-vcore allocations of the application `small`."""
    s.add_node(node, BIG)
    s.submit("small", BOB, queue="root.small", asks=[Ask(f"s{i}", ONE) for i in range(4)])
    s.schedule()


def test_an_ask_that_fits_no_node_reserves_one_after_two_seconds(start_scheduler, clock):
    s = start_scheduler(CONFIG)
    busy_node(s, clock)
    s.submit("big", SUE, queue="root.big", asks=[Ask("b", BIG)])
    s.schedule()
    clock.advance(1.9)
    s.schedule()
    assert s.application_view("big")["hasReserved"] is False
    clock.advance(0.1)
    s.schedule()
    view = s.application_view("big")
    assert view["hasReserved"] is True and view["reservations"] == ["n1|b"]
    assert s.nodes_view()[0]["isReserved"] is True
    assert s.nodes_view()[0]["reservations"] == ["n1|b"]
    wait = s.why_pending("big")
    assert wait is not None and wait.kind == "reservation" and wait.name == "n1"
    assert "reserved node n1" in str(wait)
    assert any(e.kind == "reserved" for e in s.events("big"))


def test_a_reserved_node_takes_no_small_ask_until_the_big_one_fits(start_scheduler, clock,
                                                                    assert_books):
    s = start_scheduler(CONFIG)
    busy_node(s, clock)
    s.submit("big", SUE, queue="root.big", asks=[Ask("b", BIG)])
    clock.advance(5)
    s.schedule()
    for i in range(4):
        s.release("small", f"s{i}")
        s.add_ask("small", Ask(f"t{i}", ONE))  # a stream of small asks
        made = s.schedule()
        if i < 3:
            assert made == []
            assert s.application("small").wait.kind == "node"
    assert [(a.application_id, a.node_id) for a in made] == [("big", "n1")]
    assert s.nodes_view()[0]["isReserved"] is False
    assert s.application_view("big")["hasReserved"] is False
    assert_books(s)


def test_the_reserved_ask_goes_to_another_node_when_one_has_room(start_scheduler, clock):
    s = start_scheduler(CONFIG)
    busy_node(s, clock)
    s.submit("big", SUE, queue="root.big", asks=[Ask("b", BIG)])
    clock.advance(5)
    s.schedule()
    s.add_node("n2", BIG)
    made = s.schedule()
    assert [(a.application_id, a.node_id) for a in made] == [("big", "n2")]
    assert not any(n["isReserved"] for n in s.nodes_view())


def test_a_node_holds_one_reservation_and_an_ask_one_node(start_scheduler, clock):
    s = start_scheduler(CONFIG)
    busy_node(s, clock)
    s.add_node("n2", BIG)
    for i in range(4):
        s.add_ask("small", Ask(f"m{i}", ONE))
    s.schedule()
    s.submit("big", SUE, queue="root.big", asks=[Ask(f"b{i}", BIG) for i in range(3)])
    clock.advance(5)
    for _ in range(3):
        s.schedule()
    held = s.application_view("big")["reservations"]
    assert len(held) == 2
    assert {h.split("|")[0] for h in held} == {"n1", "n2"}
    assert {h.split("|")[1] for h in held} == {"b0", "b1"}


def test_reservation_goes_with_its_ask(start_scheduler, clock):
    s = start_scheduler(CONFIG)
    busy_node(s, clock)
    s.submit("big", SUE, queue="root.big", asks=[Ask("b", BIG)])
    clock.advance(5)
    s.schedule()
    s.remove_ask("big", "b")
    s.add_ask("small", Ask("x", ONE))
    s.release("small", "s0")
    made = s.schedule()
    assert [a.key for a in made] == ["x"]
    assert not any(n["isReserved"] for n in s.nodes_view())


def test_a_reservation_held_back_by_a_limit_expires_after_an_hour(start_scheduler, clock):
    s = start_scheduler(CONFIG)
    busy_node(s, clock)
    s.submit("big", SUE, queue="root.big", asks=[Ask("b", BIG)])
    clock.advance(5)
    s.schedule()
    s.update_config(CONFIG.replace("- name: big", "- name: big\n            resources:"
                                   " {max: {vcore: 2}}"))
    for i in range(4):
        s.release("small", f"s{i}")
    s.schedule()
    wait = s.why_pending("big")
    assert wait is not None and wait.kind == "queue"
    assert s.nodes_view()[0]["isReserved"] is True
    clock.advance(3599)
    s.schedule()
    assert s.nodes_view()[0]["isReserved"] is True
    clock.advance(1)
    s.schedule()
    assert s.nodes_view()[0]["isReserved"] is False
    assert s.preemption_counts()["reservationsExpired"] == 1
    assert any("expired" in e.message for e in s.events("big"))


def test_next_timer_wakes_a_simulator_for_a_reservation(start_scheduler, clock):
    s = start_scheduler(CONFIG)
    busy_node(s, clock)
    s.submit("big", SUE, queue="root.big", asks=[Ask("b", BIG)])
    s.schedule()
    assert s.next_contention_check() == clock.now() + 2
    clock.advance(2)
    s.schedule()
    assert s.application_view("big")["hasReserved"] is True
    assert s.preemption_counts()["reservations"] == 1
    clock.advance(10)
    assert s.preemption_counts()["reservedSeconds"] == 10


TWO_EACH = """
partitions:
  - name: default
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: big
            maxapplications: {queue_apps}
            limits:
              - limit: two each
                users: ["*"]
                maxapplications: 2
"""


def _met_full_nodes_then_the_count_filled(start_scheduler, clock, queue_apps: int,
                                          other: UserGroup):
    """`wide` meets full nodes while sue may still start an application; then `narrow` (of
    `other`, which may be sue) starts on a new node and fills sue's or the queue's count. The
    walk does not try `wide` again (no node has room for its size), so its last reason from
    the walk is the nodes, and without the count check before an offer it would reserve n1."""
    s = start_scheduler(TWO_EACH.format(queue_apps=queue_apps))
    s.add_node("n1", BIG)
    s.submit("first", SUE, queue="root.big", asks=[Ask("f", BIG)])
    s.submit("wide", SUE, queue="root.big", asks=[Ask("w", BIG)])
    assert [a.application_id for a in s.schedule()] == ["first"]
    assert s.why_pending("wide").kind == "node"
    s.add_node("n2", ONE)
    s.submit("narrow", other, queue="root.big", asks=[Ask("n", ONE)])
    assert [a.application_id for a in s.schedule()] == ["narrow"]
    return s


def test_no_reservation_for_an_application_its_users_count_holds(start_scheduler, clock):
    """YuniKorn's `TryAllocate` skips an application its user's count does not admit, so it
    neither reserves nor preempts: the end of a cycle asks the count before it offers one a
    node, and holds it by the count as the walk would."""
    s = _met_full_nodes_then_the_count_filled(start_scheduler, clock, 10, SUE)
    clock.advance(3)  # past the reservation delay
    s.schedule()
    assert not any(n["isReserved"] for n in s.nodes_view())
    wait = s.why_pending("wide")
    assert wait.kind == "user" and wait.limit == "applications"
    s.remove_application("first")
    assert [a.application_id for a in s.schedule()] == ["wide"]


def test_no_reservation_for_an_application_its_queues_count_holds(start_scheduler, clock):
    s = _met_full_nodes_then_the_count_filled(start_scheduler, clock, 2, BOB)
    clock.advance(3)
    s.schedule()
    assert not any(n["isReserved"] for n in s.nodes_view())
    wait = s.why_pending("wide")
    assert wait.kind == "queue" and wait.limit == "applications"


def test_an_admitted_application_still_reserves(start_scheduler, clock):
    s = _met_full_nodes_then_the_count_filled(start_scheduler, clock, 10, BOB)
    clock.advance(3)
    s.schedule()
    assert s.application_view("wide")["reservations"] == ["n1|w"]

"""Nodes: capacity, schedulability, removal, and the node sorting policies."""

from __future__ import annotations

import pytest

from quotactor import InvalidRequest, UserGroup
from quotactor.scheduler import ApplicationState, Ask

SUE = UserGroup("sue", ["dev"])
ONE = {"vcore": 1000}


def test_the_partition_capacity_is_the_sum_of_its_nodes(start_scheduler) -> None:
    s = start_scheduler()
    s.add_node("n1", {"vcore": 4000, "memory": 10})
    s.add_node("n2", {"vcore": 2000})
    assert s.partitions_view()[0]["capacity"]["capacity"] == {"memory": 10, "vcore": 6000}
    assert s.queues_view()["maxResource"] == {"memory": 10, "vcore": 6000}
    with pytest.raises(InvalidRequest):
        s.add_node("n1", ONE)


def test_an_ask_lands_only_on_a_node_that_has_every_resource_it_needs(start_scheduler) -> None:
    s = start_scheduler()
    s.add_node("cpu", {"vcore": 8000})
    s.add_node("gpu", {"vcore": 1000, "gpu": 1})
    s.submit("a1", SUE, queue="root.q", asks=[Ask("k1", {"vcore": 1000, "gpu": 1})])
    assert [a.node_id for a in s.schedule()] == ["gpu"]


def test_an_unschedulable_node_takes_no_new_work_until_it_is_schedulable(start_scheduler) -> None:
    s = start_scheduler()
    s.add_node("n1", ONE, schedulable=False)
    s.submit("a1", SUE, queue="root.q", asks=[Ask("k1", ONE)])
    assert s.schedule() == []
    assert s.why_pending("a1").kind == "node"
    s.update_node("n1", schedulable=True)
    assert [a.key for a in s.schedule()] == ["k1"]


def test_removing_a_node_releases_its_allocations(start_scheduler) -> None:
    s = start_scheduler()
    s.add_node("n1", {"vcore": 2000})
    s.add_node("n2", {"vcore": 2000})
    s.submit("a1", SUE, queue="root.q", asks=[Ask("k1", ONE), Ask("k2", ONE), Ask("k3", ONE)])
    s.schedule()
    on_n1 = {a.key for a in s.application("a1").allocations if a.node_id == "n1"}
    released = s.remove_node("n1")
    assert {a.key for a in released} == on_n1
    info = s.application("a1")
    assert {a.node_id for a in info.allocations} == {"n2"}
    assert s.ugm().get_user_resources("sue") == info.allocated
    assert s.queue("root.q").allocated == info.allocated


def test_removing_the_only_node_of_an_application_completes_it(start_scheduler) -> None:
    s = start_scheduler()
    s.add_node("n1", {"vcore": 2000})
    s.submit("a1", SUE, queue="root.q", asks=[Ask("k1", ONE)])
    s.schedule()
    s.remove_node("n1")
    assert s.application("a1").state is ApplicationState.COMPLETING
    assert s.ugm().user_usage("sue") is None


def test_fair_node_sorting_spreads_and_binpacking_fills_one_node(start_scheduler) -> None:
    fair = start_scheduler()
    packed = start_scheduler("""
        partitions:
          - name: default
            nodesortpolicy: {type: binpacking}
            placementrules: [{name: provided, create: true}]
            queues: [{name: root, submitacl: '*'}]
    """)
    for s in (fair, packed):
        s.add_node("n1", {"vcore": 4000})
        s.add_node("n2", {"vcore": 4000})
        s.submit("a1", SUE, queue="root.q", asks=[Ask(f"k{i}", ONE) for i in range(4)])
    assert sorted(a.node_id for a in fair.schedule()) == ["n1", "n1", "n2", "n2"]
    assert sorted(a.node_id for a in packed.schedule()) == ["n1", "n1", "n1", "n1"]


def test_growing_a_node_lets_waiting_asks_in(start_scheduler) -> None:
    s = start_scheduler()
    s.add_node("n1", ONE)
    s.submit("a1", SUE, queue="root.q", asks=[Ask("k1", {"vcore": 3000})])
    assert s.schedule() == []
    s.update_node("n1", capacity={"vcore": 4000})
    assert [a.key for a in s.schedule()] == ["k1"]


def test_a_required_node_pins_the_ask(start_scheduler) -> None:
    s = start_scheduler()
    s.add_node("n1", {"vcore": 4000})
    s.add_node("n2", {"vcore": 4000})
    s.submit("a1", SUE, queue="root.q", asks=[Ask("k1", ONE, required_node="n2")])
    assert [a.node_id for a in s.schedule()] == ["n2"]

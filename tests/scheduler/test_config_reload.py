"""Configuration reloads while work runs: queues change, drain and appear; limits switch."""

from __future__ import annotations

import threading

import pytest

from quotactor import UserGroup
from quotactor.config import ConfigError
from quotactor.scheduler import ApplicationState, Ask

S = ApplicationState
SUE = UserGroup("sue", ["dev"])
ONE = {"vcore": 1000}

BEFORE = """
partitions:
  - name: default
    placementrules: [{name: provided}]
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: a
            resources: {max: {vcore: 2}}
            limits:
              - limit: sue
                users: [sue]
                maxapplications: 1
          - name: b
"""

AFTER = """
partitions:
  - name: default
    placementrules: [{name: provided, create: true}]
    nodesortpolicy: {type: binpacking}
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: a
            resources: {max: {vcore: 4}}
            limits:
              - limit: sue
                users: [sue]
                maxapplications: 2
          - name: c
"""


def test_a_raised_maximum_lets_waiting_asks_in_without_touching_running_work(
    start_scheduler,
) -> None:
    s = start_scheduler(BEFORE)
    s.add_node("n1", {"vcore": 8000})
    s.submit("a1", SUE, queue="root.a", asks=[Ask(f"k{i}", ONE) for i in range(3)])
    s.schedule()
    before = s.application("a1").allocations
    assert s.why_pending("a1").name == "root.a"
    s.update_config(AFTER)
    assert s.application("a1").allocations == before
    assert [a.key for a in s.schedule()] == ["k2"]


def test_a_lowered_maximum_evicts_nothing_and_holds_new_asks(start_scheduler) -> None:
    s = start_scheduler(AFTER)
    s.add_node("n1", {"vcore": 8000})
    s.submit("a1", SUE, queue="root.a", asks=[Ask(f"k{i}", ONE) for i in range(3)])
    s.schedule()
    s.update_config(BEFORE)
    assert s.queue("root.a").allocated == {"vcore": 3000}
    s.add_ask("a1", Ask("k9", ONE))
    assert s.schedule() == []
    s.release("a1", "k0")
    s.release("a1", "k1")
    assert [a.key for a in s.schedule()] == ["k9"]


def test_a_removed_queue_drains_keeps_scheduling_and_goes_when_empty(start_scheduler,
                                                                     clock) -> None:
    s = start_scheduler(BEFORE)
    s.add_node("n1", {"vcore": 8000})
    s.submit("b1", SUE, queue="root.b", asks=[Ask("k0", ONE)])
    s.schedule()
    s.update_config(AFTER)
    assert s.queue("root.b").status == "Draining"
    assert s.queue("root.c").status == "Active"
    s.add_ask("b1", Ask("k1", ONE))
    assert [a.key for a in s.schedule()] == ["k1"]
    assert s.submit("b2", SUE, queue="root.b").state is S.REJECTED
    s.remove_application("b1")
    assert "root.b" not in [q.path for q in s.queues()]


def test_a_raised_user_limit_takes_effect_for_waiting_applications(start_scheduler) -> None:
    s = start_scheduler(BEFORE)
    s.add_node("n1", {"vcore": 8000})
    s.submit("x1", SUE, queue="root.a", asks=[Ask("k", ONE)])
    s.submit("x2", SUE, queue="root.a", asks=[Ask("k", ONE)])
    s.schedule()
    assert s.why_pending("x2").kind == "user"
    s.update_config(AFTER)
    assert [a.application_id for a in s.schedule()] == ["x2"]


def test_new_placement_rules_and_node_sorting_apply_at_once(start_scheduler) -> None:
    s = start_scheduler(BEFORE)
    assert s.submit("n1", SUE, queue="root.new").state is S.REJECTED
    s.update_config(AFTER)
    assert s.submit("n2", SUE, queue="root.new").queue_path == "root.new"
    assert s.partitions_view()[0]["nodeSortingPolicy"]["type"] == "binpacking"


def test_an_invalid_configuration_changes_nothing(start_scheduler) -> None:
    s = start_scheduler(BEFORE)
    with pytest.raises(ConfigError):
        s.update_config("partitions:\n  - name: default\n    queues: [{name: root, bad: 1}]\n")
    assert s.queue("root.a").max_resources == {"vcore": 2000}


def test_a_partition_left_out_of_the_configuration_drains(start_scheduler) -> None:
    s = start_scheduler(BEFORE + """
  - name: gpu
    placementrules: [{name: provided, create: true}]
    queues: [{name: root, submitacl: '*'}]
""")
    assert s.partitions == ("default", "gpu")
    s.update_config(BEFORE)
    assert s.partitions_view()[1]["state"] == "Draining"
    info = s.submit("g1", SUE, queue="root.x", partition="gpu")
    assert info.rejected_message == "partition gpu is draining"


def test_reloading_while_the_background_loop_schedules(start_scheduler) -> None:
    s = start_scheduler(BEFORE)
    s.add_node("n1", {"vcore": 8000})
    s.start_background(interval=0.001)
    s.submit("a1", SUE, queue="root.a", asks=[Ask(f"k{i}", ONE) for i in range(4)])
    assert s.wait_for_cycles(s.cycles + 2, timeout=10)
    assert len(s.application("a1").allocations) == 2
    reloads = threading.Thread(target=lambda: [s.update_config(c) for c in (AFTER, BEFORE,
                                                                            AFTER)])
    reloads.start()
    reloads.join(timeout=20)
    assert not reloads.is_alive()
    assert s.wait_for_cycles(s.cycles + 2, timeout=10)
    assert len(s.application("a1").allocations) == 4
    s.stop_background()
    assert [t.name for t in threading.enumerate() if t.name == "quotactor-scheduler"] == []

"""Partitions: each with its own nodes, queues and user group manager."""

from __future__ import annotations

import pytest

from quotactor import InvalidRequest, UserGroup
from quotactor.core.limits import LimitEntry
from quotactor.scheduler import Ask, PartitionSpec, QueueSpec, RuleSpec

SUE = UserGroup("sue", ["dev"])
ONE = {"vcore": 1000}
TWO_PARTITIONS = """
partitions:
  - name: default
    placementrules: [{name: provided, create: true}]
    queues:
      - name: root
        submitacl: '*'
        limits:
          - limit: sue
            users: [sue]
            maxresources: {vcore: 1}
  - name: gpu
    placementrules: [{name: provided, create: true}]
    queues: [{name: root, submitacl: '*'}]
"""


def test_each_partition_has_its_own_nodes_limits_and_tracking(start_scheduler) -> None:
    s = start_scheduler(TWO_PARTITIONS)
    assert s.partitions == ("default", "gpu")
    s.add_node("n1", {"vcore": 8000})
    s.add_node("g1", {"vcore": 8000, "gpu": 2}, partition="gpu")
    s.submit("a1", SUE, queue="root.q", asks=[Ask("k1", ONE), Ask("k2", ONE)])
    s.submit("a1", SUE, queue="root.q", partition="gpu",
             asks=[Ask("k1", ONE), Ask("k2", ONE)])
    made = s.schedule()
    assert sorted((a.partition, a.node_id) for a in made) == [
        ("default", "n1"), ("gpu", "g1"), ("gpu", "g1")]
    assert s.ugm("default").get_user_resources("sue") == ONE
    assert s.ugm("gpu").get_user_resources("sue") == {"vcore": 2000}
    assert s.why_pending("a1").kind == "user"
    assert s.why_pending("a1", partition="gpu") is None
    with pytest.raises(InvalidRequest):
        s.submit("x", SUE, partition="nope")


def test_a_scheduler_can_be_configured_with_specs_instead_of_yaml(start_scheduler) -> None:
    spec = PartitionSpec(
        name="default",
        root=QueueSpec("root", parent=True, submit_acl="*",
                       children=(QueueSpec("a", max_resources={"vcore": 2000}),)),
        rules=(RuleSpec("fixed", value="a"),),
        limits={"root.a": [LimitEntry(users=("sue",), max_applications=1)]},
    )
    s = start_scheduler(spec)
    s.add_node("n1", {"vcore": 8000})
    assert s.submit("a1", SUE, asks=[Ask("k", ONE)]).queue_path == "root.a"
    s.submit("a2", SUE, asks=[Ask("k", ONE)])
    s.schedule()
    assert s.why_pending("a2").limit == "applications"

"""The flat per-queue limit lists the trackers are built from."""

from __future__ import annotations

from quotactor.config import (
    LimitConfig,
    PartitionConfig,
    QueueConfig,
    iter_queues,
    limit_entries,
    load_config,
)


def test_each_configured_queue_path_maps_to_its_limits_in_config_order() -> None:
    config = load_config("""\
partitions:
  - queues:
      - name: root
        limits: [{users: [sue], maxapplications: 9}]
        queues:
          - name: a
            queues:
              - name: b
                limits:
                  - {users: [sue], maxapplications: 3}
                  - {groups: [dev], maxresources: {memory: 1G}}
          - name: c
""")
    entries = limit_entries(config.partitions[0])
    assert list(entries) == ["root", "root.a", "root.a.b", "root.c"]
    assert [lim.max_applications for lim in entries["root"]] == [9]
    assert entries["root.a"] == ()
    assert [lim.users or lim.groups for lim in entries["root.a.b"]] == [("sue",), ("dev",)]
    assert dict(entries["root.a.b"][1].max_resources) == {"memory": 10**9}


def test_partition_limits_are_the_root_limits() -> None:
    config = load_config("partitions: [{limits: [{users: ['*'], maxapplications: 2}], "
                         "queues: [{name: a}]}]\n")
    entries = limit_entries(config.partitions[0])
    assert entries["root"][0].users == ("*",)
    assert entries["root.a"] == ()


def test_partition_limits_count_for_a_partition_built_in_code() -> None:
    limit = LimitConfig(users=("sue",), max_applications=1)
    partition = PartitionConfig(limits=(limit,), queues=(QueueConfig("root", parent=True),))
    assert limit_entries(partition) == {"root": (limit,)}


def test_explicit_zero_quantities_survive_into_the_entries() -> None:
    config = load_config("partitions: [{queues: [{name: root, limits: [{users: [sue], "
                         "maxresources: {memory: 1G, nvidia.com/gpu: 0}}]}]}]\n")
    limit = limit_entries(config.partitions[0])["root"][0]
    assert dict(limit.max_resources) == {"memory": 10**9, "nvidia.com/gpu": 0}


def test_a_partition_without_queues_has_no_entries() -> None:
    assert limit_entries(PartitionConfig()) == {}
    assert list(iter_queues(PartitionConfig())) == []

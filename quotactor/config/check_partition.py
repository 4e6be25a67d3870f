"""Partition-level rules: unique names, a queue tree under one root, one place for the root
limits, and a known node sort policy."""

from __future__ import annotations

from quotactor.config.findings import Findings
from quotactor.config.model import DEFAULT_PARTITION, PartitionConfig, QueueConfig
from quotactor.core.queue_path import ROOT

__all__ = ["check_name", "check_structure", "check_root_limits", "check_node_sort"]

_NODE_SORT_TYPES = ("", "fair", "binpacking")


def check_name(partition: PartitionConfig, seen: dict[str, str], out: Findings) -> None:
    """Partition names are unique, ignoring case; an empty name means `default`."""
    name = partition.name or DEFAULT_PARTITION
    key = name.lower()
    if key in seen:
        out.add(f"{partition.location}.name",
                f"duplicate partition name found with name {name} (partition names ignore "
                f"case and an empty name means 'default'; the first is {seen[key]})")
    else:
        seen[key] = partition.location or name


def check_structure(partition: PartitionConfig, out: Findings) -> QueueConfig | None:
    """The root queue, if the partition has a usable queue tree (else the reason why not)."""
    if not partition.queues:
        out.add(partition.location,
                f"queue config is not set: partition '{partition.name}' needs a queues list, "
                "at least `queues: [{name: root}]`")
        return None
    root = partition.queues[0]
    if len(partition.queues) != 1 or root.name.lower() != ROOT:
        out.add(root.location, f"top queue name is {root.name} not root: a partition has "
                "exactly one top queue, root")
        return None
    if (out.declared_resources(root.location) or root.max_resources
            or root.guaranteed):
        out.add(f"{root.location}.resources",
                "root queue must not have resource limits set: the root queue always owns "
                "the whole partition; set max and guaranteed on its children")
    return root


def check_root_limits(partition: PartitionConfig, root: QueueConfig, out: Findings) -> None:
    """Root limits may be given on the partition or on the root queue, not both differently."""
    if partition.limits and root.limits and partition.limits != root.limits:
        out.add(f"{partition.location}.limits",
                "partition limits and root queue limits are not equivalent: partition limits "
                "are the root queue's limits; state them in one place")


def check_node_sort(partition: PartitionConfig, out: Findings) -> None:
    policy = partition.node_sort_policy
    if policy.type not in _NODE_SORT_TYPES:
        out.add(f"{policy.location}.type",
                f"undefined policy: {policy.type} (nodesortpolicy type is fair or binpacking)")
    for name, weight in policy.resource_weights.items():
        if weight < 0:
            out.add(f"{policy.location}.resourceweights.{name}",
                    f"negative resource weight for {name} is not allowed (got {weight:g})")

"""From a partition's queue tree to the flat per-queue limit lists the trackers consume."""

from __future__ import annotations

from collections.abc import Iterator

from quotactor.config.model import LimitConfig, PartitionConfig, QueueConfig
from quotactor.core.queue_path import ROOT

__all__ = ["iter_queues", "limit_entries"]


def iter_queues(partition: PartitionConfig) -> Iterator[tuple[str, QueueConfig]]:
    """Every configured queue with its path (`root`, `root.a`, ...), parents first."""
    root = partition.root
    if root is None:
        return
    stack: list[tuple[str, QueueConfig]] = [(ROOT, root)]
    while stack:
        path, queue = stack.pop()
        yield path, queue
        stack.extend((f"{path}.{child.name}", child) for child in reversed(queue.queues))


def limit_entries(partition: PartitionConfig) -> dict[str, tuple[LimitConfig, ...]]:
    """Each configured queue path -> its limits in config order (empty when it has none).

    Partition-level limits are the root queue's limits, as in YuniKorn; they count only when
    the root queue states none (a valid config never has both, unless they are equal).
    """
    entries = {path: queue.limits for path, queue in iter_queues(partition)}
    if ROOT in entries and not entries[ROOT]:
        entries[ROOT] = partition.limits
    return entries

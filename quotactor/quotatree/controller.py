"""A tree with its allocated consumers: MCAD's tree `Controller`.

The controller owns the journal boundary. The manager commits it before every operation that
changes the tree, so an operation always starts from a clean log; a trial (`try_allocate`)
leaves its log uncommitted and marks the controller as `pending`, and `undo` rolls it back.
Anything else that touches the tree first commits, which is why an undo can only follow its
try directly.
"""

from __future__ import annotations

from dataclasses import dataclass

import structlog

from quotactor.quotatree.cache import TreeCache, TreeCacheCreateResponse
from quotactor.quotatree.consumer import Consumer
from quotactor.quotatree.response import AllocationResponse
from quotactor.quotatree.tree import QuotaTree

__all__ = ["Trial", "TreeController"]

log = structlog.get_logger()


@dataclass(frozen=True, eq=False, slots=True)
class Trial:
    """An uncommitted try: which consumer, and the controllers whose logs hold it.

    Compared by identity: a controller still holds a trial only while its `pending` is this
    very object, so a newer try or any commit invalidates it.
    """

    consumer_id: str
    forest: str | None
    controllers: tuple[TreeController, ...]


class TreeController:
    """One tree, its cache and the consumers allocated on it."""

    def __init__(self, cache: TreeCache) -> None:
        self.cache = cache
        self.tree = cache.create_tree()[0]
        self.consumers: dict[str, Consumer] = {}
        self.pending: Trial | None = None

    @property
    def name(self) -> str:
        return self.cache.tree_name

    def commit(self) -> None:
        """Make everything so far permanent; a pending trial can no longer be undone."""
        self.tree.journal.commit()
        self.pending = None

    def rollback(self) -> None:
        """Undo everything since the last commit."""
        self.tree.journal.rollback()
        self.pending = None

    def failure_message(self) -> str:
        return f"Failed to allocate quota on quota designation '{self.name}'"

    def allocate(self, consumer: Consumer) -> tuple[AllocationResponse, list[str]]:
        """Normal allocation; the preempted IDs also come back in preemption order."""
        preempted = self.tree.allocate(consumer)
        if preempted is None:
            return AllocationResponse.refused(consumer.id, self.failure_message()), []
        journal = self.tree.journal
        journal.set_item(self.consumers, consumer.id, consumer)
        for victim in preempted:
            if victim in self.consumers:
                journal.del_item(self.consumers, victim)
        return AllocationResponse(consumer.id, True, "", frozenset(preempted)), preempted

    def force_allocate(self, consumer: Consumer, node_id: str) -> AllocationResponse:
        if not self.tree.force_allocate(consumer, node_id):
            return AllocationResponse.refused(
                consumer.id, f"failed force allocate consumer {consumer.id} on node {node_id}"
            )
        self.tree.journal.set_item(self.consumers, consumer.id, consumer)
        return AllocationResponse(consumer.id, True)

    def deallocate(self, consumer_id: str) -> bool:
        consumer = self.consumers.get(consumer_id)
        if consumer is None:
            return False
        self.tree.journal.del_item(self.consumers, consumer_id)
        return self.tree.deallocate(consumer)

    def allocated_node(self, consumer_id: str) -> str | None:
        consumer = self.consumers.get(consumer_id)
        if consumer is None or consumer.anode is None:
            return None
        return consumer.anode.id

    def update(self) -> tuple[list[str], TreeCacheCreateResponse]:
        """MCAD's `UpdateTree`: rebuild the tree from the cache and force every consumer back.

        A consumer keeps its allocated node if that node still exists (renames followed) and
        its group is still a leaf below it; otherwise it goes to its group node (even one that
        is now internal), or to the root if its group is gone. Nothing is evicted because a
        quota shrank. Only a tree without a root leaves consumers unallocated; their IDs are
        returned. Consumers are placed in their old charge order, so an update does not
        reshuffle who is taken first later.
        """
        self.commit()
        old_order = {node_id: i for i, node_id in enumerate(self.tree.nodes)}
        tree, response = self.cache.create_tree()
        unallocated: list[str] = []
        movers = sorted(
            self.consumers.values(),
            key=lambda c: (old_order.get(c.anode.id, -1) if c.anode else -1, c.seq),
        )
        for consumer in movers:
            target = self._new_place(tree, consumer)
            consumer.anode = None
            consumer.resize(tree.resource_names)
            if target is None or not tree.force_allocate(consumer, target):
                unallocated.append(consumer.id)
        tree.journal.commit()
        self.tree = tree
        for consumer_id in unallocated:
            del self.consumers[consumer_id]
        if unallocated or not response.is_clean():
            log.warning("quota_tree_updated", tree=self.name, unallocated=unallocated,
                        root=response.root_node_name, dangling=list(response.dangling_node_names))
        return sorted(unallocated), response

    def _new_place(self, tree: QuotaTree, consumer: Consumer) -> str | None:
        renamed_group = self.cache.renamed_node(consumer.group_id)
        if renamed_group:
            consumer.group_id = renamed_group
        if consumer.group_id not in tree.nodes:
            return tree.root.id if tree.root is not None else None
        if consumer.anode is not None:
            anode_id = self.cache.renamed_node(consumer.anode.id) or consumer.anode.id
            anode = tree.nodes.get(anode_id)
            if anode is not None and tree.has_leaf(anode, consumer.group_id):
                return anode_id
        return consumer.group_id

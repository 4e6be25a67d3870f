"""Forests: one consumer allocated on several trees together, or on none of them.

MCAD's `ForestController` allocates tree by tree; on a failure it deallocates the consumer from
the trees already done and re-allocates the consumers it preempted there with the normal
algorithm, which need not put them back where they were. Here the journals of all the forest's
trees are rolled back instead: a failed forest allocation leaves every tree exactly as it was.
"""

from __future__ import annotations

from collections.abc import Sequence

from quotactor.quotatree.cache import TreeCacheCreateResponse
from quotactor.quotatree.consumer import Consumer
from quotactor.quotatree.consumer_info import ConsumerTreeSpec
from quotactor.quotatree.controller import TreeController, Trial
from quotactor.quotatree.response import AllocationResponse

__all__ = ["ForestController", "Target"]

Target = tuple[TreeController, ConsumerTreeSpec]


class ForestController:
    """A named set of tree controllers (shared with the manager's single-tree view)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.controllers: dict[str, TreeController] = {}
        self.pending: Trial | None = None

    def tree_names(self) -> list[str]:
        return sorted(self.controllers)

    def ordered(self) -> list[TreeController]:
        return [self.controllers[name] for name in sorted(self.controllers)]

    def is_allocated(self, consumer_id: str) -> bool:
        """Allocated on every tree of the forest (False for a forest without trees)."""
        return bool(self.controllers) and all(
            consumer_id in ctl.consumers for ctl in self.controllers.values()
        )

    def rollback(self) -> None:
        for ctl in self.controllers.values():
            ctl.rollback()

    def allocate(self, consumer_id: str, targets: Sequence[Target]) -> AllocationResponse:
        """Normal allocation on every target tree (in name order), or on none.

        A consumer preempted on one tree is deallocated from the later trees before the
        consumer is allocated there (that frees room, as in MCAD) and, at the end, from every
        tree of the forest, so no preempted consumer stays half allocated.
        """
        victims: dict[str, None] = {}
        for ctl, spec in targets:
            if not spec.group_id:
                self.rollback()
                return AllocationResponse.refused(
                    consumer_id, f"No quota designations provided for '{ctl.name}'"
                )
            for victim in victims:
                ctl.deallocate(victim)
            consumer = Consumer.from_spec(consumer_id, spec, ctl.tree.resource_names)
            response, preempted = ctl.allocate(consumer)
            if not response.allocated:
                self.rollback()
                return response
            victims.update(dict.fromkeys(preempted))
        for ctl in self.ordered():
            for victim in victims:
                ctl.deallocate(victim)
        return AllocationResponse(consumer_id, True, "", frozenset(victims))

    def force_allocate(self, consumer_id: str, targets: Sequence[Target]) -> AllocationResponse:
        """Maintenance mode: force the consumer at its group node on every target tree, or,
        if some group node does not exist, on none (MCAD keeps a partial allocation)."""
        for ctl, spec in targets:
            consumer = Consumer.from_spec(consumer_id, spec, ctl.tree.resource_names)
            response = ctl.force_allocate(consumer, spec.group_id)
            if not response.allocated:
                self.rollback()
                return response
        return AllocationResponse(consumer_id, True)

    def deallocate(self, consumer_id: str) -> bool:
        """Deallocate from every tree; True only if it was allocated on each."""
        results = [ctl.deallocate(consumer_id) for ctl in self.ordered()]
        return all(results)

    def update(self) -> tuple[list[str], dict[str, TreeCacheCreateResponse]]:
        """Update every tree from its cache; a consumer left unallocated on any tree is
        deallocated from all of them."""
        unallocated: set[str] = set()
        responses: dict[str, TreeCacheCreateResponse] = {}
        for ctl in self.ordered():
            ids, responses[ctl.name] = ctl.update()
            unallocated.update(ids)
        for ctl in self.ordered():
            for consumer_id in sorted(unallocated):
                ctl.deallocate(consumer_id)
            ctl.commit()
        return sorted(unallocated), responses

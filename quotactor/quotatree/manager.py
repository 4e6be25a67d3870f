"""`QuotaManager`: MCAD's quota `Manager` in snake_case, single-threaded.

Trees, forests and consumer specs live here; every call runs to completion before the next
(use `SharedQuotaManager` to share one between threads). Unknown tree, forest or consumer
names raise `QuotaTreeError`; refusals of a request come back as `AllocationResponse`s.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

import structlog

from quotactor.quotatree.cache import TreeCache, TreeCacheCreateResponse
from quotactor.quotatree.consumer import Consumer
from quotactor.quotatree.consumer_info import ConsumerInfo
from quotactor.quotatree.controller import TreeController, Trial
from quotactor.quotatree.errors import QuotaTreeError
from quotactor.quotatree.forest import ForestController, Target
from quotactor.quotatree.jsondoc import JsonSource
from quotactor.quotatree.mode import Mode
from quotactor.quotatree.response import AllocationResponse
from quotactor.quotatree.spec import parse_tree
from quotactor.quotatree.topology import check_topology
from quotactor.quotatree.views import dump_tree, tree_state

__all__ = ["QuotaManager", "UpdateAllResult"]

log = structlog.get_logger()


class UpdateAllResult(NamedTuple):
    """What `update_all` did: unallocated consumer IDs and cache responses, for the trees that
    belong to no forest and for each forest (by tree)."""

    tree_unallocated: dict[str, list[str]]
    tree_responses: dict[str, TreeCacheCreateResponse]
    forest_unallocated: dict[str, list[str]]
    forest_responses: dict[str, dict[str, TreeCacheCreateResponse]]


class QuotaManager:
    """Hierarchical quota trees and forests with MCAD's allocation semantics."""

    def __init__(self) -> None:
        self._mode = Mode.MAINTENANCE
        self._trees: dict[str, TreeController] = {}
        self._forests: dict[str, ForestController] = {}
        self._tree_forest: dict[str, str] = {}
        self._infos: dict[str, ConsumerInfo] = {}

    # -- mode -----------------------------------------------------------------------------

    def mode(self) -> Mode:
        return self._mode

    def set_mode(self, mode: Mode) -> bool:
        """Switch between MAINTENANCE (forced allocation at the group node) and NORMAL."""
        if not isinstance(mode, Mode):
            raise QuotaTreeError(f"not a mode: {mode!r}")
        self._mode = mode
        return True

    def mode_string(self) -> str:
        return self._mode.describe()

    # -- trees ----------------------------------------------------------------------------

    def add_tree_by_name(self, tree_name: str) -> str:
        """An empty tree (no nodes yet): fill its `tree_cache`, then `update_tree`."""
        self._check_new_tree(tree_name)
        self._trees[tree_name] = TreeController(TreeCache(tree_name))
        return tree_name

    def add_tree_from_json(self, source: JsonSource) -> str:
        """Add a tree from MCAD's QuotaTree JSON and return its name.

        The spec must be a proper tree: one root, known parents, no cycles (MCAD would accept
        the rest with a warning and silently drop nodes).
        """
        spec = parse_tree(source)
        self._check_new_tree(spec.name)
        check_topology(spec.name, spec.nodes)
        self._trees[spec.name] = TreeController(TreeCache.from_spec(spec))
        return spec.name

    def delete_tree(self, tree_name: str) -> None:
        """Remove a tree that has no consumers allocated. As in MCAD, a forest holding the
        tree keeps it (detach it with `delete_tree_from_forest`)."""
        ctl = self._tree(tree_name)
        if ctl.consumers:
            raise QuotaTreeError(f"consumer(s) allocated in tree {tree_name}")
        del self._trees[tree_name]

    def tree_names(self) -> list[str]:
        return sorted(self._trees)

    def tree_cache(self, tree_name: str) -> TreeCache:
        """The tree's editable cache; edits take effect at `update_tree`."""
        return self._tree(tree_name).cache

    def update_tree(self, tree_name: str) -> tuple[list[str], TreeCacheCreateResponse]:
        """Rebuild the tree from its cache, keeping its consumers (see `TreeController.update`);
        returns the IDs left unallocated (only when the new tree is empty) and the response."""
        return self._tree(tree_name).update()

    # -- consumer specs -------------------------------------------------------------------

    def add_consumer(self, info: ConsumerInfo) -> bool:
        if not isinstance(info, ConsumerInfo):
            raise QuotaTreeError(f"not a ConsumerInfo: {info!r}")
        if info.id in self._infos:
            raise QuotaTreeError(f"consumer {info.id} already exists")
        self._infos[info.id] = info
        return True

    def remove_consumer(self, consumer_id: str) -> bool:
        """Forget a consumer's spec; like MCAD this does not deallocate it anywhere."""
        self._info(consumer_id)
        del self._infos[consumer_id]
        return True

    def consumer_ids(self) -> list[str]:
        return sorted(self._infos)

    def consumer_info(self, consumer_id: str) -> ConsumerInfo:
        return self._info(consumer_id)

    # -- single-tree allocation -------------------------------------------------------------

    def allocate(self, tree_name: str, consumer_id: str) -> AllocationResponse:
        """NORMAL: MCAD's allocation. MAINTENANCE: forced at the consumer's group node."""
        ctl, consumer = self._prepare(tree_name, consumer_id)
        if isinstance(consumer, AllocationResponse):
            return consumer
        ctl.commit()
        response = self._allocate_on(ctl, consumer)
        ctl.commit()
        return response

    def try_allocate(self, tree_name: str, consumer_id: str) -> AllocationResponse:
        """Allocate so that `undo_allocate` can take it back, until the tree changes again.

        Only in NORMAL mode. After a try that was refused because the consumer's group is not
        a leaf, undo succeeds and changes nothing (MCAD empties its consumer map there).
        """
        ctl, consumer = self._prepare(tree_name, consumer_id)
        if isinstance(consumer, AllocationResponse):
            return consumer
        if self._mode is not Mode.NORMAL:
            return AllocationResponse.refused(consumer_id, "manager is not in normal mode")
        ctl.commit()
        if consumer.group_id not in ctl.tree.leaves:
            response = AllocationResponse.refused(consumer_id, _snapshot_failure(ctl))
        else:
            response = self._allocate_on(ctl, consumer)
        ctl.pending = Trial(consumer_id, None, (ctl,))
        return response

    def undo_allocate(self, tree_name: str, consumer_id: str) -> bool:
        """Undo the try of `consumer_id` if nothing touched the tree since; False otherwise
        (a second undo is a no-op that returns False)."""
        ctl = self._tree(tree_name)
        self._info(consumer_id)
        trial = ctl.pending
        if trial is None or trial.forest is not None or trial.consumer_id != consumer_id:
            return False
        ctl.rollback()
        return True

    def deallocate(self, tree_name: str, consumer_id: str) -> bool:
        ctl = self._tree(tree_name)
        ctl.commit()
        done = ctl.deallocate(consumer_id)
        ctl.commit()
        return done

    def is_allocated(self, tree_name: str, consumer_id: str) -> bool:
        return consumer_id in self._tree(tree_name).consumers

    def allocated_node(self, tree_name: str, consumer_id: str) -> str | None:
        """The node the consumer is charged at (its aNode), None if it is not allocated."""
        return self._tree(tree_name).allocated_node(consumer_id)

    # -- forests ----------------------------------------------------------------------------

    def add_forest(self, forest_name: str) -> None:
        if not isinstance(forest_name, str) or not forest_name:
            raise QuotaTreeError("invalid forest name: must be a non-empty string")
        if forest_name in self._forests:
            raise QuotaTreeError(f"duplicate forest name {forest_name}")
        self._forests[forest_name] = ForestController(forest_name)

    def delete_forest(self, forest_name: str) -> None:
        """Remove a forest; its trees stay."""
        forest = self._forests.get(forest_name)
        if forest is None:
            raise QuotaTreeError(f"forest {forest_name} does not exist")
        for tree_name in forest.tree_names():
            if self._tree_forest.get(tree_name) == forest_name:
                del self._tree_forest[tree_name]
        del self._forests[forest_name]

    def add_tree_to_forest(self, forest_name: str, tree_name: str) -> None:
        forest = self._forests.get(forest_name)
        if forest is None:
            raise QuotaTreeError(f"unknown forest name {forest_name}")
        ctl = self._trees.get(tree_name)
        if ctl is None:
            raise QuotaTreeError(f"unknown tree name {tree_name}")
        forest.controllers[tree_name] = ctl
        self._tree_forest[tree_name] = forest_name

    def delete_tree_from_forest(self, forest_name: str, tree_name: str) -> None:
        forest = self._forests.get(forest_name)
        if forest is None or self._tree_forest.get(tree_name) != forest_name:
            raise QuotaTreeError(f"forest {forest_name} does not include tree {tree_name}")
        del self._tree_forest[tree_name]
        forest.controllers.pop(tree_name, None)

    def forest_names(self) -> list[str]:
        return sorted(self._forests)

    def forest_tree_names(self) -> dict[str, list[str]]:
        return {name: forest.tree_names() for name, forest in sorted(self._forests.items())}

    def allocate_forest(self, forest_name: str, consumer_id: str) -> AllocationResponse:
        """Allocate on every tree that is both in the forest and in the consumer's spec, or on
        none (MCAD panics on a spec tree outside the forest; this uses the intersection)."""
        forest, targets, refusal = self._prepare_forest(forest_name, consumer_id)
        if refusal is not None:
            return refusal
        self._commit(forest.controllers.values())
        response = self._allocate_forest_on(forest, consumer_id, targets)
        self._commit(forest.controllers.values())
        return response

    def try_allocate_forest(self, forest_name: str, consumer_id: str) -> AllocationResponse:
        """`allocate_forest` that `undo_allocate_forest` can take back. In MAINTENANCE mode it
        is a forced allocation, as in MCAD, but one that can be undone too."""
        forest, targets, refusal = self._prepare_forest(forest_name, consumer_id)
        if refusal is not None:
            return refusal
        self._commit(forest.controllers.values())
        bad = next((ctl for ctl, spec in targets if spec.group_id not in ctl.tree.leaves),
                   None)
        if self._mode is Mode.NORMAL and bad is not None:
            response = AllocationResponse.refused(consumer_id, _snapshot_failure(bad))
        else:
            response = self._allocate_forest_on(forest, consumer_id, targets)
        trial = Trial(consumer_id, forest_name, tuple(forest.ordered()))
        for ctl in trial.controllers:
            ctl.pending = trial
        forest.pending = trial
        return response

    def undo_allocate_forest(self, forest_name: str, consumer_id: str) -> bool:
        """Undo the forest try of `consumer_id` on all its trees, if none changed since."""
        forest = self._forest(forest_name)
        self._info(consumer_id)
        trial = forest.pending
        forest.pending = None
        if trial is None or trial.consumer_id != consumer_id or any(
            ctl.pending is not trial for ctl in trial.controllers
        ):
            return False
        for ctl in trial.controllers:
            ctl.rollback()
        return True

    def deallocate_forest(self, forest_name: str, consumer_id: str) -> bool:
        """Deallocate from every tree of the forest; True only if it was allocated on each."""
        forest = self._forest(forest_name)
        self._commit(forest.controllers.values())
        done = forest.deallocate(consumer_id)
        self._commit(forest.controllers.values())
        return done

    def is_allocated_forest(self, forest_name: str, consumer_id: str) -> bool:
        """Allocated on every tree of the forest (MCAD's meaning: a consumer whose spec names
        only some of the trees is never allocated on the forest)."""
        return self._forest(forest_name).is_allocated(consumer_id)

    def update_forest(
        self, forest_name: str
    ) -> tuple[list[str], dict[str, TreeCacheCreateResponse]]:
        """Update every tree of the forest; consumers left unallocated on one leave all."""
        forest = self._forest(forest_name)
        forest.pending = None
        return forest.update()

    def update_all(self) -> UpdateAllResult:
        """Update every tree that is in no forest, then every forest (MCAD's deadlocks)."""
        tree_ids: dict[str, list[str]] = {}
        tree_responses: dict[str, TreeCacheCreateResponse] = {}
        for name in self.tree_names():
            if name not in self._tree_forest:
                tree_ids[name], tree_responses[name] = self.update_tree(name)
        forest_ids: dict[str, list[str]] = {}
        forest_responses: dict[str, dict[str, TreeCacheCreateResponse]] = {}
        for name in self.forest_names():
            forest_ids[name], forest_responses[name] = self.update_forest(name)
        return UpdateAllResult(tree_ids, tree_responses, forest_ids, forest_responses)

    # -- views ------------------------------------------------------------------------------

    def tree_state(self, tree_name: str) -> dict[str, dict[str, Any]]:
        """`{node: {"parent", "hard", "quota", "allocated", "consumers"}}` (JSON-ready)."""
        return tree_state(self._tree(tree_name).tree)

    def dump(self, tree_name: str) -> str:
        """MCAD's text dump of the tree."""
        return dump_tree(self._tree(tree_name).tree)

    # -- internals --------------------------------------------------------------------------

    def _check_new_tree(self, tree_name: str) -> None:
        if not isinstance(tree_name, str) or not tree_name:
            raise QuotaTreeError("invalid tree name: must be a non-empty string")
        if tree_name in self._trees:
            raise QuotaTreeError(f"tree {tree_name} already exists; delete first")

    def _tree(self, tree_name: str) -> TreeController:
        ctl = self._trees.get(tree_name)
        if ctl is None:
            raise QuotaTreeError(f"invalid tree name {tree_name}")
        return ctl

    def _forest(self, forest_name: str) -> ForestController:
        forest = self._forests.get(forest_name)
        if forest is None:
            raise QuotaTreeError(f"invalid forest name {forest_name}")
        return forest

    def _info(self, consumer_id: str) -> ConsumerInfo:
        info = self._infos.get(consumer_id)
        if info is None:
            raise QuotaTreeError(f"consumer {consumer_id} does not exist, create and add first")
        return info

    @staticmethod
    def _commit(controllers: Iterable[TreeController]) -> None:
        for ctl in controllers:
            ctl.commit()

    def _prepare(self, tree_name: str,
                 consumer_id: str) -> tuple[TreeController, Consumer | AllocationResponse]:
        """The controller and the tree consumer for a single-tree allocation, or a refusal."""
        ctl = self._tree(tree_name)
        spec = self._info(consumer_id).tree_spec(tree_name)
        if spec is None:
            return ctl, AllocationResponse.refused(
                consumer_id, f"failure creating consumer {consumer_id} on tree {tree_name}"
            )
        if consumer_id in ctl.consumers:
            return ctl, AllocationResponse.refused(
                consumer_id, f"consumer {consumer_id} already allocated on tree {tree_name}"
            )
        return ctl, Consumer.from_spec(consumer_id, spec, ctl.tree.resource_names)

    def _allocate_on(self, ctl: TreeController, consumer: Consumer) -> AllocationResponse:
        if self._mode is Mode.MAINTENANCE:
            return ctl.force_allocate(consumer, consumer.group_id)
        if ctl.cache.resource_names() != ctl.tree.resource_names:
            # MCAD sizes the request by the cache's resource names, so a resource change that
            # is not applied yet (no update_tree) makes every normal allocation fail.
            return AllocationResponse.refused(consumer.id, ctl.failure_message())
        return ctl.allocate(consumer)[0]

    def _prepare_forest(
        self, forest_name: str, consumer_id: str
    ) -> tuple[ForestController, list[Target], AllocationResponse | None]:
        forest = self._forest(forest_name)
        info = self._info(consumer_id)
        targets: list[Target] = []
        for ctl in forest.ordered():
            spec = info.tree_spec(ctl.name)
            if spec is not None:
                targets.append((ctl, spec))
        refusal = None
        if not targets:
            refusal = AllocationResponse.refused(
                consumer_id, f"consumer {consumer_id} requests no tree of forest {forest_name}"
            )
        elif any(consumer_id in ctl.consumers for ctl, _ in targets):
            refusal = AllocationResponse.refused(
                consumer_id, f"consumer {consumer_id} already allocated on forest {forest_name}"
            )
        return forest, targets, refusal

    def _allocate_forest_on(self, forest: ForestController, consumer_id: str,
                            targets: list[Target]) -> AllocationResponse:
        if self._mode is Mode.MAINTENANCE:
            return forest.force_allocate(consumer_id, targets)
        return forest.allocate(consumer_id, targets)


def _snapshot_failure(ctl: TreeController) -> str:
    return f"Failed to take a state snapshot of tree '{ctl.name}'"

"""A `QuotaManager` served by an actor of the package's runtime, and the blocking facade.

MCAD's manager takes one mutex per call, so a try/undo pair from one caller can interleave
with another caller's calls; its README asks callers to hold their own lock around the pair.
Here one actor owns the manager and handles one message at a time, so every call (a forest
allocation across several trees included) is atomic. For try/undo, `trial` runs the try, the
caller's decision and, if the decision is no, the undo inside one message: no caller locks.

The actor is one of `quotactor.actors.runtime`, like the trackers (see `quotactor.actors.served`
for how it is asked: caller's timeout, main-thread relay, one exception boundary). It holds the
manager under a `Checkpoint`, so a step that raises inside a handler leaves every tree, forest
and consumer as before the message; the caller gets the `QuotaTreeError`, or an
`OperationFailed` for anything else. Each facade stops exactly the actor it started.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

from quotactor.actors.checkpoint import Checkpoint
from quotactor.actors.runtime import Actor, WorkerPool
from quotactor.actors.served import Change, Read, Served
from quotactor.quotatree.cache import TreeCache, TreeCacheCreateResponse
from quotactor.quotatree.consumer_info import ConsumerInfo
from quotactor.quotatree.errors import QuotaTreeError
from quotactor.quotatree.jsondoc import JsonSource
from quotactor.quotatree.manager import QuotaManager, UpdateAllResult
from quotactor.quotatree.mode import Mode
from quotactor.quotatree.response import AllocationResponse
from quotactor.quotatree.spec import NodeSpec

__all__ = ["QuotaManagerActor", "RemoteTreeCache", "SharedQuotaManager", "TrialOutcome"]

DEFAULT_TIMEOUT = 30.0

Accept = Callable[[AllocationResponse], bool]
P = ParamSpec("P")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class TrialOutcome:
    """The response of a try, and whether it was kept (accepted) or undone."""

    response: AllocationResponse
    kept: bool


@dataclass(frozen=True, slots=True)
class CacheEdit:
    """Run a `TreeCache` method on the cache of `tree_name`, inside the actor (the cache itself
    never leaves it); a change of the manager."""

    tree_name: str
    method: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: Mapping[str, Any]

    def __call__(self, manager: QuotaManager) -> Any:
        return self.method(manager.tree_cache(self.tree_name), *self.args, **self.kwargs)


@dataclass(frozen=True, slots=True)
class Trial:
    """Try, ask `accept`, keep or undo: one message (see `SharedQuotaManager.trial`)."""

    forest: bool
    name: str
    consumer_id: str
    accept: Accept

    def __call__(self, manager: QuotaManager) -> TrialOutcome:
        if self.forest:
            response = manager.try_allocate_forest(self.name, self.consumer_id)
        else:
            response = manager.try_allocate(self.name, self.consumer_id)
        kept = False
        if response.allocated:
            try:
                kept = bool(self.accept(response))
            finally:
                if not kept:
                    self._undo(manager)
        return TrialOutcome(response, kept)

    def decided(self, outcome: TrialOutcome) -> Trial:
        """This trial with the decision it got, to replay without asking the caller again."""
        return Trial(self.forest, self.name, self.consumer_id, lambda _: outcome.kept)

    def _undo(self, manager: QuotaManager) -> None:
        if self.forest:
            manager.undo_allocate_forest(self.name, self.consumer_id)
        else:
            manager.undo_allocate(self.name, self.consumer_id)


QuotaTreeMessage = Read[QuotaManager] | Change[QuotaManager] | CacheEdit | Trial


class QuotaManagerActor(Actor[QuotaTreeMessage]):
    """Owns one `QuotaManager`; every message is one manager operation."""

    def __init__(self, pool: WorkerPool, manager: QuotaManager | None = None) -> None:
        # the first copy may fail (a state that cannot be copied): before the actor counts
        self._state = Checkpoint(manager if manager is not None else QuotaManager(),
                                 (QuotaTreeError,))
        super().__init__(pool)

    @property
    def rebuilds(self) -> int:
        """How often a failure inside a handler made the actor rebuild its manager."""
        return self._state.rebuilds

    def handle(self, message: QuotaTreeMessage) -> Any:
        if isinstance(message, Read):
            return self._state.read(message)
        if isinstance(message, Change | CacheEdit):
            return self._state.change(message)
        if isinstance(message, Trial):
            return self._state.change(message, message.decided)
        raise TypeError(f"{type(self).__name__} cannot handle {message!r}")


class SharedQuotaManager:
    """A `QuotaManager` that any number of threads may call at once.

    Each method blocks until the actor has done it (at most `timeout` seconds, which may be
    changed at any time) and returns the manager's result; its exceptions (`QuotaTreeError`)
    are raised in the caller.
    """

    def __init__(self, served: Served[QuotaTreeMessage],
                 timeout: float = DEFAULT_TIMEOUT) -> None:
        self._served = served
        self.timeout = timeout

    @classmethod
    def start(cls, manager: QuotaManager | None = None,
              timeout: float = DEFAULT_TIMEOUT) -> SharedQuotaManager:
        """Start an actor serving `manager` (a new one by default). The actor owns it from
        now on: keep using it only through the returned facade."""
        served: Served[QuotaTreeMessage] = Served(
            "quotatree", lambda pool: QuotaManagerActor(pool, manager))
        return cls(served, timeout)

    def stop(self) -> None:
        """Stop the actor this facade started, and its threads; safe to call twice."""
        self._served.stop(self.timeout)

    @property
    def running(self) -> bool:
        return self._served.running

    def __enter__(self) -> SharedQuotaManager:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def _ask(self, message: QuotaTreeMessage) -> Any:
        return self._served.ask(message, self.timeout)

    def _read(self, method: Callable[Concatenate[QuotaManager, P], R], *args: P.args,
              **kwargs: P.kwargs) -> R:
        """`QuotaManager.<method>(*args)` in the actor; typed by the manager's method."""
        return cast(R, self._ask(Read(method, args, kwargs)))

    def _call(self, method: Callable[Concatenate[QuotaManager, P], R], *args: P.args,
              **kwargs: P.kwargs) -> R:
        """`_read` for a method that changes the manager."""
        return cast(R, self._ask(Change(method, args, kwargs)))

    # -- atomic try/undo --------------------------------------------------------------------

    def trial(self, tree_name: str, consumer_id: str, accept: Accept) -> TrialOutcome:
        """Try to allocate; keep it if `accept(response)` says so, undo it otherwise, all in
        one step no other caller can interleave with. `accept` runs on the actor's thread:
        it must be quick and must not call this manager."""
        outcome: TrialOutcome = self._ask(Trial(False, tree_name, consumer_id, accept))
        return outcome

    def trial_forest(self, forest_name: str, consumer_id: str, accept: Accept) -> TrialOutcome:
        """`trial` on a forest."""
        outcome: TrialOutcome = self._ask(Trial(True, forest_name, consumer_id, accept))
        return outcome

    # -- the manager's surface --------------------------------------------------------------

    def mode(self) -> Mode:
        return self._read(QuotaManager.mode)

    def set_mode(self, mode: Mode) -> bool:
        return self._call(QuotaManager.set_mode, mode)

    def mode_string(self) -> str:
        return self._read(QuotaManager.mode_string)

    def add_tree_by_name(self, tree_name: str) -> str:
        return self._call(QuotaManager.add_tree_by_name, tree_name)

    def add_tree_from_json(self, source: JsonSource) -> str:
        return self._call(QuotaManager.add_tree_from_json, copy.deepcopy(source))

    def delete_tree(self, tree_name: str) -> None:
        self._call(QuotaManager.delete_tree, tree_name)

    def tree_names(self) -> list[str]:
        return self._read(QuotaManager.tree_names)

    def tree_cache(self, tree_name: str) -> RemoteTreeCache:
        """A handle whose edits are applied by the actor (the cache itself stays there)."""
        cache = RemoteTreeCache(self, tree_name)
        cache.node_names()
        return cache

    def update_tree(self, tree_name: str) -> tuple[list[str], TreeCacheCreateResponse]:
        return self._call(QuotaManager.update_tree, tree_name)

    def add_consumer(self, info: ConsumerInfo) -> bool:
        return self._call(QuotaManager.add_consumer, info)

    def remove_consumer(self, consumer_id: str) -> bool:
        return self._call(QuotaManager.remove_consumer, consumer_id)

    def consumer_ids(self) -> list[str]:
        return self._read(QuotaManager.consumer_ids)

    def consumer_info(self, consumer_id: str) -> ConsumerInfo:
        return self._read(QuotaManager.consumer_info, consumer_id)

    def allocate(self, tree_name: str, consumer_id: str) -> AllocationResponse:
        return self._call(QuotaManager.allocate, tree_name, consumer_id)

    def try_allocate(self, tree_name: str, consumer_id: str) -> AllocationResponse:
        """Prefer `trial`: another caller's call in between makes the undo fail."""
        return self._call(QuotaManager.try_allocate, tree_name, consumer_id)

    def undo_allocate(self, tree_name: str, consumer_id: str) -> bool:
        return self._call(QuotaManager.undo_allocate, tree_name, consumer_id)

    def deallocate(self, tree_name: str, consumer_id: str) -> bool:
        return self._call(QuotaManager.deallocate, tree_name, consumer_id)

    def is_allocated(self, tree_name: str, consumer_id: str) -> bool:
        return self._read(QuotaManager.is_allocated, tree_name, consumer_id)

    def allocated_node(self, tree_name: str, consumer_id: str) -> str | None:
        return self._read(QuotaManager.allocated_node, tree_name, consumer_id)

    def add_forest(self, forest_name: str) -> None:
        self._call(QuotaManager.add_forest, forest_name)

    def delete_forest(self, forest_name: str) -> None:
        self._call(QuotaManager.delete_forest, forest_name)

    def add_tree_to_forest(self, forest_name: str, tree_name: str) -> None:
        self._call(QuotaManager.add_tree_to_forest, forest_name, tree_name)

    def delete_tree_from_forest(self, forest_name: str, tree_name: str) -> None:
        self._call(QuotaManager.delete_tree_from_forest, forest_name, tree_name)

    def forest_names(self) -> list[str]:
        return self._read(QuotaManager.forest_names)

    def forest_tree_names(self) -> dict[str, list[str]]:
        return self._read(QuotaManager.forest_tree_names)

    def allocate_forest(self, forest_name: str, consumer_id: str) -> AllocationResponse:
        return self._call(QuotaManager.allocate_forest, forest_name, consumer_id)

    def try_allocate_forest(self, forest_name: str, consumer_id: str) -> AllocationResponse:
        """Prefer `trial_forest`: another caller's call in between makes the undo fail."""
        return self._call(QuotaManager.try_allocate_forest, forest_name, consumer_id)

    def undo_allocate_forest(self, forest_name: str, consumer_id: str) -> bool:
        return self._call(QuotaManager.undo_allocate_forest, forest_name, consumer_id)

    def deallocate_forest(self, forest_name: str, consumer_id: str) -> bool:
        return self._call(QuotaManager.deallocate_forest, forest_name, consumer_id)

    def is_allocated_forest(self, forest_name: str, consumer_id: str) -> bool:
        return self._read(QuotaManager.is_allocated_forest, forest_name, consumer_id)

    def update_forest(
        self, forest_name: str
    ) -> tuple[list[str], dict[str, TreeCacheCreateResponse]]:
        return self._call(QuotaManager.update_forest, forest_name)

    def update_all(self) -> UpdateAllResult:
        return self._call(QuotaManager.update_all)

    def tree_state(self, tree_name: str) -> dict[str, dict[str, Any]]:
        return self._read(QuotaManager.tree_state, tree_name)

    def dump(self, tree_name: str) -> str:
        return self._read(QuotaManager.dump, tree_name)


class RemoteTreeCache:
    """The `TreeCache` API of one tree, applied inside the actor."""

    def __init__(self, manager: SharedQuotaManager, tree_name: str) -> None:
        self._manager = manager
        self.tree_name = tree_name

    def _edit(self, method: Callable[Concatenate[TreeCache, P], R], *args: P.args,
              **kwargs: P.kwargs) -> R:
        """Run `TreeCache.<method>(*args)` on this tree's cache in the actor."""
        return cast(R, self._manager._ask(CacheEdit(
            self.tree_name, method, copy.deepcopy(args), copy.deepcopy(kwargs))))

    def resource_names(self) -> tuple[str, ...]:
        return self._edit(TreeCache.resource_names)

    def add_resource_name(self, name: str) -> None:
        self._edit(TreeCache.add_resource_name, name)

    def add_resource_names(self, names: Iterable[str]) -> None:
        self._edit(TreeCache.add_resource_names, list(names))

    def delete_resource_name(self, name: str) -> None:
        self._edit(TreeCache.delete_resource_name, name)

    def add_tree_info_from_json(self, source: JsonSource) -> None:
        self._edit(TreeCache.add_tree_info_from_json, source)

    def node_names(self) -> list[str]:
        return self._edit(TreeCache.node_names)

    def node_spec(self, name: str) -> NodeSpec | None:
        return self._edit(TreeCache.node_spec, name)

    def add_node_spec(self, name: str, spec: Mapping[str, Any] | NodeSpec) -> None:
        self._edit(TreeCache.add_node_spec, name, spec)

    def add_node_specs(self, specs: Mapping[str, Mapping[str, Any] | NodeSpec]) -> None:
        self._edit(TreeCache.add_node_specs, dict(specs))

    def add_node_specs_from_json(self, source: JsonSource) -> None:
        self._edit(TreeCache.add_node_specs_from_json, source)

    def delete_node(self, name: str) -> None:
        self._edit(TreeCache.delete_node, name)

    def rename_node(self, old: str, new: str) -> None:
        self._edit(TreeCache.rename_node, old, new)

    def renamed_node(self, name: str) -> str | None:
        return self._edit(TreeCache.renamed_node, name)

    def clear(self) -> None:
        self._edit(TreeCache.clear)

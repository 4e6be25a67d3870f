"""A `QuotaManager` served by a pykka actor, and the blocking facade callers use.

MCAD's manager takes one mutex per call, so a try/undo pair from one caller can interleave
with another caller's calls; its README asks callers to hold their own lock around the pair.
Here one actor owns the manager and handles one message at a time, so every call (a forest
allocation across several trees included) is atomic. For try/undo, `trial` runs the try, the
caller's decision and, if the decision is no, the undo inside one message: no caller locks.

Every message is an `ask` with a timeout (a `tell` whose handler raises would kill the actor),
the actor runs on a daemon thread, and each facade stops exactly the actor it started.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

import pykka

from quotactor.actors.boundary import ask, translated
from quotactor.quotatree._cache import TreeCache, TreeCacheCreateResponse
from quotactor.quotatree._consumer_info import ConsumerInfo
from quotactor.quotatree._jsondoc import JsonSource
from quotactor.quotatree._manager import QuotaManager, UpdateAllResult
from quotactor.quotatree._mode import Mode
from quotactor.quotatree._response import AllocationResponse
from quotactor.quotatree._spec import NodeSpec

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
class _Call:
    """Run `function(manager, *args, **kwargs)`: a `QuotaManager` method, passed as the function
    itself (typed where the facade builds the message), never looked up by name."""

    function: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class _CacheEdit:
    """Run a `TreeCache` method on the cache of `tree_name`, inside the actor (the cache itself
    never leaves it)."""

    tree_name: str
    function: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class _Trial:
    forest: bool
    name: str
    consumer_id: str
    accept: Accept


class QuotaManagerActor(pykka.ThreadingActor):
    """Owns one `QuotaManager`; every message is one manager operation."""

    use_daemon_thread = True

    def __init__(self, manager: QuotaManager | None = None) -> None:
        super().__init__()
        self._manager = manager if manager is not None else QuotaManager()

    def on_receive(self, message: Any) -> Any:
        if isinstance(message, _Call):
            return message.function(self._manager, *message.args, **message.kwargs)
        if isinstance(message, _CacheEdit):
            cache = self._manager.tree_cache(message.tree_name)
            return message.function(cache, *message.args, **message.kwargs)
        if isinstance(message, _Trial):
            return self._trial(message)
        raise TypeError(f"{type(self).__name__} cannot handle {message!r}")

    def _trial(self, trial: _Trial) -> TrialOutcome:
        manager = self._manager
        if trial.forest:
            response = manager.try_allocate_forest(trial.name, trial.consumer_id)
        else:
            response = manager.try_allocate(trial.name, trial.consumer_id)
        kept = False
        if response.allocated:
            try:
                kept = bool(trial.accept(response))
            finally:
                if not kept:
                    self._undo(trial)
        return TrialOutcome(response, kept)

    def _undo(self, trial: _Trial) -> None:
        if trial.forest:
            self._manager.undo_allocate_forest(trial.name, trial.consumer_id)
        else:
            self._manager.undo_allocate(trial.name, trial.consumer_id)


class SharedQuotaManager:
    """A `QuotaManager` that any number of threads may call at once.

    Each method blocks until the actor has done it (at most `timeout` seconds) and returns
    the manager's result; its exceptions (`QuotaTreeError`) are raised in the caller.
    """

    def __init__(self, ref: pykka.ActorRef[Any], timeout: float = DEFAULT_TIMEOUT) -> None:
        self._ref: pykka.ActorRef[Any] | None = ref
        self.timeout = timeout

    @classmethod
    def start(cls, manager: QuotaManager | None = None,
              timeout: float = DEFAULT_TIMEOUT) -> SharedQuotaManager:
        """Start an actor serving `manager` (a new one by default). The actor owns it from
        now on: keep using it only through the returned facade."""
        return cls(QuotaManagerActor.start(manager), timeout)

    def stop(self) -> None:
        """Stop the actor this facade started; safe to call twice."""
        ref, self._ref = self._ref, None
        if ref is not None:
            translated(lambda: ref.stop(block=True, timeout=self.timeout))

    @property
    def running(self) -> bool:
        return self._ref is not None

    def __enter__(self) -> SharedQuotaManager:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def _ask(self, message: Any) -> Any:
        """One ask through the library's exception boundary (`QuotaTreeError` passes as is)."""
        return ask(self._ref, message, self.timeout)

    def _call(self, method: Callable[Concatenate[QuotaManager, P], R], *args: P.args,
              **kwargs: P.kwargs) -> R:
        """Run `QuotaManager.<method>(*args)` in the actor; typed by the manager's method."""
        return cast(R, self._ask(_Call(method, args, kwargs)))

    # -- atomic try/undo --------------------------------------------------------------------

    def trial(self, tree_name: str, consumer_id: str, accept: Accept) -> TrialOutcome:
        """Try to allocate; keep it if `accept(response)` says so, undo it otherwise, all in
        one step no other caller can interleave with. `accept` runs on the actor's thread:
        it must be quick and must not call this manager."""
        outcome: TrialOutcome = self._ask(_Trial(False, tree_name, consumer_id, accept))
        return outcome

    def trial_forest(self, forest_name: str, consumer_id: str, accept: Accept) -> TrialOutcome:
        """`trial` on a forest."""
        outcome: TrialOutcome = self._ask(_Trial(True, forest_name, consumer_id, accept))
        return outcome

    # -- the manager's surface --------------------------------------------------------------

    def mode(self) -> Mode:
        return self._call(QuotaManager.mode)

    def set_mode(self, mode: Mode) -> bool:
        return self._call(QuotaManager.set_mode, mode)

    def mode_string(self) -> str:
        return self._call(QuotaManager.mode_string)

    def add_tree_by_name(self, tree_name: str) -> str:
        return self._call(QuotaManager.add_tree_by_name, tree_name)

    def add_tree_from_json(self, source: JsonSource) -> str:
        return self._call(QuotaManager.add_tree_from_json, source)

    def delete_tree(self, tree_name: str) -> None:
        self._call(QuotaManager.delete_tree, tree_name)

    def tree_names(self) -> list[str]:
        return self._call(QuotaManager.tree_names)

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
        return self._call(QuotaManager.consumer_ids)

    def consumer_info(self, consumer_id: str) -> ConsumerInfo:
        return self._call(QuotaManager.consumer_info, consumer_id)

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
        return self._call(QuotaManager.is_allocated, tree_name, consumer_id)

    def allocated_node(self, tree_name: str, consumer_id: str) -> str | None:
        return self._call(QuotaManager.allocated_node, tree_name, consumer_id)

    def add_forest(self, forest_name: str) -> None:
        self._call(QuotaManager.add_forest, forest_name)

    def delete_forest(self, forest_name: str) -> None:
        self._call(QuotaManager.delete_forest, forest_name)

    def add_tree_to_forest(self, forest_name: str, tree_name: str) -> None:
        self._call(QuotaManager.add_tree_to_forest, forest_name, tree_name)

    def delete_tree_from_forest(self, forest_name: str, tree_name: str) -> None:
        self._call(QuotaManager.delete_tree_from_forest, forest_name, tree_name)

    def forest_names(self) -> list[str]:
        return self._call(QuotaManager.forest_names)

    def forest_tree_names(self) -> dict[str, list[str]]:
        return self._call(QuotaManager.forest_tree_names)

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
        return self._call(QuotaManager.is_allocated_forest, forest_name, consumer_id)

    def update_forest(
        self, forest_name: str
    ) -> tuple[list[str], dict[str, TreeCacheCreateResponse]]:
        return self._call(QuotaManager.update_forest, forest_name)

    def update_all(self) -> UpdateAllResult:
        return self._call(QuotaManager.update_all)

    def tree_state(self, tree_name: str) -> dict[str, dict[str, Any]]:
        return self._call(QuotaManager.tree_state, tree_name)

    def dump(self, tree_name: str) -> str:
        return self._call(QuotaManager.dump, tree_name)


class RemoteTreeCache:
    """The `TreeCache` API of one tree, applied inside the actor."""

    def __init__(self, manager: SharedQuotaManager, tree_name: str) -> None:
        self._manager = manager
        self.tree_name = tree_name

    def _edit(self, method: Callable[Concatenate[TreeCache, P], R], *args: P.args,
              **kwargs: P.kwargs) -> R:
        """Run `TreeCache.<method>(*args)` on this tree's cache in the actor."""
        edit = _CacheEdit(self.tree_name, method, args, kwargs)
        return cast(R, self._manager._ask(edit))

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

"""Tree caches: the editable spec of a tree, applied by `update_tree`.

MCAD keeps every change to a tree (resources, node specs, renames) in a cache and builds a
fresh tree from it on `UpdateTree`; the allocation state lives in the tree, the intent in the
cache. Edits are validated when they are made (a bad one raises and changes nothing); only the
topology may be inconsistent in between, and `update_tree` reports dangling nodes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from quotactor.quotatree.errors import QuotaTreeError
from quotactor.quotatree.jsondoc import JsonSource, load_object
from quotactor.quotatree.spec import DEFAULT_RESOURCE_NAMES, NodeSpec, TreeSpec
from quotactor.quotatree.tree import QuotaTree

__all__ = ["TreeCache", "TreeCacheCreateResponse"]


@dataclass(frozen=True, slots=True)
class TreeCacheCreateResponse:
    """What building a tree from a cache found: the root (empty when there is none) and the
    nodes of the cache that are not in the tree (unknown parent, extra root, cycle)."""

    tree_name: str
    root_node_name: str
    dangling_node_names: tuple[str, ...] = ()

    def is_clean(self) -> bool:
        return bool(self.root_node_name) and not self.dangling_node_names


class TreeCache:
    """Editable specs of one tree (MCAD's `TreeCache`, snake_case)."""

    def __init__(self, tree_name: str) -> None:
        if not isinstance(tree_name, str) or not tree_name:
            raise QuotaTreeError("invalid tree name: a tree cache needs a non-empty name")
        self._tree_name = tree_name
        self._resource_names: set[str] = set()
        self._nodes: dict[str, NodeSpec] = {}
        self._renamed: dict[str, str] = {}

    @classmethod
    def from_spec(cls, spec: TreeSpec) -> TreeCache:
        cache = cls(spec.name)
        cache._resource_names = set(spec.resource_names)
        cache._nodes = dict(spec.nodes)
        return cache

    @property
    def tree_name(self) -> str:
        return self._tree_name

    # -- resources --------------------------------------------------------------------

    def resource_names(self) -> tuple[str, ...]:
        """Sorted resource names; MCAD's defaults (cpu, memory, nvidia.com/gpu) when none
        were given. Unlike MCAD, the defaults are not written into the cache, so naming a
        resource later replaces them instead of adding to them."""
        return tuple(sorted(self._resource_names)) or DEFAULT_RESOURCE_NAMES

    def add_resource_name(self, name: str) -> None:
        self.add_resource_names([name])

    def add_resource_names(self, names: Iterable[str]) -> None:
        names = list(names)
        if not all(isinstance(n, str) and n for n in names):
            raise QuotaTreeError("resource names must be non-empty strings")
        self._resource_names.update(names)

    def delete_resource_name(self, name: str) -> None:
        self._resource_names.discard(name)

    def add_tree_info_from_json(self, source: JsonSource) -> None:
        """MCAD's tree info document: `{"name": ..., "resourceNames": [...]}`. The name, if
        given, must be this cache's: a managed tree is not renamed through its cache."""
        doc = load_object(source, "tree info")
        name = doc.get("name", "")
        if name not in ("", self._tree_name):
            raise QuotaTreeError(f"tree info names tree {name!r}; this cache is {self._tree_name}")
        names = doc.get("resourceNames") or []
        if not isinstance(names, list):
            raise QuotaTreeError("tree info: resourceNames must be a list")
        self.add_resource_names(names)

    # -- nodes ------------------------------------------------------------------------

    def node_names(self) -> list[str]:
        return sorted(self._nodes)

    def node_spec(self, name: str) -> NodeSpec | None:
        return self._nodes.get(name)

    def add_node_spec(self, name: str, spec: Mapping[str, Any] | NodeSpec) -> None:
        """Add or replace a node spec (MCAD's JSON object or a `NodeSpec`)."""
        self.add_node_specs({name: spec})

    def add_node_specs(self, specs: Mapping[str, Mapping[str, Any] | NodeSpec]) -> None:
        """Add or replace several node specs; if any is invalid, none is added."""
        if not all(isinstance(name, str) and name for name in specs):
            raise QuotaTreeError("node names must be non-empty strings")
        parsed = {
            name: spec if isinstance(spec, NodeSpec) else NodeSpec.parse(name, spec)
            for name, spec in specs.items()
        }
        for name, spec in parsed.items():
            self._renamed.pop(name, None)
            self._nodes[name] = spec

    def add_node_specs_from_json(self, source: JsonSource) -> None:
        """MCAD's node specs document: `{"Root": {"parent": "nil", "quota": {...}}, ...}`."""
        self.add_node_specs(load_object(source, "node specs"))

    def delete_node(self, name: str) -> None:
        self._nodes.pop(name, None)

    def rename_node(self, old: str, new: str) -> None:
        """Rename a node, re-pointing its children; consumers follow on the next update.

        Unlike MCAD, renames chain (A->B then B->C takes consumers of A to C) and renaming
        onto an existing node is refused rather than silently replacing it.
        """
        if not old or not new or old == new:
            raise QuotaTreeError(f"invalid nodeName {old} and/or newNodeName {new}")
        if old not in self._nodes:
            raise QuotaTreeError(f"node with name {old} does not exist")
        if new in self._nodes:
            raise QuotaTreeError(f"node with name {new} already exists")
        self._nodes[new] = self._nodes.pop(old)
        for name, spec in list(self._nodes.items()):
            if spec.parent == old:
                self._nodes[name] = spec.with_parent(new)
        self._renamed.pop(new, None)
        for earlier, target in list(self._renamed.items()):
            if target == old:
                self._renamed[earlier] = new
        self._renamed[old] = new

    def renamed_node(self, name: str) -> str | None:
        """The name `name` was renamed to, if it was."""
        return self._renamed.get(name)

    def clear(self) -> None:
        """Forget resources, nodes and renames (the tree name stays)."""
        self._resource_names.clear()
        self._nodes.clear()
        self._renamed.clear()

    # -- building -----------------------------------------------------------------------

    def create_tree(self) -> tuple[QuotaTree, TreeCacheCreateResponse]:
        """A fresh tree (nothing allocated) and what was left out of it."""
        tree = QuotaTree.build(self._tree_name, self.resource_names(), self._nodes)
        dangling = tuple(name for name in sorted(self._nodes) if name not in tree.nodes)
        root = tree.root.id if tree.root is not None else ""
        return tree, TreeCacheCreateResponse(self._tree_name, root, dangling)

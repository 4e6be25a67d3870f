"""Node specs and MCAD's QuotaTree JSON.

MCAD writes `hard` and quota values as strings ("true", "10"); both spellings and plain JSON
values are accepted. Unlike MCAD, which logs a bad quota value and uses 0, a value that is not
a non-negative integer is an error: a silently zero quota starves a whole subtree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from quotactor.quotatree.errors import QuotaTreeError
from quotactor.quotatree.jsondoc import JsonSource, load_object

__all__ = [
    "DEFAULT_RESOURCE_NAMES",
    "DEFAULT_TREE_NAME",
    "NodeSpec",
    "TreeSpec",
    "parse_tree",
]

DEFAULT_TREE_NAME = "default"
DEFAULT_RESOURCE_NAMES = ("cpu", "memory", "nvidia.com/gpu")
TREE_KIND = "QuotaTree"
_ROOT_PARENTS = frozenset({"", "nil"})
_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"", "0", "f", "F", "FALSE", "false", "False"})


@dataclass(frozen=True, slots=True)
class NodeSpec:
    """One node of a tree spec: its parent (None for a root), hardness and quota by name."""

    parent: str | None
    hard: bool
    quota: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))

    def __deepcopy__(self, memo: dict[int, Any]) -> NodeSpec:
        """Frozen (its mappings are read-only views), so copies of what holds it share it."""
        return self

    @classmethod
    def parse(cls, name: str, raw: Any) -> NodeSpec:
        """MCAD's node spec object; `QuotaTreeError` when it is empty, lacks a quota or holds
        a value that is not what MCAD means by it."""
        if not isinstance(name, str) or not name:
            raise QuotaTreeError("node names must be non-empty strings")
        if not isinstance(raw, Mapping) or not raw:
            raise QuotaTreeError(f"node {name}: node spec is invalid; not added")
        quota = raw.get("quota")
        if quota is None:
            raise QuotaTreeError(f"node {name}: quota is missing; not added")
        if not isinstance(quota, Mapping):
            raise QuotaTreeError(f"node {name}: quota must be an object")
        parent = raw.get("parent", "")
        if not isinstance(parent, str):
            raise QuotaTreeError(f"node {name}: parent must be a string")
        return cls(
            parent=None if parent in _ROOT_PARENTS else parent,
            hard=_parse_hard(name, raw.get("hard", "false")),
            quota=MappingProxyType({
                str(resource): _parse_quantity(name, str(resource), value)
                for resource, value in quota.items()
            }),
        )

    def vector(self, resource_names: tuple[str, ...]) -> tuple[int, ...]:
        """The quota in the tree's resource order; a resource the spec omits is 0."""
        return tuple(self.quota.get(name, 0) for name in resource_names)

    def with_parent(self, parent: str | None) -> NodeSpec:
        return NodeSpec(parent, self.hard, self.quota)


@dataclass(frozen=True, slots=True)
class TreeSpec:
    """A whole QuotaTree document: name, resource names and node specs."""

    name: str
    resource_names: tuple[str, ...]
    nodes: Mapping[str, NodeSpec]

    def __deepcopy__(self, memo: dict[int, Any]) -> TreeSpec:
        """Frozen (its mappings are read-only views), so copies of what holds it share it."""
        return self


def parse_tree(source: JsonSource) -> TreeSpec:
    """Read MCAD's QuotaTree JSON, checking each field (not the topology; see `topology`)."""
    doc = load_object(source, "quota tree")
    kind = doc.get("kind")
    if kind != TREE_KIND:
        raise QuotaTreeError(f"invalid kind: {kind}")
    metadata = doc.get("metadata") or {}
    name = metadata.get("name", "") if isinstance(metadata, Mapping) else None
    if not isinstance(name, str) or not name:
        raise QuotaTreeError("invalid tree name: metadata.name must be a non-empty string")
    spec = doc.get("spec") or {}
    if not isinstance(spec, Mapping):
        raise QuotaTreeError(f"tree {name}: spec must be an object")
    raw_names = spec.get("resourceNames") or []
    if not isinstance(raw_names, list) or not all(
        isinstance(r, str) and r for r in raw_names
    ):
        raise QuotaTreeError(f"tree {name}: resourceNames must be a list of non-empty strings")
    raw_nodes = spec.get("nodes") or {}
    if not isinstance(raw_nodes, Mapping):
        raise QuotaTreeError(f"tree {name}: nodes must be an object")
    nodes = {node: NodeSpec.parse(node, raw) for node, raw in raw_nodes.items()}
    names = tuple(sorted(set(raw_names))) or DEFAULT_RESOURCE_NAMES
    return TreeSpec(name, names, MappingProxyType(nodes))


def _parse_hard(node: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value in _TRUE:
        return True
    if isinstance(value, str) and value in _FALSE:
        return False
    raise QuotaTreeError(f"node {node}: hard must be \"true\" or \"false\", got {value!r}")


def _parse_quantity(node: str, resource: str, value: Any) -> int:
    if isinstance(value, str):
        try:
            number = int(value.strip(), 10)
        except ValueError:
            number = -1
    elif isinstance(value, int) and not isinstance(value, bool):
        number = value
    else:
        number = -1
    if number < 0:
        raise QuotaTreeError(
            f"node {node}: quota for {resource} must be a non-negative integer, got {value!r}"
        )
    return number

"""MCAD's Consumer JSON: one consumer's requests on one or more trees."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from types import MappingProxyType
from typing import Any

from quotactor.quotatree.errors import QuotaTreeError
from quotactor.quotatree.jsondoc import JsonSource, load_object, require_int

__all__ = ["ConsumerInfo", "ConsumerTreeSpec"]

CONSUMER_KIND = "Consumer"


@dataclass(frozen=True, slots=True)
class ConsumerTreeSpec:
    """What a consumer asks of one tree: its group (leaf) node and request by resource name.

    `ctype` is MCAD's `type`: preemption only happens between consumers of the same type.
    """

    tree_name: str
    group_id: str
    request: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    priority: int = 0
    ctype: int = 0
    unpreemptable: bool = False

    def __deepcopy__(self, memo: dict[int, Any]) -> ConsumerTreeSpec:
        """Frozen (its mappings are read-only views), so copies of what holds it share it."""
        return self


@dataclass(frozen=True, slots=True)
class ConsumerInfo:
    """A consumer's specification, added to the manager once and allocated by ID.

    The per-tree entries keep their JSON order. MCAD's README sample spells the key
    `"trees:"`; like MCAD, that means no trees at all, and allocations are refused.
    """

    id: str
    trees: tuple[ConsumerTreeSpec, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise QuotaTreeError("missing consumer ID")

    @classmethod
    def from_json(cls, source: JsonSource) -> ConsumerInfo:
        """Parse MCAD's Consumer document (text, bytes or decoded mapping)."""
        doc = load_object(source, "consumer")
        kind = doc.get("kind")
        if kind != CONSUMER_KIND:
            raise QuotaTreeError(f"consumer invalid kind: {kind}")
        spec = doc.get("spec") or {}
        if not isinstance(spec, Mapping):
            raise QuotaTreeError("consumer spec must be an object")
        consumer_id = spec.get("id", "")
        if not isinstance(consumer_id, str) or not consumer_id:
            raise QuotaTreeError("missing consumer ID")
        raw_trees = spec.get("trees") or []
        if not isinstance(raw_trees, list):
            raise QuotaTreeError(f"consumer {consumer_id}: trees must be a list")
        trees = tuple(
            _tree_spec(consumer_id, i, raw) for i, raw in enumerate(raw_trees)
        )
        return cls(consumer_id, trees)

    @classmethod
    def from_file(cls, path: str | PathLike[str]) -> ConsumerInfo:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise QuotaTreeError(f"cannot read consumer file {path}: {exc}") from None
        return cls.from_json(text)

    def tree_spec(self, tree_name: str) -> ConsumerTreeSpec | None:
        """The first entry for `tree_name`, as MCAD's `CreateTreeConsumer` picks it."""
        if not tree_name:
            return None
        for spec in self.trees:
            if spec.tree_name == tree_name:
                return spec
        return None


def _tree_spec(consumer_id: str, index: int, raw: Any) -> ConsumerTreeSpec:
    where = f"consumer {consumer_id}: trees[{index}]"
    if not isinstance(raw, Mapping):
        raise QuotaTreeError(f"{where}: expected an object")
    tree_name = raw.get("treeName", "")
    group_id = raw.get("groupID", "")
    if not isinstance(tree_name, str) or not isinstance(group_id, str):
        raise QuotaTreeError(f"{where}: treeName and groupID must be strings")
    request = raw.get("request") or {}
    if not isinstance(request, Mapping):
        raise QuotaTreeError(f"{where}: request must be an object")
    unpreemptable = raw.get("unPreemptable", False)
    if not isinstance(unpreemptable, bool):
        raise QuotaTreeError(f"{where}: unPreemptable must be true or false")
    return ConsumerTreeSpec(
        tree_name=tree_name,
        group_id=group_id,
        request=MappingProxyType({
            str(name): require_int(value, f"{where}: request {name}", minimum=0)
            for name, value in request.items()
        }),
        priority=require_int(raw.get("priority", 0), f"{where}: priority"),
        ctype=require_int(raw.get("type", 0), f"{where}: type"),
        unpreemptable=unpreemptable,
    )

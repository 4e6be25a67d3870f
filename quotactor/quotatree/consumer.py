"""A consumer as one tree sees it (MCAD's tree `Consumer`)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from quotactor.quotatree.consumer_info import ConsumerTreeSpec
    from quotactor.quotatree.node import QuotaNode

__all__ = ["Consumer"]


class Consumer:
    """The per-tree, mutable realisation of a `ConsumerInfo` entry.

    It keeps the request by name (not only as a vector) so that a tree update that changes
    the resource names re-derives the vector instead of charging a stale one.
    """

    __slots__ = (
        "anode",
        "ctype",
        "group_id",
        "id",
        "priority",
        "request",
        "request_map",
        "seq",
        "unpreemptable",
    )

    def __init__(
        self,
        consumer_id: str,
        group_id: str,
        request_map: Mapping[str, int],
        resource_names: tuple[str, ...],
        priority: int = 0,
        ctype: int = 0,
        unpreemptable: bool = False,
    ) -> None:
        self.id = consumer_id
        self.group_id = group_id
        self.request_map = request_map
        self.request = tuple(request_map.get(name, 0) for name in resource_names)
        self.priority = priority
        self.ctype = ctype
        self.unpreemptable = unpreemptable
        self.anode: QuotaNode | None = None
        self.seq = 0

    @classmethod
    def from_spec(
        cls, consumer_id: str, spec: ConsumerTreeSpec, resource_names: tuple[str, ...]
    ) -> Consumer:
        return cls(consumer_id, spec.group_id, spec.request, resource_names, spec.priority,
                   spec.ctype, spec.unpreemptable)

    def resize(self, resource_names: tuple[str, ...]) -> None:
        """Re-derive the request vector for a tree with other resource names."""
        self.request = tuple(self.request_map.get(name, 0) for name in resource_names)

    def __deepcopy__(self, memo: dict[int, Any]) -> Consumer:
        """A copy for a checkpoint; the request by name is a read-only view, shared."""
        clone = Consumer.__new__(Consumer)
        memo[id(self)] = clone
        for name in Consumer.__slots__:
            value = getattr(self, name)
            setattr(clone, name, value if name == "request_map" else copy.deepcopy(value, memo))
        return clone

    def __repr__(self) -> str:
        where = self.anode.id if self.anode is not None else None
        return (f"Consumer({self.id!r}, group={self.group_id!r}, request={self.request}, "
                f"at={where!r})")

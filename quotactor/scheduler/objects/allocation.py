"""Allocations: an ask placed on a node, as a value."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from quotactor.core.resources import Resource

__all__ = ["Allocation"]


@dataclass(frozen=True, slots=True)
class Allocation:
    """Resources held on one node for one application, under the key of the ask it satisfied.

    Values never change: an in-place resize or a placeholder replacement produces a new value,
    so a snapshot handed out earlier stays true to the moment it was taken.
    """

    key: str
    application_id: str
    partition: str
    node_id: str
    resource: Resource
    priority: int = 0
    placeholder: bool = False
    task_group: str = ""
    requested_at: float = 0.0
    allocated_at: float = 0.0
    placeholder_used: bool = False
    allow_preempt_self: bool = True
    originator: bool = False
    preempted: bool = False
    """Chosen as a preemption victim: the shim was asked to release it and has not yet."""
    required_node: str | None = None
    """The node its ask was pinned to (a daemon-set pod): never a preemption victim."""
    tags: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """Its ask's tags (`allocationTags`: the pod's namespace and name, ...), as YuniKorn
    copies them onto the allocation."""

    def resized(self, resource: Resource) -> Allocation:
        return dataclasses.replace(self, resource=resource)

    def marked_preempted(self) -> Allocation:
        return dataclasses.replace(self, preempted=True)

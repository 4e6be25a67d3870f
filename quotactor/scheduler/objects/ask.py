"""Asks: what an application requests, one allocation each.

Modern YuniKorn has one ask per allocation, identified by its allocation key, and the allocation
that satisfies an ask keeps that key; quotactor follows that model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from quotactor.core.errors import InvalidRequest
from quotactor.core.resources import Resource, ResourceLike

__all__ = ["MIN_PRIORITY", "NO_TAGS", "Ask"]

MIN_PRIORITY = -(2**31)
"""The priority of nothing pending (YuniKorn's `MinPriority`)."""

NO_TAGS: Mapping[str, str] = MappingProxyType({})
"""The tags of an ask or application that has none (read-only, so all of them share it)."""


@dataclass(frozen=True, slots=True)
class Ask:
    """One request for resources: a key unique within its application, a size, a priority.

    `placeholder` asks are created by the scheduler for a gang's task group; a real ask naming a
    `task_group` replaces one of that group's placeholders. `required_node` pins the ask to one
    node (as a daemon-set pod is pinned).

    The preemption flags are what YuniKorn's shim derives from a pod: `allow_preempt_self`
    False is the `yunikorn.apache.org/allow-preemption: "false"` opt-out (the allocation is
    taken only as a last resort), `allow_preempt_other` False is a priority class with
    `preemptionPolicy: Never` (the ask never preempts), and `originator` marks the pod that
    owns the application (a Spark driver), taken last of all.
    """

    key: str
    resource: Resource
    priority: int = 0
    placeholder: bool = False
    task_group: str = ""
    required_node: str | None = None
    tags: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    allow_preempt_self: bool = True
    allow_preempt_other: bool = True
    originator: bool = False

    def __init__(
        self,
        key: str,
        resource: ResourceLike,
        priority: int = 0,
        placeholder: bool = False,
        task_group: str = "",
        required_node: str | None = None,
        tags: Mapping[str, str] | None = None,
        *,
        allow_preempt_self: bool = True,
        allow_preempt_other: bool = True,
        originator: bool = False,
    ) -> None:
        if not isinstance(key, str) or not key.strip():
            raise InvalidRequest(f"ask key must be a non-empty string, got {key!r}")
        res = Resource.of(resource)
        if res.is_empty() or res.has_negative():
            raise InvalidRequest(f"ask {key!r} must request a positive resource, got {res}")
        if isinstance(priority, bool) or not isinstance(priority, int):
            raise InvalidRequest(f"ask {key!r} priority must be an integer, got {priority!r}")
        if placeholder and not task_group:
            raise InvalidRequest(f"placeholder ask {key!r} needs a task group")
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "resource", res)
        object.__setattr__(self, "priority", priority)
        object.__setattr__(self, "placeholder", bool(placeholder))
        object.__setattr__(self, "task_group", task_group)
        object.__setattr__(self, "required_node", required_node)
        object.__setattr__(self, "tags", MappingProxyType(dict(tags)) if tags else NO_TAGS)
        object.__setattr__(self, "allow_preempt_self", bool(allow_preempt_self))
        object.__setattr__(self, "allow_preempt_other", bool(allow_preempt_other))
        object.__setattr__(self, "originator", bool(originator))

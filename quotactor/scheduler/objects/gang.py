"""Gang scheduling: task groups that reserve capacity with placeholders before real work runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from quotactor.core.errors import InvalidRequest
from quotactor.core.resources import Resource, ResourceLike

__all__ = ["DEFAULT_PLACEHOLDER_TIMEOUT", "TASK_GROUPS_TAG", "Gang", "GangStyle", "PlaceholderData",
           "TaskGroup"]

GangStyle = Literal["Soft", "Hard"]
DEFAULT_PLACEHOLDER_TIMEOUT = 15 * 60.0
"""YuniKorn's default: placeholders not replaced within 15 minutes are released."""
TASK_GROUPS_TAG = "yunikorn.apache.org/task-groups"
"""The application tag a remote shim declares a gang's task groups in (the k8shim's annotation
name), as JSON: `[{"name": "tg", "minMember": 2, "minResource": {"vcore": 1000}}]`."""


@dataclass(frozen=True, slots=True)
class TaskGroup:
    """`min_member` placeholders of `min_resource` each, to be replaced by real asks."""

    name: str
    min_member: int
    min_resource: Resource

    def __init__(self, name: str, min_member: int, min_resource: ResourceLike) -> None:
        if not isinstance(name, str) or not name:
            raise InvalidRequest(f"task group name must be a non-empty string, got {name!r}")
        if isinstance(min_member, bool) or not isinstance(min_member, int) or min_member < 1:
            raise InvalidRequest(f"task group {name!r} needs min_member >= 1, got {min_member!r}")
        res = Resource.of(min_resource)
        if res.is_empty() or res.has_negative():
            raise InvalidRequest(f"task group {name!r} needs a positive min_resource, got {res}")
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "min_member", min_member)
        object.__setattr__(self, "min_resource", res)

    @property
    def total(self) -> Resource:
        return self.min_resource.scaled(self.min_member)


@dataclass(frozen=True, slots=True)
class Gang:
    """The gang definition of an application: its task groups, style and placeholder timeout.

    Style `Soft` lets the application continue as a normal one when its placeholders time out;
    `Hard` fails it.
    """

    task_groups: tuple[TaskGroup, ...]
    style: GangStyle = "Soft"
    timeout: float = DEFAULT_PLACEHOLDER_TIMEOUT

    def __post_init__(self) -> None:
        if not self.task_groups:
            raise InvalidRequest("a gang needs at least one task group")
        names = [tg.name for tg in self.task_groups]
        if len(set(names)) != len(names):
            raise InvalidRequest(f"task group names must be unique, got {names}")
        if self.style not in ("Soft", "Hard"):
            raise InvalidRequest(f"gang style must be 'Soft' or 'Hard', got {self.style!r}")
        if self.timeout <= 0:
            raise InvalidRequest(f"placeholder timeout must be positive, got {self.timeout}")

    @property
    def placeholder_total(self) -> Resource:
        total = Resource()
        for group in self.task_groups:
            total = total + group.total
        return total


@dataclass(frozen=True, slots=True)
class PlaceholderData:
    """What happened to one task group's placeholders (YuniKorn's `placeholderData`)."""

    task_group: str
    count: int
    min_resource: Resource
    replaced: int = 0
    timed_out: int = 0

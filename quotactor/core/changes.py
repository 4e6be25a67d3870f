"""Usage changes as values, for the batch API."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from quotactor.core.identity import UserGroup

__all__ = ["UsageIncrease", "UsageDecrease"]


@dataclass(frozen=True, slots=True)
class UsageIncrease:
    """One `increase_tracked_resource` call, as a value a scheduler cycle can collect."""

    queue_path: str
    application_id: str
    usage: Mapping[str, int]
    user: UserGroup


@dataclass(frozen=True, slots=True)
class UsageDecrease:
    """One `decrease_tracked_resource` call, as a value."""

    queue_path: str
    application_id: str
    usage: Mapping[str, int]
    user: UserGroup
    remove_app: bool = field(default=False)

"""The limits that apply to each user and group, as the reports and plots show them.

Read from the partition's limit table (the same table the trackers enforce), so a plot's
dashed line is exactly the limit that held jobs back, wildcard limits included.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from quotactor.core.limits import LimitTable

__all__ = ["LimitLine", "group_limits", "tightest", "user_limits"]


@dataclass(frozen=True, slots=True)
class LimitLine:
    """One configured limit: where it applies and what it allows (`applications` 0: any)."""

    path: str
    resources: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    applications: int = 0

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"queuePath": self.path}
        if self.resources:
            out["maxResources"] = dict(self.resources)
        if self.applications:
            out["maxApplications"] = self.applications
        return out


def user_limits(table: LimitTable, users: Iterable[str]) -> dict[str, tuple[LimitLine, ...]]:
    """Every limit of each user (named or wildcard), by queue path."""
    out: dict[str, tuple[LimitLine, ...]] = {}
    for user in users:
        lines = []
        for path in sorted(table.user_limit_paths(user)):
            limit = table.user_limit(path, user)
            if limit is not None and not limit.is_unlimited():
                lines.append(LimitLine(path, MappingProxyType(dict(limit.max_resources)),
                                       limit.max_applications))
        out[user] = tuple(lines)
    return out


def group_limits(table: LimitTable, groups: Iterable[str]) -> dict[str, tuple[LimitLine, ...]]:
    """Every limit of each group (the `*` group included when it is used), by queue path."""
    out: dict[str, tuple[LimitLine, ...]] = {}
    for group in groups:
        lines = []
        for path in sorted(table.group_limit_paths(group)):
            limit = table.group_limit(path, group)
            if limit is not None and not limit.is_unlimited():
                lines.append(LimitLine(path, MappingProxyType(dict(limit.max_resources)),
                                       limit.max_applications))
        out[group] = tuple(lines)
    return out


def tightest(lines: Iterable[LimitLine], resource: str) -> LimitLine | None:
    """The limit allowing the least of `resource` (None when none limits it)."""
    found = [line for line in lines if resource in line.resources]
    return min(found, key=lambda line: (line.resources[resource], line.path), default=None)

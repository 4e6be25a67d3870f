"""The limit table of one partition: who is limited where, and which group an app counts for.

The table is an immutable value built once per configuration. Trackers never store limits:
every operation carries the table that was in force when the manager routed it, so a decision
is judged wholly under one table, and a config change is a single reference swap. That also
makes YuniKorn's limit-clearing phases (and their bugs) unnecessary: removing a limit cannot
wipe usage, because usage and limits never live in the same place.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from quotactor.core.identity import WILDCARD
from quotactor.core.queue_path import ROOT

__all__ = ["Limit", "LimitEntry", "LimitTable", "EMPTY_TABLE"]


@dataclass(frozen=True, slots=True)
class Limit:
    """`maxResources` and `maxApplications` at one queue for one user or group.

    `max_resources` keeps explicit zeros (`{gpu: 0}` means none allowed) and leaves absent names
    unlimited; `max_applications == 0` means unlimited, as in YuniKorn.
    """

    max_resources: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    max_applications: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.max_resources, MappingProxyType):
            object.__setattr__(
                self, "max_resources", MappingProxyType(dict(sorted(self.max_resources.items())))
            )

    def __hash__(self) -> int:
        return hash((tuple(self.max_resources.items()), self.max_applications))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Limit):
            return NotImplemented
        return (
            dict(self.max_resources) == dict(other.max_resources)
            and self.max_applications == other.max_applications
        )

    def is_unlimited(self) -> bool:
        return not self.max_resources and not self.max_applications


@dataclass(frozen=True, slots=True)
class LimitEntry:
    """One `limits` item of a queue, in the minimal form the table needs."""

    users: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    max_resources: Mapping[str, int] = field(default_factory=dict)
    max_applications: int = 0

    def limit(self) -> Limit:
        return Limit(self.max_resources, self.max_applications)


class LimitTable:
    """Limit lookup by (queue path, user or group) and group resolution, all O(1) per level."""

    __slots__ = (
        "_by_group",
        "_by_user",
        "_group_named",
        "_group_order",
        "_user_named",
        "_user_wild",
        "application_count_groups",
        "counts_applications",
        "entries",
    )

    def __init__(self, entries: Mapping[str, Sequence[LimitEntry]] | None = None) -> None:
        user_named: dict[str, dict[str, Limit]] = {}
        user_wild: dict[str, Limit] = {}
        group_named: dict[str, dict[str, Limit]] = {}
        group_order: dict[str, list[str]] = {}
        by_user: dict[str, list[str]] = {}
        by_group: dict[str, list[str]] = {}
        frozen: dict[str, tuple[LimitEntry, ...]] = {}
        for path, limits in (entries or {}).items():
            frozen[path] = tuple(limits)
            for entry in limits:
                limit = entry.limit()
                for user in entry.users:
                    if not user:
                        continue
                    if user == WILDCARD:
                        user_wild[path] = limit
                    else:
                        user_named.setdefault(path, {})[user] = limit
                        by_user.setdefault(user, []).append(path)
                for group in entry.groups:
                    if not group:
                        continue
                    group_named.setdefault(path, {})[group] = limit
                    by_group.setdefault(group, []).append(path)
                    if group != WILDCARD:
                        group_order.setdefault(path, []).append(group)
        self.entries: Mapping[str, tuple[LimitEntry, ...]] = MappingProxyType(frozen)
        self.counts_applications = any(entry.limit().max_applications
                                       for limits in frozen.values() for entry in limits)
        """Whether any user or group limit counts applications (else none ever refuses a
        new application for its count, and nobody need ask)."""
        self.application_count_groups = frozenset(
            group for limits in frozen.values() for entry in limits
            if entry.limit().max_applications for group in entry.groups if group)
        """The groups (`*` for the shared one) a limit counts applications of: a start
        counted for another group changes no count but its own user's."""
        self._user_named = user_named
        self._user_wild = user_wild
        self._group_named = group_named
        self._group_order = {p: tuple(g) for p, g in group_order.items()}
        self._by_user = {u: tuple(dict.fromkeys(p)) for u, p in by_user.items()}
        self._by_group = {g: tuple(dict.fromkeys(p)) for g, p in by_group.items()}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LimitTable):
            return NotImplemented
        return dict(self.entries) == dict(other.entries)

    __hash__ = None  # type: ignore[assignment]

    def user_limit(self, path: str, user: str) -> Limit | None:
        """The named limit for `user` at `path`, else that queue's `*` user limit."""
        named = self._user_named.get(path)
        if named is not None:
            limit = named.get(user)
            if limit is not None:
                return limit
        return self._user_wild.get(path)

    def group_limit(self, path: str, group: str) -> Limit | None:
        """The limit of `group` (a named group, or the shared `*` group) at `path`."""
        named = self._group_named.get(path)
        return None if named is None else named.get(group)

    def resolve_group(self, levels: Iterable[str], groups: Sequence[str]) -> str | None:
        """The group an application counts for, deciding bottom-up from its queue.

        At each level (leaf first) the first group named in that level's limits, in config
        order, that the user belongs to wins; else a `*` group limit there means the shared `*`
        group; else the walk goes up. A user with no groups is never tracked for a group.
        """
        if not groups:
            return None
        member = set(groups)
        for path in levels:
            for group in self._group_order.get(path, ()):
                if group in member:
                    return group
            named = self._group_named.get(path)
            if named is not None and WILDCARD in named:
                return WILDCARD
        return None

    def named_users(self) -> Iterable[str]:
        return self._by_user.keys()

    def named_groups(self) -> Iterable[str]:
        return self._by_group.keys()

    def is_named_user(self, user: str) -> bool:
        return user in self._by_user

    def is_named_group(self, group: str) -> bool:
        return group in self._by_group

    def user_limit_paths(self, user: str) -> tuple[str, ...]:
        """Every path where a limit applies to `user` (named there, or a `*` user limit)."""
        return tuple(dict.fromkeys((*self._by_user.get(user, ()), *self._user_wild)))

    def group_limit_paths(self, group: str) -> tuple[str, ...]:
        return self._by_group.get(group, ())

    def limit_count(self) -> int:
        return sum(len(v) for v in self.entries.values())


EMPTY_TABLE = LimitTable({ROOT: ()})

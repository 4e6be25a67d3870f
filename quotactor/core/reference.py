"""The whole user/group manager as one single-threaded object: the reference model.

Same semantics as the actor system (same core state classes, same group choice and links, same
retirement of empty trackers), with no threads: an application's group is the one its user's
tracker links it to once an increase of it was applied (a refused increase links nothing), else
the one the limit table chooses now; one application id may run for several users, each an
application of its own, in the user's tracker and in the group's. Two uses: it is the oracle the
actor system is tested against, and, behind one lock, the in-process baseline the benchmarks
compare with.
"""

from __future__ import annotations

from typing import Any

from quotactor.core.identity import UserGroup
from quotactor.core.limits import EMPTY_TABLE, LimitTable
from quotactor.core.queue_path import ancestors
from quotactor.core.queue_tracker import Refusal, merge_headroom
from quotactor.core.resources import Resource
from quotactor.core.tracker import GroupTrackerState, UserTrackerState

__all__ = ["ReferenceTracking"]


class ReferenceTracking:
    """Usage tracking and enforcement for one partition, in the caller's thread."""

    def __init__(self, table: LimitTable = EMPTY_TABLE) -> None:
        self.table = table
        self.users: dict[str, UserTrackerState] = {}
        self.groups: dict[str, GroupTrackerState] = {}

    def increase(
        self, parts: tuple[str, ...], app: str, usage: Resource, user: UserGroup
    ) -> Refusal | None:
        """Apply the increase to user and group, or refuse it whole (returning why)."""
        table = self.table
        group_name = self._group_for_read(parts, app, user)
        state = self.users.get(user.user) or UserTrackerState(user.user)
        refusal = state.check_increase(table, parts, app, usage)
        group = None
        if refusal is None and group_name is not None:
            group = self.groups.get(group_name) or GroupTrackerState(group_name)
            refusal = group.check_increase(table, parts, app, user.user, usage)
        if refusal is not None:
            return refusal
        self.users[user.user] = state
        state.increase(parts, app, usage, group_name)
        if group is not None and group_name is not None:
            self.groups[group_name] = group
            group.increase(parts, app, usage, user.user)
        return None

    def decrease(
        self, parts: tuple[str, ...], app: str, usage: Resource, user: UserGroup, remove_app: bool
    ) -> None:
        state = self.users.get(user.user)
        if state is None:
            return
        group_name = state.app_groups.get(app)
        if not state.decrease(parts, app, usage, remove_app):
            return
        if state.is_empty():
            del self.users[user.user]
        group = self.groups.get(group_name) if group_name is not None else None
        if group is not None and group_name is not None:
            group.decrease(parts, app, usage, remove_app, user.user)
            if group.is_empty():
                del self.groups[group_name]

    def headroom(
        self, parts: tuple[str, ...], app: str, user: UserGroup
    ) -> dict[str, int] | None:
        user_room = (self.users.get(user.user) or UserTrackerState(user.user)).headroom(
            self.table, parts
        )
        group_name = self._group_for_read(parts, app, user)
        if group_name is None:
            return user_room
        group = self.groups.get(group_name) or GroupTrackerState(group_name)
        return merge_headroom(user_room, group.headroom(self.table, parts))

    def can_run_app(self, parts: tuple[str, ...], app: str, user: UserGroup) -> bool:
        return self.app_refusal(parts, app, user) is None

    def app_refusal(self, parts: tuple[str, ...], app: str, user: UserGroup) -> Refusal | None:
        state = self.users.get(user.user) or UserTrackerState(user.user)
        refusal = state.app_refusal(self.table, parts, app)
        if refusal is not None:
            return refusal
        group_name = self._group_for_read(parts, app, user)
        if group_name is None:
            return None
        group = self.groups.get(group_name) or GroupTrackerState(group_name)
        return group.app_refusal(self.table, parts, app, user.user)

    def _group_for_read(self, parts: tuple[str, ...], app: str, user: UserGroup) -> str | None:
        state = self.users.get(user.user)
        if state is not None:
            linked, group = state.group_of(app)
            if linked:
                return group
        return self.table.resolve_group(ancestors(parts), user.groups)

    def users_usage(self) -> list[dict[str, Any]]:
        names = set(self.users) | set(self.table.named_users())
        return [
            (self.users.get(n) or UserTrackerState(n)).snapshot(self.table) for n in sorted(names)
        ]

    def groups_usage(self) -> list[dict[str, Any]]:
        names = set(self.groups) | set(self.table.named_groups())
        return [
            (self.groups.get(n) or GroupTrackerState(n)).snapshot(self.table)
            for n in sorted(names)
        ]

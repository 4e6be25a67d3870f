"""The manager's route of a batch, as data: one compiled loop over every item.

Routing an item (see `quotactor.actors.manager`) is dictionary work: the application's owner
and group link, the group choice, the user's and the group's tracker, and their `routed`
counts. The manager runs it for every item of every caller, so it runs here, compiled with
the rest of the core, on the manager's views passed in as plain dictionaries: the trackers
are opaque values (looked up by name, put in the routed message, never used), their counts
live on their states (`TrackerState`), and what the manager itself must do (create or revive
a tracker, forget an idle user's links) it does in the callbacks, on the rare item that
needs it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from quotactor.core.errors import InvalidRequest
from quotactor.core.limits import LimitTable
from quotactor.core.queue_path import ancestors
from quotactor.core.tracker import GroupTrackerState, UserTrackerState

__all__ = ["Views", "route"]


class Views:
    """The manager's views a route reads and changes, and its callbacks.

    `user_states` and `group_states` map a name to its live tracker's state, which names the
    tracker (`TrackerState.tracker`, the manager keeps them in step) and, a user's, its
    applications' group links (`UserTrackerState.links`); `owners` maps an application id to
    its user. `new_user` and `new_group`
    list a live tracker for a name that has none (and return it); `forgot` forgets an idle
    user's links (True if it was idle). `stamp` numbers the routes (see `route`).
    """

    def __init__(
        self, partition: str,
        user_states: dict[str, UserTrackerState], group_states: dict[str, GroupTrackerState],
        owners: dict[str, str],
        new_user: Callable[[str], object], new_group: Callable[[str], object],
        forgot: Callable[[str], bool], increase: type, decrease: type,
    ) -> None:
        self.partition = partition
        self.user_states = user_states
        self.group_states = group_states
        self.owners = owners
        self.new_user = new_user
        self.new_group = new_group
        self.forgot = forgot
        self.increase = increase
        self.decrease = decrease
        self.stamp = 0

    def release(self) -> None:
        """Drop the callbacks (the manager's bound methods: a cycle through the manager that
        only the collector would free) once the manager has stopped; no route runs after."""
        self.new_user = self.new_group = _stopped
        self.forgot = _stopped_forgot


def _stopped(name: str) -> object:
    raise RuntimeError(f"the manager is stopped (asked for {name!r})")


def _stopped_forgot(name: str) -> bool:
    raise RuntimeError(f"the manager is stopped (asked for {name!r})")


def route(
    views: Views, items: Sequence[tuple[Any, ...]], table: LimitTable,
    routed: list[Any], refused: list[tuple[int, Exception]],
    ignored: list[tuple[str, str, tuple[str, ...]]], users_named: list[Any],
    groups_named: list[Any],
) -> None:
    """Route every item as if sent alone, in order, appending to `routed` each routed item's
    message (its last field its user tracker), to `refused` each item refused before routing
    (position, error) and to `ignored` each decrease of a user with nothing tracked (user,
    app, parts); and to `users_named` and `groups_named` each user and group tracker the
    routed items name, once, in the order first named (what a batch claims: a state's `mark`
    says whether this route named it already, as the manager routes one batch at a time).

    An increase is (parts, app, usage, user); a decrease (parts, app, usage, user,
    remove_app). An item refused (an application id of another user, a failing group choice)
    changes nothing: what can fail runs before its first change. A tracker's `routed` count
    goes up before that user's links or owners change (see `quotactor.actors.known`).
    """
    user_states, group_states = views.user_states, views.group_states
    owners, forgot = views.owners, views.forgot
    new = tuple.__new__
    stamp = views.stamp = views.stamp + 1
    position = -1
    for item in items:
        position += 1
        try:
            if len(item) == 4:  # an increase
                parts: tuple[str, ...] = item[0]
                app: str = item[1]
                who = item[3]
                name: str = who.user
                owner = owners.get(app)
                # `forgot` may forget an idle user's links before a later step fails: no
                # view sees the difference (it could have been retired at any moment).
                if owner is not None and owner != name and not forgot(owner):
                    raise InvalidRequest(
                        f"application {app!r} is already running for user {owner!r} in"
                        f" partition {views.partition!r}; application ids are unique in a"
                        " partition")
                user_state = user_states.get(name)
                app_links = None if user_state is None else user_state.links
                # an idle user's links are of starts it refused (`forgot` checks it again;
                # looked at here, a busy user's costs no call)
                if (app_links and user_state is not None
                        and user_state.idle_at == user_state.routed and forgot(name)):
                    app_links = None
                group: str | None
                if app_links is not None and app in app_links:
                    group = app_links[app]
                else:
                    group = table.resolve_group(ancestors(parts), who.groups)
                # Nothing above changed anything; below, nothing can fail but an allocation.
                # `routed` first, then the links.
                if user_state is None:
                    views.new_user(name)
                    user_state = user_states[name]
                user = user_state.tracker
                user_state.routed += 1
                if user_state.mark != stamp:
                    user_state.mark = stamp
                    users_named.append(user)
                group_ref: object = None
                group_state: GroupTrackerState | None = None
                if group is not None:
                    group_state = group_states.get(group)
                    if group_state is None:
                        views.new_group(group)
                        group_state = group_states[group]
                    group_ref = group_state.tracker
                    group_state.routed += 1
                    if group_state.mark != stamp:
                        group_state.mark = stamp
                        groups_named.append(group_ref)
                if app_links is None:
                    app_links = user_state.links = {}
                app_links[app] = group
                owners[app] = name
                routed.append(new(views.increase, (
                    position, parts, app, item[2], group, group_ref, table, user_state,
                    group_state, user)))
                continue
            parts = item[0]
            app = item[1]
            name = item[3].user
            user_state = user_states.get(name)
            if user_state is None:
                ignored.append((name, app, parts))
                continue
            user_state.routed += 1  # before the links change
            user = user_state.tracker
            if user_state.mark != stamp:
                user_state.mark = stamp
                users_named.append(user)
            app_links = user_state.links
            remove_app: bool = item[4]
            group = None
            if remove_app:  # one lookup each: the link and the owner taken, not read then del
                if app_links is not None:
                    group = app_links.pop(app, None)
                owner = owners.pop(app, None)
                if owner is not None and owner != name:  # another user's id: it stays theirs
                    owners[app] = owner
            elif app_links is not None:
                group = app_links.get(app)
            group_ref = None
            group_state = None
            if group is not None:
                group_state = group_states.get(group)
                if group_state is None:
                    group = None
                else:
                    group_ref = group_state.tracker
                    group_state.routed += 1
                    if group_state.mark != stamp:
                        group_state.mark = stamp
                        groups_named.append(group_ref)
            routed.append(new(views.decrease, (
                position, parts, app, item[2], group, group_ref, remove_app, user_state,
                group_state, user)))
        except Exception as exc:
            refused.append((position, exc))

"""The manager's route of a batch, as data: one compiled loop over every item.

Routing an item (see `quotactor.actors.manager`) is dictionary work: the application's group
link, the group choice, the user's and the group's tracker, and their `routed` counts. The
manager runs it for every item of every caller, so it runs here, compiled with the rest of the
core, on the manager's views passed in as plain dictionaries: the trackers are opaque values
(looked up by name, put in the routed message, never used), their counts live on their states
(`TrackerState`), and what the manager itself must do (create or revive a tracker) it does in
the callbacks, on the rare item that needs it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from quotactor.core.decision import ACCEPTED, Decision
from quotactor.core.limits import LimitTable
from quotactor.core.queue_path import ancestors
from quotactor.core.resources import Resource
from quotactor.core.tracker import (
    UNTRACKED,
    GroupTrackerState,
    Link,
    UserTrackerState,
    apply_both,
    check_both,
    decrease_both,
    increase_both,
    settle_link,
)

__all__ = ["Views", "decide_known", "route", "route_one"]


class Views:
    """The manager's views a route reads and changes, and its callbacks.

    `user_states` and `group_states` map a name to its live tracker's state, which names the
    tracker (`TrackerState.tracker`, the manager keeps them in step) and, a user's, its
    applications' group links (`UserTrackerState.links`). `new_user` and `new_group` list a
    live tracker for a name that has none (and return it). `stamp` numbers the routes (see
    `route`).
    """

    def __init__(
        self,
        user_states: dict[str, UserTrackerState], group_states: dict[str, GroupTrackerState],
        new_user: Callable[[str], object], new_group: Callable[[str], object],
        increase: type, decrease: type,
    ) -> None:
        self.user_states = user_states
        self.group_states = group_states
        self.new_user = new_user
        self.new_group = new_group
        self.increase = increase
        self.decrease = decrease
        self.stamp = 0

    def release(self) -> None:
        """Drop the callbacks (the manager's bound methods: a cycle through the manager that
        only the collector would free) once the manager has stopped; no route runs after."""
        self.new_user = self.new_group = _stopped


def _stopped(name: str) -> object:
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
    remove_app). An application id is its user's: the same id for two users is two
    applications (YuniKorn's user group manager tracks them so; its scheduler, not this,
    refuses a second application with an id in a partition). Every item of an application
    counts for the group it is linked to: by its start, once routed, until the tracker no
    longer runs it and has handled every item routed for it (the holder then drops the link:
    `quotactor.core.tracker.settle_link`); a start of an application not linked (a new one,
    or one whose start was refused or that was removed) counts for the group the table
    chooses now. A removal keeps the link for the items routed after it, whether it applies
    or not. Each routed item carries its application's link (None for a decrease of one not
    linked), whose `routed` count it raises (invariant 13 of docs/concurrency.md).

    An item refused (a failing group choice, a failing step of any kind) changes nothing any
    view shows: every step that can fail on the item's own values (its id's hash, say) runs
    before the first change, and after it come only the link, the counts and appends. A
    tracker's `routed` count goes up before its message is delivered (see
    `quotactor.actors.known`).
    """
    user_states, group_states = views.user_states, views.group_states
    new = tuple.__new__
    stamp = views.stamp = views.stamp + 1
    position = -1
    for item in items:
        position += 1
        try:
            parts: tuple[str, ...] = item[0]
            app: str = item[1]
            who = item[3]
            name: str = who.user
            user_state = user_states.get(name)
            group: str | None
            group_state: GroupTrackerState | None
            app_links = None if user_state is None else user_state.links
            link = None if app_links is None else app_links.get(app)  # may fail: first
            if len(item) == 4:  # an increase
                fresh: dict[str, Link] | None = None
                linked = link is not None
                if link is not None:
                    group = link.group
                else:
                    group = table.resolve_group(ancestors(parts), who.groups)
                    link = Link(group)
                    if app_links is None:
                        fresh = {app: link}  # hashes the id: may fail, nothing changed yet
                if user_state is None:
                    views.new_user(name)
                    user_state = user_states[name]
                group_state = None
                if group is not None:
                    group_state = group_states.get(group)
                    if group_state is None:
                        views.new_group(group)
                        group_state = group_states[group]
                # Below, nothing fails but an allocation: the link, counts, the message.
                if fresh is not None:
                    user_state.links = fresh
                elif not linked and app_links is not None:
                    app_links[app] = link
                message: type = views.increase
                last: object = table
            else:
                if user_state is None:
                    ignored.append((name, app, parts))
                    continue
                group = None
                group_state = None
                if link is not None:
                    group = link.group
                    if group is not None:
                        group_state = group_states.get(group)
                        if group_state is None:
                            group = None
                message = views.decrease
                last = item[4]
            user = user_state.tracker
            if link is not None:
                link.routed += 1
            user_state.routed += 1
            if user_state.mark != stamp:
                user_state.mark = stamp
                users_named.append(user)
            group_ref: object = None
            if group_state is not None:
                group_ref = group_state.tracker
                group_state.routed += 1
                if group_state.mark != stamp:
                    group_state.mark = stamp
                    groups_named.append(group_ref)
            routed.append(new(message, (
                position, parts, app, item[2], group, group_ref, last, user_state,
                group_state, user, link)))
        except Exception as exc:
            refused.append((position, exc))


def route_one(views: Views, item: tuple[Any, ...], table: LimitTable) -> Any:
    """`route` of one item: its message, or None for a decrease of a user with nothing
    tracked; the item's failure raised (nothing changed then)."""
    routed: list[Any] = []
    refused: list[tuple[int, Exception]] = []
    route(views, (item,), table, routed, refused, [], [], [])
    if refused:
        raise refused[0][1]
    return routed[0] if routed else None


def decide_known(
    views: Views, manager: Any, user: UserTrackerState, item: tuple[Any, ...],
    claim: Callable[[Any], bool], let_go: Callable[[Any], None], idle: set[Any],
    not_known: object,
) -> Any:
    """A single call's change decided without the route, holding its user's tracker (whose
    state is `user`), when the views agree (invariant 11 of docs/concurrency.md): for an
    increase, its `Decision`; for a decrease, `decrease_both`'s outcome; `not_known` when
    the call must be routed (nothing changed then). A core step's failure is raised, nothing
    of the change applied.

    `manager` is read for `closed` and `applied.table`; `claim` and `let_go` claim and
    release a group's tracker (`views.group_states[...].tracker`); `idle` is where a tracker
    a removal leaves idle goes. The look-ups before the views lock are hints, each checked
    again under it, holding both trackers.
    """
    app: str = item[1]
    app_groups = user.app_groups
    links = user.links
    link = None if links is None else links.get(app)
    table: LimitTable = manager.applied.table
    group: str | None
    if link is not None:
        group = link.group
        if app not in app_groups or app_groups[app] != group:
            return not_known
    elif len(item) == 4 and app not in app_groups:
        group = table.resolve_group(ancestors(item[0]), item[3].groups)
    else:
        return not_known  # a decrease of an application not linked: the route says why
    if group is None:
        return _decide_held(views, manager, user, None, item, link, table, idle, not_known)
    group_state = views.group_states.get(group)
    if group_state is None:
        return not_known  # not listed: the route lists it
    group_ref = group_state.tracker
    if group_ref is None or not claim(group_ref):
        return not_known  # retired meanwhile, or busy
    try:
        return _decide_held(views, manager, user, group_state, item, link, table, idle,
                            not_known)
    finally:
        let_go(group_ref)


def _decide_held(
    views: Views, manager: Any, user: UserTrackerState, group: GroupTrackerState | None,
    item: tuple[Any, ...], link: Link | None, table: LimitTable, idle: set[Any],
    not_known: object,
) -> Any:
    """`decide_known`'s decision, holding the user's tracker and the group's (None: no
    group), once the views agree with what it read of them."""
    parts: tuple[str, ...] = item[0]
    app: str = item[1]
    usage: Resource = item[2]
    lock = user.links_lock
    if not lock.acquire(False):  # held by the manager or another caller: routed
        return not_known
    try:  # the views as the manager's last handler left them
        links = user.links
        if (manager.closed or user.routed != user.handled
                or views.user_states.get(user.name) is not user
                or (group is not None and views.group_states.get(group.name) is not group)
                or (None if links is None else links.get(app)) is not link
                or manager.applied.table is not table):
            return not_known
    finally:
        lock.release()
    group_name = None if group is None else group.name
    if len(item) == 5:  # a decrease, of a linked application
        remove_app: bool = item[4]
        outcome = decrease_both(user, group, parts, app, usage, remove_app)
        if remove_app and outcome != UNTRACKED and link is not None:  # it runs no more
            settle_link(user, app, link)
            if user.is_empty() and user.routed == user.handled:  # a hint (invariant 10)
                user.idle_at = user.handled
                idle.add(user.tracker)
            if group is not None and group.is_empty() and group.routed == group.handled:
                group.idle_at = group.handled
                idle.add(group.tracker)
        return outcome
    if link is not None:  # a running application
        refusal = increase_both(user, group, table, parts, app, usage, group_name)
    else:
        refusal = check_both(user, group, table, parts, app, usage)
        if refusal is None:
            if not lock.acquire(False):
                return not_known  # nothing changed: routed
            try:  # linked before it runs, as the route links it
                links = user.links
                if links is not None and app in links:
                    return not_known  # an item of it was routed meanwhile
                link = Link(group_name)
                if links is None:
                    user.links = {app: link}
                else:
                    links[app] = link
            finally:
                lock.release()
            try:
                apply_both(user, group, parts, app, usage, group_name)
            except BaseException:
                settle_link(user, app, link)
                raise
            user.idle_at = -1  # not idle: it runs the application now (invariant 10)
            if group is not None:
                group.idle_at = -1
    return ACCEPTED if refusal is None else Decision(False, refusal)

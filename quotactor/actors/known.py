"""Known-user calls: a single change of a user whose tracker the manager lists is decided on
the caller's thread, holding that tracker and its group's, without the manager.

Routing such a call would change nothing in the manager's views but counts, and a link for a
new application. The caller looks the tracker up (`ManagerActor.users`) and claims it if it
is idle; holding it, under the manager's views lock, it checks that the views agree with the
tracker's own, chooses the group as the route would (the application's link, or the table's
choice for a new application) and claims that group's tracker if it is idle (invariant 11 of
docs/concurrency.md). Then it decides with the lock released, in core calls: a refusal
changes nothing; an accepted start of a new application links it first, under the lock; a
removal settles the link and marks the trackers it leaves idle, as a routed one does.
Anything else (an unknown or busy tracker, a busy group or one not listed, a change of an
application not linked, a view that disagrees, an item of the application routed meanwhile)
returns `NOT_KNOWN` having changed nothing, and the call is routed by the manager. A core
step's failure changes neither side and is raised, as the routed path's is.
"""

from __future__ import annotations

from logging import INFO

from quotactor.actors.group_tracker import EVENTS, GroupTrackerActor
from quotactor.actors.holding import let_go
from quotactor.actors.manager import ManagerActor
from quotactor.actors.messages import NOT_KNOWN, NotKnown
from quotactor.actors.runtime import _guarded, _held
from quotactor.actors.user_tracker import UserTrackerActor
from quotactor.core.decision import ACCEPTED, Decision
from quotactor.core.identity import UserGroup
from quotactor.core.limits import LimitTable
from quotactor.core.queue_path import ancestors
from quotactor.core.resources import Resource
from quotactor.core.tracker import (
    APPLIED,
    GROUP_UNTRACKED,
    UNTRACKED,
    Link,
    apply_both,
    check_both,
    decrease_both,
    increase_both,
    settle_link,
)
from quotactor.logs import get_logger

__all__ = ["NOT_KNOWN", "apply_known"]

log = get_logger()


def apply_known(
    manager: ManagerActor,
    item: tuple[tuple[str, ...], str, Resource, UserGroup]
    | tuple[tuple[str, ...], str, Resource, UserGroup, bool],
) -> Decision | NotKnown | None:
    """Decide a single call's validated change without the manager if its user's tracker is
    listed and idle (invariant 11): its answer, or `NOT_KNOWN` with nothing changed. A core
    step's failure is raised, nothing of the change applied."""
    tracker = manager.users.get(item[3].user)  # a hint: checked again holding the claim
    if tracker is None or _guarded() or not tracker._claim():
        return NOT_KNOWN
    held = _held
    held.depth += 1
    try:
        return _decide(manager, tracker, item)
    finally:
        held.depth -= 1
        let_go(tracker)


def _decide(
    manager: ManagerActor, tracker: UserTrackerActor,
    item: tuple[tuple[str, ...], str, Resource, UserGroup]
    | tuple[tuple[str, ...], str, Resource, UserGroup, bool],
) -> Decision | NotKnown | None:
    """`apply_known`'s decision, run holding the user's tracker: the group the route would
    choose, read without the views lock (hints, checked under it), and its tracker claimed."""
    state = tracker.state
    app, who = item[1], item[3]
    app_groups = state.app_groups
    links = state.links
    link = None if links is None else links.get(app)
    table = manager.applied.table
    if link is not None:
        group = link.group
        if app not in app_groups or app_groups[app] != group:
            return NOT_KNOWN
    elif len(item) == 4 and app not in app_groups:
        group = table.resolve_group(ancestors(item[0]), who.groups)
    else:
        return NOT_KNOWN  # a decrease of an application not linked: the route says why
    if group is None:
        return _decide_held(manager, tracker, None, item, link, table)
    group_ref = manager.groups.get(group)
    if group_ref is None or not group_ref._claim():
        return NOT_KNOWN  # not listed (the route lists it) or busy
    try:
        return _decide_held(manager, tracker, group_ref, item, link, table)
    finally:
        let_go(group_ref)


def _decide_held(
    manager: ManagerActor, tracker: UserTrackerActor, group_ref: GroupTrackerActor | None,
    item: tuple[tuple[str, ...], str, Resource, UserGroup]
    | tuple[tuple[str, ...], str, Resource, UserGroup, bool],
    link: Link | None, table: LimitTable,
) -> Decision | NotKnown | None:
    """Decide holding the user's tracker and the group's (None: no group), once the views
    agree with what `_decide` read of them (invariant 11)."""
    state = tracker.state
    parts, app, usage, who = item[0], item[1], item[2], item[3]
    lock = manager.views_lock
    if not lock.acquire(blocking=False):  # held by the manager or another caller: routed
        return NOT_KNOWN
    try:  # the views as the manager's last handler left them
        links = state.links
        if (manager.closed or state.routed != state.handled
                or manager.user_states.get(who.user) is not state
                or (group_ref is not None
                    and manager.groups.get(group_ref.state.name) is not group_ref)
                or (None if links is None else links.get(app)) is not link
                or manager.applied.table is not table):
            return NOT_KNOWN
    finally:
        lock.release()
    group_state = None if group_ref is None else group_ref.state
    group = None if group_ref is None else group_ref.state.name
    try:
        if len(item) == 5:  # a decrease, of a linked application (`_decide`)
            _decrease(tracker, group_ref, item, link)  # type: ignore[arg-type]
            return None
        if link is not None:  # a running application
            refusal = increase_both(state, group_state, table, parts, app, usage, group)
        else:
            refusal = check_both(state, group_state, table, parts, app, usage)
            if refusal is None:
                if not lock.acquire(blocking=False):
                    return NOT_KNOWN  # nothing changed: routed
                try:  # linked before it runs, as the route links it
                    links = state.links
                    if links is not None and app in links:
                        return NOT_KNOWN  # an item of it was routed meanwhile
                    link = Link(group)
                    if links is None:
                        state.links = {app: link}
                    else:
                        links[app] = link
                finally:
                    lock.release()
                try:
                    apply_both(state, group_state, parts, app, usage, group)
                except BaseException:
                    settle_link(state, app, link)
                    raise
                state.idle_at = -1  # not idle: it runs the application now (10)
                if group_state is not None:
                    group_state.idle_at = -1
    except Exception:
        log.exception("change_failed", user=state.name, app=app)
        raise
    if refusal is None:
        return ACCEPTED
    if EVENTS.isEnabledFor(INFO):  # most hosts drop it: not built for nothing
        log.info("increase_refused", user=state.name, app=app, queue=".".join(parts),
                 reason=str(refusal))
    return Decision(False, refusal)


def _decrease(
    tracker: UserTrackerActor, group_ref: GroupTrackerActor | None,
    item: tuple[tuple[str, ...], str, Resource, UserGroup, bool], link: Link,
) -> None:
    """A decrease of a linked application, both trackers held; a removal settles the link and
    marks the trackers it leaves idle, as a routed removal's holder does (10, 13)."""
    state = tracker.state
    group_state = None if group_ref is None else group_ref.state
    parts, app, usage, _, remove_app = item
    outcome = decrease_both(state, group_state, parts, app, usage, remove_app)
    if remove_app and outcome != UNTRACKED:  # removed: the user runs it no more
        settle_link(state, app, link)
        if state.is_empty() and state.routed == state.handled:  # a hint (10)
            state.idle_at = state.handled
            tracker.idle.add(tracker)
        if (group_ref is not None and group_state is not None and group_state.is_empty()
                and group_state.routed == group_state.handled):
            group_state.idle_at = group_state.handled
            group_ref.idle.add(group_ref)
    if outcome != APPLIED:
        log.warning("decrease_ignored", user=state.name, group=link.group, app=app,
                    queue=".".join(parts), reason="not tracked"
                    if outcome == GROUP_UNTRACKED else "queue not tracked")

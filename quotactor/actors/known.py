"""Known-user routing: a single call for an application its user's live tracker already runs
is decided by that tracker (and its group's) on the caller's thread, without the manager.

Most calls a scheduler makes are allocations and releases of running applications. Routing one
changes nothing in the manager's views but two counters: the user already has a tracker, the
application's id is already its user's, and its group is the one linked at its start. So the
caller looks the tracker up itself (`ManagerActor.users`, one dict read), and if the
application is linked there (a pre-check without the claim, which only spares a new
application's call a claim), claims it if it is idle (`runtime.here`) and, holding it, checks
that the manager's views agree with the tracker's own, then claims the group tracker the same
way and decides both in one compiled core call (`increase_both` / `decrease_both`, as a
batch's held items are). Anything else (an unknown or busy tracker, a new application, a
removal, a busy group, a view that disagrees) returns `NOT_KNOWN` having changed nothing, and
the call is routed by the manager as before.

Why this is race-free against retirement. A tracker's `routed` counts the operations the
manager routed to it (written only by the manager's handler), `handled` those it has handled,
and `idle_at` is the `handled` count at which a routed operation last left it empty with
nothing else routed to it; `handled` and `idle_at` are written only by the thread holding the
tracker's claim, as it handles a routed operation. The manager retires a tracker only while
`idle_at == routed` (`ManagerActor`'s docstring), and always `idle_at <= handled <= routed`:
- A retired tracker has `idle_at == handled == routed`, and keeps it until the manager routes
  to it again, which it does only once it has revived it (listed it as live again): nothing
  but a routed operation changes `handled` or `idle_at`.
- A known-user call proceeds only while holding the tracker's claim with `idle_at != handled`
  (and the same for its group's). So it never changes a retired tracker (a caller that looked
  up a tracker just retired finds `idle_at == handled` and goes to the manager; one evicted
  and stopped cannot be claimed), and no tracker it holds can be retired under it: while it
  holds the claim, `idle_at < handled <= routed`. A known-user call never leaves a tracker or
  a group empty (the application stays linked), so it never makes one idle either.

Why it decides as the manager's route would have. Holding the user's claim, the call requires
`routed == handled` (nothing routed to the user is pending), the application linked in the
tracker's state, and the manager's link (`UserTrackerState.links`) naming that same group (a
view that disagrees is routed). The route never changes the link of an application the tracker
runs: it stores links of applications not linked, and drops only those of applications the
tracker does not run (`quotactor.core.routing.settle`); and it increments `routed` before it
delivers anything, so when the call reads `routed == handled` the views agree with the
state. Routing the call at that moment would have changed nothing but counts, and delivered it
to this tracker ahead of any operation routed later (the claim is held: those queue behind it).
The group tracker is claimed only when idle, so everything sent to it before (this user's
earlier group changes included) has been applied. So every outcome of a known-user call is
one the manager's route could have produced: usage stays the sum of the live allocations, no
limit is exceeded (the same checks, user side first, in one atomic core call) and no update is
lost.

It runs where the runtime allows inline handlers (never on the main thread: `here` answers
`BUSY` there, and the call is routed); the claims are `here`'s, released in their own frames
(invariant 3); a failing core step changes neither side and raises, as the routed path's
failure does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from quotactor.actors.messages import Known, KnownGroup, NotKnown
from quotactor.actors.runtime import BUSY, Busy, here
from quotactor.core.decision import ACCEPTED, Decision
from quotactor.core.identity import UserGroup
from quotactor.core.limits import LimitTable
from quotactor.core.resources import Resource
from quotactor.core.tracker import (
    APPLIED,
    GROUP_UNTRACKED,
    UserTrackerState,
    decrease_both,
    increase_both,
)
from quotactor.logs import get_logger

if TYPE_CHECKING:
    from quotactor.actors.group_tracker import GroupTrackerActor
    from quotactor.actors.manager import ManagerActor
    from quotactor.actors.user_tracker import UserTrackerActor

__all__ = ["NOT_KNOWN", "apply_known", "decide_group", "decide_user"]

log = get_logger()


NOT_KNOWN = NotKnown()
_MISSING = object()
_new = tuple.__new__  # a named tuple's own `__new__` is a Python function: 3x the cost


def apply_known(
    manager: ManagerActor,
    item: tuple[tuple[str, ...], str, Resource, UserGroup]
    | tuple[tuple[str, ...], str, Resource, UserGroup, bool],
) -> Decision | NotKnown | None:
    """Decide a single call's validated change without the manager if its user and
    application are known (see the module's docstring): its answer, or `NOT_KNOWN` with
    nothing changed. A core step's failure is raised, nothing of the change applied."""
    if len(item) == 4:
        parts, app, usage, who = item
        increase = True
    else:
        parts, app, usage, who, remove_app = item
        if remove_app:
            return NOT_KNOWN  # the manager's links change: routed
        increase = False
    tracker = manager.users.get(who.user)
    if tracker is None or app not in tracker.state.app_groups:
        return NOT_KNOWN  # a pre-check without the claim (a new application, mostly): the
        # state may change under it, but a wrong "no" only routes the call, and a "yes" is
        # checked again below, holding the claim
    answer: Decision | NotKnown | Busy | None = here(
        tracker, _new(Known, (parts, app, usage, increase, manager)))
    return NOT_KNOWN if isinstance(answer, Busy) else answer


def decide_user(tracker: UserTrackerActor, msg: Known) -> Decision | NotKnown | None:
    """The user tracker's handler of a `Known` change (it holds its claim)."""
    state = tracker.state
    handled = state.handled
    if state.idle_at == handled:
        return NOT_KNOWN
    parts, app, usage, increase, manager = msg
    app_groups = state.app_groups
    if app not in app_groups:
        return NOT_KNOWN
    group = app_groups[app]
    name = state.name
    with manager.views_lock:  # the views as the manager's last handler left them
        links = state.links
        if (state.routed != handled or manager.closed or links is None
                or links.get(app, _MISSING) != group):
            return NOT_KNOWN  # views that disagree: routed
        table = manager.applied.table
        group_ref = None if group is None else manager.groups.get(group)
    if group is None:
        outcome: Any = _decide(state, None, table, parts, app, usage, increase, None)
    else:
        if group_ref is None:
            return NOT_KNOWN
        outcome = here(group_ref, _new(KnownGroup, (
            state, parts, app, usage, increase, table, group)))
        if outcome is BUSY or outcome is NOT_KNOWN:
            return NOT_KNOWN
    if increase:
        return outcome  # type: ignore[no-any-return]  # a Decision
    if outcome != APPLIED:
        log.warning("decrease_ignored", user=name, group=group, app=app,
                    queue=".".join(parts),
                    reason="not tracked" if outcome == GROUP_UNTRACKED else "queue not tracked")
    return None


def decide_group(group: GroupTrackerActor, msg: KnownGroup) -> Decision | int | NotKnown:
    """The group tracker's handler of a `KnownGroup` change (this thread holds the user
    tracker and now the group): `NOT_KNOWN` if the group may be retired."""
    counts = group.state
    if counts.idle_at == counts.handled:
        return NOT_KNOWN
    user, parts, app, usage, increase, table, name = msg
    return _decide(user, group, table, parts, app, usage, increase, name)


def _decide(
    user: UserTrackerState, group: GroupTrackerActor | None, table: LimitTable,
    parts: tuple[str, ...], app: str, usage: Resource, increase: bool, name: str | None,
) -> Decision | int:
    """Both sides in one atomic core call: a `Decision` for an increase, the decrease's
    outcome (`APPLIED`...) for a decrease."""
    state = None if group is None else group.state
    try:
        if not increase:
            return decrease_both(user, state, parts, app, usage, False)
        refusal = increase_both(user, state, table, parts, app, usage, name)
    except Exception:
        log.exception("change_failed", user=user.name, app=app)
        raise
    if refusal is None:
        return ACCEPTED
    log.info("increase_refused", user=user.name, app=app, queue=".".join(parts),
             reason=str(refusal))
    return Decision(False, refusal)

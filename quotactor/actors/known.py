"""Known-user routing: a single call for an application its user's live tracker already runs
is decided by that tracker (and its group's) on the caller's thread, without the manager.

Most calls a scheduler makes are allocations and releases of running applications; routing one
would change nothing in the manager's views but two counts. The caller looks the tracker up
(`ManagerActor.users`), claims it if it is idle and, holding it, checks that the manager's
views agree with the tracker's own (invariant 11 of docs/concurrency.md), then claims the group
tracker the same way and decides both in one core call (`user_tracker.decide_user`,
`group_tracker.decide_group`). Anything else (an unknown or busy tracker, a new application, a
removal, a busy group, a view that disagrees) returns `NOT_KNOWN` having changed nothing, and
the call is routed by the manager. A core step's failure changes neither side and is raised,
as the routed path's is.
"""

from __future__ import annotations

from quotactor.actors.manager import ManagerActor
from quotactor.actors.messages import NOT_KNOWN, NotKnown
from quotactor.actors.runtime import Busy, here
from quotactor.actors.user_tracker import Known
from quotactor.core.decision import Decision
from quotactor.core.identity import UserGroup
from quotactor.core.resources import Resource

__all__ = ["NOT_KNOWN", "apply_known"]

_new = tuple.__new__  # a named tuple's own `__new__` is a Python function


def apply_known(
    manager: ManagerActor,
    item: tuple[tuple[str, ...], str, Resource, UserGroup]
    | tuple[tuple[str, ...], str, Resource, UserGroup, bool],
) -> Decision | NotKnown | None:
    """Decide a single call's validated change without the manager if its user and
    application are known (invariant 11): its answer, or `NOT_KNOWN` with
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

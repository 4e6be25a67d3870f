"""Known-user calls: a single change of a user whose tracker the manager lists is decided on
the caller's thread, holding that tracker and its group's, without the manager.

Routing such a call would change nothing in the manager's views but counts, and a link for a
new application. The caller looks the tracker up (`ManagerActor.users`) and claims it if it
is idle; holding it, it reads what the route would choose (the application's link, or the
table's group for a new application), claims that group's tracker if it is idle and checks,
under the manager's views lock, that the views agree (invariant 11 of docs/concurrency.md).
Then it decides with the lock released, in core calls (`quotactor.core.routing.decide_known`):
a refusal changes nothing; an accepted start of a new application links it first, under the
lock; a removal settles the link and marks the trackers it leaves idle, as a routed one does.
Anything else (an unknown or busy tracker, a busy group or one not listed, a change of an
application not linked, a view that disagrees, an item of the application routed meanwhile)
returns `NOT_KNOWN` having changed nothing, and the call is routed by the manager. A core
step's failure changes neither side and is raised, as the routed path's is.
"""

from __future__ import annotations

from logging import INFO

from quotactor.actors.group_tracker import EVENTS
from quotactor.actors.holding import let_go
from quotactor.actors.manager import ManagerActor
from quotactor.actors.messages import NOT_KNOWN, NotKnown
from quotactor.actors.runtime import Actor, _guarded, _held
from quotactor.core.decision import Decision
from quotactor.core.identity import UserGroup
from quotactor.core.resources import Resource
from quotactor.core.routing import decide_known
from quotactor.core.tracker import APPLIED, GROUP_UNTRACKED
from quotactor.logs import get_logger

__all__ = ["NOT_KNOWN", "apply_known"]

log = get_logger()
_claim = Actor._claim


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
        outcome = decide_known(manager.views, manager, tracker.state, item, _claim, let_go,
                               manager.idle, NOT_KNOWN)
    except Exception:
        log.exception("change_failed", user=item[3].user, app=item[1])
        raise
    finally:
        held.depth -= 1
        let_go(tracker)
    if len(item) == 4:
        if type(outcome) is Decision and not outcome.ok and EVENTS.isEnabledFor(INFO):
            log.info("increase_refused", user=item[3].user, app=item[1],
                     queue=".".join(item[0]), reason=str(outcome.refusal))
        return outcome  # type: ignore[no-any-return]  # a Decision, or NOT_KNOWN
    if type(outcome) is not int:
        return NOT_KNOWN
    if outcome != APPLIED:
        log.warning("decrease_ignored", user=item[3].user, app=item[1],
                    queue=".".join(item[0]), reason="not tracked"
                    if outcome == GROUP_UNTRACKED else "queue not tracked")
    return None

"""The user tracker actor: one per user; the place where an increase is decided.

`decide` runs the steps of one or more user trackers that the calling thread holds, asking
their groups by message: a tracker's own handler (a call's or a batch's share sent to a
tracker that was busy), a single call whose group was busy, and a batch for its held users
one of whose groups was busy and did not come by the caller's deadline. A call or a batch
whose trackers are idle holds their groups too and decides without messages
(`quotactor.actors.batch`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from logging import INFO
from typing import Any, NamedTuple

from quotactor.actors.group_tracker import EVENTS, Counted, GroupTrackerActor
from quotactor.actors.holding import holding
from quotactor.actors.messages import (
    GROUP_SKIP,
    GroupBatch,
    GroupChange,
    GroupDecrease,
    GroupIncrease,
    GroupStatus,
    ReadPart,
    ReadResult,
    SnapshotPart,
)
from quotactor.actors.runtime import (
    Actor,
    Busy,
    Submitted,
    Ticket,
    WorkerPool,
    answer,
    here,
    submit,
)
from quotactor.core.decision import ACCEPTED, Decision
from quotactor.core.errors import OperationTimeout
from quotactor.core.journal import Journal
from quotactor.core.limits import LimitTable
from quotactor.core.queue_tracker import Refusal
from quotactor.core.resources import Resource
from quotactor.core.tracker import (
    FAILED,
    GROUP_UNTRACKED,
    REFUSED,
    GroupTrackerState,
    Link,
    UserTrackerState,
    decide_held,
    settle_link,
)
from quotactor.logs import get_logger

log = get_logger()



class Routing(NamedTuple):
    """The manager's answer to a `Route`: the routed items' messages in the caller's order
    (each names the user tracker it goes to, `user_ref`), the items refused before routing (by
    position), and the user and group trackers the routed items name, each once, in the order
    first named. Its lists belong to the sender."""

    routed: list[UserIncrease | UserDecrease]
    refused: list[tuple[int, Exception]]
    users: list[UserTrackerActor]
    groups: list[GroupTrackerActor]


class UserIncrease(NamedTuple):
    """An increase routed to a user tracker. Both routed changes share their first six
    fields' layout (the group's tracker at 5) and end with the states of the user's and the
    group's trackers, the user's tracker and the application's `Link` (counted handled by
    whoever handles the item: invariant 13), so a batch's held items go to one compiled core
    call (`quotactor.core.tracker.decide_held`) as they are. The message names its user
    tracker itself: a routed item is its message, not a (tracker, message) pair, one tuple
    fewer per item to build and for the collector to traverse."""

    position: int
    parts: tuple[str, ...]
    app: str
    usage: Resource
    group: str | None
    group_ref: GroupTrackerActor | None
    table: LimitTable
    user_state: UserTrackerState
    group_state: GroupTrackerState | None
    user_ref: UserTrackerActor
    link: Link


class UserDecrease(NamedTuple):
    """A decrease routed to a user tracker (layout: see `UserIncrease`)."""

    position: int
    parts: tuple[str, ...]
    app: str
    usage: Resource
    group: str | None
    group_ref: GroupTrackerActor | None
    remove_app: bool
    user_state: UserTrackerState
    group_state: GroupTrackerState | None
    user_ref: UserTrackerActor
    link: Link | None


class UserBatch(NamedTuple):
    """A user's share of a `Route`, in the caller's order; `position` places each answer.

    The answer is a tuple aligned with `items`: a `Decision` per increase, None per decrease,
    or the exception an item failed with. `deadline` (`time.monotonic`) is the caller's: the
    tracker waits for a group no longer than that.
    """

    items: tuple[UserIncrease | UserDecrease, ...]
    deadline: float


UserMessage = UserBatch | ReadPart | SnapshotPart
"""What a user tracker handles."""


Result = Decision | Exception | None
"""An item's answer: a decision, None for a decrease, or the error it failed with."""
UserChange = UserIncrease | UserDecrease


class _Unanswered:
    """The group did not answer in time (and, for an increase, never will apply it)."""


UNANSWERED = _Unanswered()
Verdict = Refusal | Exception | None | _Unanswered
"""The group's word on one change: None (applied), a refusal, an error, or no answer."""


class UserTrackerActor(Counted, Actor[UserMessage]):
    """Decides increases for one user: check own path, apply it revocably, ask the group, then
    keep or undo.

    While it waits for the group it processes nothing else, so nobody sees the revocable change
    and its check stays true; the group checks and applies in one handler. Hence both change or
    neither: a refusal, an error or a timeout of the group rolls the user side back (its journal
    holds only builtin stores, which cannot fail half-way). A decrease is applied the same way
    and undone if the group fails it. The tracker waits only on a group tracker, which waits on
    nobody, and never longer than the caller's deadline. Every operation the manager routed to
    the group gets exactly one group change (applied, or `GroupSkip`), so the group's count
    stays true. When an operation leaves it empty with nothing else routed to it, it records the
    count (`idle_at`) the manager needs to retire it safely and adds itself to the manager's
    `idle` set (see `ManagerActor`).
    """

    __slots__ = ("idle", "state")

    state: UserTrackerState

    def __init__(self, pool: WorkerPool, name: str, idle: set[Any], links_lock: Any) -> None:
        Actor.__init__(self, pool)  # not `super()`: a new tracker is on the hot path
        self.state = UserTrackerState(name, links_lock)
        self.idle = idle  # the manager's: where a tracker that becomes idle adds itself

    def handle(self, message: UserMessage) -> Sequence[Result] | None:
        if isinstance(message, UserBatch):
            return self._share(message.items, message.deadline)
        state = self.state
        if isinstance(message, ReadPart):
            table, parts, app = message.table, message.parts, message.app
            answer(message.reply, lambda: ReadResult(
                state.headroom(table, parts), state.app_refusal(table, parts, app)))
            return None
        if isinstance(message, SnapshotPart):
            table = message.table
            answer(message.reply, lambda: state.snapshot(table))
            return None
        raise TypeError(f"unexpected message {type(message).__name__}")

    def _share(self, items: tuple[UserChange, ...], deadline: float) -> Sequence[Result]:
        """A call's or a batch's share sent to this tracker while another caller held it: held
        with every group it names when they are all idle (claimed here and released by
        `holding`: invariant 7), in one compiled core call; else by messages to the groups,
        each change settled before the next is checked (`decide`, or `_alone` for one)."""
        groups = list({msg.group_ref: None for msg in items if msg.group_ref is not None})
        answers = holding(groups, lambda held: None if len(held) < len(groups)
                          else _decide_share(items))
        if answers is not None:
            return answers
        if len(items) == 1:
            return self._alone(items[0], deadline)
        return decide(((self, items),), deadline)[0]

    def _alone(self, msg: UserChange, deadline: float) -> tuple[Result]:
        """One change sent to this tracker while another caller held it (a single call's, or
        a batch's one-item share): `decide`'s steps for one change, without its rounds."""
        result, change, journal = self._begin(msg)
        if change is not None and msg.group_ref is not None:
            status = _await(_ask(msg.group_ref, (change,), isinstance(change, GroupIncrease)),
                            deadline, msg.group)
            if isinstance(status, GroupStatus):
                if journal is not None:
                    result = self._end(msg, journal, status.outcomes[0])
            elif journal is not None:
                result = self._end(msg, journal, UNANSWERED if status is None else status)
        state = self.state
        state.handled += 1
        _handled_links(state, (msg,))
        if state.is_empty() and state.routed == state.handled:
            state.idle_at = state.handled
            self.idle.add(self)
        return (result,)

    # -- one change: the user side before the group's word, and after it ----------------

    def _begin(self, msg: UserChange) -> tuple[Result, GroupChange | None, Journal | None]:
        """Apply the user side revocably: (the answer if final, the change for the group or
        None, the journal to keep open while the group decides, or None when final)."""
        skip = None if msg.group_ref is None else GROUP_SKIP
        journal = Journal()
        state = self.state
        if isinstance(msg, UserIncrease):
            try:
                refusal = state.check_increase(msg.table, msg.parts, msg.app, msg.usage)
                if refusal is None:
                    state.increase(msg.parts, msg.app, msg.usage, msg.group, journal)
            except Exception as exc:
                journal.rollback()
                log.exception("increase_failed", user=state.name, app=msg.app)
                return exc, skip, None
            if refusal is not None:
                log.info("increase_refused", user=state.name, app=msg.app,
                         queue=".".join(msg.parts), reason=str(refusal))
                return Decision(False, refusal), skip, None
            if skip is None:
                return ACCEPTED, None, None
            return None, GroupIncrease(msg.parts, msg.app, msg.usage, state.name, msg.table), \
                journal
        try:
            applied = state.decrease(msg.parts, msg.app, msg.usage, msg.remove_app, journal)
        except Exception as exc:
            journal.rollback()
            log.exception("decrease_failed", user=state.name, app=msg.app)
            return exc, skip, None
        if not applied:
            log.warning("decrease_ignored", user=state.name, app=msg.app,
                        queue=".".join(msg.parts),
                        reason="queue not tracked" if msg.app in state.app_groups
                        else "unknown application")
            return None, skip, None
        if skip is None:
            return None, None, None
        return None, GroupDecrease(msg.parts, msg.app, msg.usage, msg.remove_app, state.name), \
            journal

    def _end(self, msg: UserChange, journal: Journal, verdict: Verdict) -> Result:
        """Keep or undo the user side of a change, by the group's word on it."""
        if isinstance(msg, UserIncrease):
            if verdict is None:
                return ACCEPTED
            journal.rollback()
            if isinstance(verdict, Refusal):
                log.info("increase_refused", user=self.state.name, app=msg.app,
                         queue=".".join(msg.parts), reason=str(verdict))
                return Decision(False, verdict)
            if isinstance(verdict, Exception):
                return verdict
            return OperationTimeout(
                f"group {msg.group!r} did not answer in time; the increase was not applied")
        if verdict is None:
            return None
        if isinstance(verdict, _Unanswered):
            # Queued: the group applies it in its turn (a decrease is never refused).
            log.warning("group_decrease_unanswered", user=self.state.name, group=msg.group)
            return None
        journal.rollback()
        return verdict if isinstance(verdict, Exception) else None


_Waiter = tuple[int, UserTrackerActor, UserChange, Journal] | None


class _Send:
    """What one round sends one group: its changes in order, the user sides waiting on each
    (None for a skip), and whether an increase is among them (a busy group then gets the
    batch with a ticket)."""

    __slots__ = ("changes", "increases", "name", "waiters")

    def __init__(self, name: str) -> None:
        self.name = name
        self.changes: list[GroupChange] = []
        self.waiters: list[_Waiter] = []
        self.increases = False


def decide(
    shares: Sequence[tuple[UserTrackerActor, Sequence[UserChange]]], deadline: float
) -> list[list[Result]]:
    """Run each held user tracker's changes in order; the answers, aligned with `shares`.

    The calling thread holds every tracker of `shares` (its own handler, or a batch's
    `holding`) and none of their groups, so no one else sees a revocable change. The changes
    go in rounds: round r takes the r-th change of every tracker, applies the user sides, sends
    each group one `GroupBatch` of the round's changes for it (user before group, always; a
    group never waits, so neither does this for long), then keeps or undoes each user side by
    the group's word. A tracker's next change is checked only once its previous one is settled,
    exactly as if each came alone; most shares hold one change and are one round. At the end,
    the trackers left empty are marked idle (`idle_at`; the groups mark themselves).
    """
    results: list[list[Result]] = [[] for _ in shares]
    active = list(enumerate(shares))
    r = 0
    while active:
        sends: dict[GroupTrackerActor, _Send] = {}
        for index, (tracker, changes) in active:
            msg = changes[r]
            result, change, journal = tracker._begin(msg)
            results[index].append(result)
            if change is None or msg.group_ref is None or msg.group is None:
                continue
            send = sends.get(msg.group_ref)
            if send is None:
                send = sends[msg.group_ref] = _Send(msg.group)
            send.changes.append(change)
            send.waiters.append(None if journal is None else (index, tracker, msg, journal))
            if isinstance(change, GroupIncrease):  # `_begin` journals every increase
                send.increases = True
        if sends:
            _ask_groups(sends, results, r, deadline)
        r += 1
        active = [share for share in active if len(share[1][1]) > r]
    for tracker, changes in shares:
        state = tracker.state
        state.handled += len(changes)
        _handled_links(state, changes)
        if state.is_empty() and state.routed == state.handled:
            state.idle_at = state.handled
            tracker.idle.add(tracker)
    return results


def _handled_links(state: UserTrackerState, changes: Sequence[UserChange]) -> None:
    """Count `changes`, handled by the tracker this thread holds, on their links, then settle
    the links of the applications it no longer runs (invariant 13)."""
    for msg in changes:
        if msg.link is not None:
            msg.link.handled += 1
    for msg in changes:
        if msg.link is not None:
            settle_link(state, msg.app, msg.link)


def _ask_groups(
    sends: dict[GroupTrackerActor, _Send],
    results: list[list[Result]], r: int, deadline: float,
) -> None:
    """Send every group its changes of round `r` (an idle group runs them here, at once), then
    settle each waiting user side by the group's word."""
    asked = [(ref, send, _ask(ref, tuple(send.changes), send.increases))
             for ref, send in sends.items()]
    for _, send, answered in asked:
        name, waiters = send.name, send.waiters
        status = _await(answered, deadline, name)
        if isinstance(status, GroupStatus):
            verdicts: Sequence[Verdict] = status.outcomes
        else:
            verdicts = [UNANSWERED if status is None else status] * len(waiters)
        for waiter, verdict in zip(waiters, verdicts, strict=True):
            if waiter is not None:
                index, tracker, msg, journal = waiter
                results[index][r] = tracker._end(msg, journal, verdict)


class _Sent(NamedTuple):
    """A group batch queued for a busy group: its answer comes on `pending`."""

    pending: Submitted
    ticket: Ticket | None


def _ask(
    ref: GroupTrackerActor, changes: tuple[GroupChange, ...], increases: bool,
) -> GroupStatus | Exception | _Sent:
    """Run the group's handler here when it is idle (no ticket needed: the answer comes now);
    else queue the batch, with a ticket when it holds increases: `_await` waits for it."""
    try:
        status: GroupStatus | Busy = here(ref, GroupBatch(changes, None))
    except Exception as exc:
        return exc
    if not isinstance(status, Busy):
        return status
    ticket = Ticket() if increases else None
    return _Sent(submit(ref, GroupBatch(changes, ticket)), ticket)


def _await(sent: _Sent | GroupStatus | Exception | None, deadline: float, group: str | None
           ) -> GroupStatus | Exception | None:
    """A queued group batch's answer (or the answer `_ask` got at once); None when it did not
    come in time (its increases then never apply); the exception when the group could not be
    asked."""
    if not isinstance(sent, _Sent):
        return sent
    pending, ticket = sent
    try:
        status: GroupStatus = pending.get(_left(deadline))
    except OperationTimeout:
        if ticket is None or ticket.abandon():
            log.error("group_timeout", group=group)
            return None
        try:  # taken: the group is applying it now, and a group handler never waits
            status = pending.get(None)
        except Exception as exc:
            return exc
    except Exception as exc:
        return exc
    return status


def _left(deadline: float) -> float:
    return max(0.0, deadline - time.monotonic())


def _decide_share(items: tuple[UserChange, ...]) -> list[Result]:
    """One user's changes, its tracker and their groups held, in one compiled core call
    (`decide_held`, which counts them handled and marks the trackers it leaves idle): the
    answers, aligned with `items`."""
    results: list[Result] = [None] * (max(msg.position for msg in items) + 1)
    notes = decide_held(list(items), UserIncrease, results, items[0].user_ref.idle)
    failures: list[Exception] = []
    explain(items, notes, failures)
    answers = [results[msg.position] for msg in items]
    for index, kind, detail in notes:
        if kind == FAILED:
            answers[index] = detail
    return answers


def explain(mine: Sequence[UserChange], notes: list[tuple[int, int, Any]],
             failures: list[Exception]) -> None:
    """Log each of `decide_held`'s notes, as the trackers' handlers do, and collect the
    failures."""
    for index, kind, detail in notes:  # refusals, decreases that changed nothing, failures
        msg = mine[index]
        tracker = msg.user_ref
        state = tracker.state
        if kind == REFUSED:
            if EVENTS.isEnabledFor(INFO):  # most hosts drop it: not built for nothing
                log.info("increase_refused", user=state.name, app=msg.app,
                         queue=".".join(msg.parts), reason=str(detail))
        elif kind == FAILED:
            log.exception("change_failed", user=state.name, app=msg.app, exc_info=detail)
            failures.append(detail)
        else:
            _ignored(state, msg.group_state, msg, kind)  # type: ignore[arg-type]  # a decrease


def _ignored(state: UserTrackerState, group: GroupTrackerState | None, msg: UserDecrease,
             outcome: int) -> None:
    """Say why a decrease changed nothing (or nothing of the group's), as the trackers do."""
    if outcome == GROUP_UNTRACKED and group is not None:
        log.warning("decrease_ignored", group=group.name, app=msg.app,
                    queue=".".join(msg.parts), reason="not tracked")
    else:
        log.warning("decrease_ignored", user=state.name, app=msg.app,
                    queue=".".join(msg.parts),
                    reason="queue not tracked" if msg.app in state.app_groups
                    else "unknown application")



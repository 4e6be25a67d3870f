"""The user tracker actor: one per user; the place where an increase is decided."""

from __future__ import annotations

import time
from collections import deque

from quotactor.actors.group_tracker import GroupTrackerActor
from quotactor.actors.messages import (
    GroupDecrease,
    GroupIncrease,
    GroupSkip,
    GroupStatus,
    Idle,
    ReadPart,
    ReadResult,
    Relink,
    SnapshotPart,
    Ticket,
    UserBatch,
    UserDecrease,
    UserIncrease,
    UserMessage,
)
from quotactor.actors.runtime import Actor, WorkerPool, answer, call, submit
from quotactor.core.decision import ACCEPTED, Decision
from quotactor.core.errors import OperationTimeout
from quotactor.core.journal import Journal
from quotactor.core.tracker import UserTrackerState
from quotactor.logs import get_logger

log = get_logger()

Outcome = tuple[Decision | Exception | None, GroupStatus | None]
"""An item's answer (a decision, None for a decrease, or the error it failed with), and the
group's status when the group handled it."""


class UserTrackerActor(Actor[UserMessage]):
    """Decides increases for one user: check own path, apply it revocably, ask the group, then
    keep or undo.

    While it waits for the group it processes nothing else, so nobody sees the revocable change
    and its check stays true; the group checks and applies in one handler. Hence both change or
    neither: a refusal, an error or a timeout of the group rolls the user side back (its journal
    holds only builtin stores, which cannot fail half-way). A decrease is applied the same way
    and undone if the group fails it. The tracker waits only on a group tracker, which waits on
    nobody, and never longer than the caller's deadline. Every operation the manager routed to
    the group gets exactly one group message (the change, or `GroupSkip`), so the group's count
    stays true. When an operation leaves it (or a group) empty, it reports it to the manager
    (never asks: see `ManagerActor.reports`), with the count the manager needs to retire
    trackers safely.
    """

    __slots__ = ("handled", "reports", "state")

    def __init__(self, pool: WorkerPool, name: str, reports: deque[Idle | Relink]) -> None:
        super().__init__(pool)
        self.state = UserTrackerState(name)
        self.handled = 0
        self.reports = reports  # the manager's; shared, not a bound method per tracker

    def handle(
        self, message: UserMessage
    ) -> tuple[Decision | Exception | None, ...] | None:
        if isinstance(message, UserBatch):
            return self._run(message)
        state = self.state
        if isinstance(message, ReadPart):
            table, parts, app = message.table, message.parts, message.app
            answer(message.reply, lambda: ReadResult(
                state.headroom(table, parts), state.can_run_app(table, parts, app)))
            return None
        if isinstance(message, SnapshotPart):
            table = message.table
            answer(message.reply, lambda: state.snapshot(table))
            return None
        raise TypeError(f"unexpected message {type(message).__name__}")

    def _run(self, batch: UserBatch) -> tuple[Decision | Exception | None, ...]:
        """Process items in order; then report this tracker or its groups if they are empty."""
        idle_groups: dict[str, tuple[GroupTrackerActor, int]] = {}
        results: list[Decision | Exception | None] = []
        for item in batch.items:
            outcome: Outcome
            try:
                if isinstance(item, UserIncrease):
                    outcome = self._increase(item, batch.deadline)
                else:
                    outcome = self._decrease(item, batch.deadline)
            except Exception as exc:  # the steps catch their own; this is a last resort
                log.exception("operation_failed", user=self.state.name, app=item.app)
                outcome = exc, None
            result, status = outcome
            self.handled += 1
            results.append(result)
            if status is not None and item.group is not None and item.group_ref is not None:
                if status.empty:
                    idle_groups[item.group] = (item.group_ref, status.handled)
                else:
                    idle_groups.pop(item.group, None)
        for group, (ref, handled) in idle_groups.items():
            self.reports.append(Idle("group", group, ref, handled))
        if self.state.is_empty():
            self.reports.append(Idle("user", self.state.name, self, self.handled))
        return tuple(results)

    def _skip(self, msg: UserIncrease | UserDecrease, deadline: float) -> GroupStatus | None:
        """Tell the group an operation routed to it ended here, so its count stays true."""
        if msg.group_ref is None:
            return None
        try:
            status: GroupStatus = call(msg.group_ref, GroupSkip(), _left(deadline))
        except Exception:  # a timeout: the skip stays queued and is counted when handled
            log.warning("group_skip_unanswered", user=self.state.name, group=msg.group)
            return None
        return status

    def _increase(self, msg: UserIncrease, deadline: float) -> Outcome:
        journal = Journal()
        try:
            refusal = self.state.check_increase(msg.table, msg.parts, msg.app, msg.usage)
            if refusal is None:
                self.state.increase(msg.parts, msg.app, msg.usage, msg.group, journal)
        except Exception as exc:
            journal.rollback()
            log.exception("increase_failed", user=self.state.name, app=msg.app)
            return exc, self._skip(msg, deadline)
        if refusal is not None:
            log.info("increase_refused", user=self.state.name, app=msg.app,
                     queue=".".join(msg.parts), reason=str(refusal))
            return Decision(False, refusal), self._skip(msg, deadline)
        if msg.group_ref is None:
            return ACCEPTED, None
        status = self._ask_group(msg, deadline)
        if isinstance(status, Exception):
            journal.rollback()
            return status, None
        if status is None:
            journal.rollback()
            return OperationTimeout(
                f"group {msg.group!r} did not answer in time; the increase was not applied"
            ), None
        if status.error is not None:
            journal.rollback()
            return status.error, status
        if not status.ok:
            journal.rollback()
            log.info("increase_refused", user=self.state.name, app=msg.app,
                     queue=".".join(msg.parts), reason=str(status.refusal))
            return Decision(False, status.refusal), status
        return ACCEPTED, status

    def _ask_group(self, msg: UserIncrease, deadline: float) -> GroupStatus | Exception | None:
        """The group's verdict; None when it did not take the increase before the deadline
        (then it never will); the exception when it could not be asked."""
        assert msg.group_ref is not None
        ticket = Ticket()
        pending = submit(msg.group_ref, GroupIncrease(
            msg.parts, msg.app, msg.usage, self.state.name, msg.table, ticket))
        try:
            status: GroupStatus = pending.get(_left(deadline))
        except OperationTimeout:
            if ticket.abandon():
                log.error("group_timeout", user=self.state.name, app=msg.app, group=msg.group)
                return None
            # Taken: the group is applying it now, and a group handler never waits.
            status = pending.get(None)
        except Exception as exc:
            return exc
        return status

    def _decrease(self, msg: UserDecrease, deadline: float) -> Outcome:
        linked, group = self.state.group_of(msg.app)
        journal = Journal()
        try:
            applied = self.state.decrease(msg.parts, msg.app, msg.usage, msg.remove_app, journal)
        except Exception as exc:
            journal.rollback()
            log.exception("decrease_failed", user=self.state.name, app=msg.app)
            self._relink(msg, linked, group)
            return exc, self._skip(msg, deadline)
        if not applied:
            log.warning("decrease_ignored", user=self.state.name, app=msg.app,
                        queue=".".join(msg.parts),
                        reason="unknown application" if not linked else "queue not tracked")
            return None, self._skip(msg, deadline)
        if msg.group_ref is None:
            return None, None
        try:
            status: GroupStatus = call(
                msg.group_ref, GroupDecrease(msg.parts, msg.app, msg.usage, msg.remove_app),
                _left(deadline),
            )
        except OperationTimeout:
            # Queued: the group applies it in its turn (a decrease is never refused).
            log.warning("group_decrease_unanswered", user=self.state.name, group=msg.group)
            return None, None
        except Exception as exc:
            journal.rollback()
            self._relink(msg, linked, group)
            return exc, None
        if status.error is not None:
            journal.rollback()
            self._relink(msg, linked, group)
            return status.error, status
        return None, status

    def _relink(self, msg: UserDecrease, linked: bool, group: str | None) -> None:
        """A removal that failed: the manager forgot the app's group when it routed it; tell
        it the link stands."""
        if msg.remove_app and linked:
            self.reports.append(Relink(self.state.name, msg.app, group))


def _left(deadline: float) -> float:
    return max(0.0, deadline - time.monotonic())

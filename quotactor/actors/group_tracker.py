"""The group tracker actor: one per group (and one for the shared `*` group)."""

from __future__ import annotations

from logging import getLogger
from typing import Any

from quotactor.actors.messages import (
    GroupBatch,
    GroupDecrease,
    GroupIncrease,
    GroupMessage,
    GroupStatus,
    ReadPart,
    ReadResult,
    SnapshotPart,
)
from quotactor.actors.runtime import Actor, WorkerPool
from quotactor.core.queue_tracker import Refusal
from quotactor.core.tracker import (
    GroupTrackerState,
    TrackerState,
)
from quotactor.logs import get_logger

log = get_logger()
EVENTS = getLogger("quotactor")
"""Where `log`'s events go (`quotactor.logs`): asked whether it takes INFO before an info
event's fields are built (asking `log` itself binds a logger first)."""


class Counted:
    """A tracker actor's retirement counts, `routed`, `handled` and `idle_at` (see
    `ManagerActor`): its state's (`TrackerState`), where the compiled route and batch
    decisions update them; these properties are for the rest (views, tests)."""

    __slots__ = ()
    state: TrackerState

    @property
    def routed(self) -> int:
        """Operations the manager routed here (written by the manager's route only)."""
        return self.state.routed

    @routed.setter
    def routed(self, value: int) -> None:
        self.state.routed = value

    @property
    def handled(self) -> int:
        """Routed operations handled (written by the thread holding the claim)."""
        return self.state.handled

    @handled.setter
    def handled(self, value: int) -> None:
        self.state.handled = value

    @property
    def idle_at(self) -> int:
        """`handled` when a routed operation last left it empty with nothing else routed to
        it: while `idle_at == routed` the manager may retire it."""
        return self.state.idle_at

    @idle_at.setter
    def idle_at(self, value: int) -> None:
        self.state.idle_at = value


class GroupTrackerActor(Counted, Actor[GroupMessage]):
    """Checks and applies group increases atomically; answers only user trackers and the manager.

    It never waits on anyone, so it can never be part of a cycle of waits, and its handlers may
    run on any thread that claims it. `handled` counts the operations the manager routed here
    that are done (applied, refused, failed or skipped by the user tracker); `idle_at` records
    it when they leave the group empty with nothing else routed to it, for the manager's
    retirement. A change that fails leaves the state as it was (the state's changes are atomic)
    and is answered with its error, counted like any other; the other changes of its batch go
    on. A known-user change (`quotactor.actors.known`) is not routed, so not counted.
    """

    __slots__ = ("idle", "state")

    handlers_wait = False
    state: GroupTrackerState

    def __init__(self, pool: WorkerPool, name: str, idle: set[Any]) -> None:
        Actor.__init__(self, pool)  # not `super()`: a new tracker is on the hot path
        self.idle = idle  # the manager's: where a tracker that becomes idle adds itself
        self.state = GroupTrackerState(name)

    def handle(
        self, message: GroupMessage
    ) -> GroupStatus | None:
        if isinstance(message, GroupBatch):
            return self._apply(message)
        if isinstance(message, ReadPart):
            message.reply.set(ReadResult(
                self.state.headroom(message.table, message.parts),
                self.state.app_refusal(message.table, message.parts, message.app,
                                       message.user),
            ))
            return None
        if isinstance(message, SnapshotPart):
            message.reply.set(self.state.snapshot(message.table))
            return None
        raise TypeError(f"unexpected message {type(message).__name__}")

    def _apply(self, batch: GroupBatch) -> GroupStatus:
        """Each change in order, each atomic; the increases only if the sender still waits."""
        state = self.state
        taken = batch.ticket is None or batch.ticket.take()
        outcomes: list[Refusal | Exception | None] = []
        for item in batch.items:
            state.handled += 1
            try:
                if isinstance(item, GroupIncrease):
                    if not taken:
                        log.warning("increase_abandoned", group=state.name, app=item.app,
                                    user=item.user)
                        outcomes.append(None)  # nobody waits for this answer
                        continue
                    refusal = state.check_increase(item.table, item.parts, item.app, item.user,
                                                   item.usage)
                    if refusal is None:
                        state.increase(item.parts, item.app, item.usage, item.user)
                    outcomes.append(refusal)
                    continue
                if isinstance(item, GroupDecrease) and not state.decrease(
                        item.parts, item.app, item.usage, item.remove_app, item.user):
                    log.warning("decrease_ignored", group=state.name, app=item.app,
                                queue=".".join(item.parts), reason="not tracked")
            except Exception as exc:
                log.exception("group_change_failed", group=state.name)
                outcomes.append(exc)
                continue
            outcomes.append(None)
        if state.is_empty() and state.routed == state.handled:
            state.idle_at = state.handled
            self.idle.add(self)
        return GroupStatus(tuple(outcomes))

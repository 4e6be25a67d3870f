"""The group tracker actor: one per group (and one for the shared `*` group)."""

from __future__ import annotations

from quotactor.actors.messages import (
    GroupDecrease,
    GroupIncrease,
    GroupMessage,
    GroupSkip,
    GroupStatus,
    ReadPart,
    ReadResult,
    SnapshotPart,
)
from quotactor.actors.runtime import Actor, WorkerPool
from quotactor.core.queue_tracker import Refusal
from quotactor.core.tracker import GroupTrackerState
from quotactor.logs import get_logger

log = get_logger()
_CHANGES = (GroupIncrease, GroupDecrease, GroupSkip)


class GroupTrackerActor(Actor[GroupMessage]):
    """Checks and applies group increases atomically; answers only user trackers and the manager.

    It never waits on anyone, so it can never be part of a cycle of waits, and its handlers may
    run on any thread that claims it. `handled` counts the operations the manager routed here
    that are done (applied, refused, failed or skipped by the user tracker); each answer carries
    it, and the user tracker reports an empty group to the manager with that count. A change
    that fails leaves the state as it was (the state's changes are atomic) and is answered with
    its error, counted like any other.
    """

    __slots__ = ("handled", "state")

    handlers_wait = False

    def __init__(self, pool: WorkerPool, name: str) -> None:
        super().__init__(pool)
        self.state = GroupTrackerState(name)
        self.handled = 0

    def _status(self, ok: bool, refusal: Refusal | None = None,
                error: Exception | None = None) -> GroupStatus:
        self.handled += 1
        return GroupStatus(ok, refusal, self.handled, self.state.is_empty(), error)

    def handle(self, message: GroupMessage) -> GroupStatus | None:
        if isinstance(message, _CHANGES):
            try:
                return self._change(message)
            except Exception as exc:
                log.exception("group_change_failed", group=self.state.name)
                return self._status(False, None, exc)
        if isinstance(message, ReadPart):
            message.reply.set(ReadResult(
                self.state.headroom(message.table, message.parts),
                self.state.can_run_app(message.table, message.parts, message.app),
            ))
            return None
        if isinstance(message, SnapshotPart):
            message.reply.set(self.state.snapshot(message.table))
            return None
        raise TypeError(f"unexpected message {type(message).__name__}")

    def _change(self, msg: GroupIncrease | GroupDecrease | GroupSkip) -> GroupStatus:
        if isinstance(msg, GroupSkip):
            return self._status(True)
        if isinstance(msg, GroupDecrease):
            if not self.state.decrease(msg.parts, msg.app, msg.usage, msg.remove_app):
                log.warning("decrease_ignored", group=self.state.name, app=msg.app,
                            queue=".".join(msg.parts), reason="not tracked")
            return self._status(True)
        if not msg.ticket.take():
            log.warning("increase_abandoned", group=self.state.name, app=msg.app, user=msg.user)
            return self._status(False)  # nobody waits for this answer
        refusal = self.state.check_increase(msg.table, msg.parts, msg.app, msg.usage)
        if refusal is not None:
            return self._status(False, refusal)
        self.state.increase(msg.parts, msg.app, msg.usage, msg.user)
        return self._status(True)

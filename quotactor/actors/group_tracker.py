"""The group tracker actor: one per group (and one for the shared `*` group)."""

from __future__ import annotations

from typing import Any

from quotactor.actors._base import SafeReceive, log
from quotactor.actors._pool import PooledActor, WorkerPool
from quotactor.actors.messages import (
    GroupDecrease,
    GroupIncrease,
    GroupSkip,
    GroupStatus,
    ReadPart,
    ReadResult,
    SnapshotPart,
)
from quotactor.core.tracker import GroupTrackerState


class GroupTrackerActor(SafeReceive, PooledActor):
    """Checks and applies group increases atomically; answers only user trackers and the manager.

    It never waits on anyone, so it can never be part of a cycle of waits, and its handlers may
    run on any thread that claims it. `handled` counts the operations the manager routed here
    that are done (applied, refused or skipped by the user tracker); each answer carries it, and
    the user tracker reports an empty group to the manager with that count.
    """

    registered = False
    handlers_wait = False

    def __init__(self, pool: WorkerPool, name: str) -> None:
        super().__init__(pool)
        self.state = GroupTrackerState(name)
        self.handled = 0

    def _status(self, ok: bool, refusal: Any = None) -> GroupStatus:
        self.handled += 1
        return GroupStatus(ok, refusal, self.handled, self.state.is_empty())

    @property
    def log(self) -> Any:
        """Bound on use: trackers are created by the thousand and rarely log."""
        return log.bind(group=self.state.name)

    def handle(self, message: Any) -> Any:
        if isinstance(message, GroupIncrease):
            return self._increase(message)
        if isinstance(message, GroupDecrease):
            applied = self.state.decrease(
                message.parts, message.app, message.usage, message.remove_app
            )
            if not applied:
                self.log.warning("decrease_ignored", app=message.app,
                                 queue=".".join(message.parts), reason="not tracked")
            return self._status(True)
        if isinstance(message, GroupSkip):
            return self._status(True)
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

    def _increase(self, msg: GroupIncrease) -> GroupStatus:
        if not msg.ticket.take():
            self.log.warning("increase_abandoned", app=msg.app, user=msg.user)
            return self._status(False, "abandoned by the user tracker")
        refusal = self.state.check_increase(msg.table, msg.parts, msg.app, msg.usage)
        if refusal is not None:
            return self._status(False, refusal)
        self.state.increase(msg.parts, msg.app, msg.usage, msg.user)
        return self._status(True)

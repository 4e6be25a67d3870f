"""The group tracker actor: one per group (and one for the shared `*` group)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from quotactor.actors._base import SafeReceive, log
from quotactor.actors._pool import PooledActor, WorkerPool
from quotactor.actors.messages import (
    GroupDecrease,
    GroupIncrease,
    GroupSkip,
    GroupStatus,
    GroupUndo,
    ReadPart,
    ReadResult,
    SnapshotPart,
)
from quotactor.core.tracker import GroupTrackerState

_UNDO_WINDOW = 4096


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
        self._applied: OrderedDict[int, tuple[GroupIncrease, bool]] = OrderedDict()

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
        if isinstance(message, GroupUndo):
            self._undo(message.op)
            return None
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
        refusal = self.state.check_increase(msg.table, msg.parts, msg.app, msg.usage)
        if refusal is not None:
            return self._status(False, refusal)
        new_app = msg.app not in self.state.applications
        self.state.increase(msg.parts, msg.app, msg.usage, msg.user)
        self._applied[msg.op] = (msg, new_app)
        if len(self._applied) > _UNDO_WINDOW:
            self._applied.popitem(last=False)
        return self._status(True)

    def _undo(self, op: int) -> None:
        """Reverse an applied increase; the undo always arrives after it (same sender, FIFO)."""
        entry = self._applied.pop(op, None)
        if entry is None:
            return
        msg, new_app = entry
        self.state.decrease(msg.parts, msg.app, msg.usage, remove_app=new_app)
        self.log.warning("increase_undone", op=op, app=msg.app)

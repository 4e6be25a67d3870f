"""The user tracker actor: one per user; the place where an increase is decided."""

from __future__ import annotations

from typing import Any

import pykka

from quotactor.actors._base import SafeReceive, log
from quotactor.actors._pool import PooledActor, WorkerPool, call, deliver, submit
from quotactor.actors.messages import (
    Decision,
    GroupDecrease,
    GroupIncrease,
    GroupSkip,
    GroupStatus,
    Idle,
    ReadPart,
    ReadResult,
    SnapshotPart,
    Ticket,
    UserBatch,
    UserDecrease,
    UserIncrease,
)
from quotactor.core.tracker import UserTrackerState

GROUP_TIMEOUT = 30.0
"""Seconds a user tracker waits for its group; a group answers in microseconds unless wedged."""



class UserTrackerActor(SafeReceive, PooledActor):
    """Decides increases for one user: check own path, then ask the group, then commit.

    While it waits for the group it processes nothing else, so its own check stays true until
    it commits; the group checks and applies in one handler. Hence both change or neither. It
    waits only on a group tracker, which waits on nobody: no cycle of waits can form. When an
    operation leaves it (or a group) empty, it tells (never asks) the manager, with the count
    the manager needs to retire trackers safely. Its answer is the share's results, in order.
    """

    registered = False

    def __init__(self, pool: WorkerPool, name: str, manager: pykka.ActorRef[Any]) -> None:
        super().__init__(pool)
        self.state = UserTrackerState(name)
        self.handled = 0
        self.manager = manager

    @property
    def log(self) -> Any:
        """Bound on use: trackers are created by the thousand and rarely log."""
        return log.bind(user=self.state.name)

    def handle(self, message: Any) -> Any:
        if isinstance(message, UserBatch):
            return self._run(message.items)
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

    def _run(
        self, items: tuple[UserIncrease | UserDecrease, ...]
    ) -> tuple[Decision | BaseException | None, ...]:
        """Process items in order; then report this tracker or its groups if they are empty."""
        idle_groups: dict[str, tuple[pykka.ActorRef[Any], int]] = {}
        results: list[Decision | BaseException | None] = []
        for item in items:
            status: GroupStatus | None = None
            result: Decision | BaseException | None
            try:
                if isinstance(item, UserIncrease):
                    result, status = self._increase(item)
                else:
                    result, status = None, self._decrease(item)
            except Exception as exc:
                self.log.exception("operation_failed", app=item.app)
                result = exc
            self.handled += 1
            results.append(result)
            if status is not None and item.group is not None and item.group_ref is not None:
                if status.empty:
                    idle_groups[item.group] = (item.group_ref, status.handled)
                else:
                    idle_groups.pop(item.group, None)
        for group, (ref, handled) in idle_groups.items():
            deliver(self.manager, Idle("group", group, ref, handled))
        if self.state.is_empty():
            deliver(self.manager, Idle("user", self.state.name, self.actor_ref, self.handled))
        return tuple(results)

    def _skip(self, msg: UserIncrease | UserDecrease) -> GroupStatus | None:
        """Tell the group an operation routed to it ended here, so its count stays true."""
        if msg.group_ref is None:
            return None
        try:
            status: GroupStatus = call(msg.group_ref, GroupSkip(), GROUP_TIMEOUT)
        except pykka.Timeout:
            self.log.error("group_timeout", app=msg.app, group=msg.group)
            return None
        return status

    def _increase(self, msg: UserIncrease) -> tuple[Decision, GroupStatus | None]:
        refusal = self.state.check_increase(msg.table, msg.parts, msg.app, msg.usage)
        if refusal is not None:
            self.log.info("increase_refused", app=msg.app, queue=".".join(msg.parts),
                          reason=str(refusal))
            return Decision(False, refusal), self._skip(msg)
        status: GroupStatus | None = None
        if msg.group_ref is not None:
            ticket = Ticket()
            answer = submit(msg.group_ref, GroupIncrease(
                msg.parts, msg.app, msg.usage, self.state.name, msg.table, ticket))
            try:
                status = answer.get(timeout=GROUP_TIMEOUT)
            except pykka.Timeout:
                if ticket.abandon():
                    self.log.error("group_timeout", app=msg.app, group=msg.group)
                    return Decision(False, "group tracker did not answer in time"), None
                status = answer.get(timeout=GROUP_TIMEOUT)  # taken: the answer is on its way
            if not status.ok:
                self.log.info("increase_refused", app=msg.app, queue=".".join(msg.parts),
                              reason=str(status.refusal))
                return Decision(False, status.refusal), status
        self.state.increase(msg.parts, msg.app, msg.usage, msg.group)
        return Decision(True), status

    def _decrease(self, msg: UserDecrease) -> GroupStatus | None:
        linked, _ = self.state.group_of(msg.app)
        if not self.state.decrease(msg.parts, msg.app, msg.usage, msg.remove_app):
            self.log.warning("decrease_ignored", app=msg.app, queue=".".join(msg.parts),
                             reason="unknown application" if not linked else "queue not tracked")
            return self._skip(msg)
        if msg.group_ref is None:
            return None
        status: GroupStatus = call(
            msg.group_ref, GroupDecrease(msg.parts, msg.app, msg.usage, msg.remove_app),
            GROUP_TIMEOUT,
        )
        return status

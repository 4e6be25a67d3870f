"""The manager actor: creates, routes to and retires the trackers of one partition.

The manager never blocks and never waits on a tracker: it stamps each operation with the limit
table in force and the group the application counts for, hands it to the user tracker with the
caller's future, and moves on. Trackers answer the caller themselves and tell the manager when
an operation is done.

Retirement (the seed's "unlink race"): the manager counts, per tracker, the operations it has
routed there and not yet seen done. A tracker is retired only when that count is zero and its
latest reported state is empty. At that moment no update can be on its way to it, and every
later one is routed to a fresh tracker, so nothing is lost or counted twice. The stop request
is queued behind anything the manager sent before, so pending reads are still answered.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pykka

from quotactor.actors._base import SafeActor, log
from quotactor.actors._pool import WorkerPool
from quotactor.actors.group_tracker import GroupTrackerActor
from quotactor.actors.messages import (
    Batch,
    Decrease,
    Done,
    Increase,
    Kind,
    PlanRead,
    PlanSnapshot,
    ReadPart,
    Shutdown,
    SnapshotPart,
    Stats,
    SwitchTable,
    UserBatch,
    UserDecrease,
    UserIncrease,
)
from quotactor.actors.user_tracker import UserTrackerActor
from quotactor.core.limits import EMPTY_TABLE, LimitTable
from quotactor.core.queue_path import ancestors

STOP_TIMEOUT = 10.0


@dataclass(slots=True)
class _Slot:
    """A live tracker as the manager sees it."""

    ref: pykka.ActorRef[Any]
    inflight: int = 0
    seq: int = 0
    empty: bool = True


@dataclass(frozen=True, slots=True)
class ReadPlan:
    """What a read needs: the table, the group, and the futures of the live trackers' parts."""

    table: LimitTable
    group: str | None
    user_part: pykka.Future[Any] | None
    group_part: pykka.Future[Any] | None


@dataclass(frozen=True, slots=True)
class SnapshotPlan:
    table: LimitTable
    parts: tuple[pykka.Future[Any], ...]
    virtual: tuple[str, ...] = field(default=())


class ManagerClosed(RuntimeError):
    """The manager has been shut down and takes no more operations."""


class ManagerActor(SafeActor):
    """Routes operations of one partition; owns tracker lifetimes and application group links."""

    def __init__(
        self,
        partition: str,
        table: LimitTable = EMPTY_TABLE,
        user_threads: int = 8,
        group_threads: int = 2,
    ) -> None:
        super().__init__()
        self.user_pool = WorkerPool("users", user_threads)
        self.group_pool = WorkerPool("groups", group_threads)
        self.partition = partition
        self.table = table
        self.users: dict[str, _Slot] = {}
        self.groups: dict[str, _Slot] = {}
        self.links: dict[str, dict[str, str | None]] = {}
        self.retired = 0
        self.closed = False
        self.log = log.bind(partition=partition)

    def handle(self, message: Any) -> Any:
        if isinstance(message, Done):
            self._done(message)
        elif self.closed:
            message.reply.set_exception(exc_info=(
                ManagerClosed, ManagerClosed("the user group manager is stopped"), None
            ))
        elif isinstance(message, Increase):
            self._increase(message)
        elif isinstance(message, Decrease):
            self._decrease(message)
        elif isinstance(message, Batch):
            self._batch(message)
        elif isinstance(message, PlanRead):
            self._plan_read(message)
        elif isinstance(message, PlanSnapshot):
            self._plan_snapshot(message)
        elif isinstance(message, SwitchTable):
            old, self.table = self.table, message.table
            self.log.info("limits_switched", entries=message.table.limit_count(),
                          changed=old != message.table)
            message.reply.set(True)
        elif isinstance(message, Stats):
            message.reply.set({
                "users": len(self.users),
                "groups": len(self.groups),
                "retired": self.retired,
                "inflight": sum(s.inflight for s in (*self.users.values(), *self.groups.values())),
            })
        elif isinstance(message, Shutdown):
            self._shutdown(message)
        else:
            raise TypeError(f"unexpected message {type(message).__name__}")

    def _user_slot(self, name: str) -> _Slot:
        slot = self.users.get(name)
        if slot is None:
            slot = _Slot(UserTrackerActor.start(self.user_pool, name, self.actor_ref))
            self.users[name] = slot
        return slot

    def _group_slot(self, name: str) -> _Slot:
        slot = self.groups.get(name)
        if slot is None:
            slot = _Slot(GroupTrackerActor.start(self.group_pool, name))
            self.groups[name] = slot
        return slot

    def _increase(self, msg: Increase) -> None:
        slot, routed = self._route_increase(msg)
        slot.ref.tell(routed)

    def _decrease(self, msg: Decrease) -> None:
        routed = self._route_decrease(msg)
        if routed is not None:
            routed[0].ref.tell(routed[1])

    def _batch(self, msg: Batch) -> None:
        """Route every item as if sent alone; each user gets its share in one message."""
        shares: dict[str, tuple[_Slot, list[UserIncrease | UserDecrease]]] = {}
        for item in msg.items:
            routed = (
                self._route_increase(item) if isinstance(item, Increase)
                else self._route_decrease(item)
            )
            if routed is not None:
                slot, user_msg = routed
                shares.setdefault(item.user.user, (slot, []))[1].append(user_msg)
        for slot, user_msgs in shares.values():
            slot.ref.tell(UserBatch(tuple(user_msgs)))
        msg.reply.set(None)

    def _route_increase(self, msg: Increase) -> tuple[_Slot, UserIncrease]:
        name = msg.user.user
        user = self._user_slot(name)
        app_links = self.links.setdefault(name, {})
        if msg.app in app_links:
            group = app_links[msg.app]
        else:
            group = self.table.resolve_group(ancestors(msg.parts), msg.user.groups)
            app_links[msg.app] = group
        group_ref = None
        if group is not None:
            slot = self._group_slot(group)
            slot.inflight += 1
            group_ref = slot.ref
        user.inflight += 1
        return user, UserIncrease(
            msg.parts, msg.app, msg.usage, group, group_ref, self.table, msg.reply
        )

    def _route_decrease(self, msg: Decrease) -> tuple[_Slot, UserDecrease] | None:
        name = msg.user.user
        user = self.users.get(name)
        if user is None:
            self.log.warning("decrease_ignored", user=name, app=msg.app,
                             queue=".".join(msg.parts), reason="unknown user")
            msg.reply.set(None)
            return None
        app_links = self.links.get(name, {})
        group = app_links.get(msg.app)
        if msg.remove_app:
            app_links.pop(msg.app, None)
        slot = self.groups.get(group) if group is not None else None
        if slot is None:
            group = None
        else:
            slot.inflight += 1
        user.inflight += 1
        return user, UserDecrease(
            msg.parts, msg.app, msg.usage, msg.remove_app, group,
            None if slot is None else slot.ref, msg.reply,
        )

    def _done(self, msg: Done) -> None:
        user = self.users.get(msg.user)
        if user is None:  # only after shutdown cleared the slots
            return
        user.inflight -= msg.ops
        user.empty = msg.user_empty
        if user.inflight == 0 and user.empty:
            self._retire("user", msg.user, self.users)
            self.links.pop(msg.user, None)
        for name, status in msg.groups:
            group = self.groups.get(name)
            if group is None:
                continue
            group.inflight -= 1
            if status is not None and status.seq > group.seq:
                group.seq, group.empty = status.seq, status.empty
            if group.inflight == 0 and group.empty:
                self._retire("group", name, self.groups)

    def _retire(self, kind: Kind, name: str, slots: dict[str, _Slot]) -> None:
        slot = slots.pop(name)
        slot.ref.stop(block=False)
        self.retired += 1
        self.log.debug("tracker_retired", kind=kind, name=name)

    def _read_part(self, slot: _Slot | None, msg: PlanRead) -> pykka.Future[Any] | None:
        if slot is None:
            return None
        future: pykka.Future[Any] = pykka.ThreadingFuture()
        slot.ref.tell(ReadPart(msg.parts, msg.app, self.table, future))
        return future

    def _plan_read(self, msg: PlanRead) -> None:
        name = msg.user.user
        app_links = self.links.get(name, {})
        if msg.app in app_links:
            group = app_links[msg.app]
        else:
            group = self.table.resolve_group(ancestors(msg.parts), msg.user.groups)
        msg.reply.set(ReadPlan(
            self.table,
            group,
            self._read_part(self.users.get(name), msg),
            self._read_part(self.groups.get(group) if group is not None else None, msg),
        ))

    def _plan_snapshot(self, msg: PlanSnapshot) -> None:
        slots = self.users if msg.kind == "user" else self.groups
        table = self.table
        is_named = table.is_named_user if msg.kind == "user" else table.is_named_group
        named: Iterable[str]
        if msg.name is not None:
            chosen = {msg.name: slots[msg.name]} if msg.name in slots else {}
            named = [msg.name] if is_named(msg.name) else []
        else:
            chosen = slots
            named = table.named_users() if msg.kind == "user" else table.named_groups()
        futures = []
        for slot in chosen.values():
            future: pykka.Future[Any] = pykka.ThreadingFuture()
            slot.ref.tell(SnapshotPart(self.table, future))
            futures.append(future)
        virtual = tuple(n for n in named if n not in chosen)
        msg.reply.set(SnapshotPlan(self.table, tuple(futures), virtual))

    def _shutdown(self, msg: Shutdown) -> None:
        """Stop users first (they may be waiting on groups), then groups; refuse what follows."""
        self.closed = True
        for slots in (self.users, self.groups):
            stops = [slot.ref.stop(block=False) for slot in slots.values()]
            for stop in stops:
                stop.get(timeout=STOP_TIMEOUT)
            slots.clear()
        self.links.clear()
        self.user_pool.shutdown(STOP_TIMEOUT)
        self.group_pool.shutdown(STOP_TIMEOUT)
        msg.reply.set(True)

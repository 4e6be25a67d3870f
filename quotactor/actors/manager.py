"""The manager actor: creates, routes to and retires the trackers of one partition.

The manager never blocks and never waits on a tracker: it stamps each operation with the limit
table in force and the group the application counts for, and answers the sender with one share
per user tracker, which the sender then delivers. Trackers answer the sender. It runs on the
pooled runtime, so an idle manager routes on the sender's own thread.

Retirement (the seed's "unlink race"): the manager counts, per tracker, the operations it has
routed there; a tracker counts those it has handled, and tells the manager (`Idle`) when it is
empty after one. The manager retires it only if the two counts are equal: then no update can be
on its way to it, it is still empty (nothing was handled since), and every later update is
routed to a fresh tracker, so nothing is lost or counted twice. The stop is queued behind
anything the manager sent before, so pending reads are still answered. A tracker with usage
never messages the manager after an operation.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pykka

from quotactor.actors._base import SafeReceive, log
from quotactor.actors._pool import PooledActor, WorkerPool, deliver, stop_now
from quotactor.actors.group_tracker import GroupTrackerActor
from quotactor.actors.messages import (
    Decrease,
    Idle,
    Increase,
    Kind,
    PlanRead,
    PlanSnapshot,
    ReadPart,
    Route,
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


@dataclass(slots=True)
class _Slot:
    """A live tracker as the manager sees it."""

    ref: pykka.ActorRef[Any]
    routed: int = 0


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


WARM_TRACKERS = 1024
"""Retired trackers of each kind kept alive for reuse (see `ManagerActor._retire`)."""

Share = tuple[pykka.ActorRef[Any], UserBatch]
"""A user tracker and the part of a `Route` it is to handle."""


@dataclass(frozen=True, slots=True)
class Retirement:
    """What a shut-down manager leaves to stop: users first (they may be waiting on groups),
    then groups, then the pools they ran on."""

    users: tuple[pykka.ActorRef[Any], ...]
    groups: tuple[pykka.ActorRef[Any], ...]
    pools: tuple[WorkerPool, ...]

    def stop(self, timeout: float) -> None:
        for refs in (self.users, self.groups):
            stops = [ref.stop(block=False) for ref in refs]
            for stop in stops:
                stop.get(timeout=timeout)
        for pool in self.pools:
            pool.shutdown(timeout)


class ManagerClosed(RuntimeError):
    """The manager has been shut down and takes no more operations."""


class ManagerActor(SafeReceive, PooledActor):
    """Routes operations of one partition; owns tracker lifetimes and application group links.

    Its own `pool` (one thread is plenty) runs the messages that arrive while it is busy; it
    belongs to whoever started the manager. `Shutdown` stops the trackers and their pools.
    """

    handlers_wait = False

    def __init__(
        self,
        pool: WorkerPool,
        partition: str,
        table: LimitTable = EMPTY_TABLE,
        user_threads: int = 8,
        group_threads: int = 2,
    ) -> None:
        super().__init__(pool)
        self.user_pool = WorkerPool("users", user_threads)
        self.group_pool = WorkerPool("groups", group_threads)
        self.partition = partition
        self.table = table
        self.users: dict[str, _Slot] = {}
        self.groups: dict[str, _Slot] = {}
        self.warm_users: OrderedDict[str, _Slot] = OrderedDict()
        self.warm_groups: OrderedDict[str, _Slot] = OrderedDict()
        self.links: dict[str, dict[str, str | None]] = {}
        self.retired = 0
        self.closed = False
        self.log = log.bind(partition=partition)

    def handle(self, message: Any) -> Any:
        if isinstance(message, Idle):
            self._idle(message)
            return None
        if self.closed:
            raise ManagerClosed("the user group manager is stopped")
        if isinstance(message, Route):
            return self._route(message)
        if isinstance(message, PlanRead):
            return self._plan_read(message)
        if isinstance(message, PlanSnapshot):
            return self._plan_snapshot(message)
        if isinstance(message, SwitchTable):
            old, self.table = self.table, message.table
            self.log.info("limits_switched", entries=message.table.limit_count(),
                          changed=old != message.table)
            return True
        if isinstance(message, Stats):
            return {
                "users": len(self.users),
                "groups": len(self.groups),
                "retired": self.retired,
            }
        if isinstance(message, Shutdown):
            return self._shutdown()
        raise TypeError(f"unexpected message {type(message).__name__}")

    def _user_slot(self, name: str) -> _Slot:
        slot = self.users.get(name)
        if slot is None:
            slot = self.warm_users.pop(name, None) or _Slot(
                UserTrackerActor.start(self.user_pool, name, self.actor_ref))
            self.users[name] = slot
        return slot

    def _group_slot(self, name: str) -> _Slot:
        slot = self.groups.get(name)
        if slot is None:
            slot = self.warm_groups.pop(name, None) or _Slot(
                GroupTrackerActor.start(self.group_pool, name))
            self.groups[name] = slot
        return slot

    def _route(self, msg: Route) -> tuple[Share, ...]:
        """Route every item as if sent alone; each user gets its share in one message.

        Items not routed (a decrease for a user with nothing tracked) have no share: their
        answer is None.
        """
        shares: dict[str, tuple[_Slot, list[UserIncrease | UserDecrease]]] = {}
        for index, item in enumerate(msg.items):
            routed = (
                self._route_increase(index, item) if isinstance(item, Increase)
                else self._route_decrease(index, item)
            )
            if routed is not None:
                slot, user_msg = routed
                shares.setdefault(item.user.user, (slot, []))[1].append(user_msg)
        return tuple((slot.ref, UserBatch(tuple(items))) for slot, items in shares.values())

    def _route_increase(self, index: int, msg: Increase) -> tuple[_Slot, UserIncrease]:
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
            slot.routed += 1
            group_ref = slot.ref
        user.routed += 1
        return user, UserIncrease(
            index, msg.parts, msg.app, msg.usage, group, group_ref, self.table
        )

    def _route_decrease(self, index: int, msg: Decrease) -> tuple[_Slot, UserDecrease] | None:
        name = msg.user.user
        user = self.users.get(name)
        if user is None:
            self.log.warning("decrease_ignored", user=name, app=msg.app,
                             queue=".".join(msg.parts), reason="unknown user")
            return None
        app_links = self.links.get(name, {})
        group = app_links.get(msg.app)
        if msg.remove_app:
            app_links.pop(msg.app, None)
        slot = self.groups.get(group) if group is not None else None
        if slot is None:
            group = None
        else:
            slot.routed += 1
        user.routed += 1
        return user, UserDecrease(
            index, msg.parts, msg.app, msg.usage, msg.remove_app, group,
            None if slot is None else slot.ref,
        )

    def _idle(self, msg: Idle) -> None:
        slots = self.users if msg.kind == "user" else self.groups
        slot = slots.get(msg.name)
        if slot is None or slot.ref is not msg.ref or slot.routed != msg.handled:
            return  # retired already (or shut down), or more is on its way to it
        self._retire(msg.kind, msg.name, slots)
        if msg.kind == "user":
            self.links.pop(msg.name, None)

    def _retire(self, kind: Kind, name: str, slots: dict[str, _Slot]) -> None:
        """Retire an empty tracker: gone from every view at once, its actor kept warm.

        Users come and go (an application ends, the next one starts), and starting and stopping
        an actor costs more than a decision, so the last `WARM_TRACKERS` retired trackers of
        each kind stay alive, empty and unlisted, and are reused if their name comes back; the
        oldest beyond that is stopped.
        """
        warm = self.warm_users if kind == "user" else self.warm_groups
        warm[name] = slots.pop(name)
        if len(warm) > WARM_TRACKERS:
            stop_now(warm.popitem(last=False)[1].ref)
        self.retired += 1

    def _read_part(self, slot: _Slot | None, msg: PlanRead) -> pykka.Future[Any] | None:
        """Queue the read behind what was routed to the tracker before (or answer it here, on
        this thread, when the tracker is idle); it cannot be retired before it answers."""
        if slot is None:
            return None
        future: pykka.Future[Any] = pykka.ThreadingFuture()
        deliver(slot.ref, ReadPart(msg.parts, msg.app, self.table, future))
        return future

    def _plan_read(self, msg: PlanRead) -> ReadPlan:
        name = msg.user.user
        app_links = self.links.get(name, {})
        if msg.app in app_links:
            group = app_links[msg.app]
        else:
            group = self.table.resolve_group(ancestors(msg.parts), msg.user.groups)
        return ReadPlan(
            self.table,
            group,
            self._read_part(self.users.get(name), msg),
            self._read_part(self.groups.get(group) if group is not None else None, msg),
        )

    def _plan_snapshot(self, msg: PlanSnapshot) -> SnapshotPlan:
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
            deliver(slot.ref, SnapshotPart(self.table, future))
            futures.append(future)
        virtual = tuple(n for n in named if n not in chosen)
        return SnapshotPlan(self.table, tuple(futures), virtual)

    def _shutdown(self) -> Retirement:
        """Refuse what follows and hand over the trackers, for the sender to stop (the manager
        never waits)."""
        self.closed = True
        retirement = Retirement(
            tuple(slot.ref for slot in (*self.users.values(), *self.warm_users.values())),
            tuple(slot.ref for slot in (*self.groups.values(), *self.warm_groups.values())),
            (self.user_pool, self.group_pool),
        )
        for slots in (self.users, self.groups, self.warm_users, self.warm_groups):
            slots.clear()
        self.links.clear()
        return retirement

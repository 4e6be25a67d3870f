"""The manager actor: creates, routes to and retires the trackers of one partition.

The manager never blocks and never waits on a tracker: it stamps each operation with the limit
table in force and the group the application counts for, and answers the sender with each item
and the user tracker it goes to, in the caller's order (one step for a whole batch), which the
sender then delivers (a batch's sender decides the items of the idle trackers itself, holding
them and their groups: `quotactor.actors.batch`). Trackers answer the sender. It runs on the
pooled runtime, so an idle manager routes on the sender's own thread.

Retirement, lazy: only the manager retires trackers, and only idle ones (invariant 10 of
docs/concurrency.md: every operation routed to it handled, the last one leaving it empty), so
nothing is lost or counted twice; callers that skip the manager never touch a retired tracker
(invariant 11). It does so when an answer depends on it, never per operation: a tracker that
becomes idle adds itself to the set `idle`, and a sweep (`_sweep`) retires those still idle.
`Stats` and the snapshots of every user or group sweep first, a snapshot of one retires that
one if idle, and a new tracker that would make the listed ones of its kind outnumber those left
by the last sweep by an eighth (at least `SWEEP_AT`) sweeps first (`_next_sweep`). The stop of
a tracker evicted from the warm list is queued behind anything sent to it before, so pending
reads are still answered.

Group links: a route (or a known call: `quotactor.actors.known`) links a new application to
its group before the tracker applies its start, and the link stays until the tracker no
longer runs it (a refused start, a removal applied) and has handled every item routed for
it; the tracker's holder then drops it (`quotactor.core.tracker.settle_link`, invariant 13):
so a removal that fails or removes nothing leaves the link in place, and a refused start
links nothing for later.

Application ids: an id is its user's, as in YuniKorn's user group manager: the same id for two
users is two applications, in their trackers and in their group's (keyed by id and user, see
`quotactor.core.tracker`). Refusing a second application with an id is the scheduler's.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from quotactor.actors.group_tracker import GroupTrackerActor
from quotactor.actors.holding import stop_all
from quotactor.actors.messages import (
    ManagerMessage,
    PlanRead,
    PlanSnapshot,
    ReadPart,
    ReadResult,
    Route,
    Shutdown,
    SnapshotPart,
    Stats,
    SwitchTable,
)
from quotactor.actors.runtime import Actor, Reply, WorkerPool, deliver, stop_now, when_idle
from quotactor.actors.user_tracker import (
    Routing,
    UserDecrease,
    UserIncrease,
    UserTrackerActor,
)
from quotactor.config.model import SchedulerConfig
from quotactor.core.errors import ManagerClosed
from quotactor.core.intake import Decrease, Increase
from quotactor.core.limits import EMPTY_TABLE, LimitTable
from quotactor.core.queue_path import ancestors
from quotactor.core.routing import Views, route, route_one
from quotactor.core.tracker import GroupTrackerState, UserTrackerState
from quotactor.logs import get_logger

log = get_logger()


@dataclass(frozen=True, slots=True)
class ReadPlan:
    """What a read needs: the table, the group, and the replies of the live trackers' parts."""

    table: LimitTable
    group: str | None
    user_part: Reply[ReadResult] | None
    group_part: Reply[ReadResult] | None


@dataclass(frozen=True, slots=True)
class SnapshotPlan:
    table: LimitTable
    parts: tuple[Reply[dict[str, Any]], ...]
    virtual: tuple[str, ...] = field(default=())


@dataclass(frozen=True, slots=True)
class Applied:
    """The config in force and its limit table, published as one value: whoever reads it sees
    the config that the manager enforces, whatever `update_config` calls run meanwhile."""

    loaded: SchedulerConfig | None
    table: LimitTable


WARM_TRACKERS = 1024
"""Retired trackers of each kind kept alive for reuse (see `ManagerActor._retire`)."""
SWEEP_AT = 1024
"""Idle trackers of a kind that may be left listed before a sweep (see `_next_sweep`)."""


def _next_sweep(live: int) -> int:
    """After a sweep that left `live` trackers of a kind: the count at which the next one runs.

    An eighth more (at least `SWEEP_AT`): the listed trackers then never exceed those in use
    after the last sweep by more than that, and a sweep's cost (one check per listed tracker)
    comes to at most eight checks per tracker created since the one before."""
    return live + max(SWEEP_AT, live // 8)


@dataclass(frozen=True, slots=True)
class Retirement:
    """What a shut-down manager leaves to stop: users first (they may be waiting on groups),
    then groups, then the pools they ran on."""

    users: tuple[UserTrackerActor, ...]
    groups: tuple[GroupTrackerActor, ...]
    pools: tuple[WorkerPool, ...]

    def stop(self, timeout: float) -> None:
        """Stop every tracker and pool; `OperationTimeout` if a tracker does not stop in time
        (the pools are shut down all the same)."""
        try:
            stop_all(self.users, timeout)
            stop_all(self.groups, timeout)
        finally:
            for pool in self.pools:
                pool.shutdown(timeout)


def _idle(ref: UserTrackerActor | GroupTrackerActor | None) -> bool | None:
    """Whether a listed tracker is idle: nothing routed to it is unhandled, and the last of
    those left it empty (`idle_at == routed`), read when nobody holds it; None while someone
    does (invariant 10)."""
    if ref is None:
        return False
    state = ref.state
    return when_idle(ref, lambda: state.idle_at == state.routed)


class ManagerActor(Actor[ManagerMessage]):
    """Routes operations of one partition; owns tracker lifetimes and application group links.

    Its own `pool` (one thread is plenty) runs the messages that arrive while it is busy; it
    belongs to whoever started the manager. `Shutdown` hands over the trackers and their pools.
    Routing an item either completes or changes nothing the trackers see (see
    `quotactor.core.routing.route`).
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
        self.applied = Applied(None, table)
        self.users: dict[str, UserTrackerActor] = {}
        self.groups: dict[str, GroupTrackerActor] = {}
        self.user_states: dict[str, UserTrackerState] = {}
        """The state of each listed user's tracker, in step with `users` (for the route)."""
        self.group_states: dict[str, GroupTrackerState] = {}
        self.warm_users: OrderedDict[str, UserTrackerActor] = OrderedDict()
        self.warm_groups: OrderedDict[str, GroupTrackerActor] = OrderedDict()
        self.retired = 0
        self.sweep_users_at = self.sweep_groups_at = SWEEP_AT
        self.closed = False
        self.views_lock = threading.Lock()
        """Held by the manager's handler throughout, and by a known-user call while it reads
        the views (invariant 11)."""
        self.idle: set[UserTrackerActor | GroupTrackerActor] = set()
        self.log = log.bind(partition=partition)
        self.views = Views(self.user_states, self.group_states, self._new_user,
                           self._new_group, UserIncrease, UserDecrease)

    def handle(self, message: ManagerMessage) -> Any:
        with self.views_lock:
            if self.closed:
                raise ManagerClosed("the user group manager is stopped")
            if type(message) is Route:
                return self._route(message)
            return self._handle(message)

    def _handle(self, message: ManagerMessage) -> Any:
        if isinstance(message, PlanRead):
            return self._plan_read(message)
        if isinstance(message, PlanSnapshot):
            return self._plan_snapshot(message)
        if isinstance(message, SwitchTable):
            old, self.applied = self.applied.table, Applied(message.loaded, message.table)
            self.log.info("limits_switched", entries=message.table.limit_count(),
                          changed=old != message.table)
            return True
        if isinstance(message, Stats):
            self._sweep()
            return {
                "users": len(self.users),
                "groups": len(self.groups),
                "retired": self.retired,
                "links": sum(len(state.links) for state in self.user_states.values()
                             if state.links is not None),
            }
        if isinstance(message, Shutdown):
            return self._shutdown()
        raise TypeError(f"unexpected message {type(message).__name__}")

    @property
    def table(self) -> LimitTable:
        """The limit table in force: the one of the config the manager publishes as applied."""
        return self.applied.table

    def _new_user(self, name: str) -> UserTrackerActor:
        """List a live user tracker for `name`, which has none (the route asks): a warm one
        revived, or a new one (the idle ones retired first when there are many)."""
        if len(self.users) >= self.sweep_users_at:
            self._sweep()
            self.sweep_users_at = _next_sweep(len(self.users))
        ref = self.warm_users.pop(name, None) or UserTrackerActor(
            self.user_pool, name, self.idle, self.views_lock)
        self.users[name] = ref
        self.user_states[name] = ref.state
        ref.state.tracker = ref  # while listed (see `TrackerState`)
        return ref

    def _new_group(self, name: str) -> GroupTrackerActor:
        """List a live group tracker for `name`, which has none (as `_new_user`)."""
        if len(self.groups) >= self.sweep_groups_at:
            self._sweep()
            self.sweep_groups_at = _next_sweep(len(self.groups))
        ref = self.warm_groups.pop(name, None) or GroupTrackerActor(
            self.group_pool, name, self.idle)
        self.groups[name] = ref
        self.group_states[name] = ref.state
        ref.state.tracker = ref
        return ref

    def _route(self, msg: Route) -> Routing:
        """Route every item as if sent alone, in the caller's order: each routed item's
        message, which names the user tracker it goes to. One compiled loop for every item of
        a batch (the manager is what every caller meets): `quotactor.core.routing.route`, over
        this manager's views (`views`: its dictionaries, the trackers' states beside the
        trackers, and its `_new_user` and `_new_group` for the items that need them).

        Items not routed (a decrease for a user with nothing tracked) are left out: their
        answer is None. An item that cannot be routed (its group choice fails) is refused with
        its error and changes nothing the trackers see.
        """
        if msg.ticket is not None and not msg.ticket.take():
            return Routing([], [], [], [])  # the sender gave up waiting: route nothing
        routed: list[UserIncrease | UserDecrease] = []
        refused: list[tuple[int, Exception]] = []
        ignored: list[tuple[str, str, tuple[str, ...]]] = []
        users: list[UserTrackerActor] = []
        groups: list[GroupTrackerActor] = []
        route(self.views, msg.items, self.applied.table, routed, refused, ignored, users,
              groups)
        for name, app, parts in ignored:
            self.log.warning("decrease_ignored", user=name, app=app, queue=".".join(parts),
                             reason="unknown user")
        return Routing(routed, refused, users, groups)

    def route_held(self, item: Increase | Decrease) -> UserIncrease | UserDecrease | None:
        """Route a single call's item, run by the thread holding the manager's claim as its
        handler would (`_route`'s steps for one item, without a message or lists): the item's
        message, or None for a decrease of a user with nothing tracked; raises what a refused
        item fails with (nothing changed then), `ManagerClosed` once stopped."""
        with self.views_lock:
            if self.closed:
                raise ManagerClosed("the user group manager is stopped")
            msg: UserIncrease | UserDecrease | None = route_one(
                self.views, item, self.applied.table)
        if msg is None:
            self.log.warning("decrease_ignored", user=item[3].user, app=item[1],
                             queue=".".join(item[0]), reason="unknown user")
        return msg

    def _forgot(self, name: str) -> bool:
        """Forget an idle user's links (it runs nothing and every item routed to it is
        handled, so its holders dropped them all: invariant 13): True if it was idle, False if
        it runs something."""
        state = self.user_states.get(name)
        if state is None or not _idle(self.users.get(name)):
            return False
        self._forget(name)
        return True

    def _forget(self, name: str) -> None:
        """Forget a listed user's links."""
        state = self.user_states[name]
        state.links = None

    def _sweep(self) -> None:
        """Retire every idle tracker. Each adds itself to `idle` when it becomes idle (a set:
        `add` and `pop` are atomic, and a tracker is there once however often it empties), so
        this costs a step per tracker emptied since the last sweep, not per listed tracker;
        those used again since are simply dropped from it (they add themselves again)."""
        idle, users, groups = self.idle, self.users, self.groups
        held: list[UserTrackerActor | GroupTrackerActor] = []
        while idle:
            ref = idle.pop()
            now = _idle(ref)
            if not now:
                if now is None:
                    held.append(ref)  # it may be idle when let go: looked at next time
                continue
            name = ref.state.name
            if isinstance(ref, UserTrackerActor):
                if users.get(name) is ref:
                    self._forget(name)
                    self._retire(users, self.warm_users, name)
            elif groups.get(name) is ref:
                self._retire(groups, self.warm_groups, name)
        idle.update(held)

    def _retire_if_idle(self, kind: str, name: str) -> None:
        """Retire the tracker of `name` now if it is idle (a view of it alone asks)."""
        if kind == "user":
            if self._forgot(name):
                self._retire(self.users, self.warm_users, name)
            return
        ref = self.groups.get(name)
        if ref is not None and _idle(ref):
            self._retire(self.groups, self.warm_groups, name)

    def _retire(self, slots: dict[str, Any], warm: OrderedDict[str, Any], name: str) -> None:
        """Retire an empty tracker: gone from every view at once, its actor kept warm.

        Users come and go (an application ends, the next one starts), and starting and stopping
        an actor costs more than a decision, so the last `WARM_TRACKERS` retired trackers of
        each kind stay alive, empty and unlisted, and are reused if their name comes back; the
        oldest beyond that is stopped.
        """
        warm[name] = slots.pop(name)
        (self.user_states if slots is self.users else self.group_states).pop(name).tracker = None
        if len(warm) > WARM_TRACKERS:
            stop_now(warm.popitem(last=False)[1])
        self.retired += 1

    def _read_part(
        self, ref: UserTrackerActor | GroupTrackerActor | None, msg: PlanRead
    ) -> Reply[ReadResult] | None:
        """Queue the read behind what was routed to the tracker before (or answer it here, on
        this thread, when the tracker is idle); it cannot be retired before it answers."""
        if ref is None:
            return None
        reply: Reply[ReadResult] = Reply()
        deliver(ref, ReadPart(msg.parts, msg.app, msg.user.user, self.table, reply))
        return reply

    def _plan_read(self, msg: PlanRead) -> ReadPlan:
        name = msg.user.user
        state = self.user_states.get(name)
        link = None if state is None or state.links is None else state.links.get(msg.app)
        if link is not None:
            group = link.group
        else:
            group = self.table.resolve_group(ancestors(msg.parts), msg.user.groups)
        return ReadPlan(
            self.table,
            group,
            self._read_part(self.users.get(name), msg),
            self._read_part(self.groups.get(group) if group is not None else None, msg),
        )

    def _plan_snapshot(self, msg: PlanSnapshot) -> SnapshotPlan:
        if msg.name is None:
            self._sweep()
        else:
            self._retire_if_idle(msg.kind, msg.name)
        slots: Mapping[str, UserTrackerActor | GroupTrackerActor] = (
            self.users if msg.kind == "user" else self.groups)
        table = self.table
        is_named = table.is_named_user if msg.kind == "user" else table.is_named_group
        named: Iterable[str]
        chosen: Mapping[str, UserTrackerActor | GroupTrackerActor]
        if msg.name is not None:
            chosen = {msg.name: slots[msg.name]} if msg.name in slots else {}
            named = [msg.name] if is_named(msg.name) else []
        else:
            chosen = slots
            named = table.named_users() if msg.kind == "user" else table.named_groups()
        replies = []
        for ref in chosen.values():
            reply: Reply[dict[str, Any]] = Reply()
            deliver(ref, SnapshotPart(self.table, reply))
            replies.append(reply)
        virtual = tuple(n for n in named if n not in chosen)
        return SnapshotPlan(self.table, tuple(replies), virtual)

    def on_stop(self) -> None:
        """Drop idle trackers added after `Shutdown` (while they were being stopped): each
        holds its tracker, which holds this set, a cycle the collector would have to free."""
        self.idle.clear()
        self.views.release()

    def _shutdown(self) -> Retirement:
        """Refuse what follows and hand over the trackers, for the sender to stop (the manager
        never waits)."""
        self.closed = True
        retirement = Retirement(
            (*self.users.values(), *self.warm_users.values()),
            (*self.groups.values(), *self.warm_groups.values()),
            (self.user_pool, self.group_pool),
        )
        self.users.clear()
        self.groups.clear()
        for user_state in self.user_states.values():
            user_state.tracker = user_state.links = None
        for group_state in self.group_states.values():
            group_state.tracker = None
        self.user_states.clear()
        self.group_states.clear()
        self.warm_users.clear()
        self.warm_groups.clear()
        self.idle.clear()
        return retirement

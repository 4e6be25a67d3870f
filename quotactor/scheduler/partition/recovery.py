"""Recovery: rebuild a partition from what a resource manager shim knows after a restart.

A shim re-registers its nodes, re-adds its applications (with the queue each was placed in)
and reports every allocation that still exists, plus the requests still waiting. Replaying
that feed in allocation-time order gives the same user, group and queue usage as before. Two
things cannot be read off allocations alone, and the feed carries them as the shim last saw
them: the application's state (Starting and Running look alike with one allocation) and
whether it counted as running while holding nothing (a Running application whose pods all
ended but which still waits for more).

While the feed is replayed, limits are relaxed (same limit entries, so the same group is
chosen for each application, but nothing limited): work that already runs is never refused,
even if the configuration lowered a limit below current usage in the meantime.

Preemption state is not recovered, as in YuniKorn, whose core keeps it in memory only: a
victim whose release the shim has not confirmed yet is a pod still terminating, which the
shim re-reports as an ordinary running allocation (the feed carries no `preempted` mark, and
one given is dropped); reservations and the asks' "triggered preemption" flags start afresh,
so a preemptor may preempt again (it usually picks the same, newest, victims again) and asks
reserve again in the next cycle. What the feed does keep is when each ask was made (the pod's
creation time, which YuniKorn's shim sends as the `creationTime` tag), so preemption and
reservation delays are not restarted by a restart.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

from quotactor.core.errors import InvalidRequest
from quotactor.core.identity import UserGroup
from quotactor.core.limits import LimitEntry, LimitTable
from quotactor.core.resources import Resource
from quotactor.scheduler.booking.booking import place
from quotactor.scheduler.booking.lifecycle import drop_asks, run_deadlines, transition
from quotactor.scheduler.objects.allocation import Allocation
from quotactor.scheduler.objects.application import Application
from quotactor.scheduler.objects.ask import Ask
from quotactor.scheduler.objects.gang import Gang, PlaceholderData
from quotactor.scheduler.objects.states import TERMINAL_STATES, ApplicationState, Trigger
from quotactor.scheduler.placement.placement import PlacementError

if TYPE_CHECKING:
    from quotactor.scheduler.partition.partition import Partition

__all__ = [
    "PartitionFeed",
    "RecoveredApplication",
    "RecoveredNode",
    "RecoveryFeed",
    "feed_of",
    "recover_allocations",
    "recover_partition",
]

S = ApplicationState
_FORWARD = (S.NEW, S.ACCEPTED, S.STARTING, S.RUNNING)


@dataclass(frozen=True, slots=True)
class RecoveredNode:
    node_id: str
    capacity: Resource
    schedulable: bool = True
    attributes: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True, slots=True)
class RecoveredApplication:
    """An application as the shim re-adds it: identity, queue, asks and live allocations.

    `state` and `running` are what the shim last heard from the scheduler (None: unknown).
    `asked_at` holds when each of `asks` was made (empty: at recovery).
    """

    application_id: str
    user: UserGroup
    queue_path: str
    submitted_at: float
    tags: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    gang: Gang | None = None
    asks: tuple[Ask, ...] = ()
    allocations: tuple[Allocation, ...] = ()
    state: ApplicationState | None = None
    running: bool | None = None
    placeholder_data: tuple[PlaceholderData, ...] = ()
    asked_at: tuple[float, ...] = ()


@dataclass(frozen=True, slots=True)
class PartitionFeed:
    name: str
    nodes: tuple[RecoveredNode, ...] = ()
    applications: tuple[RecoveredApplication, ...] = ()


@dataclass(frozen=True, slots=True)
class RecoveryFeed:
    """Everything a shim re-sends after a restart, per partition."""

    partitions: tuple[PartitionFeed, ...] = ()


def feed_of(p: Partition) -> PartitionFeed:
    """What a shim would re-send for `p`: its nodes and every application still active."""
    nodes = tuple(
        RecoveredNode(n.node_id, n.capacity, n.schedulable, n.attributes)
        for n in (p.nodes.nodes[k] for k in sorted(p.nodes.nodes))
    )
    apps = tuple(_recovered(app) for app in sorted(p.apps.values(), key=lambda a: a.seq)
                 if app.state not in TERMINAL_STATES and app.queue is not None)
    return PartitionFeed(p.name, nodes, apps)


def _recovered(app: Application) -> RecoveredApplication:
    asks = app.sorted_asks()
    return RecoveredApplication(
        application_id=app.application_id,
        user=app.user,
        queue_path=app.queue_path,
        submitted_at=app.submitted_at,
        tags=app.tags,
        gang=app.gang,
        asks=tuple(pending.ask for pending in asks),
        allocations=tuple(_unmarked(app.allocations[k]) for k in sorted(app.allocations)),
        state=app.state,
        running=app.tracked,
        placeholder_data=tuple(app.placeholder_data()),
        asked_at=tuple(pending.added_at for pending in asks),
    )


def _unmarked(allocation: Allocation) -> Allocation:
    """The allocation as a shim reports it: a pod being preempted is just a running pod."""
    return dataclasses.replace(allocation, preempted=False) if allocation.preempted \
        else allocation


def recover_partition(p: Partition, feed: PartitionFeed) -> None:
    """Replay `feed` into `p` under relaxed limits, then restore the configured limits."""
    saved = p.ugm.config if p.ugm.config is not None else p.ugm.limit_table
    p.ugm.update_config(_relaxed(p.ugm.limit_table))
    try:
        _replay(p, feed)
    finally:
        p.ugm.update_config(saved)
    for app in p.apps.values():
        app.unblock_asks()
    run_deadlines(p)
    p.log.info("scheduler.recovered", nodes=len(feed.nodes), applications=len(feed.applications))


def recover_allocations(p: Partition, allocations: list[Allocation]) -> None:
    """Re-add allocations a shim reports as running, as `_replay` books the feed's.

    What already runs is never refused, so limits are relaxed meanwhile (as for a whole
    feed); the usage, states and views end as a fresh placement of the same asks would leave
    them. The same allocation reported again (same node and size) is a replay and changes
    nothing. Each is checked before it is booked, so a bad one stops the batch there with the
    ones before it kept (each a complete booking).
    """
    saved = p.ugm.config if p.ugm.config is not None else p.ugm.limit_table
    p.ugm.update_config(_relaxed(p.ugm.limit_table))
    try:
        for allocation in sorted(allocations, key=lambda a: (a.allocated_at, a.key)):
            _recover_one(p, _unmarked(allocation))
    finally:
        p.ugm.update_config(saved)


def _recover_one(p: Partition, allocation: Allocation) -> None:
    app = p.app(allocation.application_id)
    key = allocation.key
    existing = app.allocations.get(key)
    if existing is not None:
        if existing.node_id == allocation.node_id and existing.resource == allocation.resource:
            return
        raise InvalidRequest(f"allocation {key!r} of {app.application_id} exists already on"
                             f" {existing.node_id} with {existing.resource}")
    node = p.nodes.nodes.get(allocation.node_id)
    if node is None:
        raise InvalidRequest(f"recovered allocation {key!r} is on unknown node"
                             f" {allocation.node_id!r}")
    if app.state in TERMINAL_STATES or app.queue is None:
        raise InvalidRequest(f"application {app.application_id} is {app.state.value}: it takes"
                             " no allocations")
    if allocation.placeholder and (app.gang is None or allocation.task_group not in
                                   {g.name for g in app.gang.task_groups}):
        raise InvalidRequest(f"placeholder {key!r} names no task group of"
                             f" {app.application_id}'s gang")
    at = p.now()
    if key in app.asks:
        drop_asks(p, app, (key,), timed_out=False)  # the ask it satisfies is not pending
    if app.state is S.NEW:
        transition(p, app, Trigger.RUN, "recovered", at)
    p.accounting.charge(app, allocation.resource, enforce=False)
    place(p, app, allocation, node, at)


def _relaxed(table: LimitTable) -> LimitTable:
    """The same limit entries (so the same group choice) with nothing actually limited."""
    return LimitTable({
        path: [LimitEntry(e.users, e.groups, {}, 0) for e in entries]
        for path, entries in table.entries.items()
    })


def _replay(p: Partition, feed: PartitionFeed) -> None:
    for spec in feed.applications:
        if spec.asked_at and len(spec.asked_at) != len(spec.asks):
            raise InvalidRequest(f"cannot recover {spec.application_id}: {len(spec.asked_at)}"
                                 f" ask times for {len(spec.asks)} asks")
    for recovered in feed.nodes:
        if recovered.node_id not in p.nodes.nodes:
            p.add_node(recovered.node_id, recovered.capacity, recovered.schedulable,
                       recovered.attributes)
    apps = [_readd(p, spec) for spec in feed.applications]
    bookings = sorted(
        ((allocation.allocated_at, allocation.key, app, _unmarked(allocation))
         for app, spec in zip(apps, feed.applications, strict=True)
         for allocation in spec.allocations),
        key=lambda b: (b[0], b[1], b[2].seq),
    )
    for at, _, app, allocation in bookings:
        node = p.nodes.nodes.get(allocation.node_id)
        if node is None:
            raise InvalidRequest(f"recovered allocation {allocation.key} is on unknown node"
                                 f" {allocation.node_id}")
        if app.state is S.NEW:
            transition(p, app, Trigger.RUN, "recovered", at)
        p.accounting.charge(app, allocation.resource, enforce=False)
        place(p, app, allocation, node, at)
    for app, spec in zip(apps, feed.applications, strict=True):
        for index, ask in enumerate(spec.asks):
            p.add_ask(app.application_id, ask)
            if spec.asked_at:
                app.asks[ask.key].added_at = spec.asked_at[index]
        for data in spec.placeholder_data:
            app.restore_progress(data)
        _settle(p, app, spec)


def _readd(p: Partition, spec: RecoveredApplication) -> Application:
    if spec.application_id in p.apps:
        raise InvalidRequest(f"application {spec.application_id} is already known in {p.name}")
    queue = p.queues.get(spec.queue_path)
    if queue is None:
        try:
            queue = p.queues.create(spec.queue_path)
        except PlacementError as exc:
            raise InvalidRequest(f"cannot recover {spec.application_id}: {exc}") from exc
    app = Application(spec.application_id, p.name, spec.user, spec.queue_path, spec.tags,
                      spec.submitted_at, p.next_seq(), spec.gang, p.options.timeouts.starting,
                      p.options.event_limit)
    app.state_log.append((spec.submitted_at, S.NEW.value))
    app.note(p.now(), "recovered", f"re-added in {queue.path}")
    app.queue = queue
    app.queue_path = queue.path
    queue.apps[app.application_id] = app
    p.apps[app.application_id] = app
    return app


def _settle(p: Partition, app: Application, spec: RecoveredApplication) -> None:
    """Bring the replayed application to the state (and running count) the shim reported."""
    if spec.running and not app.tracked:
        p.accounting.charge(app, Resource(), enforce=False)
    hint = spec.state
    if hint is None:
        return
    if hint in _FORWARD:
        while app.state in _FORWARD and _FORWARD.index(app.state) < _FORWARD.index(hint):
            transition(p, app, Trigger.RUN, "recovered state")
    elif hint is S.COMPLETING and app.state in _FORWARD and not app.asks \
            and not app.has_real_allocations:
        if app.state is S.NEW:
            transition(p, app, Trigger.RUN, "recovered state")
        transition(p, app, Trigger.COMPLETE, "recovered state")

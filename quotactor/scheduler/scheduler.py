"""`Scheduler`: the blocking, thread-safe facade over the partitions of one scheduler.

Every public method takes the scheduler's lock, so calls from a shim, a REST server and the
background loop are serialised; the user group managers are called with the lock held, which
is safe because their actors never call back into the scheduler. One cycle runs on demand
with `schedule()` (deterministic for the same calls and the same clock) or periodically on a
background thread with `start_background()`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any

from quotactor.core.errors import InvalidRequest
from quotactor.core.identity import UserGroup
from quotactor.core.resources import Resource, ResourceLike
from quotactor.logs import get_logger
from quotactor.scheduler.booking import whole
from quotactor.scheduler.booking.clock import Clock, SystemClock
from quotactor.scheduler.booking.lifecycle import next_placeholder_timeout
from quotactor.scheduler.objects.allocation import Allocation
from quotactor.scheduler.objects.ask import Ask
from quotactor.scheduler.objects.contention import PreemptionVictim
from quotactor.scheduler.objects.events import Event
from quotactor.scheduler.objects.gang import Gang
from quotactor.scheduler.objects.options import SchedulerOptions
from quotactor.scheduler.objects.queue import Queue
from quotactor.scheduler.objects.reasons import Wait
from quotactor.scheduler.objects.releases import ReleaseRequest
from quotactor.scheduler.objects.spec import DEFAULT_PARTITION, PartitionSpec, default_partition
from quotactor.scheduler.objects.states import ApplicationState
from quotactor.scheduler.partition.partition import Partition
from quotactor.scheduler.partition.recovery import (
    RecoveryFeed,
    feed_of,
    recover_allocations,
    recover_partition,
)
from quotactor.scheduler.runner import PeriodicRunner
from quotactor.scheduler.views import cluster_views, views
from quotactor.scheduler.views.info import ApplicationInfo, QueueInfo, application_info, queue_info
from quotactor.ugm import UserGroupManager

__all__ = ["CycleListener", "ReleaseListener", "Scheduler", "SchedulerConfigSource"]

log = get_logger()

SchedulerConfigSource = Any
"""None, YAML text, a path, a loaded `SchedulerConfig`, or `PartitionSpec`s."""

CycleListener = Callable[[list[Allocation]], None]
"""Told, with the scheduler's lock held, the allocations each cycle made (often none)."""

ReleaseListener = Callable[[list[ReleaseRequest]], None]
"""Told, with the scheduler's lock held, the releases the scheduler asks its shim for."""


class Scheduler:
    """Partitions, queues, applications and nodes around one user group manager per partition.

    Start it with `Scheduler.start(config)`; stop it with `stop()` (or use it as a context
    manager), which stops the background loop and every user group manager it started.
    """

    def __init__(self, clock: Clock, options: SchedulerOptions) -> None:
        self.clock = clock
        self.options = options
        self._partitions: dict[str, Partition] = {}
        self._lock = threading.RLock()
        self._cycled = threading.Condition(self._lock)
        self._cycles = 0
        self._runner: PeriodicRunner | None = None
        self._listeners: list[CycleListener] = []
        self._release_listeners: list[ReleaseListener] = []
        self.started_ns = time.time_ns()

    @classmethod
    def start(cls, config: SchedulerConfigSource = None, *, clock: Clock | None = None,
              options: SchedulerOptions | None = None) -> Scheduler:
        """A scheduler for `config` (`ConfigError` if invalid): None gives one `default`
        partition where anyone may submit to any queue (created on demand)."""
        scheduler = cls(clock or SystemClock(), options or SchedulerOptions())
        try:
            for spec in _specs(config):
                scheduler._add_partition(spec)
        except BaseException:
            scheduler.stop()
            raise
        return scheduler

    def __enter__(self) -> Scheduler:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop the background loop and every user group manager; safe to call twice."""
        self.stop_background()
        with self._lock:
            partitions, self._partitions = list(self._partitions.values()), {}
        for partition in partitions:
            partition.ugm.stop()

    def _add_partition(self, spec: PartitionSpec) -> None:
        # Cycles call the manager in a tight loop, usually from the main thread, and the
        # scheduler's own state is not interrupt-safe either: skip the relay's thread handoff.
        ugm = UserGroupManager.start(spec.limits, partition=spec.name,
                                     timeout=self.options.ugm_timeout, main_thread_relay=False)
        self._partitions[spec.name] = Partition(spec, ugm, self.clock, self.options)

    def _partition(self, name: str) -> Partition:
        partition = self._partitions.get(name)
        if partition is None:
            raise InvalidRequest(f"unknown partition {name!r}")
        return partition

    # -- configuration ---------------------------------------------------------------------

    def update_config(self, config: SchedulerConfigSource) -> None:
        """Apply a new configuration without disturbing running work.

        Kept queues take their new settings, new ones appear, removed managed queues drain;
        limits switch atomically per partition. A partition that is no longer configured
        drains (takes no new applications). Raises `ConfigError` and changes nothing if the
        configuration is invalid.
        """
        specs = _specs(config)
        with self._lock:
            for spec in specs:
                partition = self._partitions.get(spec.name)
                if partition is None:
                    self._add_partition(spec)
                    continue
                partition.ugm.update_config(spec.limits)
                partition.apply(spec)
            wanted = {spec.name for spec in specs}
            for name, partition in self._partitions.items():
                if name not in wanted:
                    partition.drain()

    @property
    def partitions(self) -> tuple[str, ...]:
        with self._lock:
            return tuple(sorted(self._partitions))

    def ugm(self, partition: str = DEFAULT_PARTITION) -> UserGroupManager:
        """The user group manager of `partition` (to read user and group usage)."""
        with self._lock:
            return self._partition(partition).ugm

    # -- nodes -----------------------------------------------------------------------------

    def add_node(self, node_id: str, capacity: ResourceLike, *,
                 partition: str = DEFAULT_PARTITION, schedulable: bool = True,
                 attributes: Mapping[str, str] | None = None) -> None:
        with self._lock:
            self._partition(partition).add_node(node_id, capacity, schedulable, attributes)

    def update_node(self, node_id: str, *, partition: str = DEFAULT_PARTITION,
                    capacity: ResourceLike | None = None,
                    schedulable: bool | None = None) -> None:
        """Change a node's capacity and/or whether new allocations may land on it."""
        with self._lock:
            self._partition(partition).update_node(node_id, capacity, schedulable)

    def remove_node(self, node_id: str, *, partition: str = DEFAULT_PARTITION
                    ) -> list[Allocation]:
        """Remove a node; returns the allocations that were released with it."""
        with self._lock:
            return self._partition(partition).remove_node(node_id)

    # -- applications ----------------------------------------------------------------------

    def submit(self, application_id: str, user: UserGroup, *, queue: str = "",
               partition: str = DEFAULT_PARTITION, tags: Mapping[str, str] | None = None,
               gang: Gang | None = None, asks: Iterable[Ask] = ()) -> ApplicationInfo:
        """Add an application (placed, or Rejected with the reason) and its first asks."""
        with self._lock:
            p = self._partition(partition)
            app = p.submit(application_id, user, queue, tags or {}, gang, None)
            if app.state is not ApplicationState.REJECTED:
                p.add_asks(application_id, list(asks))
            return application_info(app)

    def add_ask(self, application_id: str, ask: Ask, *,
                partition: str = DEFAULT_PARTITION) -> None:
        with self._lock:
            self._partition(partition).add_ask(application_id, ask)

    def remove_ask(self, application_id: str, key: str, *,
                   partition: str = DEFAULT_PARTITION) -> None:
        with self._lock:
            self._partition(partition).remove_ask(application_id, key)

    def release(self, application_id: str, allocation_key: str, *,
                partition: str = DEFAULT_PARTITION) -> Allocation:
        """The shim confirms an allocation is gone; returns it (see `confirm_release`)."""
        return self.confirm_release(application_id, allocation_key, partition=partition)[0]

    def confirm_release(self, application_id: str, allocation_key: str, *,
                        partition: str = DEFAULT_PARTITION
                        ) -> tuple[Allocation, Allocation | None]:
        """The shim confirms an allocation is gone, asked for or not: usage drops only now.

        Returns the released allocation and, when it was a placeholder the scheduler asked to
        release for a replacement, the real allocation booked in its place (news for the shim).
        """
        with self._lock:
            done = self._partition(partition).release(application_id, allocation_key)
            self._deliver_releases()
            return done

    def recover_allocations(self, allocations: Iterable[Allocation]) -> None:
        """Re-add allocations the shim reports as still running (YuniKorn's recovery).

        Their applications must be known and their nodes registered. Limits are not enforced
        (the work already runs), and usage ends as if the scheduler had placed them;
        reporting the same allocation again changes nothing.
        """
        with self._lock:
            batch = list(allocations)
            for name in sorted({a.partition for a in batch}):
                recover_allocations(self._partition(name),
                                    [a for a in batch if a.partition == name])

    def add_release_listener(self, listener: ReleaseListener) -> Callable[[], None]:
        """Tell `listener` every release the scheduler asks its shim for; returns the undo.

        Only a scheduler started with `SchedulerOptions(shim_confirms_releases=True)` asks:
        the shim releases the allocation and confirms with `confirm_release`.
        """
        with self._lock:
            self._release_listeners.append(listener)

        def remove() -> None:
            with self._lock:
                if listener in self._release_listeners:
                    self._release_listeners.remove(listener)

        return remove

    def pending_releases(self, *, partition: str = DEFAULT_PARTITION) -> list[ReleaseRequest]:
        """Releases asked for and not confirmed by the shim yet, oldest first."""
        with self._lock:
            return list(self._partition(partition).releases.asked.values())

    def _deliver_releases(self) -> None:
        requests = [r for name in sorted(self._partitions)
                    for r in self._partitions[name].releases.take()]
        if not requests:
            return
        for listener in list(self._release_listeners):
            try:
                listener(requests)
            except Exception:  # an observer's failure must not fail the step that asked
                log.exception("scheduler.release_listener_failed")

    def resize(self, application_id: str, allocation_key: str, resource: ResourceLike, *,
               partition: str = DEFAULT_PARTITION) -> Wait | None:
        """Resize an allocation in place; None when done, else the Wait that refused it."""
        with self._lock:
            return self._partition(partition).resize(application_id, allocation_key, resource)

    def fail(self, application_id: str, message: str = "", *,
             partition: str = DEFAULT_PARTITION) -> None:
        with self._lock:
            self._partition(partition).fail(application_id, message)

    def remove_application(self, application_id: str, *,
                           partition: str = DEFAULT_PARTITION) -> None:
        with self._lock:
            self._partition(partition).remove_application(application_id)

    # -- scheduling ------------------------------------------------------------------------

    def schedule(self) -> list[Allocation]:
        """Run due timeouts, then one scheduling cycle in every partition (by name)."""
        with self._lock:
            made: list[Allocation] = []
            for name in sorted(self._partitions):
                made.extend(self._partitions[name].schedule())
            self._cycles += 1
            self._deliver_releases()
            for listener in list(self._listeners):
                try:
                    listener(made)
                except Exception:  # an observer's failure must not fail the cycle it observed
                    log.exception("scheduler.cycle_listener_failed")
            self._cycled.notify_all()
            return made

    def add_cycle_listener(self, listener: CycleListener) -> Callable[[], None]:
        """Call `listener` after every cycle (from the thread that ran it); returns the undo.

        This is how a REST server learns what was decided whoever drives the cycles (the
        background loop, a simulator or the embedding shim). A listener must be quick and must
        not call back into the scheduler from another thread while it runs.
        """
        with self._lock:
            self._listeners.append(listener)

        def remove() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return remove

    @property
    def cycles(self) -> int:
        """How many scheduling cycles have run (on demand and in the background)."""
        with self._lock:
            return self._cycles

    def wait_for_cycles(self, count: int, timeout: float) -> bool:
        """Block until at least `count` cycles have run in total; False on timeout."""
        with self._cycled:
            return self._cycled.wait_for(lambda: self._cycles >= count, timeout)

    def run_timers(self) -> None:
        """Run the timeouts that are due at the clock's current time, without scheduling."""
        with self._lock:
            for name in sorted(self._partitions):
                self._partitions[name].run_deadlines()
            self._deliver_releases()

    def next_timer(self) -> float | None:
        """When the earliest pending timeout is due (for simulators that jump in time)."""
        with self._lock:
            due = [p.deadlines.next_due() for p in self._partitions.values()]
            due += [p.contention.next_wake for p in self._partitions.values()]
            known = [d for d in due if d is not None]
            return min(known) if known else None

    def next_placeholder_timeout(self) -> float | None:
        """When a gang's placeholders next time out, if any gang holds placeholders (for
        simulators that jump in time: `next_timer` also names every state timeout)."""
        with self._lock:
            due = [next_placeholder_timeout(p) for p in self._partitions.values()]
            known = [d for d in due if d is not None]
            return min(known) if known else None

    def release_requests(self) -> list[PreemptionVictim]:
        """Allocations preempted since the last call, which the shim should release.

        Each victim is handed out once. It stays allocated, and counted for its user, group
        and queues, until the shim confirms with `release()`; meanwhile it shows as
        `"preempted": true` in the application view.
        """
        with self._lock:
            out: list[PreemptionVictim] = []
            for name in sorted(self._partitions):
                out.extend(self._partitions[name].contention.take_requests())
            return out

    def preemption_counts(self, partition: str = DEFAULT_PARTITION) -> dict[str, float]:
        """Victims chosen so far by reason (`preemption` by the default preemptor,
        `requiredNode` for asks pinned to a node, `quota`), reservations made, expired and
        cancelled (by a preemptor or a pinned ask), and the node-seconds reservations have
        held nodes (those still held counted up to now)."""
        with self._lock:
            p = self._partition(partition)
            c = p.contention
            now = p.now()
            held = c.reserved_seconds + sum(now - r.created for r in c.reservations.values())
            return {"preemption": c.preempted["preemption"], "quota": c.preempted["quota"],
                    "requiredNode": c.preempted["required-node"],
                    "reservations": c.reservations_made,
                    "reservationsExpired": c.reservations_expired,
                    "reservationsCancelled": c.reservations_cancelled,
                    "reservedSeconds": held}

    def next_contention_check(self) -> float | None:
        """When an ask next becomes able to reserve or preempt, or a quota timer runs out
        (for simulators that jump in time; the application timers are in `next_timer`)."""
        with self._lock:
            due = [p.contention.next_wake for p in self._partitions.values()]
            known = [d for d in due if d is not None]
            return min(known) if known else None

    def start_background(self, interval: float = 0.1) -> None:
        """Run `schedule()` every `interval` seconds on a background thread."""
        with self._lock:
            if self._runner is not None:
                raise RuntimeError("the background scheduler is already running")
            self._runner = PeriodicRunner(self.schedule, interval)
            self._runner.start()

    def stop_background(self) -> None:
        with self._lock:
            runner, self._runner = self._runner, None
        if runner is not None:
            runner.stop(self.options.ugm_timeout)

    @property
    def ugm_calls(self) -> int:
        """User group manager round trips made so far (increases, decreases, headroom)."""
        with self._lock:
            return sum(p.accounting.calls for p in self._partitions.values())

    # -- reading ---------------------------------------------------------------------------

    def application(self, application_id: str, *,
                    partition: str = DEFAULT_PARTITION) -> ApplicationInfo:
        with self._lock:
            return application_info(self._partition(partition).app(application_id))

    def applications(self, *, partition: str = DEFAULT_PARTITION,
                     state: str | None = None) -> list[ApplicationInfo]:
        """Applications by ID; `state` as in `applications_view`."""
        with self._lock:
            wanted = views.states_matching(state)
            apps = self._partition(partition).apps
            return [application_info(apps[k]) for k in sorted(apps)
                    if wanted is None or apps[k].state in wanted]

    def has_room(self, sizes: Sequence[Resource], *,
                 partition: str = DEFAULT_PARTITION) -> bool:
        """Whether asks of `sizes` could all be placed on the partition's nodes at once now,
        limits aside (on schedulable nodes no reservation holds)."""
        with self._lock:
            return whole.plan(self._partition(partition).nodes, sizes) is not None

    def room_for(self, sizes: Sequence[Resource], *,
                 partition: str = DEFAULT_PARTITION) -> list[int]:
        """For each of `sizes`, how many asks of it could be placed on the partition's nodes
        at once now, limits aside: `has_room` answers True for that many asks of the size,
        and no more."""
        with self._lock:
            return whole.room_for(self._partition(partition).nodes, sizes)

    def room_state(self, *, partition: str = DEFAULT_PARTITION) -> Hashable:
        """A value that is equal at two moments only if `room_for` then answers alike for
        every size (the nodes' distinct rooms; `has_room` for asks of different sizes may
        still differ)."""
        with self._lock:
            return whole.room_state(self._partition(partition).nodes)

    def why_pending(self, application_id: str, *,
                    partition: str = DEFAULT_PARTITION) -> Wait | None:
        """What holds back the application's first waiting ask (None: nothing waits).

        Read straight from the application rather than through a full `ApplicationInfo`: a
        replay asks this for every waiting job after every release.
        """
        with self._lock:
            app = self._partition(partition).app(application_id)
            return app.wait if app.asks else None

    def take_wait_changes(self, *, partition: str = DEFAULT_PARTITION) -> dict[str, Wait | None]:
        """Applications whose reason to wait changed since the last call, with the reason
        now (None: nothing waits any more). A replay reads these after each cycle instead of
        asking about every waiting application. A reason that changed and changed back to
        the one the last call reported (None for an application it never reported) is no
        change: a new application that a queue's `maxapplications` holds meets full nodes
        when a slot frees, and the count again once another application took the slot.
        Changes are kept from the first call on (which returns what is known then), so call
        it once before scheduling."""
        with self._lock:
            accounting = self._partition(partition).accounting
            accounting.watch_waits = True
            changed, accounting.changed_waits = accounting.changed_waits, {}
            found: dict[str, Wait | None] = {}
            for key, app in changed.items():
                wait = app.wait if app.asks else None
                if wait != app.reported_wait:
                    app.reported_wait = found[key] = wait
            return found

    def events(self, application_id: str, *, partition: str = DEFAULT_PARTITION) -> list[Event]:
        """The application's recent events, oldest first."""
        with self._lock:
            return list(self._partition(partition).app(application_id).events)

    def queue(self, path: str, *, partition: str = DEFAULT_PARTITION) -> QueueInfo:
        with self._lock:
            return queue_info(self._queue(path, partition))

    def queue_allocated(self, path: str, *, partition: str = DEFAULT_PARTITION) -> Resource:
        """What the queue's applications hold now: `queue(path).allocated`, read without
        building the whole `QueueInfo` (which lists every application)."""
        with self._lock:
            return self._queue(path, partition).allocated

    def _queue(self, path: str, partition: str) -> Queue:
        queue = self._partition(partition).queues.get(path)
        if queue is None:
            raise InvalidRequest(f"partition {partition} has no queue {path!r}")
        return queue

    def queues(self, *, partition: str = DEFAULT_PARTITION) -> list[QueueInfo]:
        """Every queue, parents before children."""
        with self._lock:
            return [queue_info(q) for q in self._partition(partition).queues.root.walk()]

    # -- YuniKorn REST views ---------------------------------------------------------------

    def partitions_view(self) -> list[dict[str, Any]]:
        with self._lock:
            return [views.partition_view(self._partitions[n]) for n in sorted(self._partitions)]

    def queues_view(self, partition: str = DEFAULT_PARTITION) -> dict[str, Any]:
        with self._lock:
            return views.queues_view(self._partition(partition))

    def applications_view(self, partition: str = DEFAULT_PARTITION,
                          state: str | None = None) -> list[dict[str, Any]]:
        with self._lock:
            return views.applications_view(self._partition(partition), state)

    def application_view(self, application_id: str,
                         partition: str = DEFAULT_PARTITION) -> dict[str, Any]:
        with self._lock:
            p = self._partition(partition)
            return views.application_view(p, p.app(application_id))

    def nodes_view(self, partition: str = DEFAULT_PARTITION) -> list[dict[str, Any]]:
        with self._lock:
            return views.nodes_view(self._partition(partition))

    def queue_view(self, path: str, partition: str = DEFAULT_PARTITION, *,
                   subtree: bool = False) -> dict[str, Any] | None:
        """One queue (with its children's views when `subtree`); None if there is none."""
        with self._lock:
            return cluster_views.queue_view(self._partition(partition), path, subtree)

    def node_view(self, node_id: str, partition: str = DEFAULT_PARTITION
                  ) -> dict[str, Any] | None:
        with self._lock:
            return cluster_views.node_view(self._partition(partition), node_id)

    def node_utilizations_view(self) -> list[dict[str, Any]]:
        with self._lock:
            return [cluster_views.node_utilizations_view(self._partitions[n])
                    for n in sorted(self._partitions)]

    def placement_rules_view(self, partition: str = DEFAULT_PARTITION) -> dict[str, Any]:
        with self._lock:
            return cluster_views.placement_rules_view(self._partition(partition))

    def clusters_view(self) -> list[dict[str, Any]]:
        with self._lock:
            return cluster_views.cluster_view(
                [self._partitions[n] for n in sorted(self._partitions)], self.started_ns)

    def health_checks(self) -> list[dict[str, Any]]:
        """YuniKorn-shaped health checks of every partition (see `cluster_views`)."""
        with self._lock:
            return [check for n in sorted(self._partitions)
                    for check in cluster_views.health_checks(self._partitions[n])]

    def totals(self) -> tuple[int, int]:
        """(running applications, live allocations) over every partition: the history
        samples. Running as YuniKorn counts them for its history: Starting or Running."""
        running = (ApplicationState.STARTING, ApplicationState.RUNNING)
        with self._lock:
            parts = self._partitions.values()
            return (sum(1 for p in parts for a in p.apps.values() if a.state in running),
                    sum(len(n.allocations) for p in parts for n in p.nodes.nodes.values()))

    # -- recovery --------------------------------------------------------------------------

    def recovery_feed(self) -> RecoveryFeed:
        """What a shim would re-send after a restart: nodes, active apps, allocations, asks."""
        with self._lock:
            return RecoveryFeed(tuple(feed_of(self._partitions[n])
                                      for n in sorted(self._partitions)))

    def recover(self, feed: RecoveryFeed) -> None:
        """Rebuild nodes, applications and allocations from a shim's feed (see `recovery`)."""
        with self._lock:
            for part in feed.partitions:
                recover_partition(self._partition(part.name), part)


def _specs(config: SchedulerConfigSource) -> tuple[PartitionSpec, ...]:
    if config is None:
        return (default_partition(),)
    if isinstance(config, PartitionSpec):
        return (config,)
    if isinstance(config, Sequence) and not isinstance(config, str | bytes) and config \
            and all(isinstance(c, PartitionSpec) for c in config):
        return tuple(config)
    from quotactor.config import ConfigError, load_config
    from quotactor.scheduler.from_config import partition_specs

    specs = partition_specs(load_config(config))
    if not specs:
        raise ConfigError(reason="the configuration has no partition", location="partitions")
    return specs

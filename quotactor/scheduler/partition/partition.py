"""A partition: its nodes, queue tree, placement rules, applications and user group manager.

The partition is where the scheduler's entry points for one partition live. It validates each
request, then hands the work to the procedures of `lifecycle`, `booking`, `cycle` and the
contention steps. They see it only through the protocols of `context` (`PartitionCore`,
`PartitionContext`), which it satisfies structurally: they never import this module, so the
dependencies run one way. It is not thread-safe by itself; `Scheduler` serialises every call.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal

from quotactor.core.errors import InvalidRequest
from quotactor.core.identity import UserGroup
from quotactor.core.resources import Resource, ResourceLike
from quotactor.scheduler.booking.accounting import Accounting
from quotactor.scheduler.booking.booking import replace, resize
from quotactor.scheduler.booking.clock import Clock
from quotactor.scheduler.booking.lifecycle import (
    drop_asks,
    finish,
    release,
    release_all,
    run_deadlines,
    transition,
)
from quotactor.scheduler.booking.timers import Deadlines
from quotactor.scheduler.objects.allocation import Allocation
from quotactor.scheduler.objects.application import Application
from quotactor.scheduler.objects.ask import Ask
from quotactor.scheduler.objects.contention import Contention
from quotactor.scheduler.objects.events import partition_logger
from quotactor.scheduler.objects.gang import Gang
from quotactor.scheduler.objects.node import Node, NodeSet
from quotactor.scheduler.objects.options import SchedulerOptions
from quotactor.scheduler.objects.queue import Queue
from quotactor.scheduler.objects.reasons import Wait
from quotactor.scheduler.objects.releases import Releases
from quotactor.scheduler.objects.spec import PartitionSpec
from quotactor.scheduler.objects.states import TERMINAL_STATES, ApplicationState, Trigger
from quotactor.scheduler.partition.cycle import Cycle
from quotactor.scheduler.placement.hierarchy import Hierarchy
from quotactor.scheduler.placement.placement import Placement, PlacementError, Request
from quotactor.scheduler.preemption.quota_preemption import max_snapshot, quota_changed

if TYPE_CHECKING:
    from quotactor.ugm import UserGroupManager

__all__ = ["Partition"]

S = ApplicationState
_ADDABLE = frozenset({S.NEW, S.ACCEPTED, S.STARTING, S.RUNNING, S.COMPLETING})
_FAILABLE = frozenset({S.NEW, S.ACCEPTED, S.STARTING, S.RUNNING})


class Partition:
    """Everything the scheduler knows about one partition."""

    def __init__(self, spec: PartitionSpec, ugm: UserGroupManager, clock: Clock,
                 options: SchedulerOptions) -> None:
        self.name = spec.name
        self.spec = spec
        self.ugm = ugm
        self.clock = clock
        self.options = options
        self.status: Literal["Active", "Draining"] = "Active"
        self.status_since = clock.now()
        self.nodes = NodeSet(spec.node_sort_policy)
        self.queues = Hierarchy(spec.root)
        self.placement = Placement(spec.rules)
        self.apps: dict[str, Application] = {}
        self.gang_apps: dict[str, Application] = {}
        """Applications holding placeholders: the only ones the replacement step looks at."""
        self.fresh: dict[str, Application] = {}
        """Applications whose asks changed since the scheduler last said why they wait."""
        self.accounting = Accounting(ugm, self.nodes,
                                     exhaustive=options.exhaustive_retries)
        self.backlog = self.accounting.backlog
        self.backlog.preemption_enabled = spec.preemption_enabled
        self.log = partition_logger(spec.name)
        self.deadlines = Deadlines()
        self.contention = Contention()
        """Reservations and preemption victims (see `contention_step`)."""
        self.releases = Releases(options.shim_confirms_releases)
        """Releases asked of the shim and not confirmed yet (see `releases`)."""
        self._seq = 0

    def now(self) -> float:
        return self.clock.now()

    def next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def app(self, application_id: str) -> Application:
        app = self.apps.get(application_id)
        if app is None:
            raise InvalidRequest(f"partition {self.name} has no application {application_id!r}")
        return app

    def forget(self, app: Application) -> None:
        """Drop an expired application for good."""
        if self.apps.get(app.application_id) is app:
            del self.apps[app.application_id]

    def set_wait(self, app: Application, wait: Wait | None) -> None:
        """Record why `app` waits; log and remember it only when the reason changes."""
        if wait == app.wait:
            return
        if self.accounting.watch_waits:  # a reader (the replay) takes the changed ones
            self.accounting.changed_waits[app.application_id] = app
        app.wait = wait
        self.backlog.reason_changed(app)
        if wait is not None:
            app.note(self.now(), "waiting", wait)
            if self.log.isEnabledFor(logging.INFO):  # a replay changes millions of reasons
                self.log.info("scheduler.app_waiting", app=app.application_id, kind=wait.kind,
                              name=wait.name, queue=wait.queue_path, limit=wait.limit,
                              ask=wait.ask, detail=wait.detail)

    # -- nodes -----------------------------------------------------------------------------

    def add_node(self, node_id: str, capacity: ResourceLike, schedulable: bool,
                 attributes: Mapping[str, str] | None) -> None:
        if node_id in self.nodes.nodes:
            raise InvalidRequest(f"node {node_id!r} is already registered in {self.name}")
        self.nodes.add(Node(node_id, capacity, schedulable, attributes))
        self.log.info("scheduler.node_added", node=node_id, capacity=str(Resource.of(capacity)))

    def update_node(self, node_id: str, capacity: ResourceLike | None,
                    schedulable: bool | None) -> None:
        node = self._node(node_id)
        if capacity is not None:
            new = Resource.of(capacity)
            if new.has_negative():
                raise InvalidRequest(f"node {node_id} capacity cannot be negative: {new}")
            self.nodes.resized(node, new)
        if schedulable is not None and schedulable != node.schedulable:
            node.schedulable = schedulable
            if schedulable:
                self.nodes.freed()
            self.log.info("scheduler.node_schedulable", node=node_id, schedulable=schedulable)

    def remove_node(self, node_id: str) -> list[Allocation]:
        """Remove a node; everything allocated on it is released as the RM would."""
        node = self._node(node_id)
        released = []
        for app_id, key in sorted(node.allocations):
            released.append(release(self, self.apps[app_id], key, timed_out=True,
                                    reason=f"node {node_id} removed"))
        self.nodes.remove(node_id)
        self.log.info("scheduler.node_removed", node=node_id, released=len(released))
        return released

    def _node(self, node_id: str) -> Node:
        node = self.nodes.nodes.get(node_id)
        if node is None:
            raise InvalidRequest(f"partition {self.name} has no node {node_id!r}")
        return node

    # -- applications ----------------------------------------------------------------------

    def submit(self, application_id: str, user: UserGroup, queue: str,
               tags: Mapping[str, str], gang: Gang | None,
               submitted_at: float | None) -> Application:
        """Add an application: New, then placed in a queue or Rejected with the reason."""
        if not isinstance(application_id, str) or not application_id.strip():
            raise InvalidRequest(f"application id must be a non-empty string, got"
                                 f" {application_id!r}")
        if not isinstance(user, UserGroup):
            raise InvalidRequest(f"user must be a UserGroup, got {type(user).__name__}")
        existing = self.apps.get(application_id)
        if existing is not None and existing.state not in TERMINAL_STATES:
            raise InvalidRequest(f"application {application_id!r} already exists in"
                                 f" {self.name}")
        now = self.now()
        app = Application(application_id, self.name, user, queue, tags,
                          now if submitted_at is None else submitted_at, self.next_seq(), gang,
                          self.options.timeouts.starting, self.options.event_limit)
        self.apps[application_id] = app
        app.state_log.append((now, S.NEW.value))
        app.note(now, "state", f"New: submitted by {user.user} to {queue or '(no queue)'}")
        self.log.info("scheduler.app_submitted", app=application_id, user=user.user,
                      queue=queue or None)
        problem = self._place(app)
        if problem is not None:
            self.log.info("scheduler.app_rejected", app=application_id, reason=problem)
            transition(self, app, Trigger.REJECT, problem)
            return app
        if gang is not None:
            for group in gang.task_groups:
                for i in range(group.min_member):
                    self._add_ask(app, Ask(f"{application_id}-{group.name}-{i}",
                                           group.min_resource, placeholder=True,
                                           task_group=group.name))
        return app

    def _place(self, app: Application) -> str | None:
        """Put `app` in its queue; the rejection reason if it cannot be placed."""
        if self.status != "Active":
            return f"partition {self.name} is draining"
        request = Request(app.user, app.requested_queue, app.tags)
        try:
            placed = self.placement.place(request, self.queues.get)
        except PlacementError as exc:
            return str(exc)
        queue = self.queues.get(placed.queue_path)
        if queue is not None:
            if not queue.is_leaf:
                return f"queue {queue.path} is not a leaf queue"
            if queue.status != "Active":
                return f"queue {queue.path} is draining"
        else:
            try:
                queue = self.queues.create(placed.queue_path)
            except PlacementError as exc:
                return str(exc)
            self.log.info("scheduler.queue_created", queue=queue.path)
        problem = self._gang_fits(app, queue)
        if problem is not None:
            self.queues.prune(queue)
            return problem
        app.queue = queue
        app.queue_path = queue.path
        queue.apps[app.application_id] = app
        app.note(self.now(), "placed", f"{queue.path} by rule {placed.rule}")
        return None

    def _gang_fits(self, app: Application, queue: Queue) -> str | None:
        if app.gang is None:
            return None
        total = app.gang.placeholder_total
        for level in queue.lineage():
            if level.max_resources is not None and not total.fits_within(level.max_resources):
                return (f"placeholder size {total} is larger than the maximum of queue"
                        f" {level.path} {level.max_resources}")
        return None

    def add_ask(self, application_id: str, ask: Ask) -> None:
        app = self.app(application_id)
        if app.state not in _ADDABLE:
            raise InvalidRequest(f"application {application_id} is {app.state.value}: it takes"
                                 " no new asks")
        if ask.key in app.allocations:
            raise InvalidRequest(f"ask {ask.key!r} of {application_id} is already allocated")
        if ask.placeholder and app.gang is None:
            raise InvalidRequest(f"placeholder ask {ask.key!r}: {application_id} has no gang")
        if ask.required_node is not None and ask.required_node not in self.nodes.nodes:
            self.log.info("scheduler.required_node_unknown", app=application_id, ask=ask.key,
                          node=ask.required_node)
        self._add_ask(app, ask)

    def add_asks(self, application_id: str, asks: Sequence[Ask]) -> None:
        """Add the first asks of a new application, as `add_ask` of each in turn would
        (`InvalidRequest`, and nothing added, if one could not be)."""
        app = self.app(application_id)
        keys = {ask.key for ask in asks}
        if app.asks or app.allocations or len(keys) < len(asks) or len(asks) < 2:
            for ask in asks:
                self.add_ask(application_id, ask)
            return
        if app.state not in _ADDABLE:
            raise InvalidRequest(f"application {application_id} is {app.state.value}: it takes"
                                 " no new asks")
        for ask in asks:
            if ask.placeholder and app.gang is None:
                raise InvalidRequest(f"placeholder ask {ask.key!r}: {application_id} has no "
                                     "gang")
        for ask in asks:
            if ask.required_node is not None and ask.required_node not in self.nodes.nodes:
                self.log.info("scheduler.required_node_unknown", app=application_id,
                              ask=ask.key, node=ask.required_node)
        now = self.now()
        queue = app.queue
        assert queue is not None
        total = app.add_new_asks(asks, now, [self.next_seq() for _ in asks])
        app.note(now, "ask", f"{len(asks)} asks ({asks[0].key} first), {total} in all, "
                 f"priority {app.priority}")
        if app.state is S.NEW:
            transition(self, app, Trigger.RUN, "first ask added", now)
        queue.asks_added(app, asks)
        self.fresh[app.application_id] = app

    def _add_ask(self, app: Application, ask: Ask) -> None:
        now = self.now()
        queue = app.queue
        assert queue is not None
        replaced = app.asks.get(ask.key)
        app.add_ask(ask, now, self.next_seq())
        queue.ask_added(app, ask, None if replaced is None else replaced.ask)
        self.fresh[app.application_id] = app
        app.note(now, "ask", f"{ask.key} {ask.resource} priority {ask.priority}")
        if app.state is S.NEW:
            transition(self, app, Trigger.RUN, "first ask added", now)
        elif app.state is S.COMPLETING:
            transition(self, app, Trigger.RUN, "ask added while completing", now)
            self._count_again(app)

    def _count_again(self, app: Application) -> None:
        """Back from Completing to Running (a restarted pod): it counts as running again."""
        if app.tracked:
            return
        wait = self.accounting.charge(app, Resource())
        if wait is not None:
            app.note(self.now(), "refused", f"not counted as running again: {wait}")
            self.log.info("scheduler.recount_refused", app=app.application_id,
                          kind=wait.kind, name=wait.name, detail=wait.detail)

    def remove_ask(self, application_id: str, key: str) -> None:
        app = self.app(application_id)
        if key not in app.asks:
            raise InvalidRequest(f"application {application_id} has no pending ask {key!r}")
        drop_asks(self, app, (key,), timed_out=True)
        self.accounting.untrack(app)
        if app.state in (S.ACCEPTED, S.STARTING, S.RUNNING) and not app.asks \
                and not app.allocations:
            transition(self, app, Trigger.COMPLETE, "last ask removed")

    def release(self, application_id: str, key: str) -> tuple[Allocation, Allocation | None]:
        """The RM confirms an allocation is gone (pod finished or deleted), asked for or not:
        (the released allocation, the real allocation that replaced it, if it was a
        placeholder the scheduler asked to release with `PLACEHOLDER_REPLACED`)."""
        app = self.app(application_id)
        if key not in app.allocations:
            raise InvalidRequest(f"application {application_id} has no allocation {key!r}")
        request = self.releases.settle(application_id, key)
        if request is not None and request.termination == "PLACEHOLDER_REPLACED":
            pending = app.asks.get(request.replacement)
            if pending is not None:
                placeholder = app.allocations[key]
                return placeholder, replace(self, app, pending, placeholder)
        reason = "released by the RM" if request is None else \
            f"released by the RM on request ({request.termination}): {request.message}"
        return release(self, app, key, timed_out=True, reason=reason), None

    def resize(self, application_id: str, key: str, resource: ResourceLike) -> Wait | None:
        app = self.app(application_id)
        wait = resize(self, app, key, Resource.of(resource))
        if wait is not None:
            app.note(self.now(), "refused", f"resize of {key}: {wait}")
            self.log.info("scheduler.resize_refused", app=application_id, allocation=key,
                          kind=wait.kind, name=wait.name, detail=wait.detail)
        return wait

    def fail(self, application_id: str, message: str) -> None:
        """Fail an application: asks dropped, allocations released, then Failed."""
        app = self.app(application_id)
        if app.state not in _FAILABLE:
            raise InvalidRequest(f"application {application_id} is {app.state.value}: it cannot"
                                 " fail")
        transition(self, app, Trigger.FAIL, message)
        self._clear(app)
        if app.state is S.FAILING:
            self.accounting.untrack(app)
            transition(self, app, Trigger.FAIL, message)

    def remove_application(self, application_id: str) -> None:
        """The RM removed the application: it ends Completed (Failed if it was failing)."""
        app = self.app(application_id)
        if app.state in TERMINAL_STATES:
            return
        self._clear(app)
        self.accounting.untrack(app)
        if app.state is S.NEW:
            finish(self, app, self.now())
            self.forget(app)
            return
        if app.state is S.RESUMING:
            transition(self, app, Trigger.RUN, "removed by the RM")
        if app.state in (S.ACCEPTED, S.STARTING, S.RUNNING):
            transition(self, app, Trigger.COMPLETE, "removed by the RM")
        if app.state is S.COMPLETING:
            app.placeholder_cleanup_done = True
            transition(self, app, Trigger.COMPLETE, "removed by the RM")
        elif app.state is S.FAILING:
            transition(self, app, Trigger.FAIL, "removed by the RM")

    def _clear(self, app: Application) -> None:
        drop_asks(self, app, list(app.asks), timed_out=True)
        release_all(self, app, reason=f"application {app.state.value}")

    # -- scheduling ------------------------------------------------------------------------

    def run_deadlines(self) -> None:
        run_deadlines(self)

    def schedule(self) -> list[Allocation]:
        run_deadlines(self)
        return Cycle(self).run()

    # -- configuration ---------------------------------------------------------------------

    def apply(self, spec: PartitionSpec) -> None:
        """A new configuration for this partition; running work is not disturbed."""
        self.spec = spec
        self.backlog.preemption_enabled = spec.preemption_enabled
        self.backlog.recheck_user(None)  # the limits may hold anyone's new applications now
        self.status = "Active"
        self.nodes.set_policy(spec.node_sort_policy)
        self.placement = Placement(spec.rules)
        maxima = max_snapshot(self)
        for path in self.queues.apply(spec.root):
            self.log.info("scheduler.queue_draining", queue=path)
        quota_changed(self, maxima)
        for app in self.apps.values():
            app.unblock_asks()
            if app.asks:
                self.fresh[app.application_id] = app
        self.log.info("scheduler.config_applied", queues=len(self.queues.index))

    def drain(self) -> None:
        """The partition left the configuration: no new applications from now on."""
        if self.status != "Draining":
            self.status = "Draining"
            self.status_since = self.now()
            self.log.info("scheduler.partition_draining")

"""What happens around state changes: timers, leaving the queue, releases and their effects.

These functions are the partition's own procedures, kept apart from its public entry points:
each one takes the `PartitionCore` it works in (nodes, queues, accounting, timers,
applications), never the whole `Partition`, so this module does not import `partition`.

The tracker rules of seed 000 show up here as
`Accounting.refund(..., remove_app=app.idle)`: the release that leaves an application with
nothing allocated and nothing pending is the one that ends it for its user and group.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from quotactor.core.resources import sum_of
from quotactor.scheduler.objects.allocation import Allocation
from quotactor.scheduler.objects.application import Application
from quotactor.scheduler.objects.node import Node
from quotactor.scheduler.objects.states import ApplicationState, Trigger, next_state

if TYPE_CHECKING:
    from quotactor.scheduler.booking.context import PartitionCore
    from quotactor.scheduler.booking.timers import Deadline
    from quotactor.scheduler.objects.releases import Termination

__all__ = [
    "after_release",
    "ask_release",
    "release_all",
    "drop_asks",
    "finish",
    "next_placeholder_timeout",
    "placeholder_timeout",
    "release",
    "run_deadlines",
    "transition",
]

S = ApplicationState
_ENDINGS = frozenset({S.COMPLETED, S.FAILED, S.REJECTED})


def transition(p: PartitionCore, app: Application, trigger: Trigger, message: str = "",
               at: float | None = None) -> None:
    """Fire `trigger` and run what entering the new state means (a no-op if it stays put)."""
    old = app.state
    new = next_state(old, trigger)
    if new is old:
        return
    now = p.now() if at is None else at
    app.fire(trigger, now)
    text = f"{old.value} -> {new.value}" + (f": {message}" if message else "")
    app.note(now, "state", text)
    p.log.info("scheduler.app_state", app=app.application_id, source=old.value,
               destination=new.value, trigger=trigger.value, message=message or None)
    timeouts = p.options.timeouts
    if new is S.STARTING:
        if app.start_timeout <= 0:
            transition(p, app, Trigger.RUN, "state-aware scheduling disabled", now)
        else:
            _state_deadline(p, app, now + app.start_timeout)
    elif new is S.COMPLETING:
        app.placeholder_cleanup_done = False
        _state_deadline(p, app, now + timeouts.completing)
    elif new in _ENDINGS:
        if new is S.REJECTED:
            app.rejected_message = message
        finish(p, app, now)
        _state_deadline(p, app, now + timeouts.terminated)
    elif new is S.EXPIRED:
        p.forget(app)


def _state_deadline(p: PartitionCore, app: Application, when: float) -> None:
    """The current state ends by itself at `when` (unless the state changes before)."""
    p.deadlines.set(when, app.application_id, app.seq, "state", app.state_token)


def finish(p: PartitionCore, app: Application, now: float) -> None:
    """The application is done: it leaves its queue (which may then go away)."""
    app.finished_at = now
    app.placeholder_token += 1
    p.gang_apps.pop(app.application_id, None)
    drop_asks(p, app, list(app.asks), timed_out=True)
    queue = app.queue
    if queue is not None:
        queue.apps.pop(app.application_id, None)
        for path in p.queues.prune(queue):
            p.log.info("scheduler.queue_removed", queue=path)


def run_deadlines(p: PartitionCore) -> None:
    """Run every timeout that is due, in time order, each at its own deadline."""
    now = p.now()
    while (due := p.deadlines.pop_due(now)) is not None:
        app = p.apps.get(due.application_id)
        if app is None or app.seq != due.owner:
            continue
        if due.kind == "placeholder":
            if due.token == app.placeholder_token:
                placeholder_timeout(p, app, due.when)
        elif due.token == app.state_token:
            _state_timeout(p, app, due.when)


def next_placeholder_timeout(p: PartitionCore) -> float | None:
    """When the earliest placeholder timeout still armed is due (None: no gang holds
    placeholders on a timer). Timers their application cleared are dropped on the way."""
    def armed(due: Deadline) -> bool:
        app = p.apps.get(due.application_id)
        return app is not None and app.seq == due.owner and due.token == app.placeholder_token

    return p.deadlines.next_due("placeholder", armed)


def _state_timeout(p: PartitionCore, app: Application, at: float) -> None:
    if app.state is S.STARTING:
        transition(p, app, Trigger.RUN, "starting timeout", at)
    elif app.state is S.COMPLETING:
        app.placeholder_cleanup_done = True
        leftovers = app.placeholders()
        for placeholder in leftovers:
            ask_release(p, app, placeholder.key, "TIMEOUT",
                        "placeholder released on application completion", at=at)
        if app.state is S.COMPLETING and app.idle:
            transition(p, app, Trigger.COMPLETE, "completing timeout", at)
    elif app.state in _ENDINGS:
        transition(p, app, Trigger.EXPIRE, "", at)


def release(p: PartitionCore, app: Application, key: str, *, timed_out: bool, reason: str,
            at: float | None = None) -> Allocation:
    """Remove an allocation: node, then user/group and queue (ending the app if idle)."""
    now = p.now() if at is None else at
    allocation = app.remove_allocation(key)
    p.releases.settle(app.application_id, key)
    node = p.nodes.nodes.get(allocation.node_id)
    if node is not None:
        node.remove(app.application_id, key)
        p.nodes.changed(node)
        p.nodes.freed()
    if allocation.placeholder and timed_out:
        app.count_timed_out(allocation.task_group)
    p.accounting.refund(app, allocation.resource, remove_app=app.idle)
    if allocation.placeholder and not app.placeholder_allocated:
        app.placeholder_token += 1
        p.gang_apps.pop(app.application_id, None)
    app.note(now, "released", f"{key} on {allocation.node_id} {allocation.resource}: {reason}")
    p.log.debug("scheduler.released", app=app.application_id, allocation=key,
                node=allocation.node_id, reason=reason)
    after_release(p, app, allocation.placeholder, now)
    return allocation


def release_all(p: PartitionCore, app: Application, *, reason: str) -> None:
    """Remove every allocation of `app` (it is being removed or fails): nodes first, then one
    refund of the total from user, group and queues, ending the app there, then the state,
    as `release` of each in turn would leave them."""
    keys = sorted(app.allocations)
    if not keys:
        return
    now = p.now()
    placeholders = False
    touched: dict[str, Node] = {}
    removed = app.remove_allocations(keys)
    for allocation in removed:
        key = allocation.key
        p.releases.settle(app.application_id, key)
        node = p.nodes.nodes.get(allocation.node_id)
        if node is not None:
            node.remove(app.application_id, key)
            touched[node.node_id] = node
        if allocation.placeholder:
            placeholders = True
            app.count_timed_out(allocation.task_group)
    total = sum_of(allocation.resource for allocation in removed)
    if len(keys) == 1:
        app.note(now, "released", f"{keys[0]} on {allocation.node_id} {total}: {reason}")
    else:
        app.note(now, "released", f"{len(keys)} allocations ({keys[0]} first) on "
                 f"{len(touched)} node(s), {total} in all: {reason}")
    for node in touched.values():
        p.nodes.changed(node)
    p.nodes.freed()
    p.accounting.refund(app, total, remove_app=True)
    if placeholders:
        app.placeholder_token += 1
        p.gang_apps.pop(app.application_id, None)
    p.log.debug("scheduler.released_all", app=app.application_id, allocations=len(keys),
                reason=reason)
    after_release(p, app, placeholders, now)


def ask_release(p: PartitionCore, app: Application, key: str, termination: Termination,
                message: str, *, replacement: str = "", at: float | None = None) -> None:
    """The scheduler wants allocation `key` gone: the one way it asks the shim for that.

    With a shim that confirms releases (see `releases`) only the request is recorded and
    usage stays until the shim's release arrives; embedded without one, it is released now.
    Asking twice for the same allocation is harmless.
    """
    if not p.releases.confirming:
        release(p, app, key, timed_out=True, reason=message, at=at)
        return
    if p.releases.request(p.name, app.application_id, key, termination, message, replacement):
        app.note(p.now() if at is None else at, "release-asked", f"{key}: {termination}"
                 + (f" by {replacement}" if replacement else "") + f": {message}")
        p.log.info("scheduler.release_asked", app=app.application_id, allocation=key,
                   termination=termination, replacement=replacement or None)


def after_release(p: PartitionCore, app: Application, placeholder: bool, now: float) -> None:
    """The state an application moves to once an allocation of it is gone."""
    state = app.state
    if state is S.FAILING:
        if not app.allocations:
            transition(p, app, Trigger.FAIL, "all allocations released", now)
    elif state is S.RESUMING:
        if not app.placeholder_allocated:
            transition(p, app, Trigger.RUN, "placeholders released", now)
    elif state is S.COMPLETING:
        if app.idle and app.placeholder_cleanup_done:
            transition(p, app, Trigger.COMPLETE, "", now)
    elif state in (S.ACCEPTED, S.STARTING, S.RUNNING):
        done = app.idle if placeholder else not (app.has_real_allocations or app.asks)
        if done:
            transition(p, app, Trigger.COMPLETE, "no allocations and nothing pending", now)


def drop_asks(p: PartitionCore, app: Application, keys: Iterable[str], *, timed_out: bool) -> None:
    """Forget pending asks (placeholder asks count as timed out when `timed_out`)."""
    queue = app.queue
    removed = app.remove_asks(list(keys))
    if queue is not None and removed:
        queue.asks_removed(app, removed)
    if timed_out:
        for ask in removed:
            if ask.placeholder:
                app.count_timed_out(ask.task_group)
    p.backlog.turn_passed(app)


def placeholder_timeout(p: PartitionCore, app: Application, at: float) -> None:
    """Placeholders were not all replaced in time (seed 000's soft and hard cases).

    A started application just loses its unused placeholders. One that never started resumes
    as a normal application (`Soft`: its real asks stay) or fails (`Hard`).
    """
    app.placeholder_token += 1
    placeholder_asks = [k for k, pending in app.asks.items() if pending.ask.placeholder]
    app.note(at, "placeholder-timeout", f"{len(app.placeholders())} allocated and"
             f" {len(placeholder_asks)} pending placeholders timed out")
    p.log.info("scheduler.placeholder_timeout", app=app.application_id, state=app.state.value)
    if app.state in (S.RUNNING, S.STARTING, S.COMPLETING):
        drop_asks(p, app, placeholder_asks, timed_out=True)
        for placeholder in app.placeholders():
            ask_release(p, app, placeholder.key, "TIMEOUT", "placeholder timeout", at=at)
        return
    if app.state not in (S.NEW, S.ACCEPTED):
        return
    hard = app.gang is not None and app.gang.style == "Hard"
    transition(p, app, Trigger.FAIL if hard else Trigger.RESUME, "ResourceReservationTimeout",
               at)
    drop_asks(p, app, list(app.asks) if hard else placeholder_asks, timed_out=True)
    for placeholder in app.placeholders():
        ask_release(p, app, placeholder.key, "TIMEOUT", "placeholder timeout", at=at)
    settled = _state_of(app)
    if app.placeholder_allocated:
        return  # the shim has yet to confirm; `after_release` moves the state on then
    if settled is S.RESUMING:
        transition(p, app, Trigger.RUN, "resumed as a normal application", at)
    elif settled is S.FAILING:
        p.accounting.untrack(app)
        transition(p, app, Trigger.FAIL, "", at)


def _state_of(app: Application) -> ApplicationState:
    """The state as it is now (releases may have moved it since it was last looked at)."""
    return app.state

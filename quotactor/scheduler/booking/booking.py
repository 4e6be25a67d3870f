"""Placing asks: new allocations, placeholder replacements, in-place resizes.

Each booking charges the user and group first and the queues second (through `Accounting`),
and only then touches the node and the application, so a refusal leaves nothing to undo but
what `Accounting` already rolled back.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

from quotactor.core.errors import InvalidRequest
from quotactor.core.resources import Resource, sum_of
from quotactor.scheduler.booking.lifecycle import ask_release, drop_asks, transition
from quotactor.scheduler.objects.allocation import Allocation
from quotactor.scheduler.objects.application import Application, PendingAsk
from quotactor.scheduler.objects.node import Node
from quotactor.scheduler.objects.reasons import Wait
from quotactor.scheduler.objects.states import ApplicationState, Trigger

if TYPE_CHECKING:
    from quotactor.scheduler.booking.context import PartitionCore

__all__ = ["allocate", "allocate_all", "place", "replace", "resize", "retire_placeholder"]

S = ApplicationState


def allocate(p: PartitionCore, app: Application, pending: PendingAsk,
             node: Node) -> Allocation | Wait:
    """Turn an ask into an allocation on `node`, or say which limit refused it."""
    ask = pending.ask
    wait = p.accounting.charge(app, ask.resource)
    if wait is not None:
        return dataclasses.replace(wait, ask=ask.key)
    now = p.now()
    allocation = Allocation(ask.key, app.application_id, p.name, node.node_id, ask.resource,
                            ask.priority, ask.placeholder, ask.task_group, pending.added_at, now,
                            allow_preempt_self=ask.allow_preempt_self, originator=ask.originator,
                            required_node=ask.required_node, tags=ask.tags)
    place(p, app, allocation, node, now)
    drop_asks(p, app, (ask.key,), timed_out=False)
    return allocation


def allocate_all(p: PartitionCore, app: Application,
         planned: Sequence[tuple[PendingAsk, Node]]) -> list[Allocation] | Wait:
    """Charge the total of `planned` once (user and group, then queues), then place each ask
    on its planned node; otherwise the limit that refused the total, named on the first ask.
    A refusal leaves nothing to undo."""
    total = sum_of(pending.ask.resource for pending, _ in planned)
    wait = p.accounting.charge(app, total)
    if wait is not None:
        return Wait(wait.kind, wait.name, wait.queue_path, wait.limit, wait.detail,
                    planned[0][0].ask.key)
    now = p.now()
    made: list[Allocation] = []
    touched: dict[str, Node] = {}
    for pending, node in planned:
        ask = pending.ask
        allocation = Allocation(ask.key, app.application_id, p.name, node.node_id,
                                ask.resource, ask.priority, ask.placeholder, ask.task_group,
                                pending.added_at, now, allow_preempt_self=ask.allow_preempt_self,
                                originator=ask.originator, required_node=ask.required_node,
                                tags=ask.tags)
        if ask.placeholder:
            place(p, app, allocation, node, now)
        else:
            node.add(allocation)
            touched[node.node_id] = node
        made.append(allocation)
    for node in touched.values():
        p.nodes.changed(node)
    real = [a for a in made if not a.placeholder]
    if real:
        app.add_allocations(real)
        app.note(now, "allocated", f"{len(real)} asks at once ({real[0].key} first) on "
                 f"{len(touched)} node(s), {total} in all")
        p.log.debug("scheduler.allocated_all", app=app.application_id, allocations=len(real))
        for _ in real[:2]:  # a second allocation moves Starting on to Running
            transition(p, app, Trigger.RUN, "allocation added", now)
    drop_asks(p, app, tuple(a.key for a in made), timed_out=False)
    return made


def place(p: PartitionCore, app: Application, allocation: Allocation, node: Node,
          now: float) -> None:
    """Book an already charged allocation on its node and application, and move the state."""
    first_placeholder = allocation.placeholder and not app.placeholder_allocated
    node.add(allocation)
    p.nodes.changed(node)
    app.add_allocation(allocation)
    app.note(now, "allocated", f"{allocation.key} on {node.node_id} {allocation.resource}")
    p.log.debug("scheduler.allocated", app=app.application_id, allocation=allocation.key,
                node=node.node_id)
    if not allocation.placeholder:
        transition(p, app, Trigger.RUN, "allocation added", now)
        return
    gang = app.gang
    if first_placeholder and gang is not None:
        app.placeholder_token += 1
        p.deadlines.set(now + gang.timeout, app.application_id, app.seq, "placeholder",
                        app.placeholder_token)
    p.gang_apps[app.application_id] = app
    if gang is not None and app.state is S.ACCEPTED \
            and app.placeholder_allocated == gang.placeholder_total:
        transition(p, app, Trigger.RUN, "all placeholders allocated", now)


def replace(p: PartitionCore, app: Application, pending: PendingAsk,
            placeholder: Allocation) -> Allocation:
    """Swap a placeholder for the real ask in its place; usage shrinks by the difference."""
    ask = pending.ask
    now = p.now()
    had_real = app.has_real_allocations
    node = p.nodes.nodes[placeholder.node_id]
    node.remove(app.application_id, placeholder.key)
    app.remove_allocation(placeholder.key)
    app.count_replaced(placeholder.task_group)
    allocation = Allocation(ask.key, app.application_id, p.name, node.node_id, ask.resource,
                            ask.priority, False, ask.task_group, pending.added_at, now,
                            placeholder_used=True, allow_preempt_self=ask.allow_preempt_self,
                            originator=ask.originator, required_node=ask.required_node,
                            tags=ask.tags)
    node.add(allocation)
    p.nodes.changed(node)
    app.add_allocation(allocation)
    drop_asks(p, app, (ask.key,), timed_out=False)
    difference = placeholder.resource - ask.resource
    if difference:
        p.accounting.refund(app, difference, remove_app=False)
        p.nodes.freed()
    if not app.placeholder_allocated:
        app.placeholder_token += 1
        p.gang_apps.pop(app.application_id, None)
    app.note(now, "replaced", f"placeholder {placeholder.key} replaced by {ask.key}"
             f" on {node.node_id}")
    p.log.debug("scheduler.replaced", app=app.application_id, placeholder=placeholder.key,
                allocation=ask.key)
    if app.state in (S.ACCEPTED, S.COMPLETING) or had_real:
        transition(p, app, Trigger.RUN, "placeholder replaced", now)
    return allocation


def retire_placeholder(p: PartitionCore, app: Application, placeholder: Allocation,
                       ask_key: str) -> None:
    """A real ask larger than its group's placeholders: release them, it goes on its own."""
    group = placeholder.task_group
    drop_asks(p, app, [k for k, pa in app.asks.items()
                       if pa.ask.placeholder and pa.ask.task_group == group], timed_out=True)
    ask_release(p, app, placeholder.key, "TIMEOUT",
                f"placeholder smaller than real ask {ask_key}")


def resize(p: PartitionCore, app: Application, key: str, resource: Resource) -> Wait | None:
    """Change an allocation's size in place; growth is charged (and may be refused) first."""
    allocation = app.allocations.get(key)
    if allocation is None:
        raise InvalidRequest(f"application {app.application_id} has no allocation {key!r}")
    if allocation.placeholder:
        raise InvalidRequest(f"placeholder {key!r} cannot be resized")
    if resource.is_empty() or resource.has_negative():
        raise InvalidRequest(f"an allocation needs a positive size, got {resource}")
    grow = (resource - allocation.resource).clamp_non_negative()
    shrink = (allocation.resource - resource).clamp_non_negative()
    node = p.nodes.nodes[allocation.node_id]
    if grow and not node.fits(grow):
        return Wait("node", node.node_id, app.queue_path, "capacity",
                    f"node {node.node_id} has {node.available} available, resize needs {grow}",
                    key)
    if grow:
        wait = p.accounting.charge(app, grow)
        if wait is not None:
            return dataclasses.replace(wait, ask=key)
    if shrink:
        p.accounting.refund(app, shrink, remove_app=False)
    updated = allocation.resized(resource)
    node.remove(app.application_id, key)
    node.add(updated)
    p.nodes.changed(node)
    app.replace_allocation(updated)
    if shrink:
        p.nodes.freed()
    now = p.now()
    app.note(now, "resized", f"{key} {allocation.resource} -> {resource}")
    p.log.debug("scheduler.resized", app=app.application_id, allocation=key)
    return None

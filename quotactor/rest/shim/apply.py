"""Carrying out the shim's writes once validated: nodes, applications, asks, releases, recovery.

Each function applies one item and returns why it was refused (None when done, or already so:
a replay), publishing what changed to the bridge's event feed; the router (`shim.routes`)
collects the refusals into the answer and the decision log.
"""

from __future__ import annotations

from typing import Any

from quotactor.core.errors import InvalidRequest
from quotactor.core.identity import UserGroup
from quotactor.rest.scheduler.bridge import SchedulerBridge, allocated_records, si_allocation
from quotactor.rest.scheduler.feed import RELEASE_DETAILS, event_record
from quotactor.rest.shim import models as si
from quotactor.scheduler import Allocation, ApplicationState, Ask, Gang, Scheduler

__all__ = ["add_application", "add_ask", "apply_node", "recover", "release"]


def apply_node(scheduler: Scheduler, bridge: SchedulerBridge, rm_id: str, node: si.NodeInfo,
                partition: str, capacity: dict[str, int]) -> str | None:
    """Carry out one node action; None when done (or already so), else why not."""
    node_id = node.nodeID
    try:
        if node.action in ("CREATE", "CREATE_DRAIN"):
            schedulable = node.action == "CREATE"
            existing = scheduler.node_view(node_id, partition)
            if existing is not None:
                same = existing["capacity"] == dict(sorted(capacity.items()))
                return None if same else f"node {node_id!r} exists with another capacity"
            scheduler.add_node(node_id, capacity, partition=partition, schedulable=schedulable,
                               attributes=node.attributes)
            bridge.events.publish([event_record("NODE", node_id, "ADD", "DETAILS_NONE",
                                                resource=capacity, message="node added")])
        elif node.action == "UPDATE":
            scheduler.update_node(node_id, partition=partition,
                                  capacity=capacity if node.schedulableResource else None)
            bridge.events.publish([event_record("NODE", node_id, "SET", "NODE_CAPACITY",
                                                resource=capacity)])
        elif node.action in ("DRAIN_NODE", "DRAIN_TO_SCHEDULABLE"):
            schedulable = node.action == "DRAIN_TO_SCHEDULABLE"
            scheduler.update_node(node_id, partition=partition, schedulable=schedulable)
            bridge.events.publish([event_record("NODE", node_id, "SET", "NODE_SCHEDULABLE",
                                                message=f"schedulable={schedulable}")])
        else:  # DECOMISSION
            if scheduler.node_view(node_id, partition) is None:
                return None  # gone already
            gone = scheduler.remove_node(node_id, partition=partition)
            bridge.events.publish([event_record("NODE", node_id, "REMOVE", "NODE_DECOMISSION")]
                                  + [event_record("APP", a.application_id, "REMOVE",
                                                  "ALLOC_NODEREMOVED", reference=a.key,
                                                  resource=dict(a.resource.items()))
                                     for a in gone])
            for allocation in gone:
                owner = bridge.owner(partition, allocation.application_id) or rm_id
                bridge.decide(owner, "allocationResponse", {"released": [{
                    "partitionName": partition, "applicationID": allocation.application_id,
                    "allocationKey": allocation.key, "terminationType": "STOPPED_BY_RM",
                    "message": f"node {node_id} removed"}]})
    except InvalidRequest as exc:
        return str(exc)
    return None


def add_application(scheduler: Scheduler, bridge: SchedulerBridge, rm_id: str,
                     app: si.AddApplicationRequest, partition: str, user: UserGroup,
                     gang: Gang | None) -> str | None:
    try:
        info = scheduler.submit(app.applicationID, user, queue=app.queueName,
                                partition=partition, tags=app.tags, gang=gang)
    except InvalidRequest as exc:
        try:
            existing = scheduler.application(app.applicationID, partition=partition)
        except InvalidRequest:
            return str(exc)
        if existing.user.user != user.user:
            return f"application {app.applicationID!r} exists for another user"
        if existing.state is ApplicationState.REJECTED:
            return existing.rejected_message or "rejected"
        return None  # a replay
    bridge.claim(partition, app.applicationID, rm_id)
    if info.state is ApplicationState.REJECTED:
        bridge.events.publish([event_record("APP", app.applicationID, "NONE", "APP_REJECT",
                                            message=info.rejected_message)])
        return info.rejected_message or "rejected"
    bridge.events.publish([
        event_record("APP", app.applicationID, "ADD", "APP_NEW", reference=info.queue_path),
        event_record("QUEUE", info.queue_path, "ADD", "DETAILS_NONE",
                     reference=app.applicationID, message="application added"),
    ])
    bridge.note_state(partition, app.applicationID)
    return None


def add_ask(scheduler: Scheduler, bridge: SchedulerBridge, allocation: si.Allocation,
             partition: str, ask: Ask) -> str | None:
    app_id = allocation.applicationID
    try:
        scheduler.add_ask(app_id, ask, partition=partition)
    except InvalidRequest as exc:
        try:
            info = scheduler.application(app_id, partition=partition)
        except InvalidRequest:
            return str(exc)
        if any(a.key == ask.key for a in info.allocations):
            return None  # allocated already: a replay
        return str(exc)
    bridge.events.publish([event_record("APP", app_id, "ADD", "APP_REQUEST", reference=ask.key,
                                        resource=dict(ask.resource.items()))])
    bridge.note_state(partition, app_id)
    return None


def release(scheduler: Scheduler, bridge: SchedulerBridge, release: si.AllocationRelease,
             partition: str) -> tuple[dict[str, Any], Allocation | None] | None:
    """Release an allocation (or confirm a release the scheduler asked for) or withdraw a
    pending ask; None when there was neither. With it, the real allocation that took a
    replaced placeholder's place."""
    app_id, key = release.applicationID, release.allocationKey
    try:
        gone, made = scheduler.confirm_release(app_id, key, partition=partition)
    except InvalidRequest:
        try:
            scheduler.remove_ask(app_id, key, partition=partition)
        except InvalidRequest:
            return None  # nothing by that key: released already, a replay
        bridge.events.publish([event_record("APP", app_id, "REMOVE", "REQUEST_CANCEL",
                                            reference=key)])
        return {"partitionName": partition, "applicationID": app_id, "allocationKey": key,
                "terminationType": release.terminationType, "message": "ask withdrawn"}, None
    resource = dict(gone.resource.items())
    records = [
        event_record("APP", app_id, "REMOVE",
                     RELEASE_DETAILS.get(release.terminationType, "ALLOC_CANCEL"),
                     reference=key, resource=resource),
        event_record("NODE", gone.node_id, "REMOVE", "NODE_ALLOC", reference=key,
                     resource=resource),
    ]
    try:
        info = scheduler.application(app_id, partition=partition)
        records += [
            event_record("QUEUE", info.queue_path, "REMOVE", "QUEUE_ALLOC", reference=app_id,
                         resource=resource),
            event_record("USERGROUP", info.user.user, "REMOVE", "UG_USER_RESOURCE",
                         reference=info.queue_path, resource=resource),
        ]
    except InvalidRequest:
        pass  # the application went meanwhile; its own records say so
    if made is not None:
        records += allocated_records(made, scheduler.application(app_id, partition=partition))
    bridge.events.publish(records)
    bridge.note_state(partition, app_id)
    return {**{k: v for k, v in si_allocation(gone).items()
               if k in ("partitionName", "applicationID", "allocationKey")},
            "terminationType": release.terminationType, "message": release.message}, made


def recover(scheduler: Scheduler, bridge: SchedulerBridge, allocations: list[Allocation]
             ) -> list[dict[str, str]]:
    """Re-add allocations the shim reports as running (YuniKorn's recovery); the refused.

    One batch when all are fine (limits are relaxed once); otherwise one at a time, so each
    refusal names its own reason (a repeated allocation is a harmless replay).
    """
    if not allocations:
        return []
    refused: list[dict[str, str]] = []
    try:
        scheduler.recover_allocations(allocations)
    except InvalidRequest:
        for allocation in allocations:
            try:
                scheduler.recover_allocations([allocation])
            except InvalidRequest as exc:
                refused.append({"allocationKey": allocation.key,
                                "applicationID": allocation.application_id,
                                "reason": str(exc)})
    gone = {(r["applicationID"], r["allocationKey"]) for r in refused}
    for allocation in allocations:
        if (allocation.application_id, allocation.key) in gone:
            continue
        info = scheduler.application(allocation.application_id,
                                     partition=allocation.partition)
        bridge.events.publish(allocated_records(allocation, info))
        bridge.note_state(allocation.partition, allocation.application_id)
    return refused

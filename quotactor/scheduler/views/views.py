"""YuniKorn-shaped REST views (plain dicts) of partitions, queues, applications and nodes.

Field names and nesting follow YuniKorn's web service DAOs (`PartitionInfo`,
`PartitionQueueDAOInfo`, `ApplicationDAOInfo`, `AllocationAskDAOInfo`, `AllocationDAOInfo`,
`NodeDAOInfo`), so YuniKorn's web UI and REST clients can read them. Times are nanoseconds
since the epoch of the scheduler's clock; resource maps are sorted by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from quotactor.core.resources import Resource, ResourceLike
from quotactor.scheduler.objects.allocation import Allocation
from quotactor.scheduler.objects.application import Application, PendingAsk
from quotactor.scheduler.objects.contention import preempting_by_queue
from quotactor.scheduler.objects.node import Node
from quotactor.scheduler.objects.queue import Queue, current_priority
from quotactor.scheduler.objects.spec import TemplateSpec
from quotactor.scheduler.objects.states import ACTIVE_STATES, ApplicationState
from quotactor.scheduler.partition.partition import Partition

__all__ = [
    "CLUSTER_ID",
    "application_view",
    "applications_view",
    "nodes_view",
    "partition_view",
    "queues_view",
    "states_matching",
]

CLUSTER_ID = "quotactor"
_GROUPS = {
    "active": ACTIVE_STATES,
    "rejected": frozenset({ApplicationState.REJECTED}),
    "completed": frozenset({ApplicationState.COMPLETED, ApplicationState.FAILED,
                            ApplicationState.EXPIRED}),
}


def _ns(seconds: float | None) -> int | None:
    return None if seconds is None else round(seconds * 1e9)


def _res(values: ResourceLike | None) -> dict[str, int]:
    return dict(sorted((values or {}).items()))


def _percent(used: Resource, total: ResourceLike | None) -> dict[str, int]:
    if not total:
        return {}
    return {n: int(used.get(n, 0) * 100 / q) for n, q in sorted(total.items()) if q > 0}


def partition_view(p: Partition) -> dict[str, Any]:
    """YuniKorn's `PartitionInfo` for one partition."""
    counts: dict[str, int] = {}
    for app in p.apps.values():
        counts[app.state.value] = counts.get(app.state.value, 0) + 1
    counts = dict(sorted(counts.items()))
    counts["total"] = len(p.apps)
    capacity = p.nodes.capacity
    used = p.queues.root.allocated
    return {
        "clusterId": CLUSTER_ID,
        "name": p.name,
        "capacity": {"capacity": _res(capacity), "usedCapacity": _res(used),
                     "utilization": _percent(used, capacity)},
        "nodeSortingPolicy": {"type": p.nodes.policy,
                              "resourceWeights": {"memory": 1.0, "vcore": 1.0}},
        "totalNodes": len(p.nodes.nodes),
        "applications": counts,
        "totalContainers": sum(len(n.allocations) for n in p.nodes.nodes.values()),
        "state": p.status,
        "lastStateTransitionTime": _ns(p.status_since),
    }


def queues_view(p: Partition) -> dict[str, Any]:
    """YuniKorn's `PartitionQueueDAOInfo` tree, from root (`/partition/{p}/queues`)."""
    priorities: dict[str, int] = {}
    current_priority(p.queues.root, priorities)
    return _queue(p, p.queues.root, priorities, preempting_by_queue(p.contention, p.apps))


def _queue(p: Partition, queue: Queue, priorities: Mapping[str, int],
           preempting: Mapping[str, Resource]) -> dict[str, Any]:
    limit = p.nodes.capacity if queue.parent is None else queue.max_resources
    return {
        "queuename": queue.path,
        "status": queue.status,
        "partition": p.name,
        "pendingResource": _res(queue.pending),
        "maxResource": _res(limit),
        "guaranteedResource": _res(queue.guaranteed),
        "allocatedResource": _res(queue.allocated),
        "preemptingResource": _res(preempting.get(queue.path)),
        "isLeaf": queue.is_leaf,
        "isManaged": queue.managed,
        "properties": dict(sorted(queue.properties.items())),
        "parent": queue.parent.path if queue.parent is not None else "",
        "template": _template(queue.template),
        "children": [_queue(p, queue.children[n], priorities, preempting)
                     for n in sorted(queue.children)],
        "absUsedCapacity": _percent(queue.allocated, limit),
        "maxRunningApps": queue.max_applications,
        "runningApps": len(queue.running),
        "currentPriority": priorities.get(queue.path, current_priority(queue)),
        "allocatingAcceptedApps": [],
    }


def _template(template: TemplateSpec | None) -> dict[str, Any] | None:
    if template is None:
        return None
    return {
        "maxApplications": template.max_applications,
        "maxResource": _res(template.max_resources),
        "guaranteedResource": _res(template.guaranteed),
        "properties": dict(sorted(template.properties.items())),
    }


def states_matching(state: str | None) -> frozenset[ApplicationState] | None:
    """The states a filter names: a state (any case), `active`, `rejected` or `completed`."""
    if state is None:
        return None
    folded = state.lower()
    if folded in _GROUPS:
        return _GROUPS[folded]
    for candidate in ApplicationState:
        if candidate.value.lower() == folded:
            return frozenset({candidate})
    raise ValueError(f"unknown application state {state!r}")


def applications_view(p: Partition, state: str | None = None) -> list[dict[str, Any]]:
    """`ApplicationDAOInfo` of every application (in a state or state group), by ID."""
    wanted = states_matching(state)
    return [application_view(p, app) for app_id, app in sorted(p.apps.items())
            if wanted is None or app.state in wanted]


def application_view(p: Partition, app: Application) -> dict[str, Any]:
    """YuniKorn's `ApplicationDAOInfo` for one application."""
    reservations = sorted(r.token() for r in p.contention.reservations.values()
                          if r.application_id == app.application_id and r.app_seq == app.seq)
    return {
        "applicationID": app.application_id,
        "usedResource": _res(app.allocated),
        "maxUsedResource": _res(app.max_allocated),
        "pendingResource": _res(app.pending),
        "partition": p.name,
        "queueName": app.queue_path,
        "submissionTime": _ns(app.submitted_at),
        "finishedTime": _ns(app.finished_at),
        "requests": [_ask(p, app, pending) for pending in app.sorted_asks()],
        "allocations": [_allocation(app.allocations[k]) for k in sorted(app.allocations)],
        "applicationState": app.state.value,
        "user": app.user.user,
        "groups": list(app.user.groups),
        "rejectedMessage": app.rejected_message,
        "stateLog": [{"time": _ns(t), "applicationState": s} for t, s in app.state_log],
        "placeholderData": [
            {"taskGroupName": d.task_group, "count": d.count, "minResource": _res(d.min_resource),
             "replaced": d.replaced, "timedout": d.timed_out}
            for d in app.placeholder_data()
        ],
        "hasReserved": bool(reservations),
        "reservations": reservations,
        "maxRequestPriority": app.priority,
    }


def _ask(p: Partition, app: Application, pending: PendingAsk) -> dict[str, Any]:
    ask = pending.ask
    timeout = app.gang.timeout if ask.placeholder and app.gang is not None else 0.0
    return {
        "allocationKey": ask.key,
        "allocationTags": dict(sorted(ask.tags.items())),
        "requestTime": _ns(pending.added_at),
        "resource": _res(ask.resource),
        "pendingCount": 1,
        "priority": str(ask.priority),
        "requiredNodeId": ask.required_node or "",
        "applicationId": app.application_id,
        "partition": p.name,
        "placeholder": ask.placeholder,
        "placeholderTimeout": _ns(timeout),
        "taskGroupName": ask.task_group,
        "allocationLog": [],
        "triggeredPreemption": p.contention.has_triggered((app.application_id, ask.key),
                                                          pending),
        "originator": False,
    }


def _allocation(allocation: Allocation) -> dict[str, Any]:
    requested = _ns(allocation.requested_at) or 0
    allocated = _ns(allocation.allocated_at) or 0
    return {
        "allocationKey": allocation.key,
        "allocationTags": dict(sorted(allocation.tags.items())),
        "requestTime": requested,
        "allocationTime": allocated,
        "allocationDelay": allocated - requested,
        "allocationID": allocation.key,
        "resource": _res(allocation.resource),
        "priority": str(allocation.priority),
        "nodeId": allocation.node_id,
        "applicationId": allocation.application_id,
        "partition": allocation.partition,
        "placeholder": allocation.placeholder,
        "placeholderUsed": allocation.placeholder_used,
        "taskGroupName": allocation.task_group,
        "preempted": allocation.preempted,
    }


def nodes_view(p: Partition) -> list[dict[str, Any]]:
    """`NodeDAOInfo` of every node, by node ID."""
    return [_node(p, p.nodes.nodes[n]) for n in sorted(p.nodes.nodes)]


def _node(p: Partition, node: Node) -> dict[str, Any]:
    keys = [p.nodes.reserved.get(node.node_id, ("", "")),
            *p.nodes.pinned.get(node.node_id, {})]
    holders = [r for r in (p.contention.reservations.get(k) for k in keys) if r is not None]
    return {
        "nodeID": node.node_id,
        "hostName": "",
        "rackName": "",
        "attributes": dict(sorted(node.attributes.items())),
        "capacity": _res(node.capacity),
        "allocated": _res(node.allocated),
        "occupied": {},
        "available": _res(node.available),
        "utilized": _percent(node.allocated, node.capacity),
        "allocations": [_allocation(node.allocations[k]) for k in sorted(node.allocations)],
        "schedulable": node.schedulable,
        "isReserved": bool(holders),
        "reservations": sorted(r.token() for r in holders),
    }

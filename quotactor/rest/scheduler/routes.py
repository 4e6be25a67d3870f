"""YuniKorn's read endpoints of a scheduler: clusters, partitions, queues, applications, nodes.

Every body uses the field names of YuniKorn's DAOs (built by `quotactor.scheduler.views.views` and
`cluster_views` under the scheduler's lock). Names in the path are raw segments decoded here,
once or twice (YuniKorn's clients double-encode), so queues and applications named with
`# / @ :` work. `?status=` narrows active applications to one state as YuniKorn does, with
the same 400 for a status that is not an active one.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Path, Query
from fastapi.responses import JSONResponse

from quotactor.core.errors import InvalidRequest
from quotactor.rest.http.errors import ApiError
from quotactor.rest.http.names import decode_segment
from quotactor.rest.scheduler.bridge import SchedulerBridge
from quotactor.rest.schemas import ErrorInfo
from quotactor.scheduler import Scheduler

__all__ = ["ACTIVE_STATUSES", "scheduler_router"]

T = TypeVar("T")

ACTIVE_STATUSES = ("new", "accepted", "starting", "running", "completing", "failing",
                   "resuming")
"""YuniKorn's active statuses, and `starting`, which quotactor's scheduler still has."""
_STATE_GROUPS = ("active", "rejected", "completed")

Status = Annotated[str | None, Query(
    description="with state `active`: only applications in this state "
    f"({', '.join(ACTIVE_STATUSES)})", json_schema_extra={"enum": list(ACTIVE_STATUSES)})]
StateGroup = Annotated[str, Path(
    description="active, rejected or completed (`?status` with active only)",
    json_schema_extra={"enum": list(_STATE_GROUPS)})]
ActiveGroup = Annotated[str, Path(description="active: a queue's applications are its active "
                                  "ones", json_schema_extra={"enum": ["active"]})]
QueuePath = Annotated[str, Path(
    description="a queue path: dot-separated names of YuniKorn's queue name syntax",
    json_schema_extra={"pattern": "^[a-zA-Z0-9_#@/:-]{1,64}(\\.[a-zA-Z0-9_#@/:-]{1,64})*$"})]


def _status(value: str | None) -> str | None:
    if value is None or value == "":
        return None
    folded = value.lower()
    if folded not in ACTIVE_STATUSES:
        raise ApiError(400, f"Only following active statuses are allowed: "
                       f"{','.join(ACTIVE_STATUSES)}")
    return folded


def _by_status(apps: list[dict[str, Any]], status: str | None) -> list[dict[str, Any]]:
    if status is None:
        return apps
    return [app for app in apps if app["applicationState"].lower() == status]


def scheduler_router(scheduler: Scheduler, bridge: SchedulerBridge | None = None) -> APIRouter:
    """The read endpoints of `scheduler`; history needs the `bridge` (empty without one)."""
    router = APIRouter(tags=["scheduler"], responses={
        400: {"model": ErrorInfo, "description": "a bad name, state or status"},
        404: {"model": ErrorInfo, "description": "no such partition, queue, application or node"},
    })

    def partition_of(raw: str) -> str:
        name = decode_segment(raw)
        if name not in scheduler.partitions:
            raise ApiError(404, "Partition not found", f"partition {name!r} is not served here")
        return name

    def read(call: Callable[[], T]) -> T:
        # A partition can go between the check and the read (a reload dropping it).
        try:
            return call()
        except InvalidRequest as exc:
            raise ApiError(404, "Not found", str(exc)) from None

    def queue_apps(partition: str, raw_queue: str) -> list[dict[str, Any]]:
        name = partition_of(partition)
        queue = decode_segment(raw_queue)
        if read(lambda: scheduler.queue_view(queue, name)) is None:
            raise ApiError(404, "Queue not found", f"partition {name!r} has no queue {queue!r}")
        apps = read(lambda: scheduler.applications_view(name, "active"))
        return [app for app in apps if app["queueName"] == queue]

    @router.get("/clusters", summary="The cluster, one entry per partition (ClusterDAOInfo)")
    def clusters() -> JSONResponse:
        return JSONResponse(scheduler.clusters_view())

    @router.get("/partitions", summary="Every partition (YuniKorn PartitionInfo)")
    def partitions() -> JSONResponse:
        return JSONResponse(scheduler.partitions_view())

    @router.get("/partition/{partition}/queues", summary="The queue tree of a partition")
    def queues(partition: str) -> JSONResponse:
        name = partition_of(partition)
        return JSONResponse(read(lambda: scheduler.queues_view(name)))

    @router.get("/partition/{partition}/queue/{queue}",
                summary="One queue; its children too with ?subtree")
    def queue(partition: str, queue: QueuePath,
              subtree: Annotated[str | None, Query(
                  description="present (any value): include the queue's children")] = None,
              ) -> JSONResponse:
        name = partition_of(partition)
        path = decode_segment(queue)
        view = read(lambda: scheduler.queue_view(path, name, subtree=subtree is not None))
        if view is None:
            raise ApiError(404, "Queue not found", f"partition {name!r} has no queue {path!r}")
        return JSONResponse(view)

    @router.get("/partition/{partition}/queue/{queue}/applications",
                summary="The active applications of a queue")
    def queue_applications(partition: str, queue: QueuePath) -> JSONResponse:
        return JSONResponse(queue_apps(partition, queue))

    @router.get("/partition/{partition}/queue/{queue}/applications/{state}",
                summary="The active applications of a queue, optionally in one ?status")
    def queue_applications_by_state(partition: str, queue: QueuePath, state: ActiveGroup,
                                    status: Status = None) -> JSONResponse:
        wanted = _status(status)
        apps = queue_apps(partition, queue)
        if decode_segment(state).lower() != "active":
            raise ApiError(400, "Only following application states are allowed: active")
        return JSONResponse(_by_status(apps, wanted))

    @router.get("/partition/{partition}/applications/{state}",
                summary="Applications in a state group (active, rejected, completed) or state")
    def applications(partition: str, state: StateGroup, status: Status = None) -> JSONResponse:
        name = partition_of(partition)
        group = decode_segment(state)
        wanted = _status(status)
        if wanted is not None and group.lower() != "active":
            raise ApiError(400, "?status applies to active applications only")
        try:
            apps = read(lambda: scheduler.applications_view(name, group))
        except ValueError:
            raise ApiError(400, "Only following application states are allowed: "
                           + ", ".join(_STATE_GROUPS)) from None
        return JSONResponse(_by_status(apps, wanted))

    def one_application(name: str, app_id: str, queue: str | None) -> JSONResponse:
        try:
            view = scheduler.application_view(app_id, name)
        except InvalidRequest:
            view = None
        if view is None or (queue is not None and view["queueName"] != queue):
            where = f"queue {queue!r} of " if queue is not None else ""
            raise ApiError(404, "Application not found",
                           f"{where}partition {name!r} has no application {app_id!r}")
        return JSONResponse(view)

    @router.get("/partition/{partition}/application/{application}", summary="One application")
    def application(partition: str, application: str) -> JSONResponse:
        return one_application(partition_of(partition), decode_segment(application), None)

    @router.get("/partition/{partition}/queue/{queue}/application/{application}",
                summary="One application of a queue")
    def queue_application(partition: str, queue: QueuePath, application: str) -> JSONResponse:
        return one_application(partition_of(partition), decode_segment(application),
                               decode_segment(queue))

    @router.get("/partition/{partition}/nodes", summary="Every node of a partition")
    def nodes(partition: str) -> JSONResponse:
        name = partition_of(partition)
        return JSONResponse(read(lambda: scheduler.nodes_view(name)))

    @router.get("/partition/{partition}/node/{node}", summary="One node")
    def node(partition: str, node: str) -> JSONResponse:
        name = partition_of(partition)
        node_id = decode_segment(node)
        view = read(lambda: scheduler.node_view(node_id, name))
        if view is None:
            raise ApiError(404, "Node not found", f"partition {name!r} has no node {node_id!r}")
        return JSONResponse(view)

    @router.get("/partition/{partition}/placementrules",
                summary="The placement rules of a partition, in order")
    def placement_rules(partition: str) -> JSONResponse:
        name = partition_of(partition)
        return JSONResponse(read(lambda: scheduler.placement_rules_view(name)).get("rules", []))

    @router.get("/scheduler/node-utilizations",
                summary="Per partition and resource, how many nodes are in each 10% band")
    def node_utilizations() -> JSONResponse:
        return JSONResponse(scheduler.node_utilizations_view())

    @router.get("/history/apps", summary="Running applications (Starting or Running) over time")
    def history_apps() -> JSONResponse:
        samples = bridge.history() if bridge is not None else []
        return JSONResponse([{"timestamp": t, "totalApplications": str(apps)}
                             for t, apps, _ in samples])

    @router.get("/history/containers", summary="Total containers over time")
    def history_containers() -> JSONResponse:
        samples = bridge.history() if bridge is not None else []
        return JSONResponse([{"timestamp": t, "totalContainers": str(containers)}
                             for t, _, containers in samples])

    @router.get("/fullstatedump", summary="Everything at once, for a support ticket")
    def full_state_dump() -> JSONResponse:
        names = scheduler.partitions
        samples = bridge.history() if bridge is not None else []
        dump = {
            "timestamp": time.time_ns(),
            "partitions": scheduler.partitions_view(),
            "applications": [app for n in names for app in _safe(scheduler.applications_view, n)],
            "appHistory": [{"timestamp": t, "totalApplications": str(a)} for t, a, _ in samples],
            "nodes": [{"partitionName": n, "nodesInfo": _safe(scheduler.nodes_view, n)}
                      for n in names],
            "clusterInfo": scheduler.clusters_view(),
            "containerHistory": [{"timestamp": t, "totalContainers": str(c)}
                                 for t, _, c in samples],
            "queues": [q for n in names for q in [_safe(scheduler.queues_view, n)] if q],
            "placementRules": [_safe(scheduler.placement_rules_view, n) for n in names],
        }
        return JSONResponse(dump)

    return router


def _safe(view: Callable[[str], Any], partition: str) -> Any:
    """A partition's view, or empty if it went away while the dump was being taken."""
    try:
        return view(partition)
    except InvalidRequest:
        return []

"""`--serve`: the REST API of a replay, live while it runs and after it ends.

The usage API of every partition's manager, plus YuniKorn's scheduler endpoints read from the
replay's scheduler: `/partitions`, `/partition/{p}/queues`, `/partition/{p}/applications/{state}`,
`/partition/{p}/application/{id}` and `/partition/{p}/nodes`, all under `/ws/v1`, added to the
REST server as one router. The scheduler serialises every call, so reading while the replay
runs is safe.
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from quotactor.core.errors import InvalidRequest
from quotactor.rest import RestServer, start_rest_server
from quotactor.rest.errors import ApiError
from quotactor.rest.names import decode_segment
from quotactor.scheduler import Scheduler

__all__ = ["scheduler_router", "serve_scheduler"]


def scheduler_router(scheduler: Scheduler) -> APIRouter:
    """YuniKorn's partition, queue, application and node endpoints for `scheduler`."""
    router = APIRouter(tags=["scheduler"])

    def _partition(raw: str) -> str:
        name = decode_segment(raw)
        if name not in scheduler.partitions:
            raise ApiError(404, "Partition not found", f"partition {name!r} is not served here")
        return name

    @router.get("/partitions", summary="Every partition (YuniKorn PartitionInfo)")
    def partitions() -> JSONResponse:
        return JSONResponse(scheduler.partitions_view())

    @router.get("/partition/{partition}/queues", summary="The queue tree of a partition")
    def queues(partition: str) -> JSONResponse:
        return JSONResponse(scheduler.queues_view(_partition(partition)))

    @router.get("/partition/{partition}/applications/{state}",
                summary="Applications in a state group (active, rejected, completed) or state")
    def applications(partition: str, state: str) -> JSONResponse:
        name = _partition(partition)
        try:
            return JSONResponse(scheduler.applications_view(name, decode_segment(state)))
        except ValueError as exc:
            raise ApiError(400, "Invalid application state", str(exc)) from None

    @router.get("/partition/{partition}/application/{application}", summary="One application")
    def application(partition: str, application: str) -> JSONResponse:
        name = _partition(partition)
        app_id = decode_segment(application)
        try:
            return JSONResponse(scheduler.application_view(app_id, name))
        except InvalidRequest:
            raise ApiError(404, "Application not found",
                           f"partition {name!r} has no application {app_id!r}") from None

    @router.get("/partition/{partition}/nodes", summary="Every node of a partition")
    def nodes(partition: str) -> JSONResponse:
        return JSONResponse(scheduler.nodes_view(_partition(partition)))

    return router


def serve_scheduler(scheduler: Scheduler, host: str = "127.0.0.1", port: int = 9080) -> RestServer:
    """Serve `scheduler` from a daemon thread; returns once the server accepts requests.

    The socket is bound here, so a port in use fails this call (`OSError`) and `port=0`
    picks a free one.
    """
    managers = {name: scheduler.ugm(name) for name in scheduler.partitions}
    return start_rest_server(managers, host=host, port=port,
                             routers=[scheduler_router(scheduler)])

"""`--serve`: the REST API of a replay, live while it runs and after it ends.

The REST package serves the usage API of user group managers and offers no hook for more
routes, so this module builds its app (`quotactor.rest.create_app`, the same FastAPI stack
and error shapes) and adds YuniKorn's scheduler endpoints, read from the replay's scheduler:
`/partitions`, `/partition/{p}/queues`, `/partition/{p}/applications/{state}`,
`/partition/{p}/application/{id}` and `/partition/{p}/nodes`, all under `/ws/v1`. The
scheduler serialises every call, so reading while the replay runs is safe.
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import uvicorn
from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse

from quotactor.core.errors import InvalidRequest
from quotactor.logs import get_logger
from quotactor.rest import PREFIX, create_app
from quotactor.rest.errors import ApiError
from quotactor.rest.names import decode_segment
from quotactor.scheduler import Scheduler

__all__ = ["SimServer", "serve_scheduler"]

log = get_logger()
_START_TIMEOUT = 15.0
_STOP_TIMEOUT = 15.0

router = APIRouter(tags=["scheduler"])


def _scheduler(request: Request) -> Scheduler:
    scheduler: Scheduler = request.app.state.sim_scheduler
    return scheduler


def _partition(request: Request, raw: str) -> str:
    name = decode_segment(raw)
    if name not in _scheduler(request).partitions:
        raise ApiError(404, "Partition not found", f"partition {name!r} is not served here")
    return name


@router.get("/partitions", summary="Every partition (YuniKorn PartitionInfo)")
def partitions(request: Request) -> JSONResponse:
    return JSONResponse(_scheduler(request).partitions_view())


@router.get("/partition/{partition}/queues", summary="The queue tree of a partition")
def queues(request: Request, partition: str) -> JSONResponse:
    return JSONResponse(_scheduler(request).queues_view(_partition(request, partition)))


@router.get("/partition/{partition}/applications/{state}",
            summary="Applications in a state group (active, rejected, completed) or state")
def applications(request: Request, partition: str, state: str) -> JSONResponse:
    name = _partition(request, partition)
    try:
        return JSONResponse(_scheduler(request).applications_view(name, decode_segment(state)))
    except ValueError as exc:
        raise ApiError(400, "Invalid application state", str(exc)) from None


@router.get("/partition/{partition}/application/{application}", summary="One application")
def application(request: Request, partition: str, application: str) -> JSONResponse:
    name = _partition(request, partition)
    app_id = decode_segment(application)
    try:
        return JSONResponse(_scheduler(request).application_view(app_id, name))
    except InvalidRequest:
        raise ApiError(404, "Application not found",
                       f"partition {name!r} has no application {app_id!r}") from None


@router.get("/partition/{partition}/nodes", summary="Every node of a partition")
def nodes(request: Request, partition: str) -> JSONResponse:
    return JSONResponse(_scheduler(request).nodes_view(_partition(request, partition)))


def build_app(scheduler: Scheduler) -> FastAPI:
    """The usage API of every partition's manager plus the scheduler endpoints above."""
    managers = {name: scheduler.ugm(name) for name in scheduler.partitions}
    app = create_app(managers)
    app.state.sim_scheduler = scheduler
    app.include_router(router, prefix=PREFIX)
    return app


class SimServer:
    """A running server: `url` (ends in `/ws/v1`) and an idempotent `stop()`."""

    def __init__(self, server: uvicorn.Server, sock: socket.socket,
                 thread: threading.Thread) -> None:
        self._server = server
        self._socket = sock
        self._thread = thread
        host, port = sock.getsockname()[:2]
        shown = f"[{host}]" if ":" in host else host
        self.url = f"http://{shown}:{port}{PREFIX}"

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(_STOP_TIMEOUT)
        self._socket.close()

    def __enter__(self) -> SimServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def serve_scheduler(scheduler: Scheduler, host: str = "127.0.0.1", port: int = 9080) -> SimServer:
    """Serve `scheduler` from a daemon thread; returns once the server accepts requests.

    The socket is bound here, so a port in use fails this call (`OSError`) and `port=0`
    picks a free one.
    """
    config: Any = uvicorn.Config(build_app(scheduler), host=host, port=port, loop="asyncio",
                                 lifespan="on", log_config=None, access_log=False,
                                 server_header=False, timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)
    family, kind, proto, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(64)
    except OSError:
        sock.close()
        raise
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]},
                              name=f"quotactor-sim-rest-{sock.getsockname()[1]}", daemon=True)
    thread.start()
    deadline = time.monotonic() + _START_TIMEOUT
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            thread.join(_STOP_TIMEOUT)
            sock.close()
            raise RuntimeError(f"the REST server on {host}:{port} did not start")
        thread.join(0.01)
    result = SimServer(server, sock, thread)
    log.info("sim.rest_started", url=result.url)
    return result

"""The ASGI application: YuniKorn's REST surface under `/ws/v1`, as a FastAPI app.

FastAPI gives the OpenAPI document (at `/ws/v1/openapi.json`) and runs plain-function handlers
in a worker pool; the pool is capped (`worker_threads`) so REST traffic can keep at most that
many facade calls in flight against the actors the scheduler relies on.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager

import anyio.to_thread
from fastapi import APIRouter, FastAPI
from prometheus_client.registry import Collector

from quotactor.rest.coalesce import Coalescer
from quotactor.rest.fanout import ConfigFanout
from quotactor.rest.http.access_log import AccessLog
from quotactor.rest.http.body import BodyLimit
from quotactor.rest.http.errors import install_error_handlers
from quotactor.rest.http.names import RawPathRouting
from quotactor.rest.openapi import use_corrected_openapi
from quotactor.rest.state import ConfigApplier, HealthChecks, RestSettings, RestState
from quotactor.rest.ugm import config_routes, ops_routes, usage_routes
from quotactor.ugm import UserGroupManager

__all__ = ["PREFIX", "create_app"]

PREFIX = "/ws/v1"


def create_app(
    managers: Mapping[str, UserGroupManager],
    settings: RestSettings | None = None,
    apply_config: ConfigApplier | None = None,
    routers: Sequence[APIRouter] = (),
    health_checks: HealthChecks | None = None,
    access_log: bool = True,
    collectors: Sequence[Collector] = (),
) -> FastAPI:
    """The app serving `managers` (read on every request, so a live mapping may change).

    `apply_config` replaces the running config on `PUT /config`; by default the new config is
    applied to every served manager, all or none. `routers` add endpoints under `/ws/v1` (the
    elastic quota view, a scheduler's endpoints), with the same error handling;
    `health_checks` adds checks to `/scheduler/healthcheck`; `access_log` logs each request;
    `collectors` add metric families to `/metrics`.
    """
    settings = settings or RestSettings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # The limiter belongs to this server's own event loop: other loops keep theirs.
        anyio.to_thread.current_default_thread_limiter().total_tokens = settings.worker_threads
        yield

    app = FastAPI(
        title="quotactor",
        summary="Per-user and per-group resource usage and limits, with YuniKorn's REST API",
        version="1",
        openapi_url=f"{PREFIX}/openapi.json",
        docs_url=None,
        redoc_url=None,
        redirect_slashes=False,
        lifespan=lifespan,
    )
    app.state.rest = RestState(managers, settings, apply_config or ConfigFanout(managers),
                               Coalescer(settings.snapshot_interval), health_checks,
                               tuple(collectors))
    for module in (usage_routes, config_routes, ops_routes):
        app.include_router(module.router, prefix=PREFIX)
    for router in routers:
        app.include_router(router, prefix=PREFIX)
    install_error_handlers(app)
    use_corrected_openapi(app, lambda: list(app.state.rest.managers))
    app.add_middleware(RawPathRouting)
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes)
    if access_log:
        app.add_middleware(AccessLog)
    return app

"""A scheduler served over HTTP: YuniKorn's REST API, its events and the shim API, in one call.

`serve_scheduler(scheduler)` (or `serve(scheduler)`) starts the REST server over every
partition of the scheduler: the usage, config, health and metrics endpoints of the user group
managers, the scheduler's read endpoints, the event feed and, with a `shim_token`, the shim
API. `PUT /config` goes through `Scheduler.update_config` (an invalid config changes nothing).
The server stops listening to the scheduler when it stops; the scheduler keeps running.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from quotactor.core.errors import InvalidRequest
from quotactor.rest.scheduler.bridge import SchedulerBridge
from quotactor.rest.scheduler.events import event_router
from quotactor.rest.scheduler.metrics import TenantMetrics, TenantSelection
from quotactor.rest.scheduler.routes import scheduler_router
from quotactor.rest.server import RestServer, start_rest_server
from quotactor.rest.shim.routes import shim_router
from quotactor.scheduler import Scheduler
from quotactor.ugm import UserGroupManager

__all__ = ["SchedulerManagers", "serve", "serve_scheduler"]


class SchedulerManagers(Mapping[str, UserGroupManager]):
    """The user group managers of a scheduler's partitions, read live (reloads add some)."""

    def __init__(self, scheduler: Scheduler) -> None:
        self._scheduler = scheduler

    def __getitem__(self, name: str) -> UserGroupManager:
        if name not in self._scheduler.partitions:
            raise KeyError(name)
        try:
            return self._scheduler.ugm(name)
        except InvalidRequest:
            raise KeyError(name) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._scheduler.partitions)

    def __len__(self) -> int:
        return len(self._scheduler.partitions)


def serve_scheduler(scheduler: Scheduler, host: str = "127.0.0.1", port: int = 0, *,
                    shim_token: str | None = None, history_interval: float = 60.0,
                    tenants: TenantSelection | None = None, **options: Any) -> RestServer:
    """Serve `scheduler` from a daemon thread; returns once the server accepts requests.

    `shim_token` enables the shim API (writes and decisions); `admin_token` (in `options`,
    with the other settings of `start_rest_server`) enables `PUT /config`; `tenants` bounds
    the per-user and per-group metrics (default: the top 20 of each). The socket is bound
    here, so a port in use fails this call (`OSError`) and `port=0` picks a free one.
    """
    tenant_metrics = TenantMetrics(scheduler, tenants)
    bridge = SchedulerBridge(scheduler, history_interval)
    stop_observing = scheduler.add_cycle_listener(tenant_metrics.observe)
    routers = [scheduler_router(scheduler, bridge), event_router(bridge.events),
               shim_router(scheduler, bridge)]
    options.setdefault("apply_config", scheduler.update_config)
    try:
        server = start_rest_server(SchedulerManagers(scheduler), host=host, port=port,
                                   routers=routers, shim_token=shim_token,
                                   health_checks=scheduler.health_checks,
                                   collectors=[tenant_metrics], **options)
    except BaseException:
        bridge.close()
        stop_observing()
        raise
    server.on_stop(bridge.close)
    server.on_stop(stop_observing)
    return server


def serve(target: Scheduler | UserGroupManager, host: str = "127.0.0.1", port: int = 0,
          **options: Any) -> RestServer:
    """Serve a scheduler or one user group manager from a daemon thread; the one entry point.

    A `Scheduler` gets everything (`serve_scheduler`: YuniKorn's read endpoints, events, the
    shim API with `shim_token`, its managers' usage); stop the server before the scheduler. A
    `UserGroupManager` gets its usage API (`start_rest_server`), and the server stops with the
    manager. `options` go to those functions (for example `admin_token`). The dependency runs
    one way: the web layer knows the scheduler and the managers, never the reverse.
    """
    if isinstance(target, Scheduler):
        return serve_scheduler(target, host, port, **options)
    if isinstance(target, UserGroupManager):
        server = start_rest_server({target.partition: target}, host=host, port=port, **options)
        target.on_stop(server.stop)
        return server
    raise TypeError(f"serve takes a Scheduler or a UserGroupManager, got {type(target).__name__}")

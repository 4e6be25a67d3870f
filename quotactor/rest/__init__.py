"""quotactor's REST API: YuniKorn's `/ws/v1` endpoints, config, health, metrics, the shim API.

`serve(scheduler)` serves a whole scheduler with YuniKorn's read endpoints, events and the shim
API, `serve(ugm)` one user group manager's usage API (a daemon thread running uvicorn);
`start_rest_server` embeds the usage API of several managers; `quotactor serve` runs a
scheduler as a service over a config file (`quotactor.rest.service`).

Layout: `app`, `server`, `state` (the server and its lifecycle); `usage_routes`,
`config_routes`, `ops_routes` (the managers' endpoints); `http/` (hardening shared by every
route); `scheduler/` (a served scheduler); `shim/` (the shim API); `service`, `cli`, `watcher`
(`quotactor serve`).
"""

from quotactor.rest.app import PREFIX, create_app
from quotactor.rest.partitions import Partitions
from quotactor.rest.scheduler import SchedulerManagers, TenantSelection, serve, serve_scheduler
from quotactor.rest.server import RestServer, start_rest_server
from quotactor.rest.state import RestSettings

__all__ = ["PREFIX", "Partitions", "RestServer", "RestSettings", "SchedulerManagers",
           "TenantSelection", "create_app", "serve", "serve_scheduler", "start_rest_server"]

"""A `Scheduler` served over HTTP: its read endpoints (`routes`), events and history (`events`,
`feed`, `bridge`), per-tenant metrics (`metrics`) and the one call that serves it all
(`server.serve`, `server.serve_scheduler`).

Dependencies run one way: this package imports `quotactor.scheduler` and `quotactor.ugm`,
which never import it.
"""

from quotactor.rest.scheduler.metrics import TenantSelection
from quotactor.rest.scheduler.server import SchedulerManagers, serve, serve_scheduler

__all__ = ["SchedulerManagers", "TenantSelection", "serve", "serve_scheduler"]

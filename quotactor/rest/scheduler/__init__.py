"""A `Scheduler` served over HTTP: its read endpoints (`routes`), events and history (`events`,
`feed`, `bridge`), per-tenant metrics (`metrics`) and the one call that serves it all
(`server.serve_scheduler`, also `Scheduler.serve_rest`).

Dependencies run one way: this package imports `quotactor.scheduler` and `quotactor.ugm`;
they import it only lazily, inside their `serve_rest` convenience methods.
"""

from quotactor.rest.scheduler.metrics import TenantSelection
from quotactor.rest.scheduler.server import SchedulerManagers, serve_scheduler

__all__ = ["SchedulerManagers", "TenantSelection", "serve_scheduler"]

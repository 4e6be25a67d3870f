"""`--serve`: the REST API of a replay, live while it runs and after it ends.

The replay's scheduler is served as any embedded scheduler is (`quotactor.rest.serve`): the
usage API of every partition's manager plus YuniKorn's scheduler endpoints (partitions,
queues, applications, nodes, events, history) under `/ws/v1`. The scheduler serialises every
call, so reading while the replay runs is safe. No shim token is given: the replay is the only
writer.
"""

from __future__ import annotations

from quotactor.rest import RestServer, serve
from quotactor.scheduler import Scheduler

__all__ = ["serve_scheduler"]


def serve_scheduler(scheduler: Scheduler, host: str = "127.0.0.1", port: int = 9080) -> RestServer:
    """Serve `scheduler` from a daemon thread; returns once the server accepts requests.

    The socket is bound here, so a port in use fails this call (`OSError`) and `port=0`
    picks a free one.
    """
    return serve(scheduler, host=host, port=port)

"""quotactor's REST API: YuniKorn's `/ws/v1` usage endpoints, config, health and metrics.

`start_rest_server` embeds it in any process (a daemon thread running uvicorn);
`quotactor serve` runs it as a service over a config file (`quotactor.rest.service`).
"""

from quotactor.rest.app import PREFIX, create_app
from quotactor.rest.partitions import Partitions
from quotactor.rest.server import RestServer, start_rest_server
from quotactor.rest.state import RestSettings

__all__ = ["PREFIX", "Partitions", "RestServer", "RestSettings", "create_app",
           "start_rest_server"]

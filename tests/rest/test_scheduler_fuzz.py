"""Schemathesis against a served scheduler: its read endpoints and the shim API, no 5xx.

The event stream and the decision long-poll are left out: they wait by design (a stream never
ends), which a generator of requests cannot tell from a hang; `test_scheduler_endpoints` and
`test_shim_api` cover them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from quotactor import UserGroup
from quotactor.rest import RestServer, serve
from quotactor.scheduler import Ask, Scheduler

SHIM = "fuzz-shim-token"
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_headers_conformance, response_schema_conformance]


@pytest.fixture(scope="module")
def live() -> Iterator[RestServer]:
    with Scheduler.start() as scheduler:
        scheduler.add_node("n1", {"vcore": 4000})
        scheduler.submit("app-1", UserGroup("sue", ["dev"]), queue="root.a",
                         asks=[Ask("k1", {"vcore": 1000})])
        scheduler.schedule()
        server: RestServer = serve(scheduler, shim_token=SHIM)
        try:
            yield server
        finally:
            server.stop()


@pytest.fixture(scope="module")
def api_schema(live: RestServer) -> Any:
    return schemathesis.openapi.from_url(f"{live.url}/openapi.json")


schema = schemathesis.pytest.from_fixture("api_schema").exclude(
    path=["/ws/v1/events/stream", "/ws/v1/shim/decisions"])


@pytest.mark.slow
@schema.parametrize()
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_scheduler_operation_answers_as_documented(case: Any, live: RestServer) -> None:
    response = case.call(base_url=live.url.removesuffix("/ws/v1"),
                         headers={"Authorization": f"Bearer {SHIM}"})
    case.validate_response(response, checks=CHECKS)

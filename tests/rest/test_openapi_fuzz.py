"""Schemathesis against the served OpenAPI document: no 5xx, and every response as described.

Where `test_fuzz` throws malformed bytes at the server, this generates requests from the
document itself and checks the answers against it: status codes, content types, headers and
body schemas, so the document cannot drift from the behaviour.
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
from quotactor.rest import RestServer, start_rest_server
from quotactor.ugm import UserGroupManager

TOKEN = "schema-token"
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_headers_conformance, response_schema_conformance]


@pytest.fixture(scope="module")
def live() -> Iterator[RestServer]:
    manager = UserGroupManager.start(partition="default", timeout=20.0)
    try:
        manager.increase_tracked_resource("root.test", "app1", {"memory": 1},
                                          UserGroup("user1", ["tester"]))
        server = start_rest_server({"default": manager}, admin_token=TOKEN)
        try:
            yield server
        finally:
            server.stop()
    finally:
        manager.stop()


@pytest.fixture(scope="module")
def api_schema(live: RestServer) -> Any:
    return schemathesis.openapi.from_url(f"{live.url}/openapi.json")


schema = schemathesis.pytest.from_fixture("api_schema")


@pytest.mark.slow
@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_operation_answers_as_its_document_says(case: Any, live: RestServer) -> None:
    response = case.call(base_url=live.url.removesuffix("/ws/v1"),
                         headers={"Authorization": f"Bearer {TOKEN}"})
    case.validate_response(response, checks=CHECKS)

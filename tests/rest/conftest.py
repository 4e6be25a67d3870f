"""Fixtures for the REST tests: real servers on ephemeral ports, stopped by the test's end.

Requests that a well-behaved client library would normalise (bad escapes, raw `*`, odd bytes)
go through `raw`, which sends the request target exactly as given. Helpers are fixtures, since
test modules (imported by path) cannot import this file.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

import quotactor.config
from quotactor import UserGroup
from quotactor.core.limits import LimitEntry
from quotactor.rest import RestServer, start_rest_server
from quotactor.ugm import UserGroupManager

GB = 10**9
SIX = {"memory": 6 * GB, "vcore": 6000}
TESTER_AT_ROOT_TEST = {"root.test": [LimitEntry(groups=("tester",), max_applications=10)]}
TOKEN = "s3cret-admin-token"

SEED_USER1 = {
    "userName": "user1",
    "groups": {"app2": "tester"},
    "queues": {
        "queuePath": "root",
        "resourceUsage": {"memory": 12 * GB, "vcore": 12000},
        "runningApplications": ["app1", "app2"],
        "children": [
            {"queuePath": "root.default", "resourceUsage": SIX, "runningApplications": ["app1"]},
            {"queuePath": "root.test", "resourceUsage": SIX, "runningApplications": ["app2"]},
        ],
    },
}
SEED_TESTER = {
    "groupName": "tester",
    "applications": ["app2"],
    "queues": {
        "queuePath": "root",
        "resourceUsage": SIX,
        "runningApplications": ["app2"],
        "children": [{"queuePath": "root.test", "resourceUsage": SIX,
                      "runningApplications": ["app2"], "maxApplications": 10}],
    },
}


def seed(manager: UserGroupManager) -> None:
    """The seed example: user1 (group tester) runs app1 in root.default and app2 in root.test."""
    user1 = UserGroup("user1", ["tester"])
    assert manager.increase_tracked_resource("root.default", "app1", SIX, user1)
    assert manager.increase_tracked_resource("root.test", "app2", SIX, user1)


@dataclass(frozen=True)
class RawResponse:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@pytest.fixture
def serve() -> Iterator[Callable[..., RestServer]]:
    """Start REST servers (`start_rest_server` arguments); all are stopped at the end."""
    started: list[RestServer] = []

    def start(managers: dict[str, UserGroupManager], **options: Any) -> RestServer:
        server = start_rest_server(managers, **options)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def seeded(start_ugm: Callable[..., UserGroupManager]) -> UserGroupManager:
    manager = start_ugm(TESTER_AT_ROOT_TEST)
    seed(manager)
    return manager


@pytest.fixture
def api(seeded: UserGroupManager, serve: Callable[..., RestServer]) -> Iterator[httpx.Client]:
    """An HTTP client on a server for the seeded `default` partition, with an admin token."""
    server = serve({"default": seeded}, admin_token=TOKEN)
    with httpx.Client(base_url=server.url, timeout=10.0) as client:
        yield client


def _raw_request(url: str, method: str, target: str, body: bytes | None = None,
                headers: dict[str, str] | None = None) -> RawResponse:
    """Send `target` (appended to the path of `url`) byte for byte, as no client library would."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10.0)
    try:
        connection.putrequest(method, parts.path + target, skip_accept_encoding=True)
        for name, value in (headers or {}).items():
            connection.putheader(name, value)
        if body is not None:
            connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        response = connection.getresponse()
        headers = {name.lower(): value for name, value in response.getheaders()}
        return RawResponse(response.status, headers, response.read())
    finally:
        connection.close()


@pytest.fixture(scope="session")
def yunikorn_config() -> ModuleType:
    """`quotactor.config` (the loader and `ConfigError`), for tests that build configs."""
    return quotactor.config


def _assert_error(response: httpx.Response | RawResponse, status: int, message: str | None = None
                 ) -> dict[str, Any]:
    """The response is the common error body with `status` (and `message`, if given)."""
    code = response.status_code if isinstance(response, httpx.Response) else response.status
    body = response.json()
    assert code == status, body
    assert set(body) == {"status_code", "message", "description"}, body
    assert body["status_code"] == status
    assert isinstance(body["message"], str) and body["message"]
    assert isinstance(body["description"], str) and body["description"]
    if message is not None:
        assert body["message"] == message
    return body


@pytest.fixture(scope="session")
def raw() -> Callable[..., RawResponse]:
    """`raw(url, method, target, body=None, headers=None)`: a request sent byte for byte."""
    return _raw_request


@pytest.fixture(scope="session")
def error_of() -> Callable[..., dict[str, Any]]:
    """`error_of(response, status, message=None)`: asserts the common error body, returns it."""
    return _assert_error


@pytest.fixture(scope="session")
def expected_seed() -> dict[str, dict[str, Any]]:
    """The REST JSON of the seed example: `user1` and group `tester`."""
    return {"user1": SEED_USER1, "tester": SEED_TESTER}


@pytest.fixture(scope="session")
def seed_example() -> Callable[[UserGroupManager], None]:
    """`seed_example(manager)`: produce the seed example's state in `manager`."""
    return seed

"""Names in paths (encoded once or twice, invalid, unknown) and routing errors, over HTTP.

These checks only read, so one server (the seed example plus users with odd names) serves the
module; requests go byte for byte (`raw`) so escapes reach the server as written.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from quotactor import UserGroup
from quotactor.core.limits import LimitEntry
from quotactor.rest import start_rest_server
from quotactor.ugm import UserGroupManager

TESTER_AT_ROOT_TEST = {"root.test": [LimitEntry(groups=("tester",), max_applications=10)]}
USERS = "/partition/default/usage/users"
ODD_NAMES = ("x@corp.com", "a/b", "dom:user#1$")


@pytest.fixture(scope="module")
def shared(seed_example) -> Iterator[str]:
    """One server for the read-only checks: the seed example plus users with odd names."""
    manager = UserGroupManager.start(TESTER_AT_ROOT_TEST, timeout=20.0)
    try:
        seed_example(manager)
        for i, user in enumerate(ODD_NAMES):  # application ids are unique in a partition
            assert manager.increase_tracked_resource("root.q", f"app-{i}", {"m": 1},
                                                     UserGroup(user))
        server = start_rest_server({"default": manager})
        try:
            yield server.url
        finally:
            server.stop()
    finally:
        manager.stop()


@pytest.mark.parametrize(("user", "path"), [
    ("x@corp.com", "x%40corp.com"),
    ("x@corp.com", "x%2540corp.com"),
    ("a/b", "a%2Fb"),
    ("a/b", "a%2fb"),
    ("a/b", "a%252Fb"),
    ("dom:user#1$", "dom%3Auser%231%24"),
])
def test_encoded_user_names_are_decoded_once_or_twice(shared, raw, user, path) -> None:
    response = raw(shared, "GET", f"/partition/default/usage/user/{path}")
    assert response.status == 200, response.body
    assert response.json()["userName"] == user


@pytest.mark.parametrize(("target", "message"), [
    ("/partition/default/usage/user/1InvalidUser", "Invalid user name"),
    ("/partition/default/usage/user/bob%0A", "Invalid user name"),
    ("/partition/default/usage/user/a%20b", "Invalid user name"),
    ("/partition/default/usage/user/%2A", "Invalid user name"),
    ("/partition/default/usage/user/..", "Invalid user name"),
    ("/partition/default/usage/group/test_a-b_c@%23d@do:mai%2Fn.com", "Invalid group name"),
    ("/partition/default/usage/group/a%2Fb", "Invalid group name"),
    ("/partition/default/usage/group/**", "Invalid group name"),
    ("/partition/default/usage/user/%Zt", 'invalid URL escape "%Zt"'),
    ("/partition/default/usage/user/abc%", 'invalid URL escape "%"'),
    ("/partition/default/usage/user/abc%4", 'invalid URL escape "%4"'),
    ("/partition/default/usage/user/a%25Zt", 'invalid URL escape "%Zt"'),
    ("/partition/default/usage/group/%FF", "invalid UTF-8 in path segment"),
    ("/partition/%ZZ/usage/users", 'invalid URL escape "%ZZ"'),
])
def test_bad_names_and_escapes_are_400(shared, raw, error_of, target, message) -> None:
    error_of(raw(shared, "GET", target), 400, message)


@pytest.mark.parametrize(("target", "message"), [
    ("/partition/nope/usage/users", "Partition not found"),
    ("/partition/nope/usage/user/user1", "Partition not found"),
    ("/partition/nope/usage/group/tester", "Partition not found"),
    ("/partition/default/usage/user/nobody", "User not found"),
    ("/partition/default/usage/user/tester", "User not found"),
    ("/partition/default/usage/group/nobody", "Group not found"),
    ("/partition/default/usage/group/%2A", "Group not found"),
    ("/partition/default/usage/user/", "Not found"),
    ("/partition/default/usage/users/", "Not found"),
    ("/partition/default/usage", "Not found"),
    ("/partition/default/usage/user/a/b", "Not found"),
    ("/nothing/here", "Not found"),
    ("", "Not found"),
])
def test_unknown_things_and_unrouted_paths_are_404(shared, raw, error_of, target,
                                                   message) -> None:
    error_of(raw(shared, "GET", target), 404, message)


def test_paths_outside_the_prefix_are_404(shared, raw, error_of) -> None:
    root = shared.removesuffix("/ws/v1")
    for target in ("/", "/docs", "/openapi.json", "/partition/default/usage/users"):
        error_of(raw(root, "GET", target), 404)


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
def test_wrong_methods_are_405_with_allow(shared, error_of, method) -> None:
    response = httpx.request(method, f"{shared}{USERS}")
    error_of(response, 405, "Method not allowed")
    assert response.headers["allow"] == "GET"
    other = httpx.request(method if method != "POST" else "GET", f"{shared}/validate-conf")
    error_of(other, 405)
    assert other.headers["allow"] == "POST"
    config = httpx.request(method if method != "PUT" else "POST", f"{shared}/config")
    assert config.headers["allow"] == "GET, PUT"

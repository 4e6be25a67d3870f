"""Fuzzing the endpoints with malformed paths, names, methods and bodies: never a 5xx.

One server (with a seeded manager and an admin token) serves the whole module, so each example
costs one HTTP round trip. Targets are sent byte for byte (`raw`), so escapes reach the server
as generated.
"""

from __future__ import annotations

import string
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quotactor.rest import RestServer, start_rest_server
from quotactor.ugm import UserGroupManager

TOKEN = "fuzz-token"
FUZZ = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])

# Printable ASCII that may appear in a request target without a client library rejecting it.
TARGET_CHARS = "".join(c for c in string.printable if c not in " \t\n\r\x0b\x0c#?")
raw_segments = st.text(alphabet=TARGET_CHARS + "%%%", min_size=1, max_size=30)
encoded_names = st.text(min_size=1, max_size=20).map(lambda s: quote(s, safe=""))
double_encoded = encoded_names.map(lambda s: quote(s, safe=""))
segments = st.one_of(raw_segments, encoded_names, double_encoded,
                     st.sampled_from(["user1", "tester", "%2A", "*", "default", "..", "."]))
templates = st.sampled_from([
    "/partition/{}/usage/users",
    "/partition/{}/usage/groups",
    "/partition/default/usage/user/{}",
    "/partition/default/usage/group/{}",
    "/partition/{}/usage/user/{}",
    "/partition/{}/usage/group/{}",
    "/{}",
    "/{}/{}",
    "/partition/default/usage/{}",
    "/config?partition={}",
])
methods = st.sampled_from(["GET", "GET", "GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS",
                           "HEAD"])

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=10),
                    st.floats(allow_nan=False))
yaml_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=20,
)
limit_values = st.fixed_dictionaries({}, optional={
    "limit": st.text(max_size=5),
    "users": st.lists(st.sampled_from(["*", "sue", "1bad", "", "a b"]), max_size=3),
    "groups": st.lists(st.sampled_from(["*", "dev", "bad@x", ""]), max_size=3),
    "maxresources": st.dictionaries(st.sampled_from(["memory", "vcore", "gpu", ""]),
                                    st.one_of(st.integers(-5, 10**12), st.text(max_size=6)),
                                    max_size=3),
    "maxapplications": st.one_of(st.integers(-3, 100), st.text(max_size=4)),
})
configs = st.builds(
    lambda name, queue, limits, extra: {"partitions": [{"name": name, "queues": [
        {"name": "root", "queues": [{"name": queue, "limits": limits}]}], **extra}]},
    st.sampled_from(["default", "other", "", "a.b"]),
    st.sampled_from(["test", "a b", "", "root"]),
    st.lists(limit_values, max_size=3),
    st.dictionaries(st.sampled_from(["nodesortpolicy", "preemption", "placementrules"]),
                    yaml_values, max_size=2),
)
bodies = st.one_of(
    st.binary(max_size=300),
    st.text(max_size=300).map(str.encode),
    yaml_values.map(lambda v: yaml.safe_dump(v).encode()),
    configs.map(lambda v: yaml.safe_dump(v).encode()),
    st.tuples(st.sampled_from(["[", "{a: ", "- ", "? "]), st.integers(1, 60_000)).map(
        lambda t: (t[0] * t[1]).encode()),
)


@pytest.fixture(scope="module")
def server() -> Iterator[RestServer]:
    manager = UserGroupManager.start(partition="default", timeout=20.0)
    try:
        from quotactor import UserGroup

        manager.increase_tracked_resource("root.test", "app1", {"memory": 1},
                                          UserGroup("user1", ["tester"]))
        rest = start_rest_server({"default": manager}, admin_token=TOKEN)
        try:
            yield rest
        finally:
            rest.stop()
    finally:
        manager.stop()


def _check(response: Any, error_of: Any, method: str = "GET") -> None:
    """No 5xx; an error from the application (JSON, not h11's plain text) has the error shape."""
    assert response.status < 500, (response.status, response.body[:300])
    json_error = response.headers.get("content-type", "").startswith("application/json")
    if response.status >= 400 and json_error and method != "HEAD":
        error_of(response, response.status)


@pytest.mark.slow
@FUZZ
@given(template=templates, parts=st.lists(segments, min_size=2, max_size=2), method=methods)
def test_malformed_paths_and_names_never_give_a_5xx(server, raw, error_of, template, parts,
                                                    method) -> None:
    target = template.format(*parts[: template.count("{}")])
    _check(raw(server.url, method, target), error_of, method)


@pytest.mark.slow
@FUZZ
@given(body=bodies, authorised=st.booleans())
def test_malformed_bodies_never_give_a_5xx(yunikorn_config, server, raw, error_of, body,
                                           authorised) -> None:
    verdict = raw(server.url, "POST", "/validate-conf", body=body)
    assert verdict.status == 200, verdict.body[:300]
    assert set(verdict.json()) == {"allowed", "reason"}
    headers = {"Authorization": f"Bearer {TOKEN}"} if authorised else {}
    _check(raw(server.url, "PUT", "/config", body=body, headers=headers), error_of, "PUT")

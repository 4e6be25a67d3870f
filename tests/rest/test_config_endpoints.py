"""`/validate-conf` and `/config`: verdicts, reading, replacing, tokens and body limits."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from quotactor.ugm import UserGroupManager

CONFIGS = Path(__file__).resolve().parents[1] / "data" / "yunikorn-configs"
TOKEN = "s3cret-admin-token"

TESTER_CONFIG = """\
partitions:
  - name: default
    queues:
      - name: root
        queues:
          - name: test
            limits:
              - limit: tester apps
                groups: [tester]
                maxapplications: 10
"""
TIGHTER_CONFIG = TESTER_CONFIG.replace("maxapplications: 10", "maxapplications: 3")
TWO_PARTITIONS = TESTER_CONFIG + """\
  - name: gpu
    queues:
      - name: root
"""
BEARER = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def configured(yunikorn_config, start_ugm, seed_example) -> UserGroupManager:
    manager = start_ugm(TESTER_CONFIG)
    seed_example(manager)
    return manager


@pytest.fixture
def client(configured, serve) -> Iterator[httpx.Client]:
    server = serve({"default": configured}, admin_token=TOKEN)
    with httpx.Client(base_url=server.url, timeout=10.0) as client:
        yield client


def _tester_limit(client: httpx.Client) -> int:
    group = client.get("/partition/default/usage/group/tester").json()
    return group["queues"]["children"][0]["maxApplications"]


@pytest.mark.parametrize("name", [
    "valid/023-core-handlers_test-baseConf.yaml",
    "valid/025-core-handlers_test-configMultiPartitions.yaml",
    "valid/027-core-handlers_test-userGroupLimitsConfig.yaml",
])
def test_validate_conf_allows_what_yunikorn_allows(client, name) -> None:
    response = client.post("/validate-conf", content=(CONFIGS / name).read_bytes())
    assert response.status_code == 200
    assert response.json() == {"allowed": True, "reason": ""}


@pytest.mark.parametrize("body", [
    (CONFIGS / "invalid/049-core-handlers_test-invalidConf.yaml").read_bytes(),
    (CONFIGS / "invalid/050-core-handlers_test-userGroupLimitsInvalidConfig.yaml").read_bytes(),
    (CONFIGS / "invalid/051-core-handlers_test-userGroupLimitsInvalidConfig1.yaml").read_bytes(),
    b"partitions: [\n",
    b"\xff\xfe not utf-8",
    b"just a string",
], ids=["invalidConf", "limitsInvalidConfig", "limitsInvalidConfig1", "yaml-syntax", "not-utf8",
        "scalar"])
def test_validate_conf_refuses_with_a_reason_and_still_answers_200(client, body) -> None:
    response = client.post("/validate-conf", content=body)
    assert response.status_code == 200
    verdict = response.json()
    assert verdict["allowed"] is False
    assert isinstance(verdict["reason"], str) and verdict["reason"]


TOO_DEEP = re.compile("nests deeper|maximum nesting depth")
"""Our own depth scan's reason, or the one of a libyaml that bounds nesting itself."""


@pytest.mark.parametrize("body", [b"[" * 100_000, b"- " * 100_000, b"{a: " * 50_000],
                         ids=["flow-sequences", "block-sequences", "flow-mappings"])
def test_deeply_nested_yaml_is_refused_without_harm(client, configured, body) -> None:
    verdict = client.post("/validate-conf", content=body).json()
    assert verdict["allowed"] is False and TOO_DEEP.search(verdict["reason"])
    response = client.put("/config", content=body, headers=BEARER)
    assert response.status_code == 400 and TOO_DEEP.search(response.json()["message"])
    assert client.get("/scheduler/healthcheck").json()["Healthy"] is True
    assert configured.config.source == TESTER_CONFIG


def test_validate_conf_changes_nothing(client, configured) -> None:
    before = configured.config
    client.post("/validate-conf", content=TIGHTER_CONFIG)
    assert configured.config is before
    assert _tester_limit(client) == 10


def test_get_config_returns_the_yaml_in_force(client) -> None:
    response = client.get("/config")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/yaml")
    assert response.text == TESTER_CONFIG


def test_get_config_without_a_loaded_config_is_404(seeded, serve, error_of) -> None:
    server = serve({"default": seeded})
    error_of(httpx.get(f"{server.url}/config"), 404, "No config loaded")


def test_get_config_with_several_partitions(yunikorn_config, serve, error_of) -> None:
    shared = yunikorn_config.load_config(TWO_PARTITIONS)
    default = UserGroupManager.start(shared, partition="default", timeout=20.0)
    gpu = UserGroupManager.start(shared, partition="gpu", timeout=20.0)
    other = UserGroupManager.start(TESTER_CONFIG, partition="default", timeout=20.0)
    try:
        same = serve({"default": default, "gpu": gpu})
        assert httpx.get(f"{same.url}/config").text == TWO_PARTITIONS
        mixed = serve({"gpu": gpu, "default": other})
        error_of(httpx.get(f"{mixed.url}/config"), 409)
        assert httpx.get(f"{mixed.url}/config", params={"partition": "default"}
                         ).text == TESTER_CONFIG
        assert httpx.get(f"{mixed.url}/config?partition=gpu").text == TWO_PARTITIONS
        error_of(httpx.get(f"{mixed.url}/config?partition=nope"), 404, "Partition not found")
    finally:
        for manager in (default, gpu, other):
            manager.stop()


def test_put_config_with_the_token_replaces_it(client, configured) -> None:
    response = client.put("/config", content=TIGHTER_CONFIG, headers=BEARER)
    assert response.status_code == 204, response.text
    assert client.get("/config").text == TIGHTER_CONFIG
    assert configured.config.source == TIGHTER_CONFIG
    assert _tester_limit(client) == 3


def test_put_config_is_off_without_a_configured_token(configured, serve, error_of) -> None:
    server = serve({"default": configured})
    response = httpx.put(f"{server.url}/config", content=TIGHTER_CONFIG, headers=BEARER)
    error_of(response, 403, "Config updates are disabled")
    assert configured.config.source == TESTER_CONFIG


@pytest.mark.parametrize(("headers", "status"), [
    ({}, 401),
    ({"Authorization": "Bearer wrong"}, 403),
    ({"Authorization": f"Bearer {TOKEN}x"}, 403),
    ({"Authorization": f"Basic {TOKEN}"}, 403),
    ({"Authorization": "Bearer"}, 403),
    ({"Authorization": "Bearer \u00e9t\u00e9".encode()}, 403),
])
def test_put_config_needs_the_right_bearer_token(client, configured, error_of, headers,
                                                 status) -> None:
    response = client.put("/config", content=TIGHTER_CONFIG, headers=headers)
    error_of(response, status)
    if status == 401:
        assert response.headers["www-authenticate"].startswith("Bearer")
    assert configured.config.source == TESTER_CONFIG
    assert _tester_limit(client) == 10


@pytest.mark.parametrize("body", [
    b"partitions: [\n",
    b"\xff not utf-8",
    (CONFIGS / "invalid/050-core-handlers_test-userGroupLimitsInvalidConfig.yaml").read_bytes(),
    TWO_PARTITIONS.replace("name: default", "name: other").encode(),
], ids=["yaml-syntax", "not-utf8", "limitsInvalidConfig", "drops-served-partition"])
def test_an_invalid_put_is_400_and_changes_nothing(client, configured, error_of, body) -> None:
    before = configured.config
    error = error_of(client.put("/config", content=body, headers=BEARER), 400)
    assert error["message"] == error["description"]
    assert configured.config is before
    assert client.get("/config").text == TESTER_CONFIG
    assert _tester_limit(client) == 10


def test_an_invalid_put_answers_with_the_config_error_text(yunikorn_config, client,
                                                           error_of) -> None:
    body = (CONFIGS / "invalid/050-core-handlers_test-userGroupLimitsInvalidConfig.yaml"
            ).read_text()
    with pytest.raises(yunikorn_config.ConfigError) as refused:
        yunikorn_config.load_config(body)
    error = error_of(client.put("/config", content=body, headers=BEARER), 400)
    assert error["message"] == str(refused.value)


def test_bodies_over_the_limit_are_413(configured, serve, error_of) -> None:
    server = serve({"default": configured}, admin_token=TOKEN, max_body_bytes=1024)
    with httpx.Client(base_url=server.url, timeout=10.0) as client:
        error_of(client.post("/validate-conf", content=b"#" * 4096), 413)
        error_of(client.put("/config", content=b"#" * 4096, headers=BEARER), 413)
        error_of(client.post("/validate-conf", content=iter([b"#" * 600, b"#" * 600])), 413)
        fits = (TESTER_CONFIG + "#" * (1024 - len(TESTER_CONFIG))).encode()
        assert len(fits) == 1024
        assert client.post("/validate-conf", content=fits).json()["allowed"] is True
    assert configured.config.source == TESTER_CONFIG


def test_a_slow_body_is_cut_off_with_408(configured, serve, raw, error_of) -> None:
    server = serve({"default": configured}, body_timeout=0.3)
    response = raw(server.url, "POST", "/validate-conf", headers={"Content-Length": "100"})
    error_of(response, 408)

"""The OpenAPI document of a served scheduler states the rules the server enforces, so that a
client generated from it does not send what is refused: name syntax, bounds, enums, the
partitions there are, and the 413 of every body."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from quotactor.core.identity import USER_NAME
from quotactor.rest import serve
from quotactor.scheduler import Scheduler

CONFIG = """
partitions:
  - name: default
    queues: [{name: root}]
  - name: gpu
    queues: [{name: root}]
"""


@pytest.fixture(scope="module")
def document() -> Iterator[dict[str, Any]]:
    with Scheduler.start(CONFIG) as scheduler:
        server = serve(scheduler, shim_token="t")
        try:
            yield httpx.get(f"{server.url}/openapi.json").json()
        finally:
            server.stop()


def _parameter(document: dict[str, Any], path: str, name: str) -> dict[str, Any]:
    (operation,) = document["paths"][f"/ws/v1{path}"].values()
    (found,) = [p for p in operation["parameters"] if p["name"] == name]
    return dict(found["schema"])


def _properties(document: dict[str, Any], component: str) -> dict[str, Any]:
    return dict(document["components"]["schemas"][component]["properties"])


def test_path_names_carry_the_syntax_the_server_checks(document) -> None:
    user = _parameter(document, "/partition/{partition}/usage/user/{user}", "user")
    assert user["pattern"] == USER_NAME.pattern
    group = re.compile(_parameter(document, "/partition/{partition}/usage/group/{group}",
                                  "group")["pattern"])
    assert group.match("*") and group.match("dev") and not group.match("0") \
        and not group.match("a%b")
    assert _parameter(document, "/partition/{partition}/nodes", "partition")["enum"] == [
        "default", "gpu"]
    assert _parameter(document, "/events/batch", "count")["minimum"] == 1


def test_shim_bodies_state_their_bounds_enums_and_partitions(document) -> None:
    action = _properties(document, "NodeInfo")["action"]
    strings, numbers = (a["enum"] for a in action["anyOf"])
    assert "" not in strings and "UNKNOWN_ACTION_FROM_RM" not in strings and 0 not in numbers
    app = _properties(document, "AddApplicationRequest")
    assert app["executionTimeoutMilliSeconds"]["minimum"] == 0
    assert app["queueName"]["maxLength"] == 1024
    partition = re.compile(app["partitionName"]["pattern"])
    assert all(partition.match(p) for p in ("", "default", "gpu", "[rm-1]gpu"))
    assert not any(partition.match(p) for p in ("nope", "[rm-1]nope"))
    assert _properties(document, "NodeRequest")["rmID"]["maxLength"] == 1024
    quantities = _properties(document, "SiResource")["resources"]["additionalProperties"]
    assert quantities["properties"]["value"]["minimum"] == 0
    ask = _properties(document, "Allocation")["resourcePerAlloc"]["properties"]["resources"]
    assert ask["minProperties"] == 1
    assert ask["additionalProperties"]["properties"]["value"]["minimum"] == 1
    allocation = document["components"]["schemas"]["Allocation"]
    assert "resourcePerAlloc" in allocation["required"]
    assert allocation["then"]["required"] == ["nodeID", "taskGroupName"]  # a placeholder's
    node = document["components"]["schemas"]["NodeInfo"]
    assert node["then"]["required"] == ["schedulableResource"]  # a node created
    user = _properties(document, "UserGroupInformation")["user"]
    assert user["pattern"] == USER_NAME.pattern and user["maxLength"] == 1024
    printable = re.compile(_properties(document, "Allocation")["allocationKey"]["pattern"])
    assert printable.match("pod-1") and not printable.match("a\x00b")


def test_every_operation_with_a_body_declares_its_413(document) -> None:
    with_body = [(path, method) for path, operations in document["paths"].items()
                 for method, operation in operations.items() if "requestBody" in operation]
    assert len(with_body) >= 5
    for path, method in with_body:
        assert "413" in document["paths"][path][method]["responses"], (path, method)


def test_a_config_body_states_that_it_needs_partitions_with_queues(document) -> None:
    (operation,) = document["paths"]["/ws/v1/config"]["put"]["requestBody"]["content"].values()
    config = operation["schema"]
    assert config["required"] == ["partitions"]
    partitions = config["properties"]["partitions"]
    assert partitions["minItems"] == 1 and partitions["items"]["required"] == ["queues"]
    queue = partitions["items"]["properties"]["queues"]["items"]
    assert queue["required"] == ["name"] and not re.match(queue["properties"]["name"]["pattern"],
                                                          "")


def test_read_parameters_state_their_values(document) -> None:
    groups = _parameter(document, "/partition/{partition}/applications/{state}", "state")
    assert groups["enum"] == ["active", "rejected", "completed"]
    status = _parameter(document, "/partition/{partition}/applications/{state}", "status")
    assert "running" in status["enum"]
    queue = re.compile(_parameter(document, "/partition/{partition}/queue/{queue}",
                                  "queue")["pattern"])
    assert queue.match("root.a-1") and not queue.match("root.%zz") and not queue.match("")

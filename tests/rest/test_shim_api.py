"""The shim API: si.proto-shaped writes, their validation, replays, and the decision long-poll."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from quotactor.client import Client, ServiceError
from quotactor.rest import RestServer, serve
from quotactor.scheduler import Scheduler

SHIM = "shim-secret"
ADMIN = "admin-secret"
CONFIG = """
partitions:
  - name: default
    placementrules: [{name: provided, create: true}]
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: a
            resources: {max: {vcore: 3000}}
"""


@pytest.fixture
def scheduler() -> Iterator[Scheduler]:
    with Scheduler.start(CONFIG) as running:
        yield running


@pytest.fixture
def server(scheduler: Scheduler) -> Iterator[RestServer]:
    running: RestServer = serve(scheduler, shim_token=SHIM, admin_token=ADMIN)
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def shim(server: RestServer) -> Iterator[Client]:
    with Client(server.url, shim_token=SHIM, rm_id="rm-1") as client:
        yield client


def _state(scheduler: Scheduler) -> Any:
    """Everything a write could change, for 'nothing changed' checks."""
    return (scheduler.nodes_view(), scheduler.applications_view(), scheduler.queues_view())


def test_writes_need_the_shim_token_not_the_admin_one(server) -> None:
    body = {"nodes": [], "rmID": "x"}
    assert httpx.post(f"{server.url}/shim/nodes", json=body).status_code == 401
    admin = {"Authorization": f"Bearer {ADMIN}"}
    assert httpx.post(f"{server.url}/shim/nodes", json=body, headers=admin).status_code == 403
    assert httpx.get(f"{server.url}/shim/decisions", headers=admin).status_code == 403
    shim = {"Authorization": f"Bearer {SHIM}"}
    assert httpx.post(f"{server.url}/shim/nodes", json=body, headers=shim).status_code == 200
    assert httpx.put(f"{server.url}/config", content=CONFIG, headers=shim).status_code == 403


def test_without_a_shim_token_the_shim_api_is_off(scheduler) -> None:
    server = serve(scheduler)
    try:
        response = httpx.post(f"{server.url}/shim/nodes", json={"nodes": []},
                              headers={"Authorization": "Bearer anything"})
        assert response.status_code == 403 and "disabled" in response.json()["message"]
    finally:
        server.stop()


def test_a_shim_feeds_the_scheduler_and_reads_its_decisions(shim, scheduler) -> None:
    assert shim.add_node("n1", {"vcore": 4000, "memory": 1000}) == {
        "accepted": [{"nodeID": "n1"}], "rejected": []}
    accepted = shim.add_application("app-1", "sue", groups=["dev"], queue="root.a")
    assert accepted["accepted"] == [{"applicationID": "app-1"}]
    assert shim.ask("app-1", "k1", {"vcore": 1000}) == {"rejectedAllocations": [],
                                                         "released": [], "new": []}
    scheduler.schedule()
    page = shim.decisions(after=0, wait=5.0)
    (allocation,) = page.allocations()
    assert allocation == {
        "allocationKey": "k1", "allocationTags": {}, "applicationID": "app-1",
        "partitionName": "default",
        "nodeID": "n1", "resourcePerAlloc": {"resources": {"vcore": {"value": 1000}}},
        "priority": 0, "placeholder": False, "taskGroupName": ""}
    assert scheduler.ugm().user_usage("sue")["queues"]["resourceUsage"] == {"vcore": 1000}
    released = shim.release("app-1", "k1")["released"]
    assert [r["allocationKey"] for r in released] == ["k1"]
    records = shim.events()["EventRecords"]
    removed = {(r["type"], r["objectID"]) for r in records if r["eventChangeType"] == 3}
    assert {(2, "app-1"), (3, "n1"), (4, "root.a"), (5, "sue")} <= removed
    assert scheduler.ugm().user_usage("sue") is None or scheduler.ugm().user_usage("sue")[
        "queues"]["resourceUsage"] == {}


def test_a_body_is_json_whatever_its_content_type(server, scheduler) -> None:
    """curl -d sends form-urlencoded; other clients send no type at all."""
    body = b'{"nodes":[{"nodeID":"n1","action":"CREATE","schedulableResource":' \
        b'{"resources":{"vcore":{"value":1}}}}]}'
    for content_type in ("application/x-www-form-urlencoded", "text/plain", None):
        headers = {"Authorization": f"Bearer {SHIM}"}
        if content_type:
            headers["Content-Type"] = content_type
        response = httpx.post(f"{server.url}/shim/nodes", content=body, headers=headers)
        assert response.json() == {"accepted": [{"nodeID": "n1"}], "rejected": []}
    bad = httpx.post(f"{server.url}/shim/nodes", content=b"nodes=1",
                     headers={"Authorization": f"Bearer {SHIM}",
                              "Content-Type": "application/x-www-form-urlencoded"})
    assert bad.status_code == 400 and bad.json()["message"] == "Invalid request"


def test_protobuf_json_forms_are_accepted(shim, scheduler) -> None:
    """int64 quantities as strings and enums by number, as protobuf-JSON encoders send them."""
    response = shim.node_request([{"nodeID": "n1", "action": 1, "schedulableResource": {
        "resources": {"vcore": {"value": "4000"}}}}])
    assert response["accepted"] == [{"nodeID": "n1"}]
    assert scheduler.nodes_view()[0]["capacity"] == {"vcore": 4000}


@pytest.mark.parametrize(("path", "body", "field"), [
    ("/shim/nodes", {"nodes": [{"action": "CREATE"}]}, "nodes.1.nodeID"),
    ("/shim/nodes", {"nodes": [{"nodeID": "n", "action": "EXPLODE"}]}, "nodes.1.action"),
    ("/shim/nodes", {"nodes": [{"nodeID": "n", "action": "CREATE"}]},
     "nodes.1.schedulableResource"),
    ("/shim/nodes", {"nodes": [{"nodeID": "n", "action": "CREATE", "schedulableResource": {
        "resources": {"vcore": {"value": -1}}}}]}, "nodes.1.schedulableResource"),
    ("/shim/nodes", {"nodes": [{"nodeID": "n", "action": "CREATE", "schedulableResource": {
        "resources": {"vcore": {"value": "lots"}}}}]}, "value"),
    ("/shim/nodes", {"nodes": [], "rmId": "typo"}, "rmId"),
    ("/shim/applications", {"new": [{"applicationID": "a"}]}, "new.0.ugi"),
    ("/shim/applications", {"new": [{"applicationID": "a", "ugi": {"user": " "}}]},
     "new.0.ugi"),
    ("/shim/applications", {"new": [{"applicationID": "a", "ugi": {"user": "u"},
                                     "partitionName": "gpu"}]}, "new.0.partitionName"),
    ("/shim/allocations", {"allocations": [{"allocationKey": "k", "applicationID": "a"}]},
     "allocations.0.resourcePerAlloc"),
    ("/shim/allocations", {"allocations": [{"allocationKey": "k", "applicationID": "a",
                                            "placeholder": True, "taskGroupName": "tg",
                                            "resourcePerAlloc": {
                                                "resources": {"vcore": {"value": 1}}}}]},
     "allocations.0.placeholder"),
    ("/shim/allocations", {"allocations": [{"allocationKey": "k", "applicationID": "a",
                                            "placeholder": True, "nodeID": "n1",
                                            "resourcePerAlloc": {
                                                "resources": {"vcore": {"value": 1}}}}]},
     "allocations.0.taskGroupName"),
    ("/shim/allocations", {"releases": {"allocationsToRelease": [{"applicationID": "a"}]}},
     "allocationKey"),
])
def test_a_bad_write_is_a_400_naming_the_field_and_changes_nothing(server, scheduler, path,
                                                                   body, field) -> None:
    # A good node ahead of the bad one (index 1): the request must still change nothing.
    if path == "/shim/nodes":
        body = {**body, "nodes": [{"nodeID": "ok", "action": "CREATE", "schedulableResource": {
            "resources": {"vcore": {"value": 1}}}}, *body["nodes"]]}
    before = _state(scheduler)
    response = httpx.post(f"{server.url}{path}", json=body,
                          headers={"Authorization": f"Bearer {SHIM}"})
    assert response.status_code == 400, response.text
    assert field in response.json()["description"], response.json()
    assert _state(scheduler) == before


def test_replays_are_harmless(shim, scheduler) -> None:
    for _ in range(2):
        assert shim.add_node("n1", {"vcore": 4000})["accepted"] == [{"nodeID": "n1"}]
        assert shim.add_application("app-1", "sue", queue="root.a")["accepted"] == [
            {"applicationID": "app-1"}]
        assert shim.ask("app-1", "k1", {"vcore": 1000})["rejectedAllocations"] == []
    scheduler.schedule()
    assert shim.ask("app-1", "k1", {"vcore": 1000})["rejectedAllocations"] == []
    scheduler.schedule()
    assert len(scheduler.application("app-1").allocations) == 1
    assert shim.release("app-1", "k1")["released"]
    assert shim.release("app-1", "k1")["released"] == []
    assert shim.remove_node("n1")["accepted"] == [{"nodeID": "n1"}]
    assert shim.remove_node("n1")["accepted"] == [{"nodeID": "n1"}]
    assert shim.remove_application("app-1")["removed"] == ["app-1"]
    assert shim.remove_application("app-1")["removed"] == []
    conflicting = shim.add_node("n2", {"vcore": 1})
    assert conflicting["accepted"] and shim.add_node("n2", {"vcore": 2})["rejected"]


def test_refusals_are_listed_and_reach_the_decision_stream(shim) -> None:
    rejected = shim.add_application("app-x", "sue", queue="root.a.under_a_leaf")
    assert rejected["rejected"][0]["applicationID"] == "app-x"
    unknown = shim.ask("nope", "k1", {"vcore": 1})["rejectedAllocations"]
    assert unknown[0]["applicationID"] == "nope" and unknown[0]["reason"]
    page = shim.decisions()
    assert [r["applicationID"] for r in page.rejected_applications()] == ["app-x"]
    assert [r["allocationKey"] for r in page.rejected_allocations()] == ["k1"]


def test_decisions_resume_after_a_position_and_go_to_their_shim(server, scheduler) -> None:
    with Client(server.url, shim_token=SHIM, rm_id="rm-a") as a, \
            Client(server.url, shim_token=SHIM, rm_id="rm-b") as b:
        a.add_node("n1", {"vcore": 10_000})
        a.add_application("app-a", "sue", queue="root.a")
        b.add_application("app-b", "bob", queue="root.b")
        first = a.decisions()
        a.ask("app-a", "k1", {"vcore": 100})
        b.ask("app-b", "k1", {"vcore": 100})
        with ThreadPoolExecutor(2) as pool:
            waiting = pool.submit(a.decisions, first.position, 10.0)
            scheduler.schedule()
            page = waiting.result(timeout=20)
        assert [x["applicationID"] for x in page.allocations()] == ["app-a"]
        assert [x["applicationID"] for x in b.decisions().allocations()] == ["app-b"]
        again = a.decisions(after=page.position)
        assert again.records == () and again.position >= page.position


def test_a_long_poll_returns_empty_when_nothing_happens(shim) -> None:
    page = shim.decisions(after=0, wait=0.2)
    assert page.records == () and page.missed is False


def test_removing_a_node_releases_its_allocations_to_the_owner(shim, scheduler) -> None:
    shim.add_node("n1", {"vcore": 4000})
    shim.add_application("app-1", "sue", queue="root.a")
    shim.ask("app-1", "k1", {"vcore": 1000})
    scheduler.schedule()
    shim.remove_node("n1")
    released = shim.decisions().released()
    assert [(r["applicationID"], r["allocationKey"]) for r in released] == [("app-1", "k1")]
    assert scheduler.application("app-1").allocations == ()


def test_service_errors_carry_yunikorns_error_body(server) -> None:
    with Client(server.url, shim_token="wrong") as bad, pytest.raises(ServiceError) as caught:
        bad.add_node("n1", {"vcore": 1})
    assert caught.value.status_code == 403 and "not valid" in caught.value.description


def test_a_trickled_body_is_a_408_not_a_held_connection(scheduler) -> None:
    server = serve(scheduler, shim_token=SHIM, body_timeout=0.3)
    try:
        parts = urlsplit(server.url)
        with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
            sock.sendall(b"POST /ws/v1/shim/nodes HTTP/1.1\r\nHost: x\r\n"
                         b"Authorization: Bearer " + SHIM.encode() + b"\r\n"
                         b"Content-Length: 100\r\n\r\n{\"nodes\":")
            answer = sock.recv(4096)
        assert answer.startswith(b"HTTP/1.1 408"), answer
    finally:
        server.stop()


def test_application_state_changes_are_event_records(shim, scheduler) -> None:
    shim.add_node("n1", {"vcore": 4000})
    shim.add_application("app-1", "sue", queue="root.a")
    shim.ask("app-1", "k1", {"vcore": 1000})
    shim.ask("app-1", "k2", {"vcore": 1000})
    scheduler.schedule()
    shim.release("app-1", "k1")
    shim.remove_application("app-1")
    records = shim.events()["EventRecords"]
    states = [r["message"] for r in records
              if r["type"] == 2 and r["objectID"] == "app-1" and r["eventChangeType"] == 1]
    assert states == ["state New", "state Accepted", "state Running", "state Completed"]
    details = {r["message"]: r["eventChangeDetail"] for r in records if r["message"] in states}
    assert details == {"state New": 203, "state Accepted": 204, "state Running": 206,
                       "state Completed": 208}


def test_concurrent_replays_of_the_same_requests_apply_once(server, scheduler) -> None:
    """Four shims racing to send the same writes (a retrying front end): one of each lands."""

    def session(index: int) -> list[Any]:
        with Client(server.url, shim_token=SHIM, rm_id="rm-same") as client:
            answers: list[Any] = [client.add_node("n1", {"vcore": 8000})]
            answers.append(client.add_application("app-1", "sue", queue="root.a"))
            answers += [client.ask("app-1", f"k{i}", {"vcore": 1000}) for i in range(4)]
            scheduler.schedule()
            answers += [client.ask("app-1", f"k{i}", {"vcore": 1000}) for i in range(4)]
            return answers

    with ThreadPoolExecutor(4) as pool:
        results = [f.result(timeout=60) for f in [pool.submit(session, i) for i in range(4)]]
    for answers in results:
        assert answers[0] == {"accepted": [{"nodeID": "n1"}], "rejected": []}
        assert answers[1]["accepted"] == [{"applicationID": "app-1"}]
        assert all(a["rejectedAllocations"] == [] for a in answers[2:])
    scheduler.schedule()
    assert [n["nodeID"] for n in scheduler.nodes_view()] == ["n1"]
    app = scheduler.application("app-1")
    assert sorted(a.key for a in app.allocations) == ["k0", "k1", "k2", "k3"]
    assert app.allocated == {"vcore": 4000} and app.pending == {}
    assert scheduler.ugm().user_usage("sue")["queues"]["resourceUsage"] == {"vcore": 4000}
    assert all(c["Succeeded"] for c in scheduler.health_checks())


def test_a_required_node_tag_pins_the_ask_and_the_preemption_policy_is_kept(
        shim, scheduler) -> None:
    shim.add_node("n1", {"vcore": 4000})
    shim.add_application("batch", "bob", queue="root.b")
    shim.add_application("ds", "sue", queue="root.c")
    shim.allocation_request(allocations=[
        {"allocationKey": f"k{i}", "applicationID": "batch",
         "resourcePerAlloc": {"resources": {"vcore": {"value": 1000}}},
         "preemptionPolicy": {"allowPreemptSelf": i != 0, "allowPreemptOther": True}}
        for i in range(4)])
    scheduler.schedule()
    flags = {a.key: a.allow_preempt_self for a in scheduler.application("batch").allocations}
    assert flags == {"k0": False, "k1": True, "k2": True, "k3": True}
    shim.ask("ds", "ds-n1", {"vcore": 1000}, tags={"yunikorn.apache.org/requiredNode": "n1"})
    scheduler.schedule()
    (request,) = scheduler.application_view("ds")["requests"]
    assert request["requiredNodeId"] == "n1"
    assert scheduler.node_view("n1")["reservations"] == ["n1|ds-n1"]
    scheduler.schedule()
    (victim,) = scheduler.release_requests()
    assert victim.reason == "required-node" and victim.allocation_key != "k0"  # k0 opted out

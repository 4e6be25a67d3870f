"""YuniKorn's read endpoints of a served scheduler, field for field against YuniKorn's bodies."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from quotactor import UserGroup
from quotactor.client import encode_name
from quotactor.rest import RestServer, serve
from quotactor.rest.scheduler.bridge import SchedulerBridge
from quotactor.scheduler import Ask, Scheduler

WEB_DB = json.loads((Path(__file__).resolve().parents[1] / "data" / "yunikorn-rest" /
                     "yunikorn-web-json-db.json").read_text())
ODD_QUEUE = "root.team#1/a@b:c"
CONFIG = """
partitions:
  - name: default
    placementrules: [{name: provided, create: true}]
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: a
            resources: {max: {vcore: 8000}}
"""


@pytest.fixture
def scheduler() -> Iterator[Scheduler]:
    with Scheduler.start(CONFIG) as running:
        running.add_node("n1", {"vcore": 4000, "memory": 1000})
        running.add_node("n2", {"vcore": 4000, "memory": 1000})
        running.submit("app-1", UserGroup("sue", ["dev"]), queue="root.a",
                       asks=[Ask("k1", {"vcore": 1000}), Ask("k2", {"vcore": 1000})])
        running.submit("app-2", UserGroup("bob", ["ops"]), queue=ODD_QUEUE,
                       asks=[Ask("k1", {"vcore": 500})])
        running.submit("app-3", UserGroup("sue", ["dev"]), queue="root.a",
                       asks=[Ask("big", {"vcore": 100_000})])
        running.submit("app-4", UserGroup("eve", []), queue="root.a.b.c.d.e.f.g.h.i.j.k")
        running.schedule()
        yield running


@pytest.fixture
def api(scheduler: Scheduler) -> Iterator[httpx.Client]:
    server: RestServer = serve(scheduler)
    try:
        with httpx.Client(base_url=server.url, timeout=10.0) as client:
            yield client
    finally:
        server.stop()


def _keys(value: Any) -> set[str]:
    return set(value[0] if isinstance(value, list) else value)


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


FREE_FORM = {"attributes", "properties", "allocationTags", "capacity", "allocated", "occupied",
             "available", "utilized", "usedResource", "maxUsedResource", "pendingResource",
             "maxResource", "guaranteedResource", "allocatedResource", "preemptingResource",
             "absUsedCapacity", "resource", "usedCapacity", "utilization", "minResource",
             "applications"}
"""Maps keyed by resource, tag or state names: their keys are data, not field names."""


def _shape_mismatches(theirs: Any, ours: Any, where: str = "") -> list[str]:
    """Where our body's JSON types or field names differ from YuniKorn's (theirs: a sample)."""
    if theirs is None or ours is None:
        return []
    if _kind(theirs) != _kind(ours):
        return [f"{where}: {_kind(ours)} where YuniKorn has {_kind(theirs)}"]
    if isinstance(theirs, list):
        return _shape_mismatches(theirs[0], ours[0], f"{where}[0]") if theirs and ours else []
    if isinstance(theirs, dict):
        missing = [f"{where}.{k}: missing" for k in theirs if k not in ours]
        return missing + [m for k in theirs if k in ours and k not in FREE_FORM
                          for m in _shape_mismatches(theirs[k], ours[k], f"{where}.{k}")]
    return []


@pytest.mark.parametrize(("path", "fixture"), [
    ("/clusters", "clusters"),
    ("/partitions", "partitions"),
    ("/partition/default/queues", "queues"),
    ("/partition/default/applications/active", "apps"),
    ("/partition/default/queue/root.a/applications", "apps"),
    ("/partition/default/nodes", "nodes"),
    ("/scheduler/node-utilizations", "node-utilizations"),
    ("/scheduler/healthcheck", "healthCheck"),
])
def test_bodies_carry_yunikorns_field_names(api, path, fixture) -> None:
    ours = api.get(path).json()
    assert ours, path
    theirs = WEB_DB[fixture]
    assert _keys(theirs) <= _keys(ours), (path, _keys(theirs) - _keys(ours))
    assert _shape_mismatches(theirs, ours) == [], path


def test_history_samples_carry_yunikorns_field_names(api) -> None:
    apps = api.get("/history/apps").json()
    containers = api.get("/history/containers").json()
    assert apps and _keys(WEB_DB["appHistory"]) == _keys(apps)
    assert containers and _keys(WEB_DB["containerHistory"]) == _keys(containers)
    # of the four applications, two run (Starting or Running): YuniKorn's running count
    assert apps[-1]["totalApplications"] == "2" and containers[-1]["totalContainers"] == "3"


def test_node_utilisation_is_bucketed_per_resource(api) -> None:
    (partition,) = api.get("/scheduler/node-utilizations").json()
    vcore = next(u for u in partition["utilizations"] if u["type"] == "vcore")
    buckets = {b["bucketName"]: b.get("nodeNames", []) for b in vcore["utilization"]}
    assert next(iter(buckets)) == "0-10%" and len(buckets) == 10
    for node in api.get("/partition/default/nodes").json():
        tenth = node["allocated"].get("vcore", 0) * 10 // node["capacity"]["vcore"]
        assert node["nodeID"] in buckets[f"{tenth * 10}-{tenth * 10 + 10}%"]


def test_one_queue_with_and_without_its_subtree(api) -> None:
    root = api.get("/partition/default/queue/root").json()
    assert root["queuename"] == "root" and "children" not in root
    assert "root.a" in root["childNames"]
    tree = api.get("/partition/default/queue/root?subtree").json()
    assert [c["queuename"] for c in tree["children"]] == sorted(root["childNames"])
    assert api.get("/partition/default/queue/root.nope").status_code == 404


def test_queue_names_with_odd_characters_work_double_encoded(api) -> None:
    segment = encode_name(ODD_QUEUE)
    queue = api.get(f"/partition/default/queue/{segment}").json()
    assert queue["queuename"] == ODD_QUEUE
    apps = api.get(f"/partition/default/queue/{segment}/applications").json()
    assert [a["applicationID"] for a in apps] == ["app-2"]
    one = api.get(f"/partition/default/queue/{segment}/application/app-2")
    assert one.status_code == 200 and one.json()["queueName"] == ODD_QUEUE
    wrong_queue = api.get("/partition/default/queue/root.a/application/app-2")
    assert wrong_queue.status_code == 404


def test_status_narrows_active_applications(api) -> None:
    everything = api.get("/partition/default/applications/active").json()
    states = {a["applicationID"]: a["applicationState"] for a in everything}
    assert states == {"app-1": "Running", "app-2": "Starting", "app-3": "Accepted"}
    rejected = api.get("/partition/default/applications/rejected").json()
    assert [a["applicationID"] for a in rejected] == ["app-4"]
    for status in ("running", "starting", "accepted", "new"):
        narrowed = api.get(f"/partition/default/applications/active?status={status}").json()
        assert [a["applicationID"] for a in narrowed] == sorted(
            k for k, v in states.items() if v.lower() == status)
    bad = api.get("/partition/default/applications/active?status=sideways")
    assert bad.status_code == 400 and "allowed" in bad.json()["message"]
    queue = api.get("/partition/default/queue/root.a/applications/active?status=running").json()
    assert [a["applicationID"] for a in queue] == [
        k for k in ("app-1",) if states[k] == "Running"]
    assert api.get("/partition/default/queue/root.a/applications/rejected").status_code == 400


def test_one_node_and_placement_rules(api) -> None:
    node = api.get("/partition/default/node/n1").json()
    assert node["nodeID"] == "n1" and _keys(WEB_DB["nodes"]) <= set(node)
    assert api.get("/partition/default/node/n9").status_code == 404
    rules = api.get("/partition/default/placementrules").json()
    assert rules == [{"name": "provided", "parameters": {"create": "true"}}]


def test_healthcheck_runs_real_checks(api, scheduler) -> None:
    report = api.get("/scheduler/healthcheck").json()
    names = {c["Name"] for c in report["HealthChecks"]}
    assert {"Tracked usage", "Orphan allocations", "Negative resources"} <= names
    assert report["Healthy"] is True, report
    # Usage recorded behind the scheduler's back is exactly what the check is for.
    assert scheduler.ugm().increase_tracked_resource("root.a", "ghost", {"vcore": 1},
                                                     UserGroup("sue", ["dev"]))
    report = api.get("/scheduler/healthcheck").json()
    failed = [c for c in report["HealthChecks"] if not c["Succeeded"]]
    assert report["Healthy"] is False
    assert [c["Name"] for c in failed] == ["Tracked usage"] and "sue" in failed[0][
        "DiagnosisMessage"]


def test_fullstatedump_has_every_section(api) -> None:
    dump = api.get("/fullstatedump").json()
    assert {"timestamp", "partitions", "applications", "nodes", "clusterInfo", "queues",
            "placementRules", "appHistory", "containerHistory"} <= set(dump)
    assert len(dump["applications"]) == 4 and dump["nodes"][0]["partitionName"] == "default"


def test_events_batch_pages_from_a_start(api, scheduler) -> None:
    scheduler.add_ask("app-3", Ask("small", {"vcore": 100}))
    scheduler.schedule()
    page = api.get("/events/batch").json()
    assert set(page) == {"InstanceUUID", "LowestID", "HighestID", "EventRecords"}
    records = page["EventRecords"]
    assert {r["type"] for r in records} >= {2, 3, 4, 5}  # APP, NODE, QUEUE, USERGROUP
    assert any(r["objectID"] == "app-3" and r["referenceID"] == "small" for r in records)
    later = api.get(f"/events/batch?start={records[-1]['id']}").json()["EventRecords"]
    assert [r["id"] for r in later] == [records[-1]["id"]]
    assert api.get("/events/batch?count=0").status_code == 400


def test_events_stream_sends_new_records_as_server_sent_events(api, scheduler) -> None:
    start = api.get("/events/batch").json()["HighestID"] + 1
    scheduler.add_ask("app-3", Ask("tiny", {"vcore": 10}))
    scheduler.schedule()
    with api.stream("GET", f"/events/stream?start={start}&count=2") as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        lines = [line for line in response.iter_lines() if line.startswith("data: ")]
    records = [json.loads(line[6:]) for line in lines[1:]]
    assert [r["id"] for r in records] == [start, start + 1]
    assert records[0]["objectID"] == "app-3" and records[0]["referenceID"] == "tiny"


def test_unknown_partition_node_and_state_are_4xx(api) -> None:
    assert api.get("/partition/nope/nodes").status_code == 404
    assert api.get("/partition/nope/queue/root").status_code == 404
    assert api.get("/partition/default/applications/sideways").status_code == 400
    assert api.get("/partition/default/application/nope").status_code == 404


def test_put_config_goes_through_update_config(scheduler) -> None:
    server: RestServer = serve(scheduler, admin_token="adm")
    bearer = {"Authorization": "Bearer adm"}
    try:
        with httpx.Client(base_url=server.url, timeout=10.0, headers=bearer) as admin:
            before = admin.get("/partition/default/queues").json()
            broken = admin.put("/config", content=CONFIG.replace("max: {vcore: 8000}",
                                                                 "max: {vcore: lots}"))
            assert broken.status_code == 400 and "vcore" in broken.json()["message"]
            assert admin.get("/partition/default/queues").json() == before
            grown = CONFIG + "          - name: b\n"
            assert admin.put("/config", content=grown).status_code == 204
            assert admin.get("/partition/default/queue/root.b").status_code == 200
            assert admin.get("/config").text == grown
    finally:
        server.stop()


def test_a_stream_resumes_after_its_last_event_id(api, scheduler) -> None:
    seen = api.get("/events/batch").json()["HighestID"]
    scheduler.add_ask("app-3", Ask("again", {"vcore": 10}))
    scheduler.schedule()
    with api.stream("GET", "/events/stream?count=1",
                    headers={"Last-Event-ID": str(seen)}) as response:
        data = [line for line in response.iter_lines() if line.startswith("data: ")]
    assert json.loads(data[1][6:])["id"] == seen + 1


def test_history_is_sampled_by_the_cycles_once_per_interval(scheduler) -> None:
    bridge = SchedulerBridge(scheduler, history_interval=1e-9)
    try:
        assert len(bridge.history()) == 1
        scheduler.schedule()
        scheduler.schedule()
        assert len(bridge.history()) == 3
    finally:
        bridge.close()
    slow = SchedulerBridge(scheduler, history_interval=3600.0)
    try:
        scheduler.schedule()
        assert len(slow.history()) == 1
    finally:
        slow.close()

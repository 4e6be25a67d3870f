"""YuniKorn-shaped views: the field names YuniKorn's REST API and web UI use."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from quotactor import UserGroup
from quotactor.scheduler import Ask, SchedulerOptions

WEB_DB = Path(__file__).resolve().parents[1] / "data" / "yunikorn-rest" \
    / "yunikorn-web-json-db.json"
SUE = UserGroup("sue", ["dev"])
CONFIG = """
partitions:
  - name: default
    placementrules: [{name: provided, create: true}]
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: a
            resources: {max: {vcore: 4, memory: 100}, guaranteed: {vcore: 2}}
            maxapplications: 5
            properties: {application.sort.policy: fair}
          - name: p
            parent: true
            childtemplate:
              maxapplications: 3
              resources: {max: {vcore: 2}}
"""


@pytest.fixture
def web_db() -> dict:
    return json.loads(WEB_DB.read_text())


@pytest.fixture
def busy(start_scheduler, clock):
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 8000, "memory": 1000}, attributes={"zone": "a"})
    s.submit("app-1", SUE, queue="root.a", asks=[Ask("k1", {"vcore": 1000, "memory": 10}),
                                                  Ask("k2", {"vcore": 9000}, priority=5)])
    clock.advance(2)
    s.schedule()
    return s


def test_the_queue_view_has_yunikorns_fields(busy, web_db) -> None:
    view = busy.queues_view()
    assert set(view) == set(web_db["queues"])
    a = next(c for c in view["children"] if c["queuename"] == "root.a")
    assert set(a) == set(web_db["queues"]["children"][0])
    assert a["maxResource"] == {"memory": 100, "vcore": 4000}
    assert a["allocatedResource"] == {"memory": 10, "vcore": 1000}
    assert a["pendingResource"] == {"vcore": 9000}
    assert a["absUsedCapacity"] == {"memory": 10, "vcore": 25}
    assert (a["runningApps"], a["maxRunningApps"], a["currentPriority"]) == (1, 5, 5)
    assert (a["isLeaf"], a["isManaged"], a["parent"]) == (True, True, "root")
    p = next(c for c in view["children"] if c["queuename"] == "root.p")
    assert p["template"] == {"maxApplications": 3, "maxResource": {"vcore": 2000},
                             "guaranteedResource": {}, "properties": {}}
    assert view["maxResource"] == {"memory": 1000, "vcore": 8000}


def test_the_application_view_has_yunikorns_fields(busy, web_db) -> None:
    view = busy.application_view("app-1")
    assert set(view) == set(web_db["apps"][0])
    assert set(view["allocations"][0]) >= set(web_db["apps"][0]["allocations"][0])
    assert view["applicationState"] == "Starting"
    assert view["queueName"] == "root.a"
    assert view["usedResource"] == {"memory": 10, "vcore": 1000}
    assert view["requests"][0]["allocationKey"] == "k2"
    assert view["requests"][0]["priority"] == "5"
    assert view["allocations"][0]["allocationDelay"] == 2 * 10**9
    assert [s["applicationState"] for s in view["stateLog"]] == ["New", "Accepted", "Starting"]


def test_applications_can_be_listed_by_state_or_state_group(busy) -> None:
    busy.submit("gone", SUE)
    assert [a["applicationID"] for a in busy.applications_view(state="active")] == ["app-1"]
    assert [a["applicationID"] for a in busy.applications_view(state="rejected")] == ["gone"]
    assert [a["applicationID"] for a in busy.applications_view(state="Starting")] == ["app-1"]
    assert len(busy.applications_view()) == 2
    with pytest.raises(ValueError):
        busy.applications_view(state="sleeping")


def test_the_node_view_has_yunikorns_fields(busy, web_db) -> None:
    (node,) = busy.nodes_view()
    assert set(node) == set(web_db["nodes"][0])
    assert node["nodeID"] == "n1" and node["attributes"] == {"zone": "a"}
    assert node["available"] == {"memory": 990, "vcore": 7000}
    assert node["utilized"] == {"memory": 1, "vcore": 12}
    assert [a["allocationKey"] for a in node["allocations"]] == ["k1"]


def test_the_partition_view_has_yunikorns_fields(busy, web_db) -> None:
    (partition,) = busy.partitions_view()
    assert set(partition) == set(web_db["partitions"][0])
    assert partition["applications"] == {"Starting": 1, "total": 1}
    assert partition["capacity"]["usedCapacity"] == {"memory": 10, "vcore": 1000}
    assert partition["totalNodes"] == 1 and partition["totalContainers"] == 1


def test_events_are_kept_per_application_and_bounded(start_scheduler) -> None:
    s = start_scheduler(CONFIG, options=SchedulerOptions(event_limit=5))
    s.submit("app-1", SUE, queue="root.a", asks=[Ask("k0", {"vcore": 100})])
    for i in range(1, 9):
        s.add_ask("app-1", Ask(f"k{i}", {"vcore": 100}))
    events = s.events("app-1")
    assert len(events) == 5
    assert events[-1].message == "k8 {vcore: 100} priority 0"


def test_the_first_asks_of_an_application_are_noted_once(start_scheduler) -> None:
    s = start_scheduler(CONFIG)
    s.submit("app-1", SUE, queue="root.a", asks=[Ask(f"k{i}", {"vcore": 100}) for i in range(9)])
    asked = [e.message for e in s.events("app-1") if e.kind == "ask"]
    assert asked == ["9 asks (k0 first), {vcore: 900} in all, priority 0"]

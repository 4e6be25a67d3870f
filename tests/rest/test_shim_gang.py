"""Gang scheduling, recovery and scheduler-initiated releases through the shim API."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from quotactor.client import Client, ServiceError
from quotactor.rest import RestServer, serve
from quotactor.scheduler import Scheduler, SchedulerOptions, VirtualClock

SHIM = "shim-secret"
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
def clock() -> VirtualClock:
    return VirtualClock(1_000.0)


@pytest.fixture
def scheduler(clock: VirtualClock) -> Iterator[Scheduler]:
    options = SchedulerOptions(shim_confirms_releases=True)
    with Scheduler.start(CONFIG, clock=clock, options=options) as running:
        yield running


@pytest.fixture
def server(scheduler: Scheduler) -> Iterator[RestServer]:
    running: RestServer = serve(scheduler, shim_token=SHIM)
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture
def shim(server: RestServer) -> Iterator[Client]:
    with Client(server.url, shim_token=SHIM, rm_id="rm-1") as client:
        yield client


def _user_usage(shim: Client, user: str = "sue") -> dict[str, int]:
    try:
        body = shim.user_usage(user)
    except ServiceError:
        return {}
    return dict(body["queues"].get("resourceUsage") or {})


def _queue_usage(shim: Client, path: str) -> dict[str, int]:
    return dict(shim.queue(path).get("allocatedResource") or {})


def test_a_gang_app_through_the_shim_replaces_placeholders_on_confirmation(
    shim, scheduler,
) -> None:
    shim.add_node("n1", {"vcore": 8000})
    answer = shim.add_application("g1", "sue", queue="root.b",
                                  task_groups=[("tg", 2, {"vcore": 2000})], gang_style="Hard")
    assert answer["accepted"] == [{"applicationID": "g1"}]
    scheduler.schedule()
    page = shim.decisions()
    placeholders = page.allocations()
    assert [a["placeholder"] for a in placeholders] == [True, True]
    assert {a["taskGroupName"] for a in placeholders} == {"tg"}
    assert _user_usage(shim) == _queue_usage(shim, "root.b") == {"vcore": 4000}

    shim.ask("g1", "real-0", {"vcore": 1500}, task_group="tg")
    scheduler.schedule()
    page = shim.decisions(after=page.position)
    [asked] = page.released()
    assert asked["terminationType"] == "PLACEHOLDER_REPLACED"
    assert page.allocations() == []  # the real one is booked only when the shim confirms
    assert _user_usage(shim) == _queue_usage(shim, "root.b") == {"vcore": 4000}
    asked_event = [e for e in shim.events()["EventRecords"]
                   if e["eventChangeDetail"] == 503 and e["referenceID"] == asked["allocationKey"]]
    assert len(asked_event) == 1  # ALLOC_REPLACED, on the event stream too

    done = shim.release("g1", asked["allocationKey"], termination="PLACEHOLDER_REPLACED")
    [made] = done["new"]
    assert (made["allocationKey"], made["placeholder"]) == ("real-0", False)
    assert _user_usage(shim) == _queue_usage(shim, "root.b") == {"vcore": 3500}
    page = shim.decisions(after=page.position)
    assert [a["allocationKey"] for a in page.allocations()] == ["real-0"]
    assert scheduler.pending_releases() == []
    # a replayed confirmation is harmless
    assert shim.release("g1", asked["allocationKey"],
                        termination="PLACEHOLDER_REPLACED")["released"] == []
    assert _user_usage(shim) == {"vcore": 3500}


def test_a_placeholder_timeout_asks_the_shim_to_release(shim, scheduler, clock) -> None:
    shim.add_node("n1", {"vcore": 2000})  # two of the three placeholders fit
    shim.add_application("g1", "sue", queue="root.b", task_groups=[("tg", 3, {"vcore": 1000})],
                         placeholder_timeout=60)
    scheduler.schedule()
    page = shim.decisions()
    assert len(page.allocations()) == 2
    clock.advance(61)
    scheduler.schedule()
    page = shim.decisions(after=page.position)
    asked = page.released()
    assert [a["terminationType"] for a in asked] == ["TIMEOUT", "TIMEOUT"]
    assert _user_usage(shim) == {"vcore": 2000}  # not before the shim confirms
    for release in asked:
        shim.release("g1", release["allocationKey"], termination="TIMEOUT")
    assert _user_usage(shim) == {}
    assert _queue_usage(shim, "root.b") == {}


def test_recovered_allocations_look_like_a_fresh_placement(shim, scheduler, clock) -> None:
    def run(client: Client, recover: bool) -> dict[str, Any]:
        client.add_node("n1", {"vcore": 8000})
        client.add_application("app", "sue", groups=["dev"], queue="root.a")
        for i in range(3):
            if recover:
                client.recover("app", f"t{i}", "n1", {"vcore": 1000})
            else:
                client.ask("app", f"t{i}", {"vcore": 1000})
        if not recover:
            scheduler.schedule()
        app = client.application("app")
        return {"user": _user_usage(client), "queue": _queue_usage(client, "root.a"),
                "state": app["applicationState"],
                "allocations": sorted((a["allocationKey"], a["nodeId"])
                                      for a in app["allocations"]),
                "node": client.nodes()[0]["allocated"]}

    fresh = run(shim, recover=False)
    for i in range(3):
        shim.release("app", f"t{i}")
    shim.remove_application("app")
    shim.remove_node("n1")
    clock.advance(3 * 24 * 3600 + 1)  # the completed application expires
    scheduler.schedule()
    recovered = run(shim, recover=True)
    assert recovered == fresh and fresh["user"] == {"vcore": 3000}
    # the queue's maximum (3000) holds no recovery back, and a replay changes nothing
    assert shim.recover("app", "t0", "n1", {"vcore": 1000})["rejectedAllocations"] == []
    assert _user_usage(shim) == {"vcore": 3000}
    refused = shim.recover("app", "t9", "nowhere", {"vcore": 1000})["rejectedAllocations"]
    assert [r["allocationKey"] for r in refused] == ["t9"] and "unknown node" in \
        refused[0]["reason"]


@pytest.mark.parametrize("app, field", [
    ({"placeholderAsk": {"resources": {"vcore": {"value": 1}}}}, "new.0.tags."),
    ({"tags": {"yunikorn.apache.org/task-groups": "[{\"name\": \"tg\"}]"}},
     "new.0.tags.yunikorn.apache.org/task-groups.0.minMember"),
    ({"tags": {"yunikorn.apache.org/task-groups":
               "[{\"name\": \"tg\", \"minMember\": 2, \"minResource\": {\"vcore\": 5}}]"},
      "placeholderAsk": {"resources": {"vcore": {"value": 5}}}}, "new.0.placeholderAsk"),
    ({"tags": {"yunikorn.apache.org/task-groups":
               "[{\"name\": \"tg\", \"minMember\": 1, \"minResource\": {\"vcore\": 5}}]"},
      "gangSchedulingStyle": "Firm"}, "new.0.gangSchedulingStyle"),
])
def test_a_malformed_gang_is_a_400_naming_the_field(shim, scheduler, app, field) -> None:
    body = {"applicationID": "g", "ugi": {"user": "sue"}, "queueName": "root.b", **app}
    with pytest.raises(ServiceError) as caught:
        shim.application_request(new=[body])
    assert caught.value.status_code == 400 and field in caught.value.description
    assert scheduler.applications() == []


@pytest.mark.slow
def test_usage_is_the_sum_of_live_allocations_with_gangs_from_several_threads(
    shim, scheduler, server,
) -> None:
    shim.add_node("n1", {"vcore": 64_000})

    def tenant(index: int) -> int:
        with Client(server.url, shim_token=SHIM, rm_id=f"rm-{index}") as client:
            app = f"g{index}"
            client.add_application(app, f"u{index}", queue="root.b",
                                   task_groups=[("tg", 2, {"vcore": 1000})])
            for k in range(2):
                client.ask(app, f"{app}-r{k}", {"vcore": 500}, task_group="tg")
            for k in range(3):
                client.ask(app, f"{app}-x{k}", {"vcore": 700})
            client.release(app, f"{app}-x0")  # withdraws an ask or frees an allocation
            return index

    with ThreadPoolExecutor(4) as pool:
        futures = [pool.submit(tenant, i) for i in range(8)]
        for _ in range(20):
            scheduler.schedule()
        assert sorted(f.result(timeout=60) for f in futures) == list(range(8))
    # every shim confirms the releases asked of it, then the books must balance
    for _ in range(3):
        scheduler.schedule()
        for request in scheduler.pending_releases():
            with Client(server.url, shim_token=SHIM, rm_id="any") as client:
                client.release(request.application_id, request.allocation_key,
                               termination=request.termination)
    scheduler.schedule()
    assert scheduler.pending_releases() == []
    for info in scheduler.applications():
        live = sum(a.resource.get("vcore", 0) for a in info.allocations)
        user = info.user.user
        assert _user_usage(shim, user).get("vcore", 0) == live, user
        assert all(not a.placeholder for a in info.allocations)
    total = sum(a.resource.get("vcore", 0) for i in scheduler.applications()
                for a in i.allocations)
    assert total > 0 and _queue_usage(shim, "root.b").get("vcore", 0) == total
    assert scheduler.nodes_view()[0]["allocated"].get("vcore", 0) == total


def test_recovered_placeholders_take_the_place_of_the_ones_the_scheduler_would_make(
    shim, scheduler,
) -> None:
    shim.add_node("n1", {"vcore": 8000})
    shim.add_application("g1", "sue", queue="root.b", task_groups=[("tg", 2, {"vcore": 1000})])
    for i in range(2):  # the keys the scheduler gave them before the restart
        answer = shim.recover("g1", f"g1-tg-{i}", "n1", {"vcore": 1000}, task_group="tg",
                              placeholder=True)
        assert answer["rejectedAllocations"] == []
    assert scheduler.schedule() == []  # nothing left to place
    info = scheduler.application("g1")
    assert sorted(a.key for a in info.allocations if a.placeholder) == ["g1-tg-0", "g1-tg-1"]
    assert _user_usage(shim) == {"vcore": 2000}
    refused = shim.recover("g1", "x", "n1", {"vcore": 1000}, task_group="other",
                           placeholder=True)["rejectedAllocations"]
    assert "task group" in refused[0]["reason"]

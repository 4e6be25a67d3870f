"""The shim API's edges, as a remote shim meets them: tags carried to allocations, running
applications in the history, bounded and typed fields, one name rule, positions across a
restart, and pages filtered before they are counted."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from quotactor import UserGroup
from quotactor.client import Client
from quotactor.rest import RestServer, serve
from quotactor.scheduler import Ask, Scheduler

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
"""
REFUSED = "root.a.under_a_leaf"
"""A queue no application may use: its start is refused, a decision for its shim."""
TAGS = {"kubernetes.io/meta/namespace": "team-a", "kubernetes.io/meta/podName": "pod-7"}


@pytest.fixture
def scheduler() -> Iterator[Scheduler]:
    with Scheduler.start(CONFIG) as running:
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


def _post(server: RestServer, path: str, body: Any) -> httpx.Response:
    return httpx.post(f"{server.url}/shim/{path}", json=body,
                      headers={"Authorization": f"Bearer {SHIM}"})


def test_an_allocation_keeps_its_asks_tags_in_views_and_decisions(shim, scheduler) -> None:
    shim.add_node("n1", {"vcore": 4000})
    shim.add_application("app-1", "sue", queue="root.a")
    shim.ask("app-1", "k1", {"vcore": 1000}, tags=TAGS)
    scheduler.schedule()
    (made,) = shim.decisions(after=0, wait=5.0).allocations()
    assert made["allocationTags"] == TAGS
    (shown,) = shim.application("app-1")["allocations"]
    assert shown["allocationTags"] == TAGS


def test_the_history_counts_running_applications_only(scheduler) -> None:
    """yunikorn-web charts `/history/apps` as "Running Applications" (Starting or Running)."""
    scheduler.add_node("n1", {"vcore": 4000})
    scheduler.submit("runs", UserGroup("sue"), queue="root.a",
                     asks=[Ask("k1", {"vcore": 1000})])
    scheduler.submit("waits", UserGroup("bob"), queue="root.a")  # accepted, nothing asked
    scheduler.submit("big", UserGroup("ann"), queue="root.a",
                     asks=[Ask("k1", {"vcore": 9000})])  # accepted, never fits
    scheduler.schedule()
    server = serve(scheduler)  # the history starts with a sample
    try:
        (sample,) = httpx.get(f"{server.url}/history/apps").json()
    finally:
        server.stop()
    assert sample["totalApplications"] == "1"


@pytest.mark.parametrize(("path", "body", "field"), [
    ("nodes", {"nodes": [{"nodeID": "n", "action": "CREATE", "schedulableResource": {
        "resources": {"vcore": {"value": True}}}}]}, "value"),
    ("allocations", {"allocations": [{"allocationKey": "k", "applicationID": "a",
                                      "priority": True, "resourcePerAlloc": {
                                          "resources": {"vcore": {"value": 1}}}}]}, "priority"),
    ("nodes", {"nodes": [], "rmID": "r" * 200_000}, "rmID"),
    ("applications", {"new": [{"applicationID": "a\u0000b", "ugi": {"user": "sue"}}]},
     "applicationID"),
    ("applications", {"new": [{"applicationID": "a", "ugi": {"user": "sue"},
                               "queueName": "root." + "q" * 5000}]}, "queueName"),
    ("applications", {"new": [{"applicationID": "a", "ugi": {"user": "sue"},
                               "tags": {"t": "v" * 70_000}}]}, "tags"),
    ("applications", {"new": [{"applicationID": "a", "ugi": {"user": "sue"},
                               "executionTimeoutMilliSeconds": -1}]},
     "executionTimeoutMilliSeconds"),
    ("applications", {"new": [{"applicationID": "a", "ugi": {"user": "élève"}}]}, "user"),
    ("applications", {"new": [{"applicationID": "a", "ugi": {"user": "a\u0000b"}}]}, "user"),
    ("allocations", {"releases": {"allocationsToRelease": [{
        "applicationID": "a", "allocationKey": "k", "message": "m" * 70_000}]}}, "message"),
])
def test_a_field_out_of_bounds_or_of_the_wrong_type_is_a_400_naming_it(
    server, scheduler, path: str, body: Any, field: str,
) -> None:
    before = scheduler.applications_view(), scheduler.nodes_view()
    response = _post(server, path, body)
    assert response.status_code == 400, response.text
    assert field in response.json()["description"]
    assert len(response.text) < 5000  # the value is not repeated back whole
    assert (scheduler.applications_view(), scheduler.nodes_view()) == before


def test_every_user_the_shim_accepts_can_be_looked_up(shim, scheduler) -> None:
    shim.add_node("n1", {"vcore": 4000})
    users = ("sue", "x@corp.com", "system:serviceaccount:ns:sa", "dev/ann", "svc$")
    for user in users:
        shim.add_application(f"app-{user}", user, queue="root.a")
        shim.ask(f"app-{user}", "k1", {"vcore": 1})
    scheduler.schedule()
    for user in users:
        assert shim.user_usage(user)["userName"] == user


def test_a_position_of_an_earlier_run_is_reported_missed_and_restarted(scheduler) -> None:
    first = serve(scheduler, shim_token=SHIM)
    try:
        with Client(first.url, shim_token=SHIM, rm_id="rm-1") as shim:
            shim.add_application("app-x", "sue", queue=REFUSED)  # refused: a decision
            old = shim.decisions(after=0)
            assert old.records and not old.restarted and not old.missed
    finally:
        first.stop()
    second = serve(scheduler, shim_token=SHIM)  # the service restarted
    try:
        with Client(second.url, shim_token=SHIM, rm_id="rm-1") as shim:
            shim.add_application("app-y", "sue", queue=REFUSED)
            for stale in (old.position, 999_999):
                page = shim.decisions(after=stale)
                assert page.restarted and page.missed
                assert [r["applicationID"] for r in page.rejected_applications()] == ["app-y"]
            fresh = shim.decisions(after=0)
            assert not fresh.restarted and not fresh.missed
            again = shim.decisions(after=fresh.position)
            assert again.records == () and not again.restarted and not again.missed
    finally:
        second.stop()


def test_a_page_filtered_by_rmid_counts_only_that_shims_decisions(server) -> None:
    with Client(server.url, shim_token=SHIM, rm_id="rm-1") as one, \
            Client(server.url, shim_token=SHIM, rm_id="rm-2") as two:
        for i in range(5):
            two.add_application(f"two-{i}", "bob", queue=REFUSED)
        one.add_application("one", "sue", queue=REFUSED)
        page = one.decisions(after=0, limit=1)
        assert [r["applicationID"] for r in page.rejected_applications()] == ["one"]
        assert one.decisions(after=page.position, limit=1).records == ()

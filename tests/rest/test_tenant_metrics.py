"""Per-tenant metrics of a served scheduler: YuniKorn's queue names, bounded user labels."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from quotactor import UserGroup
from quotactor.rest import serve
from quotactor.rest.scheduler.metrics import TenantSelection
from quotactor.scheduler import Ask, Scheduler

CONFIG = """
partitions:
  - name: default
    placementrules: [{name: provided, create: true}]
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: a
            resources: {max: {slots: 100}}
            limits:
              - limit: each user
                users: ["*"]
                maxresources: {slots: 2}
"""
USERS = 30


@pytest.fixture
def scheduler() -> Iterator[Scheduler]:
    with Scheduler.start(CONFIG) as running:
        running.add_node("n1", {"slots": 1000})
        for i in range(USERS):
            # user i asks for i % 4 + 1 slots; the limit allows 2.
            running.submit(f"app-{i}", UserGroup(f"user{i:02}", ["tenants"]), queue="root.a",
                           asks=[Ask(f"k{j}", {"slots": 1}) for j in range(i % 4 + 1)])
        running.schedule()
        running.schedule()
        yield running


def _samples(scheduler: Scheduler, **options: object) -> dict[str, list[tuple[dict[str, str],
                                                                                float]]]:
    server = serve(scheduler, **options)
    try:
        text = httpx.get(f"{server.url}/metrics", timeout=10.0).text
    finally:
        server.stop()
    found: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found.setdefault(sample.name, []).append((sample.labels, sample.value))
    return found


def test_queue_metrics_use_yunikorns_names(scheduler) -> None:
    found = _samples(scheduler)
    queue = {(s["queue"], s["state"], s["resource"]): v
             for s, v in found["yunikorn_queue_resource"]}
    allocated = sum(min(i % 4 + 1, 2) for i in range(USERS))
    assert queue["root.a", "allocated", "slots"] == allocated
    assert queue["root.a", "max", "slots"] == 100
    assert queue["root.a", "pending", "slots"] == sum(i % 4 + 1 for i in range(USERS)) - allocated
    apps = {(s["queue"], s["state"]): v for s, v in found["yunikorn_queue_app"]}
    assert apps["root.a", "running"] == USERS


def test_pending_asks_say_why_they_wait(scheduler) -> None:
    found = _samples(scheduler)
    reasons = {s["reason"]: v for s, v in found["quotactor_pending_asks"]}
    assert reasons == {"user_resources": sum(max(0, i % 4 + 1 - 2) for i in range(USERS))}


def test_users_are_bounded_to_the_top_by_default(scheduler) -> None:
    found = _samples(scheduler, tenants=TenantSelection(top=5))
    users = {s["name"] for s, _ in found["quotactor_tenant_resource_usage"] if s["kind"] == "user"}
    assert len(users) == 5
    omitted = {s["kind"]: v for s, v in found["quotactor_tenants_omitted"]}
    assert omitted["user"] == USERS - 5
    limits = {(s["name"], s["queue"]): v for s, v in found["quotactor_tenant_resource_limit"]
              if s["kind"] == "user"}
    assert set(limits.values()) == {2.0} and {q for _, q in limits} == {"root.a"}


@pytest.mark.slow
def test_every_user_only_when_asked_and_none_when_told(scheduler) -> None:
    everyone = _samples(scheduler, tenants=TenantSelection(mode="all"))
    running = {s["name"]: v for s, v in everyone["quotactor_tenant_running_applications"]
               if s["kind"] == "user"}
    assert len(running) == USERS and set(running.values()) == {1.0}
    nobody = _samples(scheduler, tenants=TenantSelection(mode="none"))
    assert "quotactor_tenant_resource_usage" not in nobody


def test_allocation_latency_is_observed(scheduler) -> None:
    server = serve(scheduler)
    try:
        scheduler.submit("late", UserGroup("zed", []), queue="root.a",
                         asks=[Ask("k", {"slots": 1})])
        scheduler.schedule()
        text = httpx.get(f"{server.url}/metrics", timeout=10.0).text
    finally:
        server.stop()
    counts = [line for line in text.splitlines()
              if line.startswith("quotactor_allocation_latency_seconds_count")]
    assert counts and float(counts[0].rsplit(" ", 1)[1]) >= 1.0


def test_a_scrape_stays_small_with_thousands_of_users() -> None:
    many = 3000
    with Scheduler.start(CONFIG) as scheduler:
        ugm = scheduler.ugm()
        for i in range(many):  # usage alone is enough to make a user a tenant
            assert ugm.increase_tracked_resource("root.a", f"app-{i}", {"slots": 1 + i % 2},
                                                 UserGroup(f"u{i}", ["g"]))
        server = serve(scheduler)
        try:
            text = httpx.get(f"{server.url}/metrics", timeout=30.0).text
        finally:
            server.stop()
    users = {line.split('name="', 1)[1].split('"', 1)[0] for line in text.splitlines()
             if line.startswith("quotactor_tenant_") and 'kind="user"' in line}
    assert len(users) == 20
    assert f'quotactor_tenants_omitted{{kind="user",partition="default"}} {many - 20}.0' in text
    assert len(text) < 64 * 1024, len(text)

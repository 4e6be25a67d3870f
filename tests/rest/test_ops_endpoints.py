"""Health report, Prometheus metrics and the OpenAPI document."""

from __future__ import annotations

import httpx
from prometheus_client.openmetrics import parser as openmetrics
from prometheus_client.parser import text_string_to_metric_families

from quotactor import UserGroup
from quotactor.ugm import UserGroupManager


def test_healthcheck_reports_every_partition_like_yunikorn(api) -> None:
    response = api.get("/scheduler/healthcheck")
    assert response.status_code == 200
    report = response.json()
    assert report["Healthy"] is True
    assert report["HealthChecks"]
    for check in report["HealthChecks"]:
        assert set(check) == {"Name", "Succeeded", "Description", "DiagnosisMessage"}
        assert check["Succeeded"] is True
    assert "1 users" in report["HealthChecks"][0]["DiagnosisMessage"]


def test_negative_usage_makes_the_report_unhealthy(seeded, api) -> None:
    assert seeded.increase_tracked_resource("root.a", "app9", {"memory": -5}, UserGroup("neg"))
    report = api.get("/scheduler/healthcheck").json()
    assert report["Healthy"] is False
    failed = [c for c in report["HealthChecks"] if not c["Succeeded"]]
    assert [c["Name"] for c in failed] == ["Negative resources"]
    assert "neg" in failed[0]["DiagnosisMessage"]


def test_a_stopped_manager_is_reported_not_raised(serve) -> None:
    manager = UserGroupManager.start(partition="default", timeout=5.0)
    server = serve({"default": manager})
    manager.stop()
    report = httpx.get(f"{server.url}/scheduler/healthcheck").json()
    assert report["Healthy"] is False
    assert report["HealthChecks"][0]["Name"] == "Manager responsive"


def _families(text: str) -> dict[str, list[tuple[str, dict[str, str], float]]]:
    families: dict[str, list[tuple[str, dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(text):
        assert family.name not in families, f"{family.name} appears twice"
        families[family.name] = [(s.name, s.labels, s.value) for s in family.samples]
    return families


def test_metrics_are_valid_prometheus_text_for_every_partition(seeded, serve) -> None:
    gpu = UserGroupManager.start(partition="gpu", timeout=20.0)
    try:
        gpu.increase_tracked_resource("root.a", "app1", {"m": 1}, UserGroup("sue"))
        server = serve({"default": seeded, "gpu": gpu})
        response = httpx.get(f"{server.url}/metrics")
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
        text = response.text
    finally:
        gpu.stop()
    helps = [line for line in text.splitlines() if line.startswith("# HELP ")]
    assert len(helps) == len(set(helps)), "each family is described once"
    families = _families(text)
    accepted = {s[1]["partition"]: s[2] for s in families["quotactor_increases"]
                if s[0] == "quotactor_increases_total" and s[1]["outcome"] == "accepted"}
    assert accepted == {"default": 2.0, "gpu": 1.0}
    tracked = {(s[1]["partition"], s[1]["kind"]): s[2] for s in families["quotactor_tracked"]}
    assert tracked == {("default", "user"): 1.0, ("default", "group"): 1.0,
                       ("gpu", "user"): 1.0, ("gpu", "group"): 0.0}
    for name in ("quotactor_decreases", "quotactor_config_reloads",
                 "quotactor_increase_decision_seconds", "quotactor_live_actors"):
        assert name in families


def test_metrics_of_one_partition_equal_its_own_exposition(seeded, serve) -> None:
    server = serve({"default": seeded})
    served = _families(httpx.get(f"{server.url}/metrics").text)
    own = _families(seeded.render_metrics().decode())
    assert set(served) == set(own)
    for name, samples in own.items():
        if not name.endswith("_created") and name != "quotactor_increase_decision_seconds":
            assert served[name] == samples


def test_metrics_speak_openmetrics_when_asked_and_survive_odd_accept_headers(api) -> None:
    response = api.get("/metrics", headers={"Accept": "application/openmetrics-text"})
    assert response.headers["content-type"].startswith("application/openmetrics-text")
    names = {f.name for f in openmetrics.text_string_to_metric_families(response.text)}
    assert {"quotactor_increases", "quotactor_tracked"} <= names
    for accept in ("text/plain; version=abc", "application/openmetrics-text; version=x", ";,;"):
        response = api.get("/metrics", headers={"Accept": accept})
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/plain")
        assert _families(response.text)


def test_the_openapi_document_describes_every_endpoint(api) -> None:
    document = api.get("/openapi.json").json()
    operations = {(path, method) for path, item in document["paths"].items() for method in item}
    assert operations == {
        ("/ws/v1/partition/{partition}/usage/users", "get"),
        ("/ws/v1/partition/{partition}/usage/user/{user}", "get"),
        ("/ws/v1/partition/{partition}/usage/groups", "get"),
        ("/ws/v1/partition/{partition}/usage/group/{group}", "get"),
        ("/ws/v1/validate-conf", "post"),
        ("/ws/v1/config", "get"),
        ("/ws/v1/config", "put"),
        ("/ws/v1/scheduler/healthcheck", "get"),
        ("/ws/v1/metrics", "get"),
    }
    schemas = document["components"]["schemas"]
    assert {"UserUsage", "GroupUsage", "QueueUsage", "ErrorInfo", "ValidateConfResponse",
            "SchedulerHealth"} <= set(schemas)
    assert schemas["UserUsage"]["required"] == ["userName"]
    assert set(schemas["QueueUsage"]["properties"]) == {
        "queuePath", "resourceUsage", "runningApplications", "maxResources", "maxApplications",
        "children"}
    users = document["paths"]["/ws/v1/partition/{partition}/usage/users"]["get"]["responses"]
    assert users["200"]["content"]["application/json"]["schema"]["items"]["$ref"].endswith(
        "/UserUsage")
    assert "422" not in users and {"400", "404"} <= set(users)
    put = document["paths"]["/ws/v1/config"]["put"]
    assert "application/yaml" in put["requestBody"]["content"]

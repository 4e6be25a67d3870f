"""`/scheduler/healthcheck` and `/metrics`: what operators and Prometheus poll.

Both read through the facade in worker threads; the health report asks each manager for its
counters and looks for negative usage (possible: increases may carry negative deltas).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import APIRouter, Request, Response
from prometheus_client.openmetrics.exposition import CONTENT_TYPE_LATEST as OPENMETRICS

from quotactor.rest.coalesce import json_response, render_json
from quotactor.rest.schemas import SchedulerHealth
from quotactor.rest.state import HealthChecks, rest_state
from quotactor.rest.ugm.metrics import PROMETHEUS_TEXT, render_all
from quotactor.ugm import UserGroupManager

__all__ = ["router"]

router = APIRouter(tags=["operations"])


def _negative(snapshots: list[dict[str, Any]], key: str) -> list[str]:
    return [
        snapshot[key] for snapshot in snapshots
        if any(v < 0 for v in snapshot.get("queues", {}).get("resourceUsage", {}).values())
    ]


def _checks(partition: str, manager: UserGroupManager) -> list[dict[str, Any]]:
    try:
        stats = manager.stats()
        negative = _negative(manager.users_usage(), "userName") + _negative(
            manager.groups_usage(), "groupName")
    except Exception as exc:  # any failure to answer is exactly what this check reports
        return [{"Name": "Manager responsive", "Succeeded": False,
                 "Description": f"The user group manager of partition {partition} answers",
                 "DiagnosisMessage": f"{type(exc).__name__}: {exc}"}]
    return [
        {"Name": "Manager responsive", "Succeeded": True,
         "Description": f"The user group manager of partition {partition} answers",
         "DiagnosisMessage": f"{stats['users']} users, {stats['groups']} groups, "
                             f"{stats['inflight']} operations in flight"},
        {"Name": "Negative resources", "Succeeded": not negative,
         "Description": f"Check for negative root usage of users and groups in {partition}",
         "DiagnosisMessage": f"Users and groups with negative usage: {sorted(negative)}"},
    ]


@router.get(
    "/scheduler/healthcheck",
    response_model=None,
    responses={200: {"model": SchedulerHealth, "description": "the report (also when unhealthy)"}},
    summary="Health of every served partition",
)
def healthcheck(request: Request) -> Response:
    state = rest_state(request)
    report = state.snapshots.get("health", lambda: render_json(
        _report(state.managers, state.health_checks)))
    return json_response(report)


def _report(managers: Mapping[str, UserGroupManager], extra: HealthChecks | None
            ) -> dict[str, Any]:
    checks = [check for name, manager in managers.items() for check in _checks(name, manager)]
    if extra is not None:
        try:
            checks.extend(extra())
        except Exception as exc:  # a scheduler that cannot answer is unhealthy, not a 500
            checks.append({"Name": "Scheduler responsive", "Succeeded": False,
                           "Description": "The scheduler answers its health checks",
                           "DiagnosisMessage": f"{type(exc).__name__}: {exc}"})
    if not checks:
        checks = [{"Name": "Partitions served", "Succeeded": False,
                   "Description": "At least one partition is served",
                   "DiagnosisMessage": "no partition is served"}]
    return {"Healthy": all(c["Succeeded"] for c in checks), "HealthChecks": checks}


@router.get(
    "/metrics",
    response_class=Response,
    responses={200: {"content": {PROMETHEUS_TEXT: {"schema": {"type": "string"}},
                                 OPENMETRICS: {"schema": {"type": "string"}}},
                     "description": "Prometheus text, or OpenMetrics if the Accept header asks"}},
    summary="Prometheus metrics of every served partition",
)
def metrics(request: Request) -> Response:
    state = rest_state(request)
    body, content_type = render_all(state.managers, request.headers.get("accept"),
                                    state.collectors)
    return Response(body, headers={"Content-Type": content_type})

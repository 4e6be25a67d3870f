"""The JSON shapes of the API, for the OpenAPI document.

Responses are built by the facade (plain dicts in YuniKorn's DAO shape) and sent as they are:
these models only describe them, so clients and fuzzers know what to expect, and no request
pays for re-validating a snapshot it just took. Field names follow YuniKorn's JSON.
"""

from __future__ import annotations

from pydantic import BaseModel, Field
from pydantic.json_schema import SkipJsonSchema

__all__ = [
    "ErrorInfo",
    "GroupUsage",
    "HealthCheck",
    "SchedulerHealth",
    "QueueUsage",
    "UserUsage",
    "ValidateConfResponse",
]


Omitted = SkipJsonSchema[None]
"""Marks a field absent when empty: the schema allows leaving it out, not `null`."""


class QueueUsage(BaseModel):
    """Usage of one user or group in one queue and, recursively, its children.

    YuniKorn's `ResourceUsageDAOInfo`; empty fields are omitted (never null), as YuniKorn's
    `omitempty` does.
    """

    queuePath: str = Field(description="full queue path, e.g. `root.a`")
    resourceUsage: dict[str, int] | Omitted = Field(
        None, description="usage by resource name (memory in bytes, vcore in millicores)")
    runningApplications: list[str] | Omitted = Field(
        None, description="ids of the applications running in this queue, sorted")
    maxResources: dict[str, int] | Omitted = Field(
        None, description="the limit in force here, if any resource is limited")
    maxApplications: int | Omitted = Field(
        None, description="the running-application limit in force here, if any")
    children: list[QueueUsage] | Omitted = Field(
        None, description="child queues with usage or limits, sorted by queuePath")


class UserUsage(BaseModel):
    """A tracked user (YuniKorn's `UserResourceUsageDAOInfo`)."""

    userName: str
    groups: dict[str, str] | Omitted = Field(
        None, description="application id -> the group its usage also counts against")
    queues: QueueUsage | Omitted = None


class GroupUsage(BaseModel):
    """A tracked group, `*` being the shared wildcard group (`GroupResourceUsageDAOInfo`)."""

    groupName: str
    applications: list[str] | Omitted = Field(None, description="applications linked, sorted")
    queues: QueueUsage | Omitted = None


class ValidateConfResponse(BaseModel):
    """The verdict on a config; `reason` is empty when it is allowed."""

    allowed: bool
    reason: str = Field("", description="`LOCATION: REASON` of the first problem found")


class HealthCheck(BaseModel):
    """One check of the health report, named as YuniKorn names its fields."""

    Name: str
    Succeeded: bool
    Description: str
    DiagnosisMessage: str


class SchedulerHealth(BaseModel):
    """YuniKorn's health report: healthy when every check succeeded."""

    Healthy: bool
    HealthChecks: list[HealthCheck]


class ErrorInfo(BaseModel):
    """Every error (YuniKorn's `YAPIError`)."""

    status_code: int
    message: str
    description: str

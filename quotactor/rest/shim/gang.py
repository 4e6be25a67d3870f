"""Gangs through the shim API: an application's task groups, style and placeholder timeout.

YuniKorn's `AddApplicationRequest` carries a gang's total (`placeholderAsk`), its style
(`gangSchedulingStyle`) and, from the k8shim, the placeholder timeout
(`executionTimeoutMilliSeconds`); the task groups themselves live in the k8shim's pod
annotation. quotactor's scheduler creates the placeholders from the task groups, so a shim
declares them in the application tag of the same name (`TASK_GROUPS_TAG`); the placeholders
then reach the shim as new allocations with `placeholder: true` and their `taskGroupName`.
"""

from __future__ import annotations

from pydantic import ValidationError

from quotactor.core.errors import InvalidRequest
from quotactor.rest.http.errors import ApiError
from quotactor.rest.shim import models as si
from quotactor.scheduler import Gang, TaskGroup
from quotactor.scheduler.objects.gang import DEFAULT_PLACEHOLDER_TIMEOUT, TASK_GROUPS_TAG

__all__ = ["gang_of"]


def gang_of(app: si.AddApplicationRequest, field: str) -> Gang | None:
    """The gang of an `AddApplicationRequest`: task groups from its tag, YuniKorn's style and
    placeholder timeout (`executionTimeoutMilliSeconds`); `placeholderAsk`, when given, must
    be their total. None without task groups (and then no gang field may be set)."""
    text = next((v for k, v in app.tags.items() if k.lower() == TASK_GROUPS_TAG), None)
    if text is None:
        if app.placeholderAsk is not None or app.gangSchedulingStyle:
            raise ApiError(400, "Invalid request", f"{field}.tags.{TASK_GROUPS_TAG}: a gang "
                           "(placeholderAsk, gangSchedulingStyle) needs its task groups")
        return None
    groups = _task_groups(text, f"{field}.tags.{TASK_GROUPS_TAG}")
    style = app.gangSchedulingStyle or "Soft"
    if style not in ("Soft", "Hard"):
        raise ApiError(400, "Invalid request",
                       f"{field}.gangSchedulingStyle: must be Soft or Hard, got {style!r}")
    timeout = app.executionTimeoutMilliSeconds / 1000 if app.executionTimeoutMilliSeconds > 0 \
        else DEFAULT_PLACEHOLDER_TIMEOUT
    gang = Gang(groups, style="Hard" if style == "Hard" else "Soft", timeout=timeout)
    if app.placeholderAsk is not None:
        total = dict(gang.placeholder_total.items())
        asked = {k: v for k, v in app.placeholderAsk.quantities().items() if v}
        if asked != total:
            raise ApiError(400, "Invalid request", f"{field}.placeholderAsk: {asked} is not "
                           f"the task groups' total {total}")
    return gang


def _task_groups(text: str, field: str) -> tuple[TaskGroup, ...]:
    try:
        parsed = si.TASK_GROUPS.validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ApiError(400, "Invalid request",
                       f"{field}{'.' + where if where else ''}: {first['msg']}") from None
    try:
        return tuple(TaskGroup(g.name, g.minMember, g.minResource) for g in parsed)
    except InvalidRequest as exc:
        raise ApiError(400, "Invalid request", f"{field}: {exc}") from None

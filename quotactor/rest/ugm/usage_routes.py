"""`/partition/{partition}/usage/...`: YuniKorn's user and group usage endpoints.

Handlers are plain functions, so FastAPI runs them in worker threads: they block on the facade
(a snapshot through the actors) without ever holding up the event loop. Whole lists are shared
between concurrent requests (`coalesce`), one snapshot at a time. Path parameters arrive
raw (see `http.names`) and are decoded and checked here: bad escape 400, unknown partition 404,
invalid name 400, unknown user or group 404, in that order.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Request, Response
from fastapi.responses import JSONResponse

from quotactor.rest.coalesce import json_response, render_json
from quotactor.rest.http.errors import ApiError
from quotactor.rest.http.names import decode_segment, group_name, user_name
from quotactor.rest.schemas import ErrorInfo, GroupUsage, UserUsage
from quotactor.rest.state import call_facade, manager_for, rest_state

__all__ = ["router"]

router = APIRouter(tags=["usage"])

PartitionParam = Annotated[str, Path(
    description="partition name, percent-encoded; an unknown partition is a 404",
    examples=["default"])]
UserParam = Annotated[str, Path(
    description="user name, percent-encoded once or twice (`a%2Fb` or `a%252Fb` for `a/b`)",
    examples=["user1", "x%40corp.com"])]
GroupParam = Annotated[str, Path(
    description="group name, percent-encoded once or twice; `*` (or `%2A`) is the shared group",
    examples=["tester", "%2A"])]

_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorInfo, "description": "bad escape or invalid name"},
    404: {"model": ErrorInfo, "description": "unknown partition, user or group"},
    503: {"model": ErrorInfo, "description": "the partition is shutting down"},
}


@router.get(
    "/partition/{partition}/usage/users",
    response_model=None,
    responses={200: {"model": list[UserUsage], "description": "every tracked user, sorted"},
               **_ERRORS},
    summary="Usage of every tracked user",
)
def users_usage(request: Request, partition: PartitionParam) -> Response:
    name = decode_segment(partition)
    manager = manager_for(request, name)
    return json_response(rest_state(request).snapshots.get(
        ("users", name), lambda: render_json(call_facade(manager.users_usage))))


@router.get(
    "/partition/{partition}/usage/user/{user}",
    response_model=None,
    responses={200: {"model": UserUsage, "description": "the user"}, **_ERRORS},
    summary="Usage of one user",
)
def user_usage(request: Request, partition: PartitionParam, user: UserParam) -> JSONResponse:
    manager = manager_for(request, decode_segment(partition))
    name = user_name(user)
    found = call_facade(lambda: manager.user_usage(name))
    if found is None:
        raise ApiError(404, "User not found", f"user {name!r} is not tracked")
    return JSONResponse(found)


@router.get(
    "/partition/{partition}/usage/groups",
    response_model=None,
    responses={200: {"model": list[GroupUsage],
                     "description": "every tracked group, `*` included, sorted"},
               **_ERRORS},
    summary="Usage of every tracked group",
)
def groups_usage(request: Request, partition: PartitionParam) -> Response:
    name = decode_segment(partition)
    manager = manager_for(request, name)
    return json_response(rest_state(request).snapshots.get(
        ("groups", name), lambda: render_json(call_facade(manager.groups_usage))))


@router.get(
    "/partition/{partition}/usage/group/{group}",
    response_model=None,
    responses={200: {"model": GroupUsage, "description": "the group"}, **_ERRORS},
    summary="Usage of one group",
)
def group_usage(request: Request, partition: PartitionParam, group: GroupParam) -> JSONResponse:
    manager = manager_for(request, decode_segment(partition))
    name = group_name(group)
    found = call_facade(lambda: manager.group_usage(name))
    if found is None:
        raise ApiError(404, "Group not found", f"group {name!r} is not tracked")
    return JSONResponse(found)

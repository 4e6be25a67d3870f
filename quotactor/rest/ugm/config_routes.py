"""`/validate-conf` and `/config`: checking, reading and replacing the scheduler config.

Validation parses untrusted YAML, which costs CPU; it runs in a worker thread, on a body
already bounded in size and read on the loop (`body.request_body`), and its nesting is checked
before the loader composes it (`quotactor.config.depth`).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.responses import JSONResponse

from quotactor.config import load_scheduler_config
from quotactor.rest.auth import require_admin
from quotactor.rest.http.body import request_body
from quotactor.rest.http.errors import ApiError
from quotactor.rest.schemas import ErrorInfo, ValidateConfResponse
from quotactor.rest.state import manager_for, rest_state

__all__ = ["router"]

router = APIRouter(tags=["config"])

YAML_MEDIA_TYPE = "application/yaml"
_QUEUE_NAME = "^[a-zA-Z0-9_#@/:-]{1,64}$"
"""YuniKorn's queue name syntax (the validator's check, stated for clients)."""
_CONFIG_DOCUMENT: dict[str, Any] = {
    "type": "object",
    "description": "a YuniKorn scheduler config document (queues.yaml): at least one "
                   "partition, each with its queues; the validator decides the rest",
    "required": ["partitions"],
    "properties": {"partitions": {"type": "array", "minItems": 1, "items": {
        "type": "object",
        "required": ["queues"],
        "properties": {"queues": {"type": "array", "items": {
            "type": "object",
            "required": ["name"],
            "properties": {"name": {"type": "string", "pattern": _QUEUE_NAME}},
        }}},
    }}},
}
_YAML_BODY: dict[str, Any] = {
    "requestBody": {
        "required": False,
        "description": "the config as YAML, UTF-8 (an empty body is an empty document)",
        "content": {YAML_MEDIA_TYPE: {"schema": _CONFIG_DOCUMENT}},
    }
}
_YAML_RESPONSE: dict[str, Any] = {"content": {YAML_MEDIA_TYPE: {"schema": _CONFIG_DOCUMENT}}}

Body = Annotated[bytes, Depends(request_body)]


@router.post(
    "/validate-conf",
    response_model=None,
    responses={200: {"model": ValidateConfResponse,
                     "description": "the verdict (an invalid config is still a 200)"},
               408: {"model": ErrorInfo}, 413: {"model": ErrorInfo}},
    openapi_extra=_YAML_BODY,
    summary="Validate a config without applying it",
)
def validate_conf(body: Body) -> JSONResponse:
    from quotactor.config import ConfigError

    try:
        load_scheduler_config(body)
    except ConfigError as exc:
        return JSONResponse({"allowed": False, "reason": str(exc)})
    return JSONResponse({"allowed": True, "reason": ""})


@router.get(
    "/config",
    response_class=Response,
    responses={200: {**_YAML_RESPONSE, "description": "the config text in force"},
               404: {"model": ErrorInfo, "description": "unknown partition, or no config"},
               409: {"model": ErrorInfo, "description": "partitions run different configs"}},
    summary="The running config, as the YAML it was loaded from",
)
def get_config(
    request: Request,
    partition: Annotated[str | None, Query(
        description="the partition whose config to return; needed only when the served "
        "partitions run different configs")] = None,
) -> Response:
    if partition is not None:
        managers = [manager_for(request, partition)]
    else:
        managers = list(rest_state(request).managers.values())
    configs = [m.config for m in managers]
    sources = sorted({c.source for c in configs if c is not None and c.source is not None})
    if not sources:
        raise ApiError(404, "No config loaded", "the partitions run without a loaded config")
    if len(sources) > 1:
        raise ApiError(409, "Partitions run different configs",
                       "ask for one with ?partition=NAME")
    return Response(sources[0], media_type=YAML_MEDIA_TYPE)


@router.put(
    "/config",
    status_code=204,
    response_class=Response,
    dependencies=[Depends(require_admin)],
    responses={204: {"description": "applied to every served partition"},
               400: {"model": ErrorInfo, "description": "invalid config; nothing changed"},
               401: {"model": ErrorInfo}, 403: {"model": ErrorInfo},
               408: {"model": ErrorInfo}, 413: {"model": ErrorInfo}},
    openapi_extra=_YAML_BODY,
    summary="Replace the running config (needs the admin token)",
)
def put_config(request: Request, body: Body) -> Response:
    from quotactor.config import ConfigError

    try:
        rest_state(request).apply_config(body)
    except ConfigError as exc:
        raise ApiError(400, str(exc)) from None
    return Response(status_code=204)

"""One error shape for every failure, YuniKorn's `YAPIError`, and never a traceback.

Clients written for YuniKorn parse `{"status_code", "message", "description"}`; answering every
failure (our own, routing's, validation's) in that shape keeps them working, and mapping
unexpected exceptions to a bare 500 keeps internals out of responses (they go to the log).
"""

from __future__ import annotations

from collections.abc import Mapping

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from quotactor.logs import get_logger
from quotactor.rest.openapi import allowed_methods

__all__ = ["ApiError", "error_response", "install_error_handlers"]

log = get_logger()

_REASONS = {
    400: "Bad request",
    401: "Authentication required",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    408: "Request timeout",
    409: "Conflict",
    413: "Request body too large",
    503: "Service unavailable",
}


class ApiError(Exception):
    """A failure the client should see as it is: status, short message, longer description."""

    def __init__(
        self,
        status_code: int,
        message: str,
        description: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.message = message
        self.description = message if description is None else description
        self.headers = dict(headers or {})


def error_response(
    status_code: int,
    message: str,
    description: str | None = None,
    headers: Mapping[str, str] | None = None,
) -> JSONResponse:
    """The YuniKorn error body; `description` repeats `message` unless told otherwise."""
    body = {
        "status_code": status_code,
        "message": message,
        "description": message if description is None else description,
    }
    return JSONResponse(body, status_code=status_code, headers=dict(headers or {}))


async def _api_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    return error_response(exc.status_code, exc.message, exc.description, exc.headers)


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    message = _REASONS.get(exc.status_code, "HTTP error")
    headers = dict(exc.headers or {})
    if exc.status_code == 404:
        description = f"no route for {request.method} {request.url.path}"
    elif exc.status_code == 405:
        description = f"{request.method} is not allowed on {request.url.path}"
        allowed = allowed_methods(request.app, request.url.path)
        if allowed:
            headers["Allow"] = ", ".join(allowed)
    else:
        description = str(exc.detail)
    return error_response(exc.status_code, message, description, headers)


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    problems = "; ".join(
        f"{'.'.join(str(part) for part in error.get('loc', ()))}: {error.get('msg', '')}"
        for error in exc.errors()
    )
    return error_response(400, "Invalid request", problems or "invalid request")


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.error("rest.unexpected_error", method=request.method, path=request.url.path,
              exc_info=exc)
    return error_response(500, "Internal error", "the server failed; see its log")


def install_error_handlers(app: FastAPI) -> None:
    """Route every kind of failure through the one error shape."""
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(Exception, _unexpected)

"""Shim bodies are JSON whatever the request's Content-Type says.

`curl -d '{...}'` labels its body `application/x-www-form-urlencoded`, and many HTTP libraries
in other languages send no type at all; YuniKorn's own REST API reads JSON regardless. FastAPI
would take such a body for a form and answer 400, so the shim's routes use this route class,
which presents every body to FastAPI as `application/json` (a body that is not JSON is still a
400 naming the problem). It also reads the body first, within the server's body deadline
(`request_body`), so a client trickling its body gets a 408 instead of holding the connection.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute

from quotactor.rest.http.body import request_body

__all__ = ["JsonBodyRoute"]

_JSON = (b"content-type", b"application/json")


class JsonBodyRoute(APIRoute):
    """An `APIRoute` whose requests always declare a JSON body."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handle = super().get_route_handler()

        async def as_json(request: Request) -> Response:
            headers = [(k, v) for k, v in request.scope["headers"] if k != b"content-type"]
            as_sent = Request({**request.scope, "headers": [*headers, _JSON]}, request.receive)
            await request_body(as_sent)  # kept by the request for the handler to parse
            return await handle(as_sent)

        return as_json

"""Request bodies: bounded in size, read within a deadline, and JSON whatever their type says.

`BodyLimit` refuses a body larger than the bound before a handler buffers it: a client
announcing a large body gets a 413 at once from its `Content-Length`; one streaming a chunked
body is cut off when the running count passes the bound. Either way no more than the bound
(plus one network read) is ever held in memory, whatever the endpoint. A request framed twice,
with both `Content-Length` and `Transfer-Encoding`, is a 400 and its connection is closed: a
proxy in front may have read the other framing, and whatever follows on the connection would
be read differently by the two (request smuggling).

`request_body` reads the body on the event loop within the server's body deadline, so a client
that trickles its body gets a 408 instead of holding a connection (and, were the read done in a
worker, a worker thread) for ever.

`JsonBodyRoute` (the shim API's routes): `curl -d '{...}'` labels its body
`application/x-www-form-urlencoded`, and many HTTP libraries in other languages send no type at
all; YuniKorn's own REST API reads JSON regardless. FastAPI would take such a body for a form
and answer 400, so these routes present every body as `application/json` (a body that is not
JSON is still a 400 naming the problem), read within the deadline first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from quotactor.rest.http.errors import ApiError, error_response
from quotactor.rest.state import rest_state

__all__ = ["BodyLimit", "BodyTooLarge", "JsonBodyRoute", "request_body"]



class BodyTooLarge(ApiError):
    """Raised from `receive` when a streamed body passes the bound; answered as a 413."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, "Request body too large",
                         f"request bodies are limited to {limit} bytes")


class BodyLimit:
    """ASGI middleware refusing HTTP request bodies longer than `max_bytes`."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        names = {name for name, _ in scope["headers"]}
        if b"content-length" in names and b"transfer-encoding" in names:
            response = error_response(
                400, "Invalid request", "a request may not carry both Content-Length and "
                "Transfer-Encoding", {"Connection": "close"})
            await response(scope, receive, send)
            return
        for name, value in scope["headers"]:
            if name == b"content-length" and value.isdigit() and int(value) > self.max_bytes:
                too_large = BodyTooLarge(self.max_bytes)
                response = error_response(413, too_large.message, too_large.description,
                                          {"Connection": "close"})
                await response(scope, receive, send)
                return
        received = 0

        async def counting_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise BodyTooLarge(self.max_bytes)
            return message

        await self.app(scope, counting_receive, send)


async def request_body(request: Request) -> bytes:
    """The whole body (a FastAPI dependency); 408 when it does not arrive in time."""
    timeout = rest_state(request).settings.body_timeout
    try:
        async with asyncio.timeout(timeout):
            return await request.body()
    except TimeoutError:
        raise ApiError(408, "Request timeout",
                       f"the request body did not arrive within {timeout:g} s",
                       {"Connection": "close"}) from None


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

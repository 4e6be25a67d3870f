"""A bound on request bodies, enforced before a handler buffers them.

A client announcing a large body is refused at once (413) from its `Content-Length`; one
streaming a chunked body is cut off when the running count passes the bound. Either way no
more than the bound (plus one network read) is ever held in memory, whatever the endpoint.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from quotactor.rest.http.errors import ApiError, error_response

__all__ = ["BodyLimit", "BodyTooLarge"]


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

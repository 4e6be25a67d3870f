"""One structured log line per request: method, path, status, duration, client.

Written through the library's non-configuring structlog logger at info level, so it shows only
where the embedding process (or `quotactor serve --log-level info`) asks for it; servers can
also turn it off (`access_log=False`). A pure ASGI middleware, so streaming responses are
logged when they end, with the status they started with. Fields a client chooses (the path,
the method) are cut to `MAX_FIELD` characters, so a request cannot write a line of its size.
"""

from __future__ import annotations

import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from quotactor.logs import get_logger

__all__ = ["MAX_FIELD", "AccessLog"]

log = get_logger()

MAX_FIELD = 1024
"""Characters of a client-chosen field written to the log; the rest is counted, not written."""


def _capped(text: str) -> str:
    if len(text) <= MAX_FIELD:
        return text
    return f"{text[:MAX_FIELD]}...({len(text) - MAX_FIELD} more characters)"


class AccessLog:
    """ASGI middleware logging `rest.request` once per HTTP request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500  # what the client sees if the app fails before answering

        async def send_logged(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_logged)
        finally:
            client = scope.get("client")
            log.info("rest.request", method=_capped(scope["method"]),
                     path=_capped(scope.get("path", "")),
                     status=status, ms=round((time.perf_counter() - started) * 1000, 2),
                     client=f"{client[0]}:{client[1]}" if client else "")

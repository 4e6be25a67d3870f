"""uvicorn's h11 protocol with a deadline for request headers (uvicorn has none).

uvicorn closes idle keep-alive connections, but a client that connects and then sends its
headers a byte at a time (slowloris) keeps a connection, and a slot of `limit_concurrency`, for
as long as it likes. Here each connection must deliver a complete request head within
`header_timeout` of connecting or of its previous response, or it is closed.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["with_header_timeout"]


class _HeaderDeadline(H11Protocol):
    header_timeout: float = 10.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        if not self.transport.is_closing():
            self._deadline = self.loop.call_later(self.header_timeout, self._expire, self.scope)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self, scope_when_armed: object) -> None:
        self._deadline = None
        waiting = self.cycle is None or self.cycle.response_complete
        if waiting and self.scope is scope_when_armed and not self.transport.is_closing():
            self.transport.close()


def with_header_timeout(seconds: float) -> type[H11Protocol]:
    """An h11 protocol class closing connections whose request head is late by `seconds`."""
    if seconds <= 0:
        raise ValueError("the header timeout must be positive")
    return type("H11WithHeaderDeadline", (_HeaderDeadline,), {"header_timeout": seconds})

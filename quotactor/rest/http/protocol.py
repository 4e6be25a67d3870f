"""uvicorn's h11 protocol with a deadline for request headers and a cap per client address.

uvicorn closes idle keep-alive connections, but a client that connects and then sends its
headers a byte at a time (slowloris) keeps a connection, and a slot of `limit_concurrency`, for
as long as it likes. Here each connection must deliver a complete request head within
`header_timeout` of connecting or of its previous response, or it is closed. And one address
may hold at most `per_client` connections at once (further ones are closed as they arrive), so
a client hoarding idle connections cannot fill the server's slots and deny service to others.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["with_header_timeout"]


class _HeaderDeadline(H11Protocol):
    header_timeout: float = 10.0
    per_client: int = 256
    open_per_client: dict[str, int]
    """Connections held per peer address; a fresh dict per server (see `with_header_timeout`),
    only touched from that server's event loop."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._peer: str | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        peer = transport.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) and peer else ""
        held = self.open_per_client.get(address, 0)
        if held >= self.per_client:
            transport.close()
            return
        self.open_per_client[address] = held + 1
        self._peer = address
        self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._peer is not None:
            left = self.open_per_client.get(self._peer, 1) - 1
            if left > 0:
                self.open_per_client[self._peer] = left
            else:
                self.open_per_client.pop(self._peer, None)
            self._peer = None
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


def with_header_timeout(seconds: float, per_client: int = 256) -> type[H11Protocol]:
    """An h11 protocol class closing connections whose request head is late by `seconds`, and
    connections beyond `per_client` from one address."""
    if seconds <= 0:
        raise ValueError("the header timeout must be positive")
    if per_client < 1:
        raise ValueError("per_client must be at least 1")
    return type("H11WithHeaderDeadline", (_HeaderDeadline,),
                {"header_timeout": seconds, "per_client": per_client, "open_per_client": {}})

"""Reading a request body with a deadline, on the event loop, before a handler thread starts.

The size is bounded by `BodyLimit`; the deadline here stops a client that trickles its body
from holding a connection (and, were the read done in a worker, a worker thread) for ever.
"""

from __future__ import annotations

import asyncio

from fastapi import Request

from quotactor.rest.http.errors import ApiError
from quotactor.rest.state import rest_state

__all__ = ["request_body"]


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

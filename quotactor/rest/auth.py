"""Who may change the running config: holders of the admin token, and nobody without one.

Writes are off unless a token is configured (403), a request without credentials gets a 401
that says how to authenticate, a wrong token a 403. Tokens are compared in constant time.
"""

from __future__ import annotations

import hmac

from fastapi import Request

from quotactor.rest.errors import ApiError
from quotactor.rest.state import rest_state

__all__ = ["require_admin"]


async def require_admin(request: Request) -> None:
    """A FastAPI dependency: returns when the request presents the admin token, else raises."""
    token = rest_state(request).settings.admin_token
    if token is None:
        raise ApiError(403, "Config updates are disabled",
                       "the server was started without an admin token")
    header = request.headers.get("authorization")
    if header is None:
        raise ApiError(401, "Authentication required",
                       "send the admin token as 'Authorization: Bearer TOKEN'",
                       {"WWW-Authenticate": 'Bearer realm="quotactor"'})
    scheme, _, presented = header.partition(" ")
    # Header values reach us as latin-1 text; encoding them back gives the bytes sent.
    if scheme.lower() != "bearer" or not hmac.compare_digest(
        presented.strip().encode("latin-1"), token.encode("utf-8")
    ):
        raise ApiError(403, "Forbidden", "the admin token presented is not valid")

"""Who may write: the admin token changes the config, the shim token drives the scheduler.

The two are separate secrets, so a shim (which runs beside every cluster front end) cannot
replace the config. Each kind of write is off unless its token is configured (403), a request
without credentials gets a 401 that says how to authenticate, a wrong token a 403. Tokens are
compared in constant time.
"""

from __future__ import annotations

import hmac

from fastapi import Request

from quotactor.rest.http.errors import ApiError
from quotactor.rest.state import rest_state

__all__ = ["require_admin", "require_shim"]


async def require_admin(request: Request) -> None:
    """A FastAPI dependency: returns when the request presents the admin token, else raises."""
    token = rest_state(request).settings.admin_token
    if token is None:
        raise ApiError(403, "Config updates are disabled",
                       "the server was started without an admin token")
    _require(request, token, "admin")


async def require_shim(request: Request) -> None:
    """A FastAPI dependency: returns when the request presents the shim token, else raises."""
    token = rest_state(request).settings.shim_token
    if token is None:
        raise ApiError(403, "The shim API is disabled",
                       "the server was started without a shim token")
    _require(request, token, "shim")


def _require(request: Request, token: str, kind: str) -> None:
    header = request.headers.get("authorization")
    if header is None:
        raise ApiError(401, "Authentication required",
                       f"send the {kind} token as 'Authorization: Bearer TOKEN'",
                       {"WWW-Authenticate": 'Bearer realm="quotactor"'})
    scheme, _, presented = header.partition(" ")
    # Header values reach us as latin-1 text; encoding them back gives the bytes sent.
    if scheme.lower() != "bearer" or not hmac.compare_digest(
        presented.strip().encode("latin-1"), token.encode("utf-8")
    ):
        raise ApiError(403, "Forbidden", f"the {kind} token presented is not valid")

"""Route on the raw request path, so an encoded `/` stays inside its segment.

Servers hand applications a percent-decoded `path`, in which `/usage/user/a%2Fb` has become
`/usage/user/a/b` and no longer matches `{user}`. This middleware puts the raw path (as
received, still encoded) in its place before routing; handlers decode each segment themselves
(`names.decode_segment`). Static segments must therefore be sent unencoded, as every client does.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["RawPathRouting"]


class RawPathRouting:
    """ASGI middleware: `scope["path"]` becomes the raw path of HTTP requests."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            raw = scope.get("raw_path")
            if raw is not None:
                scope = dict(scope)
                scope["path"] = raw.decode("latin-1")
        await self.app(scope, receive, send)

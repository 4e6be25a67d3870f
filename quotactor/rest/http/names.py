"""Names taken from raw path segments, decoded the way YuniKorn's clients encode them.

A user may be called `a/b` or `x@corp.com`, so routing on the decoded path would split or mangle
names: servers hand applications a percent-decoded `path`, in which `/usage/user/a%2Fb` has
become `/usage/user/a/b` and no longer matches `{user}`. `RawPathRouting` therefore puts the raw
path (as received, still encoded) in its place before routing (static segments must be sent
unencoded, as every client does), and each segment is decoded here: percent-decoded once, and
once more if the result still holds a `%` (YuniKorn's own clients double-encode). A `%` not
followed by two hex digits is a bad escape, as in Go's `url.QueryUnescape`, and is reported with
the same text.
"""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Receive, Scope, Send

from quotactor.core.identity import GROUP_NAME, USER_NAME, WILDCARD
from quotactor.rest.http.errors import ApiError

__all__ = ["RawPathRouting", "decode_segment", "group_name", "user_name"]

_HEX = frozenset(b"0123456789abcdefABCDEF")


def _unescape(text: str) -> str:
    """Percent-decode `text` strictly: bad escapes and invalid UTF-8 raise a 400."""
    data = text.encode("utf-8")
    out = bytearray()
    i = 0
    while i < len(data):
        byte = data[i]
        if byte != ord("%"):
            out.append(byte)
            i += 1
            continue
        escape = data[i : i + 3]
        if len(escape) < 3 or escape[1] not in _HEX or escape[2] not in _HEX:
            shown = json.dumps(escape.decode("utf-8", "replace"))
            raise ApiError(400, f"invalid URL escape {shown}")
        out.append(int(escape[1:], 16))
        i += 3
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError:
        raise ApiError(400, "invalid UTF-8 in path segment") from None


def decode_segment(raw: str) -> str:
    """One raw path segment as the name it stands for (decoded twice if double-encoded)."""
    name = _unescape(raw)
    if "%" in name:
        name = _unescape(name)
    return name


def user_name(raw: str) -> str:
    """The user named by a raw segment; 400 unless it matches YuniKorn's user syntax."""
    name = decode_segment(raw)
    if USER_NAME.fullmatch(name) is None:
        raise ApiError(400, "Invalid user name", f"not a valid user name: {name!r}")
    return name


def group_name(raw: str) -> str:
    """The group named by a raw segment; `*` (the shared wildcard group) is accepted too.

    YuniKorn answers 400 for `*` although it lists that group; we let clients read it.
    """
    name = decode_segment(raw)
    if name != WILDCARD and GROUP_NAME.fullmatch(name) is None:
        raise ApiError(400, "Invalid group name", f"not a valid group name: {name!r}")
    return name


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

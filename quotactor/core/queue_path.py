"""Queue paths: `root`, `root.a`, `root.a.b`."""

from __future__ import annotations

import re
from functools import lru_cache

from quotactor.core.errors import InvalidRequest

__all__ = ["ROOT", "QUEUE_NAME", "parse_queue_path", "ancestors"]

ROOT = "root"
QUEUE_NAME = re.compile(r"^[a-zA-Z0-9_:#/@-]{1,64}$")
"""YuniKorn's queue name syntax, one segment of a path."""


@lru_cache(maxsize=65536)
def _parse(path: str) -> tuple[str, ...]:
    parts = tuple(path.split("."))
    if parts[0] != ROOT:
        raise InvalidRequest(f"queue path {path!r} must start with {ROOT!r}")
    for part in parts[1:]:
        if not QUEUE_NAME.match(part):
            raise InvalidRequest(
                f"queue path {path!r} has an invalid queue name {part!r}"
                " (1-64 of a-z A-Z 0-9 _ : # / @ -)"
            )
    return parts


def parse_queue_path(path: object) -> tuple[str, ...]:
    """Split a queue path into its names, root first; `InvalidRequest` if malformed.

    Parsing is cached: schedulers send the same few hundred paths millions of times.
    """
    if not isinstance(path, str) or not path:
        raise InvalidRequest(f"queue path must be a non-empty string, got {path!r}")
    return _parse(path)


def ancestors(parts: tuple[str, ...]) -> list[str]:
    """Every path from the leaf up to root: `root.a.b` -> [`root.a.b`, `root.a`, `root`].

    The joins are cached like `parse_queue_path` (every increase needs them twice, for the
    user and the group); each caller gets its own list.
    """
    return list(_ancestors(parts))


@lru_cache(maxsize=65536)
def _ancestors(parts: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(".".join(parts[:i]) for i in range(len(parts), 0, -1))

"""Reading MCAD's JSON documents: text, bytes or an already decoded mapping."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from quotactor.quotatree.errors import QuotaTreeError

__all__ = ["JsonSource", "load_object", "require_int"]

JsonSource = str | bytes | Mapping[str, Any]


def load_object(source: JsonSource, what: str) -> Mapping[str, Any]:
    """Decode `source` to a JSON object, or raise `QuotaTreeError` naming `what` was read."""
    if isinstance(source, Mapping):
        return source
    try:
        value = json.loads(source)
    except (ValueError, TypeError) as exc:
        raise QuotaTreeError(f"{what}: invalid JSON: {exc}") from None
    if not isinstance(value, Mapping):
        raise QuotaTreeError(f"{what}: expected a JSON object")
    return value


def require_int(value: Any, where: str, minimum: int | None = None) -> int:
    """A JSON integer (never a bool, which Python counts as an int)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise QuotaTreeError(f"{where}: expected an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise QuotaTreeError(f"{where}: must be at least {minimum}, got {value}")
    return value

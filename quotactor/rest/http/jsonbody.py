"""JSON bodies rendered once as bytes, so one snapshot can answer many requests."""

from __future__ import annotations

import json
from typing import Any

from fastapi import Response

__all__ = ["json_response", "render_json"]


def render_json(value: Any) -> bytes:
    """Compact UTF-8 JSON, as Starlette's `JSONResponse` renders it."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":")
                      ).encode("utf-8")


def json_response(body: bytes) -> Response:
    return Response(body, media_type="application/json")

"""The OpenAPI document, corrected where FastAPI's defaults would mislead clients.

FastAPI announces a 422 validation error on every operation with parameters; ours are all
strings that cannot fail validation, and request problems are answered as 400 with the common
error body, so those entries (and their schemas) are removed. The document is also the table
from which a 405's `Allow` header is built: routing itself names only the first route's methods.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI

__all__ = ["allowed_methods", "use_corrected_openapi"]


def use_corrected_openapi(app: FastAPI) -> None:
    """Make `app` serve the corrected document (built once, on first request)."""
    generate: Callable[[], dict[str, Any]] = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = generate()
            for operations in schema.get("paths", {}).values():
                for operation in operations.values():
                    operation.get("responses", {}).pop("422", None)
            components = schema.get("components", {}).get("schemas", {})
            for name in ("HTTPValidationError", "ValidationError"):
                components.pop(name, None)
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def allowed_methods(app: FastAPI, path: str) -> list[str]:
    """The methods the document lists for `path` (a raw request path), sorted."""
    table: list[tuple[re.Pattern[str], list[str]]] | None = getattr(
        app.state, "allow_table", None)
    if table is None:
        table = [
            (re.compile("^" + re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(template)) + "$"),
             [method.upper() for method in operations])
            for template, operations in app.openapi().get("paths", {}).items()
        ]
        app.state.allow_table = table
    return sorted({method for pattern, methods in table if pattern.match(path)
                   for method in methods})

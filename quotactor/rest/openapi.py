"""The OpenAPI document, corrected where FastAPI's defaults would mislead clients, and stating
every rule the server enforces, so that a client generated from it sends nothing it refuses.

FastAPI announces a 422 validation error on every operation with parameters; ours are all
strings that cannot fail validation, and request problems are answered as 400 with the common
error body, so those entries (and their schemas) are removed. Added: the user and group name
syntax of path segments, the partitions a request may name (the served ones, read when the
document is asked for: a config reload may add some), and the 413 of every operation that
takes a body. The document is also the table from which a 405's `Allow` header is built:
routing itself names only the first route's methods.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Collection
from typing import Any

from fastapi import FastAPI

from quotactor.core.identity import GROUP_NAME, USER_NAME

__all__ = ["allowed_methods", "partition_pattern", "use_corrected_openapi"]

DEFAULT_PARTITION = "default"
"""The partition an empty `partitionName` means (the scheduler's default)."""
PATH_NAMES = {"user": USER_NAME.pattern,
              "group": "^(\\*|" + GROUP_NAME.pattern.removeprefix("^").removesuffix("$") + ")$"}
"""Path parameters named after users and groups: the syntax their (decoded) value follows."""
BODY_PARTITIONS = ("partitionName",)
"""Body fields naming a partition, in every schema that has them."""


def partition_pattern(names: Collection[str]) -> str:
    """What a `partitionName` may be: a served partition, optionally after YuniKorn's `[rmID]`
    prefix, or empty for the default partition when there is one."""
    alternatives = "|".join(re.escape(name) for name in sorted(names))
    optional = "?" if DEFAULT_PARTITION in names else ""
    return f"^(\\[[^\\]\\x00-\\x1f\\x7f]*\\])?({alternatives}){optional}$"


def use_corrected_openapi(app: FastAPI, partitions: Callable[[], Collection[str]]) -> None:
    """Make `app` serve the corrected document: built once, on first request, with the
    partitions named as `partitions()` gives them when the document is asked for."""
    generate: Callable[[], dict[str, Any]] = app.openapi
    base: dict[str, Any] = {}
    named: list[tuple[str, ...]] = []  # the partitions the document in use names

    def openapi() -> dict[str, Any]:
        if not base:
            base.update(_corrected(generate()))
        names = tuple(sorted(partitions()))
        if app.openapi_schema is None or named != [names]:
            app.openapi_schema = _with_partitions(base, names)
            named[:] = [names]
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def _corrected(schema: dict[str, Any]) -> dict[str, Any]:
    for operations in schema.get("paths", {}).values():
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            responses.pop("422", None)
            if "requestBody" in operation and "413" not in responses:
                responses["413"] = {
                    "description": "the body is larger than the server takes (1 MiB unless "
                    "configured)",
                    "content": {"application/json": {
                        "schema": {"$ref": "#/components/schemas/ErrorInfo"}}}}
            for parameter in operation.get("parameters", ()):
                pattern = PATH_NAMES.get(parameter["name"])
                if parameter.get("in") == "path" and pattern is not None:
                    parameter.setdefault("schema", {})["pattern"] = pattern
    components = schema.get("components", {}).get("schemas", {})
    for name in ("HTTPValidationError", "ValidationError"):
        components.pop(name, None)
    return schema


def _with_partitions(base: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    schema = copy.deepcopy(base)
    pattern = partition_pattern(names)
    for component in schema.get("components", {}).get("schemas", {}).values():
        for field in BODY_PARTITIONS:
            spec = component.get("properties", {}).get(field)
            if spec is not None:
                spec["pattern"] = pattern
    for operations in schema.get("paths", {}).values():
        for operation in operations.values():
            for parameter in operation.get("parameters", ()):
                if parameter["name"] == "partition" and parameter.get("in") == "path":
                    parameter.setdefault("schema", {})["enum"] = list(names)
    return schema


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

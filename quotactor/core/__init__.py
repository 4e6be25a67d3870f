"""Pure domain logic: values, queue paths, queue trackers, limit lookup. No threads, no I/O.

The hot modules may run compiled by mypyc: `compiled` says whether they do, `build_note` why
(see `quotactor.core.native`). Both builds behave the same; the compiled one is faster.
"""

from pathlib import Path

from quotactor.core.native import load_core

compiled, build_note = load_core(__name__, Path(__file__).resolve().parent)
"""True when the mypyc-compiled modules run; the one-line note `quotactor --version` shows."""

from quotactor.core.errors import InvalidRequest  # noqa: E402 (after the build is chosen)
from quotactor.core.identity import UserGroup  # noqa: E402
from quotactor.core.queue_path import parse_queue_path  # noqa: E402
from quotactor.core.resources import (  # noqa: E402
    QuantityError,
    Resource,
    parse_quantity,
    parse_resource_map,
)

__all__ = [
    "InvalidRequest",
    "QuantityError",
    "Resource",
    "UserGroup",
    "build_note",
    "compiled",
    "parse_quantity",
    "parse_queue_path",
    "parse_resource_map",
]

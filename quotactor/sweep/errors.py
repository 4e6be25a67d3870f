"""The one error type of the sweep package: a sweep file or option that cannot be used.

Its message names the place at fault (the parameter, the workload, the key of the sweep file),
so the command line can print it as one line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["SweepError", "check_keys"]


class SweepError(ValueError):
    """A sweep that cannot run as written; nothing has been replayed or written."""


def check_keys(mapping: Mapping[Any, Any], keys: set[str], where: str) -> None:
    """A `SweepError` listing the keys of `mapping` that are not in `keys` (typos fail loudly)."""
    unknown = sorted(str(k) for k in mapping if k not in keys)
    if unknown:
        raise SweepError(f"{where}: unknown key{'s' if len(unknown) > 1 else ''} "
                         f"{', '.join(unknown)} (known: {', '.join(sorted(keys))})")

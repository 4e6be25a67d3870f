"""The quota tree as a JSON-able dict: what the REST server and `--json` show.

Built from snapshots only, so it can be computed inside the actor and handed out safely.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from quotactor.core.resources import Resource
from quotactor.elastic.spec import ROOT_QUOTA
from quotactor.elastic.status import QuotaStatus

__all__ = ["quota_tree_view"]


def quota_tree_view(statuses: Sequence[QuotaStatus], total: Resource,
                    available: Resource) -> dict[str, Any]:
    """`{"total", "available", "tree"}`, the tree nested through each quota's `children`.

    Every resource is a `{name: int}` dict in engine units (cpu in millicores, memory in
    bytes); a name missing from `runtime` means 0.
    """
    by_name = {status.name: status for status in statuses}

    def build(name: str) -> dict[str, Any]:
        status = by_name[name]
        entry = status.to_dict()
        entry["children"] = [build(child) for child in status.children]
        return entry

    return {
        "total": total.to_dict(),
        "available": available.to_dict(),
        "tree": build(ROOT_QUOTA),
    }

"""`QuotaStatus`: an immutable snapshot of one quota's declaration and derived figures.

Decisions (admission, victims, revocation) and views are computed from snapshots, never from
the engine's mutable nodes, so they are pure functions that tests can feed directly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from quotactor.core.resources import Resource
from quotactor.elastic.spec import ROOT_QUOTA, QuotaSpec, effective_weight

__all__ = ["QuotaStatus"]


@dataclass(frozen=True, slots=True)
class QuotaStatus:
    """One quota as the engine sees it right now.

    Attributes:
        spec: the declaration.
        depth: 0 for the root, 1 for first-level quotas.
        children: names of the child quotas, sorted.
        request: Koordinator's request (children's limited requests plus own pods, raised to
            min when the quota does not lend).
        limited_request: what the parent sees, min(request, max).
        used: requests of the assigned pods below it.
        non_preemptible_used: the part of its own `used` from non-preemptible pods.
        runtime: what it may use now.
        effective_min: its min as scaled for the runtime split.
        pods: number of its own pods (pending and assigned).
    """

    spec: QuotaSpec
    depth: int
    children: tuple[str, ...]
    request: Resource
    limited_request: Resource
    used: Resource
    non_preemptible_used: Resource
    runtime: Resource
    effective_min: Resource
    pods: int

    @property
    def name(self) -> str:
        return self.spec.name

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of one quota (without its children)."""
        spec = self.spec
        return {
            "name": spec.name,
            "parent": None if spec.name == ROOT_QUOTA else spec.parent_name,
            "isParent": spec.is_parent,
            "allowLentResource": spec.allow_lent,
            "min": spec.min.to_dict(),
            "max": spec.max.to_dict(),
            "sharedWeight": dict(sorted(effective_weight(spec).items())),
            "effectiveMin": self.effective_min.to_dict(),
            "request": self.request.to_dict(),
            "limitedRequest": self.limited_request.to_dict(),
            "runtime": self.runtime.to_dict(),
            "used": self.used.to_dict(),
            "nonPreemptibleUsed": self.non_preemptible_used.to_dict(),
            "pods": self.pods,
        }

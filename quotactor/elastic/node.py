"""`QuotaNode`: the engine's mutable record of one quota group (private to the engine).

Each node keeps the raw sums of its own pods and the sums handed up by its children, so a
change anywhere is applied as a delta along one path instead of re-adding a subtree.
"""

from __future__ import annotations

from quotactor.core.resources import Resource
from quotactor.elastic.spec import QuotaSpec, effective_weight

__all__ = ["QuotaNode"]

_EMPTY = Resource()


class QuotaNode:
    """Derived figures of one quota; only the engine writes them."""

    __slots__ = (
        "children",
        "children_demand",
        "children_used",
        "contribution",
        "depth",
        "effective_min",
        "own_np_used",
        "own_request",
        "own_used",
        "parent",
        "pods",
        "request",
        "runtime",
        "spec",
        "used",
        "weight",
    )

    def __init__(self, spec: QuotaSpec, parent: QuotaNode | None) -> None:
        self.spec = spec
        self.weight = effective_weight(spec)
        self.parent = parent
        self.depth: int = 0 if parent is None else parent.depth + 1
        self.children: dict[str, QuotaNode] = {}
        self.pods: set[str] = set()
        self.own_request = _EMPTY
        """Sum of the requests of this quota's own pods, unmasked."""
        self.own_used = _EMPTY
        self.own_np_used = _EMPTY
        """Sum of the requests of its assigned non-preemptible pods, unmasked."""
        self.children_demand = _EMPTY
        """Sum of the children's contributions (limited requests)."""
        self.children_used = _EMPTY
        self.request = _EMPTY
        self.contribution = _EMPTY
        self.used = _EMPTY
        self.runtime = _EMPTY
        self.effective_min = spec.min

    @property
    def name(self) -> str:
        return self.spec.name

    def set_spec(self, spec: QuotaSpec) -> None:
        self.spec = spec
        self.weight = effective_weight(spec)

    def set_depth(self, depth: int) -> None:
        """Give this node and its whole subtree their depth (after a move)."""
        self.depth = depth
        for child in self.children.values():
            child.set_depth(depth + 1)

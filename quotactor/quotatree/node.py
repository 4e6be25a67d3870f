"""Quota nodes and the resource-vector arithmetic MCAD does on them."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from quotactor.quotatree.consumer import Consumer

__all__ = ["QuotaNode", "fits"]

Vector = tuple[int, ...]


def fits(request: Vector, allocated: Vector, quota: Vector) -> bool:
    """MCAD's `Fit`: `request <= quota - allocated` in every resource (equality fits).

    Vectors of different lengths never fit: a consumer built for other resource names must
    not be charged against this tree.
    """
    if len(request) != len(quota):
        return False
    return all(r <= q - a for r, a, q in zip(request, allocated, quota, strict=True))


class QuotaNode:
    """A node of a quota tree; mutated only by `QuotaTree`, which journals every change.

    `allocated` is the sum of the requests of the consumers charged at this node or below it
    (an immutable tuple, replaced on change, so the journal can restore it by reference).
    `consumers` are those charged exactly here, in charge order: MCAD takes slide-up and
    preemption candidates in this order, so it is part of the semantics. Each entry's `seq`
    (its arrival stamp at this node) lets an undo put a consumer back in its old place.
    """

    __slots__ = (
        "allocated",
        "children",
        "consumers",
        "hard",
        "id",
        "parent",
        "path",
        "path_ids",
        "quota",
    )

    def __init__(self, node_id: str, quota: Vector, hard: bool) -> None:
        self.id = node_id
        self.quota = quota
        self.hard = hard
        self.allocated: Vector = (0,) * len(quota)
        self.parent: QuotaNode | None = None
        self.children: list[QuotaNode] = []
        self.consumers: dict[str, Consumer] = {}
        self.path: tuple[QuotaNode, ...] = (self,)
        self.path_ids: frozenset[str] = frozenset((node_id,))

    @property
    def is_leaf(self) -> bool:
        return not self.children

    def can_fit(self, request: Vector) -> bool:
        return fits(request, self.allocated, self.quota)

    def __repr__(self) -> str:
        return f"QuotaNode({self.id!r}, allocated={self.allocated}, quota={self.quota})"

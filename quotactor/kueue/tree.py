"""The quota tree: ClusterQueues as leaves, Cohorts as inner nodes, and the arithmetic of
borrowing and lending along it (Kueue's resource nodes).

Every node keeps, per `(flavor, resource)`:

- `quotas`: its own nominal quota and optional borrowing and lending limits;
- `subtree`: its nominal quota plus what its children put in common. A child keeps
  `nominal - lendingLimit` for itself (its *local* quota, none without a lending limit) and
  the rest of its subtree quota counts in the parent's;
- `usage`: for a ClusterQueue the sum of its admitted workloads; for a Cohort the part of
  its children's usage above their local quotas.

So a ClusterQueue uses its local quota first, then what is stored in its parent, which in turn
serves from its own local quota and then its parent, up to the root. A borrowing limit caps
how far above its subtree quota a node may go in its parent. All functions here keep these
invariants; `recompute` re-derives `subtree` and cohort `usage` after the tree changes.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from quotactor.kueue.api import FlavorResource

__all__ = [
    "DRS", "NEGATIVE_DRS", "Node", "Quota", "add_usage", "available", "borrowing_with",
    "compare_drs",
    "dominant_resource_share", "fits_in_quota", "height", "local_available",
    "lowest_fitting_subtree", "potential_available", "recompute", "remove_usage",
    "within_nominal",
]


@dataclass(frozen=True, slots=True)
class Quota:
    nominal: int
    borrowing_limit: int | None = None
    lending_limit: int | None = None


class Node:
    """A ClusterQueue (`is_cohort` False) or a Cohort of the tree."""

    __slots__ = ("child_cohorts", "child_cqs", "is_cohort", "name", "parent", "quotas",
                 "subtree", "usage", "weight")

    def __init__(self, name: str, is_cohort: bool, quotas: Mapping[FlavorResource, Quota],
                 weight: float = 1.0) -> None:
        self.name = name
        self.is_cohort = is_cohort
        self.parent: Node | None = None
        self.child_cqs: list[Node] = []
        self.child_cohorts: list[Node] = []
        self.quotas: dict[FlavorResource, Quota] = dict(quotas)
        self.subtree: dict[FlavorResource, int] = {}
        self.usage: dict[FlavorResource, int] = {}
        self.weight = weight

    def __repr__(self) -> str:
        kind = "Cohort" if self.is_cohort else "ClusterQueue"
        return f"<{kind} {self.name}>"

    def nominal(self, fr: FlavorResource) -> int:
        quota = self.quotas.get(fr)
        return quota.nominal if quota is not None else 0

    def local_quota(self, fr: FlavorResource) -> int:
        """What the node keeps for its own subtree: `subtree - lendingLimit`, or nothing."""
        quota = self.quotas.get(fr)
        if quota is None or quota.lending_limit is None:
            return 0
        return max(0, self.subtree.get(fr, 0) - quota.lending_limit)

    def ancestors(self) -> Iterator[Node]:
        """Parent first, the root last."""
        node = self.parent
        while node is not None:
            yield node
            node = node.parent

    def root(self) -> Node:
        node = self
        while node.parent is not None:
            node = node.parent
        return node

    def children(self) -> list[Node]:
        return [*self.child_cohorts, *self.child_cqs]

    def subtree_cqs(self) -> list[Node]:
        """The ClusterQueues below this node (itself for a ClusterQueue)."""
        if not self.is_cohort:
            return [self]
        found = list(self.child_cqs)
        for cohort in self.child_cohorts:
            found.extend(cohort.subtree_cqs())
        return found


def local_available(node: Node, fr: FlavorResource) -> int:
    """Unused local quota of `node`."""
    return max(0, node.local_quota(fr) - node.usage.get(fr, 0))


def available(node: Node, fr: FlavorResource) -> int:
    """What `node` can still take now, borrowing within its limits (may be negative when
    the tree is in debt; callers clamp)."""
    parent = node.parent
    if parent is None:
        return node.subtree.get(fr, 0) - node.usage.get(fr, 0)
    from_parent = available(parent, fr)
    quota = node.quotas.get(fr)
    if quota is not None and quota.borrowing_limit is not None:
        local = node.local_quota(fr)
        stored_in_parent = node.subtree.get(fr, 0) - local
        used_in_parent = max(0, node.usage.get(fr, 0) - local)
        from_parent = min(stored_in_parent - used_in_parent + quota.borrowing_limit,
                          from_parent)
    return local_available(node, fr) + from_parent


def potential_available(node: Node, fr: FlavorResource) -> int:
    """The most `node` could ever hold if nothing else in the tree used anything."""
    parent = node.parent
    if parent is None:
        return node.subtree.get(fr, 0)
    most = node.local_quota(fr) + potential_available(parent, fr)
    quota = node.quotas.get(fr)
    if quota is not None and quota.borrowing_limit is not None:
        most = min(node.subtree.get(fr, 0) + quota.borrowing_limit, most)
    return most


def add_usage(node: Node, fr: FlavorResource, amount: int) -> None:
    """Charge `amount` to `node`; what exceeds its unused local quota goes up the tree."""
    free_locally = local_available(node, fr)
    node.usage[fr] = node.usage.get(fr, 0) + amount
    if node.parent is not None and amount > free_locally:
        add_usage(node.parent, fr, amount - free_locally)


def remove_usage(node: Node, fr: FlavorResource, amount: int) -> None:
    """Undo `add_usage`: the part stored in the parent is released there first."""
    stored_in_parent = node.usage.get(fr, 0) - node.local_quota(fr)
    node.usage[fr] = node.usage.get(fr, 0) - amount
    if stored_in_parent > 0 and node.parent is not None:
        remove_usage(node.parent, fr, min(amount, stored_in_parent))


def recompute(root: Node) -> None:
    """Re-derive `subtree` everywhere below `root` and the cohorts' `usage` from the
    ClusterQueues' usage (after a node joined, left or changed its quotas)."""
    if not root.is_cohort:
        root.subtree = {fr: q.nominal for fr, q in root.quotas.items()}
        return
    root.subtree = {fr: q.nominal for fr, q in root.quotas.items()}
    root.usage = {}
    for child in root.children():
        recompute(child)
        for fr, amount in child.subtree.items():
            root.subtree[fr] = root.subtree.get(fr, 0) + amount - child.local_quota(fr)
        for fr, used in child.usage.items():
            root.usage[fr] = root.usage.get(fr, 0) + max(0, used - child.local_quota(fr))


def borrowing_with(node: Node, fr: FlavorResource, amount: int) -> bool:
    """Would `node` be above its (subtree) quota with `amount` more?"""
    return node.subtree.get(fr, 0) < node.usage.get(fr, 0) + amount


def within_nominal(node: Node, frs: set[FlavorResource] | frozenset[FlavorResource]) -> bool:
    return all(node.usage.get(fr, 0) <= node.subtree.get(fr, 0) for fr in frs)


def fits_in_quota(node: Node, requests: Mapping[FlavorResource, int]
                  ) -> tuple[bool, dict[FlavorResource, int]]:
    """Whether `requests` fit in `node`'s subtree quota on top of its usage, and what of them
    its unused local quota cannot serve."""
    fits = True
    remaining: dict[FlavorResource, int] = {}
    for fr, amount in requests.items():
        if node.subtree.get(fr, 0) < node.usage.get(fr, 0) + amount:
            fits = False
        remaining[fr] = max(0, amount - local_available(node, fr))
    return fits, remaining


def height(cohort: Node) -> int:
    """Distance from `cohort` to its farthest leaf (a cohort with only queues: 1)."""
    tallest = min(len(cohort.child_cqs) + len(cohort.child_cohorts), 1)
    for child in cohort.child_cohorts:
        tallest = max(tallest, height(child) + 1)
    return tallest


def lowest_fitting_subtree(cq: Node, fr: FlavorResource, amount: int) -> tuple[int, bool]:
    """How far up the tree `amount` more of `fr` must come from: 0 when the ClusterQueue's
    own quota serves it, else the height of the lowest cohort whose subtree quota does (the
    root's when none does). The flag tells whether that subtree is smaller than the tree."""
    if not borrowing_with(cq, fr, amount) or cq.parent is None:
        return 0, cq.parent is not None
    remaining = amount - local_available(cq, fr)
    for node in cq.ancestors():
        if not borrowing_with(node, fr, remaining):
            return height(node), node.parent is not None
        remaining -= local_available(node, fr)
    return height(cq.root()), False


@dataclass(frozen=True, slots=True)
class DRS:
    """A node's dominant resource share: the largest ratio, over resources, of what it
    borrows to what its parent could lend it (per mille), divided by its fair weight."""

    weight: float = 1.0
    ratio: float = 0.0
    resource: str = ""
    borrowed: frozenset[FlavorResource] = frozenset()

    @property
    def borrowing(self) -> bool:
        return bool(self.borrowed)

    def borrowing_on(self, requested: Mapping[FlavorResource, int]) -> bool:
        return any(requested.get(fr, 0) > 0 for fr in self.borrowed)

    def weighted(self) -> float:
        if self.ratio == 0:
            return 0.0
        if self.weight == 0:
            return math.inf
        return self.ratio / self.weight

    def zero_weight_borrows(self) -> bool:
        return self.weight == 0 and self.ratio != 0


NEGATIVE_DRS = DRS(ratio=-1.0)


def compare_drs(a: DRS, b: DRS) -> int:
    """-1, 0 or 1: a lower share is served first and preempted last."""
    if a.zero_weight_borrows() and b.zero_weight_borrows():
        return (a.ratio > b.ratio) - (a.ratio < b.ratio)
    if a.zero_weight_borrows():
        return 1
    if b.zero_weight_borrows():
        return -1
    x, y = a.weighted(), b.weighted()
    return (x > y) - (x < y)


def dominant_resource_share(node: Node) -> DRS:
    """`node`'s DRS (zero for a root, which borrows from nobody)."""
    parent = node.parent
    if parent is None:
        return DRS(weight=node.weight)
    borrowed_by_resource: dict[str, int] = {}
    borrowed: set[FlavorResource] = set()
    for fr, quota in node.subtree.items():
        over = node.usage.get(fr, 0) - quota
        if over > 0:
            borrowed_by_resource[fr[1]] = borrowed_by_resource.get(fr[1], 0) + over
            borrowed.add(fr)
    if not borrowed_by_resource:
        return DRS(weight=node.weight)
    lendable: dict[str, int] = {}
    for fr in node.root().subtree:
        lendable[fr[1]] = lendable.get(fr[1], 0) + potential_available(parent, fr)
    ratio, dominant = 0.0, ""
    for name in sorted(borrowed_by_resource):
        pool = lendable.get(name, 0)
        if pool > 0:
            share = borrowed_by_resource[name] * 1000.0 / pool
            if share > ratio:
                ratio, dominant = share, name
    return DRS(node.weight, ratio, dominant, frozenset(borrowed))

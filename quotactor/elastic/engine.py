"""`RuntimeEngine`: requests aggregated bottom-up and runtimes split top-down, incrementally.

A pod or quota change is applied as a delta along the path from its quota to the root, and
every parent whose children's stakes changed is marked dirty. Runtimes are recomputed lazily,
on the next read, parent by parent from the top, and a child's subtree is split again only if
the child's own runtime really changed. So a change touches one path plus whatever its new
runtimes ripple into, never the whole tree.

The engine trusts its input: the manager validates every spec and pod before calling it.
"""

from __future__ import annotations

import heapq
from collections import defaultdict

from quotactor.core.resources import Resource
from quotactor.elastic.demand import contribution, is_special, masked, own_request
from quotactor.elastic.node import QuotaNode
from quotactor.elastic.spec import DEFAULT_QUOTA, ROOT_QUOTA, SYSTEM_QUOTA, QuotaSpec, engine_specs
from quotactor.elastic.waterfill import Claim, redistribute, scaled_mins

__all__ = ["RuntimeEngine"]

_EMPTY = Resource()


class RuntimeEngine:
    """The quota tree with its derived figures, kept up to date by deltas and dirty marks."""

    def __init__(self, total: Resource, scale_min: bool = True) -> None:
        self.scale_min = scale_min
        self.split_count = 0
        """How many parent splits have run (tests and benchmarks measure incrementality)."""
        self._total = total
        self._dirty: set[str] = set()
        self._queue: list[tuple[int, str]] = []
        root_spec, system_spec, default_spec = engine_specs()
        self.root = QuotaNode(root_spec, None)
        self._nodes: dict[str, QuotaNode] = {ROOT_QUOTA: self.root}
        self.add(system_spec)
        self.add(default_spec)

    # -- structure -------------------------------------------------------------------

    def get(self, name: str) -> QuotaNode | None:
        return self._nodes.get(name)

    def nodes(self) -> list[QuotaNode]:
        """Every node, parents before children, siblings by name."""
        out: list[QuotaNode] = []
        stack = [self.root]
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(sorted(node.children.values(), key=lambda n: n.name, reverse=True))
        return out

    def add(self, spec: QuotaSpec) -> None:
        """A new quota under its (existing) parent."""
        parent = self._nodes[spec.parent_name]
        node = QuotaNode(spec, parent)
        parent.children[spec.name] = node
        self._nodes[spec.name] = node
        if is_special(spec.name):
            node.runtime = spec.max
        self._refresh(node)
        self._mark(parent)

    def update(self, spec: QuotaSpec) -> None:
        """A changed declaration; a new parent moves the quota with its whole subtree."""
        node = self._nodes[spec.name]
        old_parent = node.parent
        assert old_parent is not None
        if spec.parent_name != old_parent.name:
            self._detach(node)
            new_parent = self._nodes[spec.parent_name]
            new_parent.children[spec.name] = node
            node.parent = new_parent
            node.set_depth(new_parent.depth + 1)
            node.contribution = node.used = _EMPTY
            self._mark(new_parent)
            self._mark(node)
        node.set_spec(spec)
        if is_special(spec.name):
            node.runtime = spec.max
        self._refresh(node)
        self._mark(self._nodes[spec.parent_name])

    def remove(self, name: str) -> None:
        """Drop a quota (the manager made sure it has no children and no pods)."""
        node = self._nodes.pop(name)
        self._detach(node)
        self._dirty.discard(name)

    def _detach(self, node: QuotaNode) -> None:
        parent = node.parent
        assert parent is not None
        del parent.children[node.name]
        parent.children_demand -= node.contribution
        parent.children_used -= node.used
        self._refresh(parent)
        self._mark(parent)

    # -- inputs ----------------------------------------------------------------------

    @property
    def total(self) -> Resource:
        return self._total

    def set_total(self, total: Resource) -> None:
        if total != self._total:
            self._total = total
            self._mark(self.root)

    def charge(self, name: str, request: Resource = _EMPTY, used: Resource = _EMPTY,
               non_preemptible_used: Resource = _EMPTY) -> None:
        """Add (or, negated, take back) pod amounts to a quota's own sums."""
        node = self._nodes[name]
        if non_preemptible_used:
            node.own_np_used += non_preemptible_used
        if used:
            node.own_used += used
            self._add_used(node, masked(node.spec, used))
        if request:
            node.own_request += request
            self._refresh_demand(node)

    # -- derived figures -------------------------------------------------------------

    def available(self) -> Resource:
        """What normal quotas share: the cluster minus the system and default groups' used."""
        taken = self._nodes[SYSTEM_QUOTA].used + self._nodes[DEFAULT_QUOTA].used
        return (self._total - taken).clamp_non_negative()

    def settle(self) -> None:
        """Bring every runtime up to date, splitting only the dirty parents, top-down."""
        while self._queue:
            depth, name = heapq.heappop(self._queue)
            if name not in self._dirty:
                continue
            node = self._nodes.get(name)
            if node is None:
                self._dirty.discard(name)
            elif node.depth != depth:
                heapq.heappush(self._queue, (node.depth, name))
            else:
                self._dirty.discard(name)
                self._split(node)

    def _refresh(self, node: QuotaNode) -> None:
        """Recompute a node from its sums (after a spec change or a move) and pass it up."""
        new_used = masked(node.spec, node.own_used) + node.children_used
        if new_used != node.used:
            self._add_used(node, new_used - node.used)
        self._refresh_demand(node)

    def _add_used(self, node: QuotaNode | None, delta: Resource) -> None:
        """Used is a plain sum: the delta goes up the path unchanged (children's names are
        within their parent's, so no ancestor masks it further)."""
        while node is not None:
            node.used += delta
            parent = node.parent
            if parent is not None:
                parent.children_used += delta
                if is_special(node.name):
                    self._mark(self.root)
            node = parent

    def _refresh_demand(self, node: QuotaNode | None) -> None:
        """Recompute request and limited request up the path while the latter changes."""
        while node is not None:
            spec = node.spec
            demand = node.children_demand
            if node.own_request:
                demand = masked(spec, node.own_request) + demand
            node.request = own_request(spec, demand)
            new_contribution = contribution(spec, node.request)
            if new_contribution == node.contribution:
                return
            delta = new_contribution - node.contribution
            node.contribution = new_contribution
            parent = node.parent
            if parent is None:
                return
            parent.children_demand += delta
            if not is_special(node.name):
                self._mark(parent)
            node = parent

    def _mark(self, node: QuotaNode) -> None:
        if node.name not in self._dirty:
            self._dirty.add(node.name)
            heapq.heappush(self._queue, (node.depth, node.name))

    def _split(self, parent: QuotaNode) -> None:
        """Split the parent's runtime among its normal children, each dimension on its own."""
        self.split_count += 1
        if parent is self.root:
            self.root.runtime = self.available()
        total = parent.runtime
        children = [c for c in parent.children.values() if not is_special(c.name)]
        runtime: dict[str, dict[str, int]] = defaultdict(dict)
        effective: dict[str, dict[str, int]] = defaultdict(dict)
        for dim in sorted({dim for child in children for dim in child.spec.max}):
            members = [c for c in children if dim in c.spec.max]
            mins = {c.name: c.spec.min.get(dim, 0) for c in members}
            amount = total.get(dim, 0)
            in_effect = scaled_mins(amount, mins) if self.scale_min else mins
            shares = redistribute(amount, [
                Claim(c.name, c.contribution.get(dim, 0), in_effect[c.name],
                      c.weight.get(dim, 0), c.spec.allow_lent)
                for c in members
            ])
            for name, share in shares.items():
                runtime[name][dim] = share
                effective[name][dim] = in_effect[name]
        for child in children:
            child.effective_min = Resource(effective[child.name])
            new_runtime = Resource(runtime[child.name])
            if new_runtime != child.runtime:
                child.runtime = new_runtime
                if child.children:
                    self._mark(child)

"""A quota tree and MCAD's allocation algorithm on it.

Allocation (MCAD's `QuotaTree.Allocate`): walk from the consumer's group leaf towards the
root. The first node that can take the consumer, directly or by sliding strictly
lower-priority consumers up to its parent, becomes its allocated node (aNode), provided every
ancestor can absorb the request too, directly or by sliding any of its consumers up (at a soft
node) or preempting same-type preemptable consumers (at the root). If an ancestor cannot, the
attempt is undone and the search resumes at that ancestor's parent, unless a hard node has been
passed: nothing goes above a hard node. When that fails and the consumer has a positive
priority, lower-priority same-type preemptable consumers on its own path are preempted, highest
node first, until the highest node examined can take it, and the whole walk is retried.

Deallocation walks the departing consumer's path upwards and lets each node pull consumers of
its subtree down from its parent while they fit.

Every mutation goes through a journaled primitive, so a failed attempt is undone exactly and
the caller can undo a whole operation (try/undo, forest rollback). Defects of MCAD's version
that this one does not have: a failed priority retry no longer leaves its victims out of the
tree (Q1), and victims of an outer priority round are always reported (Q2).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterator, Mapping

from quotactor.quotatree.consumer import Consumer
from quotactor.quotatree.journal import Journal
from quotactor.quotatree.node import QuotaNode, Vector, fits
from quotactor.quotatree.spec import NodeSpec

__all__ = ["QuotaTree"]


class QuotaTree:
    """Nodes, leaves and the consumers charged on them; no bookkeeping of who is allocated
    (that is the controller's)."""

    def __init__(self, name: str, resource_names: tuple[str, ...],
                 root: QuotaNode | None) -> None:
        self.name = name
        self.resource_names = resource_names
        self.root = root
        self.journal = Journal()
        self._stamp = 0  # an int, not itertools.count: the tree is deep-copied (checkpoints)
        self.nodes: dict[str, QuotaNode] = {}
        if root is not None:
            for node in _preorder(root):
                parent = node.parent
                if parent is not None:
                    node.path = (node, *parent.path)
                    node.path_ids = parent.path_ids | {node.id}
                self.nodes[node.id] = node
        self.leaves = {nid: node for nid, node in self.nodes.items() if node.is_leaf}

    @classmethod
    def build(cls, name: str, resource_names: tuple[str, ...],
              specs: Mapping[str, NodeSpec]) -> QuotaTree:
        """MCAD's `CreateTree` topology: the first root in name order wins; nodes whose
        parent is unknown, later roots and anything not reachable from the root are left out
        (the caller reports them as dangling)."""
        ordered = sorted(specs)
        roots = [name for name in ordered if specs[name].parent is None]
        root_name = roots[0] if roots else None
        built = {
            node: QuotaNode(node, specs[node].vector(resource_names), specs[node].hard)
            for node in ordered
            if specs[node].parent is not None or node == root_name
        }
        for node_id in ordered:
            node = built.get(node_id)
            parent_id = specs[node_id].parent
            if node is None or parent_id is None or parent_id not in built:
                continue
            parent = built[parent_id]
            node.parent = parent
            parent.children.append(node)
        return cls(name, resource_names, built.get(root_name) if root_name else None)

    @property
    def size(self) -> int:
        return len(self.resource_names)

    def has_leaf(self, node: QuotaNode, group_id: str) -> bool:
        """MCAD's `HasLeaf`: `group_id` names a leaf in the subtree rooted at `node`."""
        leaf = self.leaves.get(group_id)
        return leaf is not None and node.id in leaf.path_ids

    # -- the operations ---------------------------------------------------------------

    def allocate(self, consumer: Consumer) -> list[str] | None:
        """Charge `consumer` somewhere on its group's path, MCAD's way.

        Returns the IDs of the consumers preempted to make room (in the order they were
        preempted) or None when it cannot be allocated, in which case nothing changed.
        """
        leaf = self.leaves.get(consumer.group_id)
        if leaf is None or len(consumer.request) != self.size:
            return None
        start = self.journal.mark()
        victims: list[str] = []
        while True:
            preempted, attempted = self._place(consumer, leaf)
            if preempted is not None:
                return victims + preempted
            if consumer.priority <= 0 or not self._preempt_below(consumer, leaf, attempted,
                                                                 victims):
                break
        self.journal.rollback(start)
        return None

    def force_allocate(self, consumer: Consumer, node_id: str) -> bool:
        """Charge `consumer` at `node_id` (any node) and all its ancestors, ignoring quotas:
        MCAD's maintenance-mode and tree-update placement."""
        node = self.nodes.get(node_id)
        if node is None or consumer.id in node.consumers or len(consumer.request) != self.size:
            return False
        self._append(node, consumer)
        self._set_anode(consumer, node)
        for ancestor in node.path:
            self._add(ancestor, consumer.request)
        return True

    def deallocate(self, consumer: Consumer) -> bool:
        """Release `consumer` and slide consumers down along its path."""
        node = consumer.anode
        if node is None or node.consumers.get(consumer.id) is not consumer:
            return False
        self._remove(node, consumer)
        for ancestor in node.path:
            self._sub(ancestor, consumer.request)
            self._slide_down(ancestor)
        self._set_anode(consumer, None)
        return True

    # -- the algorithm ----------------------------------------------------------------

    def _place(self, consumer: Consumer,
               leaf: QuotaNode) -> tuple[list[str] | None, QuotaNode]:
        """Phase 1: one walk up the path. Returns (preempted or None, highest node tried);
        on failure nothing is left changed."""
        mark = self.journal.mark()
        request = consumer.request
        preempted: list[str] = []
        placed = False
        hit_hard = False
        attempted = leaf
        for node in leaf.path:
            attempted = node
            hit_hard = hit_hard or node.hard
            if not placed:
                if node.can_fit(request) or self._slide_up(node, consumer, True, preempted):
                    self._add(node, request)
                    self._append(node, consumer)
                    self._set_anode(consumer, node)
                    placed = True
                elif node.hard:
                    break
            elif node.can_fit(request) or self._slide_up(node, consumer, False, preempted):
                self._add(node, request)
            else:
                self.journal.rollback(mark)
                preempted = []
                placed = False
                if hit_hard:
                    break
        return (preempted if placed else None), attempted

    def _slide_up(self, node: QuotaNode, consumer: Consumer, apply_priority: bool,
                  preempted: list[str]) -> bool:
        """Make room for `consumer` at `node` by moving consumers to its parent (preempting
        them at the root). Candidates are taken greedily in charge order; with
        `apply_priority` only strictly lower priorities qualify. At the root only
        preemptable consumers of the same type qualify, whatever their priority."""
        parent = node.parent
        if node.hard and parent is not None:
            return False
        request, priority, ctype = consumer.request, consumer.priority, consumer.ctype
        scratch = list(node.allocated)
        candidates: list[Consumer] = []
        for other in node.consumers.values():
            if apply_priority and not priority > other.priority:
                continue
            if parent is None and (other.unpreemptable or other.ctype != ctype):
                continue
            for i, r in enumerate(other.request):
                scratch[i] -= r
            candidates.append(other)
            if fits(request, tuple(scratch), node.quota):
                break
        else:
            return False
        for other in candidates:
            self._sub(node, other.request)
            self._remove(node, other)
            self._set_anode(other, parent)
            if parent is not None:
                self._append(parent, other)
            else:
                preempted.append(other.id)
        return True

    def _preempt_below(self, consumer: Consumer, leaf: QuotaNode, attempted: QuotaNode,
                       victims: list[str]) -> bool:
        """Phase 2: preempt lower-priority same-type preemptable consumers on the path, from
        `attempted` down to the leaf, until `attempted` can take `consumer`."""
        path = leaf.path
        for i in range(path.index(attempted), -1, -1):
            node = path[i]
            for other in list(node.consumers.values()):
                if (consumer.priority > other.priority and not other.unpreemptable
                        and other.ctype == consumer.ctype):
                    self._remove(node, other)
                    for ancestor in node.path:
                        self._sub(ancestor, other.request)
                    self._set_anode(other, None)
                    victims.append(other.id)
                    if attempted.can_fit(consumer.request):
                        return True
        return False

    def _slide_down(self, node: QuotaNode) -> None:
        """Pull consumers of `node`'s subtree down from its parent while they fit."""
        parent = node.parent
        if parent is None or not parent.consumers:
            return
        for other in list(parent.consumers.values()):
            if self.has_leaf(node, other.group_id) and node.can_fit(other.request):
                self._remove(parent, other)
                self._add(node, other.request)
                self._append(node, other)
                self._set_anode(other, node)

    # -- journaled primitives ------------------------------------------------------------

    def _add(self, node: QuotaNode, request: Vector) -> None:
        self.journal.record(_restore_allocated, node, node.allocated)
        node.allocated = tuple(a + r for a, r in zip(node.allocated, request, strict=True))

    def _sub(self, node: QuotaNode, request: Vector) -> None:
        self.journal.record(_restore_allocated, node, node.allocated)
        node.allocated = tuple(a - r for a, r in zip(node.allocated, request, strict=True))

    def _append(self, node: QuotaNode, consumer: Consumer) -> None:
        self.journal.record(_unappend, node, consumer, consumer.seq)
        self._stamp += 1
        consumer.seq = self._stamp
        node.consumers[consumer.id] = consumer

    def _remove(self, node: QuotaNode, consumer: Consumer) -> None:
        self.journal.record(_reinsert, node, consumer)
        del node.consumers[consumer.id]

    def _set_anode(self, consumer: Consumer, node: QuotaNode | None) -> None:
        self.journal.record(_restore_anode, consumer, consumer.anode)
        consumer.anode = node


def _preorder(root: QuotaNode) -> Iterator[QuotaNode]:
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children))


def _restore_allocated(node: QuotaNode, allocated: Vector) -> None:
    node.allocated = allocated


def _unappend(node: QuotaNode, consumer: Consumer, seq: int) -> None:
    del node.consumers[consumer.id]
    consumer.seq = seq


def _reinsert(node: QuotaNode, consumer: Consumer) -> None:
    """Put `consumer` back where its arrival stamp says it was in `node`'s charge order."""
    consumers = node.consumers
    if not consumers or next(reversed(consumers.values())).seq < consumer.seq:
        consumers[consumer.id] = consumer
        return
    ordered = list(consumers.values())
    ordered.insert(bisect_left(ordered, consumer.seq, key=lambda c: c.seq), consumer)
    node.consumers = {c.id: c for c in ordered}


def _restore_anode(consumer: Consumer, node: QuotaNode | None) -> None:
    consumer.anode = node

"""Choosing the workloads to preempt so that a pending one fits (Kueue's preemptor).

Two algorithms, as in Kueue:

- *classical*: candidates are the admitted workloads that use a contested `(flavor,
  resource)` and that the ClusterQueue's policies allow preempting: `withinClusterQueue` for
  its own, `reclaimWithinCohort` for those of ClusterQueues above their quota in the cohort
  (`borrowWithinCohort` when the preemptor must borrow itself). Candidates from other
  ClusterQueues come first (those the preemptor has a better claim to, being nearer to the
  quota they use, before the rest), then lower priority, then the most recently admitted.
  Victims are taken in that order until the workload fits, then those that turn out not to be
  needed are given back (latest first).
- *fair sharing*: the ClusterQueue (or cohort) with the highest dominant resource share gives
  up workloads first, as long as the preemptor's share after admission stays at most the
  victim queue's share after the preemption (or, as a second chance, below its share before).

All functions leave the tree as they found it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from quotactor.kueue.api import (
    ANY,
    LOWER_OR_NEWER_EQUAL_PRIORITY,
    LOWER_PRIORITY,
    NEVER,
    ClusterQueue,
    FlavorResource,
)
from quotactor.kueue.cluster import Cluster, Record
from quotactor.kueue.tree import (
    DRS,
    NEGATIVE_DRS,
    Node,
    add_usage,
    available,
    borrowing_with,
    compare_drs,
    dominant_resource_share,
    fits_in_quota,
    lowest_fitting_subtree,
    remove_usage,
    within_nominal,
)

__all__ = [
    "IN_CLUSTER_QUEUE", "IN_COHORT_FAIR_SHARING", "IN_COHORT_RECLAIM_WHILE_BORROWING",
    "IN_COHORT_RECLAMATION", "LESS_THAN_INITIAL_SHARE", "LESS_THAN_OR_EQUAL_TO_FINAL_SHARE",
    "NO_CANDIDATES", "PREEMPT", "RECLAIM", "Target", "get_targets", "satisfies_policy",
    "simulate",
]

IN_CLUSTER_QUEUE = "InClusterQueue"
IN_COHORT_RECLAMATION = "InCohortReclamation"
IN_COHORT_RECLAIM_WHILE_BORROWING = "InCohortReclaimWhileBorrowing"
IN_COHORT_FAIR_SHARING = "InCohortFairSharing"
LESS_THAN_OR_EQUAL_TO_FINAL_SHARE = "LessThanOrEqualToFinalShare"
LESS_THAN_INITIAL_SHARE = "LessThanInitialShare"

NO_CANDIDATES = 1
PREEMPT = 2
RECLAIM = 3

# how a candidate may be preempted (classical)
_NEVER, _WITHIN_CQ, _HIERARCHICAL, _WITHOUT_BORROWING, _WHILE_BORROWING = range(5)
_REASONS = {
    _WITHIN_CQ: IN_CLUSTER_QUEUE,
    _HIERARCHICAL: IN_COHORT_RECLAMATION,
    _WITHOUT_BORROWING: IN_COHORT_RECLAMATION,
    _WHILE_BORROWING: IN_COHORT_RECLAIM_WHILE_BORROWING,
}


@dataclass(frozen=True, slots=True)
class Target:
    """A workload to preempt, and why (Kueue's preemption reason)."""

    record: Record
    reason: str


def satisfies_policy(preemptor: Record, candidate: Record, policy: str) -> bool:
    """May `preemptor` preempt `candidate` under `policy`?"""
    if policy == LOWER_PRIORITY:
        return preemptor.priority > candidate.priority
    if policy == LOWER_OR_NEWER_EQUAL_PRIORITY:
        if preemptor.priority > candidate.priority:
            return True
        return (preemptor.priority == candidate.priority
                and (preemptor.workload.created, preemptor.seq)
                < (candidate.workload.created, candidate.seq))
    return policy == ANY


def _ordering(cq: str) -> Callable[[Record], tuple[object, ...]]:
    """Kueue's candidate order: other ClusterQueues first, lower priority, most recently
    admitted; workloads admitted at the same time by key (Kueue compares UIDs there)."""
    def key(record: Record) -> tuple[object, ...]:
        return (record.cluster_queue == cq, record.priority, -record.admitted_at, record.key)
    return key


@dataclass(slots=True)
class _Context:
    cluster: Cluster
    preemptor: Record
    spec: ClusterQueue
    node: Node
    frs: frozenset[FlavorResource]
    usage: dict[FlavorResource, int]

    def fits(self, allow_borrowing: bool) -> bool:
        for fr, amount in self.usage.items():
            if not allow_borrowing and borrowing_with(self.node, fr, amount):
                return False
            if amount > max(0, available(self.node, fr)):
                return False
        return True


def get_targets(cluster: Cluster, preemptor: Record, cluster_queue: str,
                frs: frozenset[FlavorResource], usage: dict[FlavorResource, int],
                strategies: tuple[str, ...] = (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,
                                               LESS_THAN_INITIAL_SHARE)) -> list[Target]:
    """The victims that let `preemptor` (charging `usage` to `cluster_queue`) fit, with the
    contested `frs`; empty when no set of allowed victims is enough."""
    ctx = _Context(cluster, preemptor, cluster.cluster_queues[cluster_queue],
                   cluster.node(cluster_queue), frs, usage)
    if cluster.fair_sharing:
        return _fair_targets(ctx, strategies)
    return _classical_targets(ctx)


def simulate(cluster: Cluster, preemptor: Record, cluster_queue: str, fr: FlavorResource,
             amount: int, strategies: tuple[str, ...] = (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,
                                                         LESS_THAN_INITIAL_SHARE)
             ) -> tuple[int, int]:
    """Could preemption make `amount` of `fr` fit? `(NO_CANDIDATES | PREEMPT | RECLAIM,
    borrowing height afterwards)`: PREEMPT when a victim is in the same ClusterQueue."""
    node = cluster.node(cluster_queue)
    targets = get_targets(cluster, preemptor, cluster_queue, frozenset({fr}), {fr: amount},
                          strategies)
    if not targets:
        return NO_CANDIDATES, lowest_fitting_subtree(node, fr, amount)[0]
    with cluster.without([t.record for t in targets]):
        borrow = lowest_fitting_subtree(node, fr, amount)[0]
    if any(t.record.cluster_queue == cluster_queue for t in targets):
        return PREEMPT, borrow
    return RECLAIM, borrow


# -- classical ---------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class _Candidate:
    record: Record
    lca: Node | None
    variant: int


def _borrowing_forbidden(spec: ClusterQueue) -> tuple[bool, int | None]:
    bwc = spec.preemption.borrow_within_cohort
    if bwc is None or bwc.policy == NEVER:
        return True, None
    return False, bwc.max_priority_threshold


def _variant(ctx: _Context, candidate: Record, advantage: bool) -> int:
    if not candidate.uses_any(ctx.frs):
        return _NEVER
    same = candidate.cluster_queue == ctx.spec.name
    policy = (ctx.spec.preemption.within_cluster_queue if same
              else ctx.spec.preemption.reclaim_within_cohort)
    if not satisfies_policy(ctx.preemptor, candidate, policy):
        return _NEVER
    if same:
        return _WITHIN_CQ
    if advantage:
        return _HIERARCHICAL
    forbidden, threshold = _borrowing_forbidden(ctx.spec)
    if forbidden:
        return _WITHOUT_BORROWING
    if candidate.priority >= ctx.preemptor.priority or (
            threshold is not None and candidate.priority > threshold):
        return _WITHOUT_BORROWING
    return _WHILE_BORROWING


def _candidates_in(ctx: _Context, cq: str, lca: Node | None, advantage: bool
                   ) -> list[_Candidate]:
    found = []
    for record in ctx.cluster.workloads_in(cq):
        variant = _variant(ctx, record, advantage)
        if variant != _NEVER:
            found.append(_Candidate(record, lca, variant))
    return found


def _collect_in_subtree(ctx: _Context, current: Node, subtree_root: Node, skip: Node | None,
                        advantage: bool, result: list[_Candidate]) -> None:
    for child in current.child_cohorts:
        if child is skip or within_nominal(child, ctx.frs):
            continue
        _collect_in_subtree(ctx, child, subtree_root, skip, advantage, result)
    for cq in current.child_cqs:
        if cq is not ctx.node and not within_nominal(cq, ctx.frs):
            result.extend(_candidates_in(ctx, cq.name, subtree_root, advantage))


def _hierarchical_candidates(ctx: _Context) -> tuple[list[_Candidate], list[_Candidate]]:
    """Candidates in other ClusterQueues: those over which the preemptor has a hierarchical
    advantage (it is entitled to the quota they use), and those decided by priority."""
    advantaged: list[_Candidate] = []
    by_priority: list[_Candidate] = []
    if ctx.node.parent is None or ctx.spec.preemption.reclaim_within_cohort == NEVER:
        return advantaged, by_priority
    advantage, remaining = fits_in_quota(ctx.node, ctx.usage)
    previous: Node | None = None
    for subtree_root in ctx.node.ancestors():
        _collect_in_subtree(ctx, subtree_root, subtree_root, previous, advantage,
                            advantaged if advantage else by_priority)
        fits, remaining = fits_in_quota(subtree_root, remaining)
        advantage = advantage or fits
        previous = subtree_root
    return advantaged, by_priority


def _valid(ctx: _Context, candidate: _Candidate, allow_borrowing: bool) -> bool:
    record = candidate.record
    if record.cluster_queue == ctx.spec.name:
        return True
    if allow_borrowing and candidate.variant == _WITHOUT_BORROWING:
        return False
    assert record.cluster_queue is not None
    node = ctx.cluster.node(record.cluster_queue)
    if within_nominal(node, ctx.frs):
        return False
    for ancestor in node.ancestors():
        if ancestor is candidate.lca:
            break
        if within_nominal(ancestor, ctx.frs):
            return False
    return True


def _under_nominal(ctx: _Context) -> bool:
    return all(ctx.node.nominal(fr) > ctx.node.usage.get(fr, 0) for fr in ctx.frs)


def _classical_targets(ctx: _Context) -> list[Target]:
    key = _ordering(ctx.spec.name)
    same = (_candidates_in(ctx, ctx.spec.name, None, False)
            if ctx.spec.preemption.within_cluster_queue != NEVER else [])
    advantaged, by_priority = _hierarchical_candidates(ctx)
    for group in (same, advantaged, by_priority):
        group.sort(key=lambda c: key(c.record))
    candidates = [*advantaged, *by_priority, *same]
    forbidden, _ = _borrowing_forbidden(ctx.spec)
    attempts: tuple[bool, ...]
    if (not advantaged and not by_priority) or (forbidden and not _under_nominal(ctx)):
        attempts = (True,)
    elif forbidden and not advantaged:
        attempts = (False, True)
    else:
        attempts = (True, False)
    for allow_borrowing in attempts:
        taken: list[Target] = []
        try:
            for candidate in candidates:
                if not _valid(ctx, candidate, allow_borrowing):
                    continue
                ctx.cluster.release(candidate.record)
                taken.append(Target(candidate.record, _REASONS[candidate.variant]))
                if ctx.fits(allow_borrowing):
                    taken = _fill_back(ctx, taken, allow_borrowing)
                    return taken
        finally:
            for target in taken:
                ctx.cluster.charge(target.record)
    return []


def _fill_back(ctx: _Context, targets: list[Target], allow_borrowing: bool) -> list[Target]:
    """Give back, latest taken first, every victim the preemptor fits without; the tree
    keeps the kept victims released."""
    kept = list(targets)
    for target in reversed(targets[:-1]):
        ctx.cluster.charge(target.record)
        if ctx.fits(allow_borrowing):
            kept.remove(target)
        else:
            ctx.cluster.release(target.record)
    return kept


# -- fair sharing ------------------------------------------------------------------------

def _fair_candidates(ctx: _Context) -> list[Record]:
    found: list[Record] = []
    preemption = ctx.spec.preemption
    if preemption.within_cluster_queue != NEVER:
        found.extend(r for r in ctx.cluster.workloads_in(ctx.spec.name)
                     if satisfies_policy(ctx.preemptor, r, preemption.within_cluster_queue)
                     and r.uses_any(ctx.frs))
    if ctx.node.parent is not None and preemption.reclaim_within_cohort != NEVER:
        for cq in ctx.node.root().subtree_cqs():
            if cq is ctx.node or not any(cq.nominal(fr) < cq.usage.get(fr, 0)
                                         for fr in ctx.frs):
                continue
            found.extend(r for r in ctx.cluster.workloads_in(cq.name)
                         if satisfies_policy(ctx.preemptor, r, preemption.reclaim_within_cohort)
                         and r.uses_any(ctx.frs))
    found.sort(key=_ordering(ctx.spec.name))
    return found


class _TargetOrdering:
    """Yields the ClusterQueue to take the next victim from: walking down from the root, the
    child with the highest share, among those still borrowing and holding candidates."""

    def __init__(self, ctx: _Context, candidates: list[Record]) -> None:
        self.ctx = ctx
        self.on_path = set(map(id, ctx.node.ancestors()))
        self.queues: dict[str, list[Record]] = {}
        for record in candidates:
            assert record.cluster_queue is not None
            self.queues.setdefault(record.cluster_queue, []).append(record)
        self.pruned: set[int] = set()

    def has_workload(self, cq: Node) -> bool:
        return bool(self.queues.get(cq.name))

    def pop(self, cq: Node) -> Record:
        return self.queues[cq.name].pop(0)

    def drop(self, cq: Node) -> None:
        self.pruned.add(id(cq))

    def __iter__(self) -> Iterator[Node]:
        node = self.ctx.node
        if node.parent is None:
            while id(node) not in self.pruned and self.has_workload(node):
                yield node
            return
        root = node.root()
        while id(root) not in self.pruned:
            target = self._next(root)
            if target is not None:
                yield target

    def _next(self, cohort: Node) -> Node | None:
        key = _ordering(self.ctx.spec.name)
        best_cq: Node | None = None
        best_cq_drs = NEGATIVE_DRS
        for cq in sorted(cohort.child_cqs, key=lambda n: n.name):
            if id(cq) in self.pruned:
                continue
            drs = dominant_resource_share(cq)
            if (not drs.borrowing and cq is not self.ctx.node) or not self.has_workload(cq):
                self.pruned.add(id(cq))
            elif compare_drs(drs, best_cq_drs) == 0 and best_cq is not None:
                if key(self.queues[cq.name][0]) < key(self.queues[best_cq.name][0]):
                    best_cq = cq
            elif compare_drs(drs, best_cq_drs) > 0:
                best_cq, best_cq_drs = cq, drs
        best_cohort: Node | None = None
        best_cohort_drs = NEGATIVE_DRS
        for child in cohort.child_cohorts:
            if id(child) in self.pruned:
                continue
            drs = dominant_resource_share(child)
            if not drs.borrowing and id(child) not in self.on_path:
                self.pruned.add(id(child))
            elif compare_drs(drs, best_cohort_drs) >= 0:
                best_cohort, best_cohort_drs = child, drs
        if best_cohort is None and best_cq is None:
            self.pruned.add(id(cohort))
            return None
        if best_cohort is not None and compare_drs(best_cohort_drs, best_cq_drs) >= 0:
            return self._next(best_cohort)
        return best_cq

    def shares(self, target: Node) -> tuple[DRS, DRS]:
        """The DRS of the preemptor's and the target's almost-least-common-ancestors."""
        preemptor_side, target_side = self._almost_lcas(target)
        return dominant_resource_share(preemptor_side), dominant_resource_share(target_side)

    def target_share_without(self, target: Node, record: Record) -> DRS:
        with self.ctx.cluster.without([record]):
            return dominant_resource_share(self._almost_lcas(target)[1])

    def _almost_lcas(self, target: Node) -> tuple[Node, Node]:
        lca = next(a for a in target.ancestors() if id(a) in self.on_path)
        return _below(self.ctx.node, lca), _below(target, lca)


def _below(cq: Node, lca: Node) -> Node:
    node = cq
    while node.parent is not lca:
        assert node.parent is not None
        node = node.parent
    return node


def _passes(strategy: str, preemptor_new: DRS, target_old: DRS, target_new: DRS) -> bool:
    if strategy == LESS_THAN_OR_EQUAL_TO_FINAL_SHARE:
        return compare_drs(preemptor_new, target_new) <= 0
    return compare_drs(preemptor_new, target_old) < 0


def _fair_targets(ctx: _Context, strategies: tuple[str, ...]) -> list[Target]:
    candidates = _fair_candidates(ctx)
    if not candidates:
        return []
    taken: list[Target] = []
    fits = False
    try:
        with ctx.cluster.adding(ctx.spec.name, ctx.usage):
            fits, retry = _first_strategy(ctx, candidates, strategies[0], taken)
            if not fits and len(strategies) > 1:
                fits = _second_strategy(ctx, retry, taken)
        if fits:
            taken[:] = _fill_back(ctx, taken, True)
            return list(taken)
        return []
    finally:
        for target in taken:
            ctx.cluster.charge(target.record)


def _fits_fair(ctx: _Context) -> bool:
    """Whether the preemptor fits, its own usage (charged for the shares) set aside."""
    node = ctx.node
    for fr, amount in ctx.usage.items():
        remove_usage(node, fr, amount)
    try:
        return ctx.fits(True)
    finally:
        for fr, amount in ctx.usage.items():
            add_usage(node, fr, amount)


def _take(ctx: _Context, record: Record, reason: str, taken: list[Target]) -> bool:
    ctx.cluster.release(record)
    taken.append(Target(record, reason))
    return _fits_fair(ctx)


def _first_strategy(ctx: _Context, candidates: list[Record], strategy: str,
                    taken: list[Target]) -> tuple[bool, list[Record]]:
    ordering = _TargetOrdering(ctx, candidates)
    retry: list[Record] = []
    within_nominal_after = all(not borrowing_with(ctx.node, fr, 0) for fr in ctx.frs)
    for cq in ordering:
        if cq is ctx.node:
            if _take(ctx, ordering.pop(cq), IN_CLUSTER_QUEUE, taken):
                return True, []
            continue
        if within_nominal_after:
            if _take(ctx, ordering.pop(cq), IN_COHORT_RECLAMATION, taken):
                return True, []
            continue
        preemptor_new, target_old = ordering.shares(cq)
        if preemptor_new.zero_weight_borrows() and not target_old.zero_weight_borrows():
            while ordering.has_workload(cq):
                retry.append(ordering.pop(cq))
            continue
        while ordering.has_workload(cq):
            record = ordering.pop(cq)
            target_new = ordering.target_share_without(cq, record)
            if _passes(strategy, preemptor_new, target_old, target_new):
                if _take(ctx, record, IN_COHORT_FAIR_SHARING, taken):
                    return True, []
                break
            retry.append(record)
    return False, retry


def _second_strategy(ctx: _Context, retry: list[Record], taken: list[Target]) -> bool:
    ordering = _TargetOrdering(ctx, retry)
    for cq in ordering:
        preemptor_new, target_old = ordering.shares(cq)
        record = ordering.pop(cq)
        if (compare_drs(preemptor_new, target_old) < 0
                and _take(ctx, record, IN_COHORT_FAIR_SHARING, taken)):
            return True
        ordering.drop(cq)
    return False

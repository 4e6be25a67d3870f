"""MCAD's quota trees and forests as a replay model: jobs are consumers of leaf nodes.

A job becomes one consumer asking its total (vcore as the tree's `cpu`, in whole cores,
rounded up) of every tree of the file, at the leaf named by its `quota` tag, else by its
`namespace` tag, its first group or its user, else at a leaf called `default`; its
`priority` tag is its priority. With one tree the consumer is allocated on that tree, with
several on all of them together (a forest) or on none. MCAD charges a consumer at the
lowest node on its leaf's path with room (it borrows above its leaf's quota while soft nodes
allow) and, when a consumer within its quota needs room, preempts lower-priority borrowers:
those jobs are revoked. As MCAD dispatches, the cluster is asked first: a job starts only if
the cluster's free room, plus what the tree would preempt for it, holds the whole job (the
tree's own quotas may exceed the cluster, and names no resource but its own); a job the
cluster has no room for waits for the cluster, whatever the tree says.

Per node the report shows what its jobs hold wherever MCAD charged them (used), what they
could hold now without preempting anybody (runtime: used plus what is free at the ceiling),
its quota (min) and how far its consumers may borrow (max: the quota of its nearest hard
ancestor, else of the root). The replay drives the pure `QuotaManager` directly (no actor:
it is single-threaded).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Collection, Mapping
from typing import Any

from quotactor.core.resources import Resource
from quotactor.quotatree import (
    AllocationResponse,
    ConsumerInfo,
    ConsumerTreeSpec,
    Mode,
    QuotaManager,
    QuotaTreeError,
)
from quotactor.sim.inputs.jobs import Job
from quotactor.sim.models.models import FULL_CLUSTER, GroupFigures, job_priority

__all__ = ["FOREST", "QuotaTreeModel", "load_quotatree_model"]

FOREST = "forest"
"""The forest the trees of a file with several trees form."""
DEFAULT_LEAF = "default"


class QuotaTreeModel:
    """A `QuotaManager` in normal mode holding the file's trees (and forest)."""

    name = "quotatree"

    def __init__(self, manager: QuotaManager) -> None:
        self.manager = manager
        self._trees = manager.tree_names()
        self._forest = len(self._trees) > 1
        self._state = {tree: manager.tree_state(tree) for tree in self._trees}
        self._leaves = {node for state in self._state.values() for node, info in state.items()
                        if not any(i["parent"] == node for i in state.values())}
        self._inner = {tree: sorted({i["parent"] for i in state.values()} - {None})
                       for tree, state in self._state.items()}
        """Per tree, the nodes that are not leaves."""
        self._revoked: list[str] = []
        self._changed = False
        """Whether a job started or left since the last `loosened`."""
        self._running: dict[str, tuple[str, Resource, int]] = {}
        """Per running job: its leaf, total and priority."""
        self._priorities: Counter[int] = Counter()
        """How many running jobs have each priority."""
        self._figures: dict[str, GroupFigures] | None = None
        """The figures, until the tree changes."""
        self._used: dict[str, Resource] = {}
        """Per node, the totals of the running jobs of the leaves below it, wherever MCAD
        charged them (a borrower is charged above its leaf, but it is still its leaf's)."""

    def group_of(self, job: Job) -> str:
        for name in (job.tags.get("quota"), job.tags.get("namespace"), *(job.groups[:1]),
                     job.user, DEFAULT_LEAF):
            if name and name in self._leaves:
                return name
        return job.tags.get("quota") or (job.groups[0] if job.groups else job.user)

    def submit(self, job: Job) -> str | None:
        leaf = self.group_of(job)
        specs: list[ConsumerTreeSpec] = []
        for tree in self._trees:
            state = self._state[tree]
            if leaf not in state:
                return f"no leaf {leaf} in quota tree {tree}"
            request = _request(job.total, state[leaf]["quota"])
            ceiling = _ceiling(state, leaf)
            over = sorted(n for n, v in request.items() if v > state[ceiling]["quota"][n])
            if over:
                limit = ", ".join(f"{state[ceiling]['quota'][n]} {n}" for n in over)
                return f"exceeds node {ceiling}'s quota ({limit}) in tree {tree}"
            specs.append(ConsumerTreeSpec(tree, leaf, request, job_priority(job)))
        self.manager.add_consumer(ConsumerInfo(job.job_id, tuple(specs)))
        return None

    def try_start(self, job: Job, free: Resource) -> str | None:
        """MCAD's order: the cluster first, counting what the tree would preempt for the job
        as room, then the tree. A tried allocation that finds no room is undone."""
        total = job.total
        if not total.fits_within_strict(free) and not self._could_preempt(job_priority(job)):
            return FULL_CLUSTER
        response = self._try(job.job_id)
        if response.allocated:
            freed = sum((self._running[v][1] for v in response.preempted_ids), Resource())
            if total.fits_within_strict(free + freed):
                self._charge(job.job_id, self.group_of(job), total, job_priority(job))
                for victim in sorted(response.preempted_ids):
                    self._release(victim)
                    self._revoked.append(victim)
                self._refresh()
                return None
        self._undo(job.job_id)
        if not total.fits_within_strict(free):
            return FULL_CLUSTER
        return f"quota tree node {self.group_of(job)}"

    def _could_preempt(self, priority: int) -> bool:
        """Whether a start could preempt anybody. MCAD preempts consumers of lower priority
        and, whatever their priority, consumers charged at the root, where borrowers charged
        at the inner nodes on the way may be pushed first; a consumer charged at its leaf
        moves only for a consumer of higher priority."""
        return (any(p < priority for p in self._priorities)
                or any(self._state[tree][node]["consumers"]
                       for tree, nodes in self._inner.items() for node in nodes))

    def _try(self, job_id: str) -> AllocationResponse:
        if self._forest:
            return self.manager.try_allocate_forest(FOREST, job_id)
        return self.manager.try_allocate(self._trees[0], job_id)

    def _undo(self, job_id: str) -> None:
        if self._forest:
            self.manager.undo_allocate_forest(FOREST, job_id)
        else:
            self.manager.undo_allocate(self._trees[0], job_id)

    def _charge(self, job_id: str, leaf: str, total: Resource, priority: int) -> None:
        self._running[job_id] = (leaf, total, priority)
        self._priorities[priority] += 1
        for node in self._path(leaf):
            self._used[node] = self._used.get(node, Resource()) + total

    def _release(self, job_id: str) -> None:
        leaf, total, priority = self._running.pop(job_id)
        self._priorities[priority] -= 1
        if not self._priorities[priority]:
            del self._priorities[priority]
        for node in self._path(leaf):
            self._used[node] = self._used[node] - total

    def _path(self, leaf: str) -> list[str]:
        """The leaf and its ancestors, in every tree (a forest's trees share node names)."""
        out: list[str] = []
        for tree, state in self._state.items():
            node: str | None = leaf
            while node is not None:
                out.append(f"{tree}/{node}" if self._forest else node)
                node = state[node]["parent"]
        return out

    def end(self, job_id: str) -> None:
        if job_id in self._running:
            self._release(job_id)
            if self._forest:
                self.manager.deallocate_forest(FOREST, job_id)
            else:
                self.manager.deallocate(self._trees[0], job_id)
            self._refresh()
        self.manager.remove_consumer(job_id)

    def revoked(self) -> list[str]:
        out, self._revoked = self._revoked, []
        return out

    def loosened(self) -> Collection[str] | None:
        """Every leaf once the tree changed since the last call, else none. An end frees
        room below some ceiling; a start may slide lower-priority consumers up to where a
        refused job can preempt them."""
        if not self._changed:
            return ()
        self._changed = False
        return None

    def figures(self) -> dict[str, GroupFigures]:
        """Per node: used by its jobs, runtime = used plus what is free at its borrowing
        ceiling (what it could hold now without preempting), min = its quota, max = its
        ceiling's quota."""
        if self._figures is not None:
            return self._figures
        out: dict[str, GroupFigures] = {}
        for tree, state in self._state.items():
            for node, info in state.items():
                name = f"{tree}/{node}" if self._forest else node
                used = self._used.get(name, Resource())
                out[name] = GroupFigures(used, used + _vcore(_room(state, node)),
                                         _vcore(info["quota"]),
                                         _vcore(state[_ceiling(state, node)]["quota"]))
        self._figures = out
        return out

    def _refresh(self) -> None:
        self._changed = True
        self._state = {tree: self.manager.tree_state(tree) for tree in self._trees}
        self._figures = None


def load_quotatree_model(text: str) -> QuotaTreeModel:
    """A QuotaTree JSON object, or a JSON list of them (a forest); `QuotaTreeError` (or
    `ValueError` for bad JSON) says what is wrong."""
    document: Any = json.loads(text)
    trees = document if isinstance(document, list) else [document]
    if not trees:
        raise QuotaTreeError("no quota tree in the file")
    manager = QuotaManager()
    names = [manager.add_tree_from_json(json.dumps(tree)) for tree in trees]
    if len(names) > 1:
        manager.add_forest(FOREST)
        for name in names:
            manager.add_tree_to_forest(FOREST, name)
    manager.set_mode(Mode.NORMAL)
    return QuotaTreeModel(manager)


def _ceiling(state: Mapping[str, Mapping[str, Any]], node: str) -> str:
    """The node whose quota bounds what `node`'s consumers may borrow: the nearest hard one
    on its path (itself included), else the root."""
    current = node
    while True:
        info = state[current]
        if info["hard"] or info["parent"] is None:
            return current
        current = info["parent"]


def _room(state: Mapping[str, Mapping[str, Any]], node: str) -> dict[str, int]:
    """What is free at `node`'s borrowing ceiling: how much more its jobs could hold now
    without preempting anybody (everything below a ceiling is charged within its quota)."""
    info = state[_ceiling(state, node)]
    return {name: max(0, quota - info["allocated"].get(name, 0))
            for name, quota in info["quota"].items()}


def _request(total: Resource, names: Mapping[str, int]) -> dict[str, int]:
    """The job's total in the tree's resource names (vcore as cpu cores, rounded up)."""
    out: dict[str, int] = {}
    for name in names:
        if name == "cpu":
            out[name] = math.ceil(total.get("vcore", 0) / 1000)
        else:
            out[name] = total.get(name, 0)
    return out


def _vcore(amounts: Mapping[str, int]) -> Resource:
    return Resource({("vcore" if k == "cpu" else k): v * 1000 if k == "cpu" else v
                     for k, v in amounts.items()})

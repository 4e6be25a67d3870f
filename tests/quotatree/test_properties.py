"""Invariants of the allocation algorithm under random trees and random operation sequences.

- every node's allocated equals the sum of the requests of the consumers charged at or below
  it, and the consumers on the nodes are exactly the allocated ones;
- a consumer is charged on its group's path, never above a hard node;
- in NORMAL mode no node's allocation exceeds its quota once forced allocations are gone;
- a refused allocation changes nothing, and undo restores the exact prior state.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quotactor.quotatree import ConsumerInfo, Mode, QuotaManager

T = "T"
RESOURCES = ("cpu", "gpu")


@dataclass(frozen=True)
class TreeShape:
    parents: tuple[int | None, ...]
    quotas: tuple[tuple[int, int], ...]
    hard: tuple[bool, ...]

    def names(self) -> list[str]:
        return [f"n{i}" for i in range(len(self.parents))]

    def leaves(self) -> list[str]:
        return [f"n{i}" for i in range(len(self.parents)) if i not in self.parents]

    def doc(self) -> str:
        nodes = {
            f"n{i}": {"parent": "nil" if p is None else f"n{p}", "hard": str(h).lower(),
                      "quota": {r: str(q) for r, q in zip(RESOURCES, quota, strict=True)}}
            for i, (p, quota, h) in enumerate(zip(self.parents, self.quotas, self.hard,
                                                  strict=True))
        }
        return json.dumps({"kind": "QuotaTree", "metadata": {"name": T},
                           "spec": {"resourceNames": list(RESOURCES), "nodes": nodes}})


@st.composite
def shapes(draw: Any) -> TreeShape:
    size = draw(st.integers(2, 9))
    parents = (None, *(draw(st.integers(0, i - 1)) for i in range(1, size)))
    below = [1] * size
    for i in range(size - 1, 0, -1):
        below[parents[i]] += below[i]  # type: ignore[index]
    # inner nodes tend to have more quota than a leaf, so borrowing and sliding happen
    quotas = tuple(
        (draw(st.integers(0, 3)) + draw(st.integers(0, 2)) * (n - 1),
         draw(st.integers(0, 1)) + n)
        for n in below
    )
    hard = tuple(draw(st.sampled_from((False, False, False, True))) for _ in range(size))
    return TreeShape(parents, quotas, hard)


@dataclass(frozen=True)
class Spec:
    group: int
    request: tuple[int, int]
    priority: int
    ctype: int
    unpreemptable: bool


specs = st.builds(Spec, st.integers(0, 9),
                  st.tuples(st.integers(0, 3), st.sampled_from((0, 0, 0, 1))),
                  st.integers(-1, 3), st.integers(0, 1), st.booleans())
operations = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(["allocate", "try-undo", "try-keep"]), specs),
        st.tuples(st.just("deallocate"), st.integers(0, 40)),
    ),
    min_size=10,
    max_size=40,
)


def _info(cid: str, spec: Spec, shape: TreeShape) -> ConsumerInfo:
    # mostly leaves (the normal case); now and then any node, which NORMAL mode refuses
    nodes = shape.leaves() if spec.group < 8 else shape.names()
    group = nodes[spec.group % len(nodes)]
    return ConsumerInfo.from_json({"kind": "Consumer", "spec": {"id": cid, "trees": [{
        "treeName": T, "groupID": group,
        "request": dict(zip(RESOURCES, spec.request, strict=True)),
        "priority": spec.priority, "type": spec.ctype, "unPreemptable": spec.unpreemptable,
    }]}})


def _check(qm: QuotaManager, shape: TreeShape, requests: dict[str, tuple[int, int]],
           groups: dict[str, str], within_quota: bool) -> None:
    state = qm.tree_state(T)
    names = shape.names()
    parent = {n: state[n]["parent"] for n in state}
    charged = {cid: node for node, s in state.items() for cid in s["consumers"]}
    assert set(charged) == {cid for cid in groups if qm.is_allocated(T, cid)}
    for node in names:
        below = [cid for cid, at in charged.items() if node in _path(at, parent)]
        expected = tuple(sum(requests[cid][i] for cid in below) for i in range(2))
        assert tuple(state[node]["allocated"][r] for r in RESOURCES) == expected, node
        if within_quota:
            assert all(state[node]["allocated"][r] <= state[node]["quota"][r]
                       for r in RESOURCES), node
    for cid, at in charged.items():
        path = _path(groups[cid], parent)
        assert at in path, (cid, at)
        below_anode = path[:path.index(at)]
        assert not any(state[n]["hard"] for n in below_anode), (cid, at)


def _path(node: str | None, parent: dict[str, str | None]) -> list[str]:
    path = []
    while node is not None:
        path.append(node)
        node = parent[node]
    return path


def _snapshot(qm: QuotaManager, ids: list[str]) -> tuple[Any, set[str]]:
    return qm.tree_state(T), {cid for cid in ids if qm.is_allocated(T, cid)}


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(shape=shapes(), ops=operations)
def test_normal_mode_keeps_every_invariant(shape: TreeShape, ops: list[Any]) -> None:
    qm = QuotaManager()
    qm.add_tree_from_json(shape.doc())
    qm.set_mode(Mode.NORMAL)
    requests: dict[str, tuple[int, int]] = {}
    groups: dict[str, str] = {}
    for step, (kind, arg) in enumerate(ops):
        ids = list(groups)
        if kind == "deallocate":
            live = [cid for cid in ids if qm.is_allocated(T, cid)]
            if live:
                assert qm.deallocate(T, live[arg % len(live)])
        else:
            cid = f"c{step}"
            info = _info(cid, arg, shape)
            qm.add_consumer(info)
            requests[cid], groups[cid] = arg.request, info.trees[0].group_id
            before = _snapshot(qm, ids)
            if kind == "allocate":
                response = qm.allocate(T, cid)
                if not response.allocated:
                    assert _snapshot(qm, ids) == before
                assert response.preempted_ids <= set(ids)
                assert not any(qm.is_allocated(T, p) for p in response.preempted_ids)
            else:
                qm.try_allocate(T, cid)
                if kind == "try-undo":
                    assert qm.undo_allocate(T, cid)
                    assert _snapshot(qm, ids) == before
                    assert not qm.is_allocated(T, cid)
        _check(qm, shape, requests, groups, within_quota=True)
    for cid in groups:
        qm.deallocate(T, cid)
    assert all(s["allocated"] == {"cpu": 0, "gpu": 0} and not s["consumers"]
               for s in qm.tree_state(T).values())


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(shape=shapes(), forced=st.lists(specs, min_size=1, max_size=6), ops=operations)
def test_forced_overcommitment_drains_back_within_quota(
    shape: TreeShape, forced: list[Spec], ops: list[Any]
) -> None:
    qm = QuotaManager()
    qm.add_tree_from_json(shape.doc())
    requests: dict[str, tuple[int, int]] = {}
    groups: dict[str, str] = {}
    for i, spec in enumerate(forced):
        info = _info(f"f{i}", spec, shape)
        qm.add_consumer(info)
        requests[info.id], groups[info.id] = spec.request, info.trees[0].group_id
        assert qm.allocate(T, info.id).allocated
    _check(qm, shape, requests, groups, within_quota=False)
    qm.set_mode(Mode.NORMAL)
    normal: list[str] = []
    for step, (kind, arg) in enumerate(ops):
        if kind == "deallocate":
            live = [cid for cid in groups if qm.is_allocated(T, cid)]
            if live:
                assert qm.deallocate(T, live[arg % len(live)])
            continue
        cid = f"c{step}"
        info = _info(cid, arg, shape)
        qm.add_consumer(info)
        requests[cid], groups[cid] = arg.request, info.trees[0].group_id
        normal.append(cid)
        qm.allocate(T, cid)
        _check(qm, shape, requests, groups, within_quota=False)
    for i in range(len(forced)):
        qm.deallocate(T, f"f{i}")
        assert not qm.is_allocated(T, f"f{i}")
    groups = {cid: g for cid, g in groups.items() if cid in normal}
    _check(qm, shape, requests, groups, within_quota=True)

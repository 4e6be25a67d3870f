"""Quota tree allocation at scale: 1,000 nodes, 10,000 consumers, MCAD semantics.

Rows (all measured in this run, same consumers, same order):
- hierarchical: a 4-level tree (root, 10 orgs, 100 departments, 889 teams), soft nodes with a
  few hard departments, oversubscribed so that consumers borrow, slide up and down and are
  preempted; allocate all 10,000 in NORMAL mode, then deallocate the survivors in random order.
- flat baseline: the same consumers on a flat tree (root + 999 hard teams with ample quota):
  every allocation lands at its group leaf, nothing slides; the cost of the bookkeeping alone.
- hierarchical via actor: the hierarchical run through `SharedQuotaManager` from 4 threads.

Memory is what the manager holds with everything allocated (tracemalloc, a separate pass).
Run: `python bench/quotatree_bench.py [--quick]`.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any

from quotactor.quotatree import ConsumerInfo, Mode, QuotaManager, SharedQuotaManager

TREE = "bench"
RESOURCES = ("cpu", "memory")


@dataclass(frozen=True)
class Workload:
    """Both trees' JSON and the consumers (their groups are team names, in both trees)."""

    tree: str
    flat_tree: str
    consumers: list[ConsumerInfo]


def _node(parent: str | None, cpu: int, memory: int, hard: bool = False) -> dict[str, Any]:
    return {"parent": parent or "nil", "hard": str(hard).lower(),
            "quota": {"cpu": str(cpu), "memory": str(memory)}}


def make_workload(consumers: int = 10_000, seed: int = 7) -> Workload:
    rng = random.Random(seed)
    nodes: dict[str, dict[str, Any]] = {}
    teams = [f"team-{i}" for i in range(889)]
    depts = [f"dept-{o}-{d}" for o in range(10) for d in range(10)]
    team_cpu, team_mem = 16, 32
    per_dept: dict[str, list[str]] = {d: [] for d in depts}
    for i, team in enumerate(teams):
        per_dept[depts[i % len(depts)]].append(team)
    org_cpu: dict[int, int] = {}
    for d, dept in enumerate(depts):
        members = per_dept[dept]
        cpu = int(len(members) * team_cpu * 1.2)
        nodes[dept] = _node(f"org-{d // 10}", cpu, cpu * 2, hard=d % 10 == 3)
        org_cpu[d // 10] = org_cpu.get(d // 10, 0) + cpu
        for team in members:
            nodes[team] = _node(dept, team_cpu, team_mem)
    for o in range(10):
        nodes[f"org-{o}"] = _node("root", org_cpu[o], org_cpu[o] * 2)
    root_cpu = int(sum(org_cpu.values()) * 0.9)
    nodes["root"] = _node(None, root_cpu, root_cpu * 2)
    assert len(nodes) == 1000
    tree = json.dumps({"kind": "QuotaTree", "metadata": {"name": TREE},
                       "spec": {"resourceNames": list(RESOURCES), "nodes": nodes}})
    flat = {"root": _node(None, 10**9, 10**9)}
    flat.update({team: _node("root", 10**6, 10**6, hard=True) for team in teams})
    flat.update({f"spare-{i}": _node("root", 1, 1, hard=True) for i in range(999 - len(teams))})
    flat_tree = json.dumps({"kind": "QuotaTree", "metadata": {"name": TREE},
                            "spec": {"resourceNames": list(RESOURCES), "nodes": flat}})
    infos = []
    for i in range(consumers):
        entry = {"treeName": TREE, "groupID": rng.choice(teams),
                 "request": {"cpu": rng.randint(1, 4), "memory": rng.randint(1, 8)},
                 "priority": rng.choice((0, 0, 1, 2, 3)),
                 "unPreemptable": rng.random() < 0.1}
        infos.append(ConsumerInfo.from_json({"kind": "Consumer",
                                             "spec": {"id": f"c{i}", "trees": [entry]}}))
    return Workload(tree, flat_tree, infos)


def _prepare(manager: Any, tree: str, infos: list[ConsumerInfo]) -> None:
    manager.add_tree_from_json(tree)
    for info in infos:
        manager.add_consumer(info)
    manager.set_mode(Mode.NORMAL)


def _timed(calls: list[Callable[[], Any]]) -> tuple[list[float], list[Any], float]:
    clock = time.perf_counter
    latencies, results = [], []
    began = clock()
    for call in calls:
        start = clock()
        results.append(call())
        latencies.append(clock() - start)
    return latencies, results, clock() - began


def _stats(latencies: list[float], elapsed: float) -> dict[str, float]:
    ordered = sorted(latencies)
    return {"ops_per_s": len(ordered) / elapsed,
            "p50_us": statistics.median(ordered) * 1e6,
            "p99_us": ordered[int(len(ordered) * 0.99)] * 1e6}


def run_direct(tree: str, infos: list[ConsumerInfo], seed: int = 11) -> dict[str, Any]:
    qm = QuotaManager()
    _prepare(qm, tree, infos)
    ids = [info.id for info in infos]
    lat, results, elapsed = _timed([partial(qm.allocate, TREE, cid) for cid in ids])
    allocated = sum(r.allocated for r in results)
    preempted = sum(len(r.preempted_ids) for r in results)
    survivors = [cid for cid in ids if qm.is_allocated(TREE, cid)]
    random.Random(seed).shuffle(survivors)
    dlat, dres, delapsed = _timed([partial(qm.deallocate, TREE, cid) for cid in survivors])
    assert all(dres)
    assert all(s["allocated"] == {"cpu": 0, "memory": 0} for s in qm.tree_state(TREE).values())
    return {"allocate": _stats(lat, elapsed), "deallocate": _stats(dlat, delapsed),
            "allocated": allocated, "preempted": preempted, "survivors": len(survivors)}


def run_actor(tree: str, infos: list[ConsumerInfo], threads: int = 4) -> dict[str, Any]:
    with SharedQuotaManager.start() as shared:
        _prepare(shared, tree, infos)
        chunks = [infos[i::threads] for i in range(threads)]

        def allocate(chunk: list[ConsumerInfo]) -> list[float]:
            return _timed([partial(shared.allocate, TREE, info.id) for info in chunk])[0]

        def deallocate(chunk: list[ConsumerInfo]) -> list[float]:
            return _timed([partial(shared.deallocate, TREE, info.id) for info in chunk])[0]

        rows = {}
        for name, work in (("allocate", allocate), ("deallocate", deallocate)):
            began = time.perf_counter()
            with ThreadPoolExecutor(threads) as pool:
                latencies = [x for part in pool.map(work, chunks) for x in part]
            rows[name] = _stats(latencies, time.perf_counter() - began)
        return rows


def held_memory(tree: str, infos: list[ConsumerInfo]) -> float:
    """MiB held by a manager with the tree, the consumer specs and all allocations."""
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    qm = QuotaManager()
    _prepare(qm, tree, infos)
    for info in infos:
        qm.allocate(TREE, info.id)
    held = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    del qm
    return held / 2**20


def table(rows: list[tuple[str, dict[str, Any], float | None]]) -> str:
    lines = [
        "| run | alloc ops/s | alloc p50 µs | alloc p99 µs | dealloc ops/s | dealloc p50 µs"
        " | dealloc p99 µs | held MiB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r, mib in rows:
        a, d = r["allocate"], r["deallocate"]
        lines.append(
            f"| {name} | {a['ops_per_s']:,.0f} | {a['p50_us']:.0f} | {a['p99_us']:.0f} |"
            f" {d['ops_per_s']:,.0f} | {d['p50_us']:.0f} | {d['p99_us']:.0f} |"
            f" {'-' if mib is None else f'{mib:.1f}'} |"
        )
    return "\n".join(lines)


def main(quick: bool = False) -> None:
    work = make_workload(2_000 if quick else 10_000)
    hier = run_direct(work.tree, work.consumers)
    flat = run_direct(work.flat_tree, work.consumers)
    actor = run_actor(work.tree, work.consumers)
    rows = [
        ("hierarchical (direct)", hier, held_memory(work.tree, work.consumers)),
        ("flat baseline (direct)", flat, held_memory(work.flat_tree, work.consumers)),
        ("hierarchical via actor, 4 threads", actor, None),
    ]
    print(f"1,000 nodes, {len(work.consumers):,} consumers; hierarchical: "
          f"{hier['allocated']:,} allocations succeeded, {hier['preempted']:,} preemptions, "
          f"{hier['survivors']:,} allocated at the end (then all deallocated)")
    print(table(rows))


if __name__ == "__main__":
    main(quick="--quick" in sys.argv)

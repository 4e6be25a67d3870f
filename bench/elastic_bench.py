"""Elastic quota engine at scale: 1,000 quota groups, 10,000 pods.

Builds a three-level tree (10 departments x 9 teams x 10 leaf quotas = 1,000 groups) on a
contended cluster (requests exceed the total, so every runtime comes from the water-filling),
charges 10,000 pods, then measures:

* a full recompute from scratch (`compute_figures`, the baseline) against the incremental
  engine after one pod change (p50/p99 over many changes), for changes absorbed below the
  root, changes that reach the root, and a cluster total change (every parent re-split);
* admission checks per second, directly and through the actor (one `ask` each);
* memory held by the engine (tracemalloc).

Absolute times drift with the machine; the ratios are what to compare.
Run: `python bench/elastic_bench.py [--seed N] [--changes N]`.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

from quotactor.elastic import (
    ElasticQuotaManager,
    ElasticQuotaService,
    QuotaSpec,
    compute_figures,
)

GI = 2**30
DEPARTMENTS, TEAMS, LEAVES, PODS = 10, 9, 10, 10_000
TOTAL = {"cpu": 4_000_000, "memory": 16_000 * GI}


def build_tree(manager: ElasticQuotaManager) -> list[str]:
    """The 1,000 groups, with mins that the webhook accepts; returns the leaf names.

    Departments 0-8 are saturated: their teams ask for more than their max, so a pod change
    there is absorbed by the team's split. Department 9 is growing: nothing below it is at
    its max, so every pod change there reaches the root's split. A change of the cluster
    total is the worst case: every parent is split again.
    """
    leaves: list[str] = []
    for d in range(DEPARTMENTS):
        dept = f"dept-{d}"
        growing = d == DEPARTMENTS - 1
        scale = 10 if growing else 1
        manager.upsert(QuotaSpec(dept, is_parent=True, min={"cpu": 300_000, "memory": 1200 * GI},
                                 max={"cpu": 1_000_000 * scale, "memory": 4000 * GI * scale}))
        for t in range(TEAMS):
            team = f"{dept}-team-{t}"
            manager.upsert(QuotaSpec(team, parent=dept, is_parent=True,
                                     min={"cpu": 30_000, "memory": 120 * GI},
                                     max={"cpu": 200_000 * scale, "memory": 800 * GI * scale}))
            for leaf_index in range(LEAVES):
                leaf = f"{team}-q{leaf_index}"
                manager.upsert(QuotaSpec(leaf, parent=team, min={"cpu": 3000, "memory": 12 * GI},
                                         max={"cpu": 40_000 * scale, "memory": 160 * GI * scale},
                                         allow_lent=leaf_index % 4 != 0))
                leaves.append(leaf)
    return leaves


def charge_pods(manager: ElasticQuotaManager, leaves: list[str], rng: random.Random) -> None:
    for index in range(PODS):
        pod_id = f"pod-{index}"
        manager.add_pod(pod_id, rng.choice(leaves), pod_request(rng), rng.randrange(10))
        if rng.random() < 0.7:
            manager.assign_pod(pod_id)


def pod_request(rng: random.Random) -> dict[str, int]:
    return {"cpu": rng.choice((500, 1000, 2000, 4000, 8000)),
            "memory": rng.choice((1, 2, 4, 8, 16)) * GI}


def timed(action: Callable[[], Any]) -> float:
    began = time.perf_counter()
    action()
    return time.perf_counter() - began


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def time_pod_adds(manager: ElasticQuotaManager, leaves: list[str], count: int, tag: str,
                  rng: random.Random) -> tuple[list[float], list[int], list[float]]:
    """Per change: seconds for add + fresh runtime, parent splits, seconds for an assign."""
    adds: list[float] = []
    splits: list[int] = []
    assigns: list[float] = []
    for index in range(count):
        leaf, pod_id, request = rng.choice(leaves), f"{tag}-{index}", pod_request(rng)
        before = manager.split_count
        began = time.perf_counter()
        manager.add_pod(pod_id, leaf, request)
        manager.runtime(leaf)
        adds.append(time.perf_counter() - began)
        splits.append(manager.split_count - before)
        began = time.perf_counter()
        manager.assign_pod(pod_id)
        manager.runtime(leaf)
        assigns.append(time.perf_counter() - began)
    return adds, splits, assigns


def engine_memory_mib(seed: int) -> float:
    """Memory held by a freshly built engine (a separate build: tracemalloc slows timings)."""
    tracemalloc.start()
    manager = ElasticQuotaManager(total=TOTAL)
    charge_pods(manager, build_tree(manager), random.Random(seed))
    manager.statuses()
    current = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return current / 2**20


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--changes", type=int, default=500, help="pod changes per kind")
    args = parser.parse_args()
    rng = random.Random(args.seed)

    manager = ElasticQuotaManager(total=TOTAL)
    build_s = timed(lambda: charge_pods(manager, build_tree(manager), rng))
    first_settle_s = timed(manager.statuses)
    leaves = [s.name for s in manager.specs() if not s.is_parent and "-q" in s.name]
    saturated = [leaf for leaf in leaves if not leaf.startswith(f"dept-{DEPARTMENTS - 1}-")]
    growing = [leaf for leaf in leaves if leaf.startswith(f"dept-{DEPARTMENTS - 1}-")]

    specs, pods = manager.specs(), manager.pods()
    full_s = statistics.median(timed(lambda: compute_figures(specs, pods, TOTAL))
                               for _ in range(5))

    absorbed, absorbed_splits, assigns = time_pod_adds(manager, saturated, args.changes, "a",
                                                       rng)
    rippling, rippling_splits, _ = time_pod_adds(manager, growing, args.changes // 5, "r", rng)
    total_changes = []
    for index in range(20):
        manager.set_total({"cpu": TOTAL["cpu"] - 1000 * (index % 2 + 1),
                           "memory": TOTAL["memory"]})
        total_changes.append(timed(manager.statuses))

    expected = compute_figures(manager.specs(), manager.pods(), manager.total)
    assert all(s.runtime == expected[s.name].runtime for s in manager.statuses())

    checks = 20_000
    asks = [(rng.choice(leaves), pod_request(rng)) for _ in range(checks)]
    direct_s = timed(lambda: [manager.admit(q, r) for q, r in asks])
    actor_checks = 2000
    with ElasticQuotaService.start(TOTAL) as service:
        service.upsert(QuotaSpec("solo", max={"cpu": 10_000}))
        actor_s = timed(lambda: [service.admit("solo", r) for _, r in asks[:actor_checks]])

    groups = len(manager.quota_names()) - 3
    parents = sum(1 for s in manager.specs() if s.is_parent) + 1
    p50 = percentile(absorbed, 0.5)
    rows = [
        ("quota groups / parents / pods",
         f"{groups} / {parents} / {len(manager.pods())}"),
        ("build: 1,000 upserts + 10,000 pods (incremental)", f"{build_s * 1e3:.0f} ms"),
        ("baseline: full recompute from scratch (median of 5)", ms(full_s)),
        ("first settle of all runtimes (101 parent splits)", ms(first_settle_s)),
        ("pod add absorbed below the root: p50", ms(p50)),
        ("pod add absorbed below the root: p99", ms(percentile(absorbed, 0.99))),
        ("  parent splits per change: mean / max",
         f"{statistics.mean(absorbed_splits):.1f} / {max(absorbed_splits)}"),
        ("pod add reaching the root's split: p50", ms(percentile(rippling, 0.5))),
        ("pod add reaching the root's split: p99", ms(percentile(rippling, 0.99))),
        ("  parent splits per change: mean / max",
         f"{statistics.mean(rippling_splits):.1f} / {max(rippling_splits)}"),
        ("pod assign (used only, no split): p50", ms(percentile(assigns, 0.5))),
        ("cluster total change (every parent re-split): median",
         ms(statistics.median(total_changes))),
        ("speedup, absorbed pod add p50 vs full recompute", f"{full_s / p50:.0f}x"),
        ("admission checks, direct", f"{checks / direct_s:,.0f} /s"),
        ("admission checks, through the actor (one ask each)",
         f"{actor_checks / actor_s:,.0f} /s"),
        ("engine memory (tracemalloc: tree + pods)", f"{engine_memory_mib(args.seed):.1f} MiB"),
    ]
    width = max(len(name) for name, _ in rows)
    print(f"{'metric'.ljust(width)}  value")
    print(f"{'-' * width}  {'-' * 20}")
    for name, value in rows:
        print(f"{name.ljust(width)}  {value}")


if __name__ == "__main__":
    main()

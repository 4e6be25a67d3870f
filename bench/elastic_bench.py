"""Elastic quota engine at scale: 1,000 quota groups, 10,000 pods.

Builds a three-level tree (10 departments x 9 teams x 10 leaf quotas = 1,000 groups) on a
contended cluster (requests exceed the total, so every runtime comes from the water-filling),
charges 10,000 pods, then measures:

* a full recompute from scratch (`compute_figures`, the baseline) against the incremental
  engine after one pod change (p50/p99 over many changes);
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
    """The 1,000 groups, with mins that the webhook accepts; returns the leaf names."""
    leaves: list[str] = []
    for d in range(DEPARTMENTS):
        dept = f"dept-{d}"
        manager.upsert(QuotaSpec(dept, is_parent=True, min={"cpu": 300_000, "memory": 1200 * GI},
                                 max={"cpu": 1_000_000, "memory": 4000 * GI}))
        for t in range(TEAMS):
            team = f"{dept}-team-{t}"
            manager.upsert(QuotaSpec(team, parent=dept, is_parent=True,
                                     min={"cpu": 30_000, "memory": 120 * GI},
                                     max={"cpu": 200_000, "memory": 800 * GI}))
            for leaf_index in range(LEAVES):
                leaf = f"{team}-q{leaf_index}"
                manager.upsert(QuotaSpec(leaf, parent=team, min={"cpu": 3000, "memory": 12 * GI},
                                         max={"cpu": 40_000, "memory": 160 * GI},
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--changes", type=int, default=1000, help="pod changes to time")
    args = parser.parse_args()
    rng = random.Random(args.seed)

    tracemalloc.start()
    manager = ElasticQuotaManager(total=TOTAL)
    build_s = timed(lambda: charge_pods(manager, build_tree(manager), rng))
    leaves = [s.name for s in manager.specs() if not s.is_parent and "-q" in s.name]
    first_settle_s = timed(manager.statuses)
    engine_mib = tracemalloc.get_traced_memory()[0] / 2**20
    tracemalloc.stop()

    specs, pods = manager.specs(), manager.pods()
    full_runs = [timed(lambda: compute_figures(specs, pods, TOTAL)) for _ in range(5)]
    full_s = statistics.median(full_runs)

    incremental: list[float] = []
    splits: list[int] = []
    assign_only: list[float] = []
    for index in range(args.changes):
        leaf = rng.choice(leaves)
        before = manager.split_count
        pod_id = f"change-{index}"
        incremental.append(timed(lambda: (manager.add_pod(pod_id, leaf, pod_request(rng)),  # noqa: B023
                                          manager.runtime(leaf))))  # noqa: B023
        splits.append(manager.split_count - before)
        assign_only.append(timed(lambda: (manager.assign_pod(pod_id),  # noqa: B023
                                          manager.runtime(leaf))))  # noqa: B023

    expected = compute_figures(manager.specs(), manager.pods(), TOTAL)
    assert all(s.runtime == expected[s.name].runtime for s in manager.statuses())

    checks = 20_000
    asks = [(rng.choice(leaves), pod_request(rng)) for _ in range(checks)]
    direct_s = timed(lambda: [manager.admit(q, r) for q, r in asks])
    actor_checks = 2000
    with ElasticQuotaService.start(TOTAL) as service:
        service.upsert(QuotaSpec("solo", max={"cpu": 10_000}))
        actor_s = timed(lambda: [service.admit("solo", r) for _, r in asks[:actor_checks]])

    groups = len(manager.quota_names()) - 3
    p50, p99 = percentile(incremental, 0.5), percentile(incremental, 0.99)
    rows = [
        ("quota groups / pods", f"{groups} / {PODS + args.changes}"),
        ("build (upserts + pods, incremental)", f"{build_s * 1e3:.0f} ms"),
        ("first full settle of the engine", f"{first_settle_s * 1e3:.1f} ms"),
        ("full recompute from scratch (baseline, median of 5)", f"{full_s * 1e3:.1f} ms"),
        ("incremental after one pod add: p50", f"{p50 * 1e3:.3f} ms"),
        ("incremental after one pod add: p99", f"{p99 * 1e3:.3f} ms"),
        ("  parent splits per pod add: mean / max",
         f"{statistics.mean(splits):.1f} / {max(splits)} (of {groups - 900 + 1} parents)"),
        ("incremental after one assign (used only): p50",
         f"{percentile(assign_only, 0.5) * 1e3:.3f} ms"),
        ("speedup p50 vs full recompute", f"{full_s / p50:.0f}x"),
        ("admission checks, direct", f"{checks / direct_s:,.0f} /s"),
        ("admission checks, through the actor (ask)", f"{actor_checks / actor_s:,.0f} /s"),
        ("engine memory (tracemalloc, tree + pods)", f"{engine_mib:.1f} MiB"),
    ]
    width = max(len(name) for name, _ in rows)
    print(f"{'metric'.ljust(width)}  value")
    print(f"{'-' * width}  {'-' * 24}")
    for name, value in rows:
        print(f"{name.ljust(width)}  {value}")


if __name__ == "__main__":
    main()

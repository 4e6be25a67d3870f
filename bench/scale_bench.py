"""Scale: many users, each with live usage. RSS, OS threads and decision throughput.

Every user holds one running application, so no tracker can be retired; then 8 callers run
increase/decrease pairs on existing users. Compare the throughput across sizes (ratios hold on
a noisy machine; absolute times drift). Also timed: one full pass of CPython's cyclic garbage
collector over the live state (objects it tracks, and how long the pass holds the GIL), which
the interpreter runs on its own whenever long-lived objects have grown by a quarter, and the
garbage the manager leaves behind when it stops (none is expected: stopped trackers are freed
at once).
"""

from __future__ import annotations

import gc
import random
import sys
import threading
import time
from typing import Any

from markdown import header
from tracking_bench import drive
from workload import Workload, make_workload

from quotactor.ugm import UserGroupManager


def rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def populate(ugm: UserGroupManager, work: Workload) -> float:
    """Give every user one running app; return seconds taken (4 threads)."""
    users = work.users

    def run(part: int) -> None:
        rng = random.Random(part)
        for user in users[part::4]:
            ugm.increase_tracked_resource(rng.choice(work.leaves), f"hold-{user.user}",
                                          {"memory": 2**20}, user)

    began = time.perf_counter()
    threads = [threading.Thread(target=run, args=(p,)) for p in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - began


def measure(n_users: int, pairs: int) -> dict[str, Any]:
    work = make_workload(n_users=n_users)
    before = rss_mib()
    with UserGroupManager.start(work.table, timeout=120.0) as ugm:
        setup = populate(ugm, work)
        stats = ugm.stats()
        result = drive(ugm, work, threads=8, pairs=pairs)
        threads, rss = threading.active_count(), rss_mib() - before
        gc.collect()
        tracked = len(gc.get_objects())
        began = time.perf_counter()
        gc.collect()
        full_gc = time.perf_counter() - began
    return {
        "users": n_users, "trackers": stats["users"] + stats["groups"], "setup_s": setup,
        "rss_mib": rss, "threads": threads, "gc_objects": tracked, "full_gc_ms": full_gc * 1e3,
        "garbage_after_stop": gc.collect(), **result,
    }


def run(quick: bool = False) -> list[dict[str, Any]]:
    sizes = (1000, 10_000) if quick else (1000, 10_000, 100_000)
    return [measure(n, 300 if quick else 1500) for n in sizes]


def table(rows: list[dict[str, Any]]) -> str:
    base = rows[0]["calls_per_s"]
    lines = header(
        "users", "trackers", "setup s", "RSS MiB (added)", "OS threads", "calls/s (8 callers)",
        "p50 µs", "p99 µs", "vs 1k users", "objects the collector tracks", "full collection ms",
        "garbage left after stop",
    )
    for r in rows:
        lines.append(
            f"| {r['users']:,} | {r['trackers']:,} | {r['setup_s']:.1f} | {r['rss_mib']:.0f} |"
            f" {r['threads']} | {r['calls_per_s']:,.0f} | {r['p50_us']:.0f} |"
            f" {r['p99_us']:.0f} | {r['calls_per_s'] / base:.2f} | {r['gc_objects']:,} |"
            f" {r['full_gc_ms']:.0f} | {r['garbage_after_stop']:,} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    print(table(run(quick="--quick" in sys.argv)))

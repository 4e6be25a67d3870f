"""Config apply at scale: a 10,000-entry limits config validated and applied while increases flow.

Reports the time to load+validate the YAML alone, the time until the new limits are in force
(the atomic switch) under load, and the longest single increase seen by the concurrent callers
meanwhile (the stall), against the same callers' p99 and max with no config change (the
baseline). Run with one caller (a scheduler's single scheduling loop) and with four (both cores
saturated, where the GIL's hand-offs alone make ~40 ms waits).
"""

from __future__ import annotations

import random
import sys
import threading
import time
from typing import Any

from markdown import header

from quotactor import UserGroup
from quotactor.config import load_config
from quotactor.ugm import UserGroupManager


def big_config(queues: int = 100, users_per_queue: int = 100, memory: str = "64Gi") -> str:
    """`queues` leaf queues, each with `users_per_queue` named-user limit entries."""
    lines = ["partitions:", "  - name: default", "    queues:", "      - name: root",
             "        queues:"]
    for q in range(queues):
        lines += [f"          - name: q{q}", "            limits:"]
        for u in range(users_per_queue):
            lines += [f"              - limit: l{q}-{u}", f"                users: [u{u}]",
                      f"                maxresources: {{memory: {memory}}}"]
    return "\n".join(lines) + "\n"


def callers(ugm: UserGroupManager, count: int, stop: threading.Event, out: list[float]
            ) -> list[Any]:
    def run(t: int) -> None:
        rng = random.Random(t)
        i = 0
        while not stop.is_set():
            user = UserGroup(f"u{rng.randrange(100)}")
            queue, app = f"root.q{rng.randrange(100)}", f"c{t}-{i}"
            began = time.perf_counter()
            if ugm.increase_tracked_resource(queue, app, {"memory": 2**20}, user):
                out.append(time.perf_counter() - began)
                ugm.decrease_tracked_resource(queue, app, {"memory": 2**20}, user, True)
            i += 1

    threads = [threading.Thread(target=run, args=(t,)) for t in range(count)]
    for th in threads:
        th.start()
    return threads


def measure(count: int) -> dict[str, float]:
    """One apply of a 10,000-entry config while `count` threads increase and decrease."""
    first, second = big_config(), big_config(memory="32Gi")
    began = time.perf_counter()
    loaded = load_config(second, pause_collector=True)
    validate_s = time.perf_counter() - began
    # A benchmark owns its process: it opts in to pausing the collector during loads.
    with UserGroupManager.start(first, timeout=60.0, pause_collector=True) as ugm:
        quiet: list[float] = []
        stop = threading.Event()
        threads = callers(ugm, count, stop, quiet)
        time.sleep(2.0)  # sleep-ok: a fixed window of baseline traffic
        stop.set()
        for th in threads:
            th.join()
        busy: list[float] = []
        stop = threading.Event()
        threads = callers(ugm, count, stop, busy)
        time.sleep(0.5)  # sleep-ok: let traffic settle before the switch
        began = time.perf_counter()
        ugm.update_config(second)
        apply_s = time.perf_counter() - began
        time.sleep(0.5)  # sleep-ok: traffic after the switch
        stop.set()
        for th in threads:
            th.join()
        entries = ugm.limit_table.limit_count()
    quiet.sort()
    return {
        "callers": count, "entries": entries, "validate_s": validate_s, "apply_s": apply_s,
        "max_stall_ms": max(busy) * 1e3, "quiet_p99_ms": quiet[int(len(quiet) * 0.99)] * 1e3,
        "quiet_max_ms": quiet[-1] * 1e3, "loaded_partitions": len(loaded.partitions),
    }


def run() -> list[dict[str, float]]:
    """A single scheduling loop (YuniKorn's shape) and four threads saturating both cores."""
    return [measure(count) for count in (1, 4)]


def table(rows: list[dict[str, float]]) -> str:
    lines = header(
        "callers", "limit entries", "load+validate alone s",
        "validate+apply under load (config actor) s", "longest increase during apply ms",
        "quiet p99 ms", "quiet max ms",
    )
    lines += [
        f"| {r['callers']} | {r['entries']:,} | {r['validate_s']:.2f} | {r['apply_s']:.2f} |"
        f" {r['max_stall_ms']:.1f} | {r['quiet_p99_ms']:.1f} | {r['quiet_max_ms']:.1f} |"
        for r in rows
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(table(run()))
    sys.exit(0)

"""Loading a config of 10,001 limit entries: wall and CPU seconds per load.

The config is the one `tests/config/test_scale.py` loads (100 queues under root, each with 100
user limits, and one limit at root). Each load is timed on the wall clock and on this process's
CPU clock, after one load to warm up; the table gives the fastest and the median of `--repeats`
loads, with the cyclic garbage collector running (what a library caller gets) and paused
(`pause_collector=True`, what the `quotactor` CLI asks for). The machine, the date and the load
average before and after go with the table: a busy machine slows the wall clock, and other
threads of this process (there are none here) would count on the CPU clock.

    python bench/config_load_bench.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import sys
import time

from markdown import header
from run import machine

from quotactor.config import limit_entries, load_config


def ten_thousand_limits() -> str:
    """100 queues under root, each with 100 user limits, all within their queue's limits."""
    lines = ["partitions:", "  - name: default", "    queues:", "      - name: root",
             "        limits:", "          - limit: everyone", "            users: ['*']",
             "            maxresources: {memory: 20G, vcore: 4}", "        queues:"]
    for queue in range(100):
        lines += [f"          - name: team{queue}", "            maxapplications: 50",
                  "            resources:", "              max: {memory: 1T, vcore: 100}",
                  "            limits:"]
        for user in range(100):
            lines += [f"              - limit: user {user}", f"                users: [user{user}]",
                      "                maxresources: {memory: 10G, vcore: 2}",
                      "                maxapplications: 5"]
    return "\n".join(lines) + "\n"


def measure(text: str, repeats: int, pause_collector: bool) -> dict[str, float]:
    """Wall and CPU seconds of `repeats` loads of `text` (after one to warm up): the fastest
    and the median of each, and the entries loaded."""
    load_config(text, pause_collector=pause_collector)
    walls, cpus = [], []
    entries = 0
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        config = load_config(text, pause_collector=pause_collector)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
        entries = sum(len(limits) for limits in limit_entries(config.partitions[0]).values())
    return {"entries": entries, "wall_min": min(walls), "wall_median": statistics.median(walls),
            "cpu_min": min(cpus), "cpu_median": statistics.median(cpus)}


def table(rows: list[tuple[str, dict[str, float]]]) -> str:
    lines = header("collector", "limit entries", "wall s (fastest)", "wall s (median)",
                   "CPU s (fastest)", "CPU s (median)")
    lines += [f"| {name} | {r['entries']:,.0f} | {r['wall_min']:.2f} | {r['wall_median']:.2f} |"
              f" {r['cpu_min']:.2f} | {r['cpu_median']:.2f} |" for name, r in rows]
    return "\n".join(lines)


def load_average() -> str:
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed loads per row (5)")
    repeats = parser.parse_args(argv).repeats
    if repeats < 1:
        parser.error("--repeats must be at least 1")
    text = ten_thousand_limits()
    before = load_average()
    rows = [(name, measure(text, repeats, paused))
            for name, paused in (("running", False), ("paused", True))]
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(f"{stamp}; {machine()}; load average (1, 5, 15 min) {before} before, "
          f"{load_average()} after; {repeats} loads per row\n")
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

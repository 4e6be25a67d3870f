"""Issue 17's goals, measured in one run: calls per CPU-second of the actor path against the
simplified single-lock baseline (1 and 8 callers, single calls), p99 at 8 callers against
max(1 ms, 2x the baseline's p99), and `apply_batch` decisions per CPU-second against the
reference model behind one lock. A third single-call row (not a goal of its own) runs the 8
callers' applications with three allocations and releases each between start and removal,
the calls that known-user routing decides without the manager.

    python bench/goals.py [--quick]

CPU seconds are the process's (every thread, the actors' pools included), so another session's
load on a shared machine disturbs them far less than wall time; the load average is printed.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from simple_baseline import SimpleBaseline
from tracking_bench import LockedBaseline, drive, drive_batches, warmed
from workload import make_workload

from quotactor import core
from quotactor.ugm import UserGroupManager


def run(quick: bool) -> list[str]:
    work = make_workload()
    pairs = 500 if quick else 3000
    lines = [f"load average before: {os.getloadavg()[0]:.2f}; core: {core.build_note}", "",
             "| callers | actors calls/CPU-s | simplified calls/CPU-s | ratio (goal >= 0.20) |"
             " actors p99 µs | simplified p99 µs | p99 bound µs | p99 met |",
             "|---:|---:|---:|---:|---:|---:|---:|---|"]
    for threads, allocs in ((1, 0), (8, 0), (8, 3)):
        simple = SimpleBaseline(work.table)
        n = pairs // (1 + allocs)
        base = warmed(lambda: drive(simple, work, threads, n, allocs),  # noqa: B023
                      lambda: drive(simple, work, threads, 200, allocs))  # noqa: B023
        with UserGroupManager.start(work.table) as ugm:
            actors = warmed(lambda: drive(ugm, work, threads, n, allocs),  # noqa: B023
                            lambda: drive(ugm, work, threads, 200, allocs))  # noqa: B023
        bound = max(1000.0, 2 * base["p99_us"])
        label = f"{threads}, with {allocs} allocations per app" if allocs else f"{threads}"
        lines.append(
            f"| {label} | {actors['calls_per_cpu_s']:,.0f} | {base['calls_per_cpu_s']:,.0f} |"
            f" {actors['calls_per_cpu_s'] / base['calls_per_cpu_s']:.3f} |"
            f" {actors['p99_us']:.0f} | {base['p99_us']:.0f} | {bound:.0f} |"
            f" {'yes' if actors['p99_us'] <= bound else 'no'} |")
    batches = 10 if quick else 40
    reference = LockedBaseline(work)
    ref: dict[str, Any] = warmed(lambda: drive_batches(reference, work, 4, batches),
                                 lambda: drive_batches(reference, work, 4, 3))
    with UserGroupManager.start(work.table) as ugm:
        act = warmed(lambda: drive_batches(ugm, work, 4, batches),
                     lambda: drive_batches(ugm, work, 4, 3))
    lines += ["", "| batch (4 callers, 100 items) | decisions/CPU-s |", "|---|---:|",
              f"| actors | {act['decisions_per_cpu_s']:,.0f} |",
              f"| reference model, one lock | {ref['decisions_per_cpu_s']:,.0f} |",
              f"| actors / reference (goal >= 1.0) |"
              f" {act['decisions_per_cpu_s'] / ref['decisions_per_cpu_s']:.3f} |",
              "", f"load average after: {os.getloadavg()[0]:.2f}"]
    return lines


if __name__ == "__main__":
    print("\n".join(run("--quick" in sys.argv)))

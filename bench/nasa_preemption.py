"""The NASA iPSC/860 replay with and without a guarantee: what reservations and preemption do.

Two queues, `root.system` (SWF group 2, system personnel) and `root.normal` (everybody else),
on the log's one 128-vcore machine. The log barely queues on its own machine, so the
submissions are compressed in time by `--load` (default 3: three times the arrival rate).
`two-queues` gives nobody a guarantee; `guarantee` gives system 32 vcores guaranteed
(preemption after 30 s). Printed per run: waits of big jobs
(64 vcores or more) and of the rest, waits per group, victims, lost work, node time held by
reservations, and wall time. Run it with the quotactor to measure, e.g. once from this tree
and once with `PYTHONPATH` pointing at a checkout from before reservations (the baseline of
the same run; an older tree prints no preemption figures):

    python bench/nasa_preemption.py [--jobs N] [--load F]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from typing import Any

from quotactor.scheduler import Scheduler, VirtualClock
from quotactor.sim.inputs.demo import demo_cluster, demo_workload
from quotactor.sim.inputs.jobs import Workload
from quotactor.sim.models.replay import ReplayOptions, replay

TWO_QUEUES = """
partitions:
  - name: default
    placementrules:
      - name: fixed
        value: root.system
        filter: {type: allow, groups: [system]}
      - name: fixed
        value: root.normal
    queues:
      - name: root
        submitacl: "*"
        properties: {preemption.delay: 30s}
        queues:
          - name: system
          - name: normal
"""
GUARANTEE = TWO_QUEUES.replace("          - name: system\n",
                               "          - name: system\n"
                               "            resources: {guaranteed: {vcore: \"32\"}}\n")
BIG = 64_000


def _waits(values: list[float]) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"{statistics.mean(values) / 60:.1f}m / {p95 / 60:.1f}m"


def compressed(workload: Workload, load: float) -> Workload:
    """The same jobs submitted `load` times as fast."""
    start = workload.jobs[0].submit
    return dataclasses.replace(workload, jobs=tuple(
        dataclasses.replace(j, submit=start + (j.submit - start) / load) for j in workload.jobs))


def run(label: str, config: str, jobs: int | None, load: float) -> dict[str, Any]:
    workload = compressed(demo_workload(jobs), load)
    size = {j.job_id: j.total.get("vcore", 0) for j in workload.jobs}
    with Scheduler.start(config, clock=VirtualClock(workload.jobs[0].submit)) as scheduler:
        started = time.perf_counter()
        result = replay(scheduler, workload, demo_cluster(), ReplayOptions(progress=False))
        wall = time.perf_counter() - started
    waits = [(o, o.wait) for o in result.outcomes if o.wait is not None]
    row: dict[str, Any] = {
        "run": label,
        "big jobs (n)": sum(1 for o, _ in waits if size[o.job_id] >= BIG),
        "big wait mean / p95": _waits([w for o, w in waits if size[o.job_id] >= BIG]),
        "other wait mean / p95": _waits([w for o, w in waits if size[o.job_id] < BIG]),
        "system wait": _waits([w for o, w in waits if o.group == "system"]),
        "normal wait": _waits([w for o, w in waits if o.group == "normal"]),
        "wall": f"{wall:.1f}s",
    }
    stats = getattr(result, "preemptions", None)
    if stats is not None:
        row["victims (by group)"] = f"{stats.victims} {dict(stats.by_group)}"
        row["work lost"] = f"{stats.work_lost_core_hours:.1f} core-h"
        row["reserved node-h"] = f"{stats.reserved_node_hours:.1f}"
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=None, help="only the first N jobs")
    parser.add_argument("--load", type=float, default=3.0, help="arrival-rate factor")
    args = parser.parse_args()
    rows = [run("two-queues", TWO_QUEUES, args.jobs, args.load),
            run("guarantee", GUARANTEE, args.jobs, args.load)]
    keys = list(dict.fromkeys(k for row in rows for k in row))
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for row in rows:
        print("| " + " | ".join(str(row.get(k, "-")) for k in keys) + " |")


if __name__ == "__main__":
    main()

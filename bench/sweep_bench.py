"""Sweep throughput per executor: the same sweep, in the same run, on one process, the local
process pool and a local Ray; points per minute and the overhead each executor adds per point.

    python bench/sweep_bench.py                 # prints the tables (a few minutes)
    python bench/sweep_bench.py --record        # and appends them to bench/RESULTS.md

Two sweeps: replays of the NASA trace's first jobs (seconds each, as real sweeps are) and
replays of 40 synthetic jobs (milliseconds each, so the executor's own cost shows). Overhead
per point is the wall time the executor keeps its workers busy beyond the replays themselves
(start-up, shipping tasks and results, deserialising the workload), divided by the points:
(wall x workers - sum of replay times) / points. Each executor starts from an empty output
folder, and the rows of all three are checked to be identical.
"""

from __future__ import annotations

import argparse
import datetime
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from markdown import header
from run import machine

from quotactor.sweep import parse_sweep, run_sweep
from quotactor.sweep.runner import default_workers

_CONFIG = """\
config:
  partitions:
    - name: default
      placementrules: [{name: provided}, {name: fixed, value: root.ipsc}]
      queues:
        - name: root
          submitacl: "*"
          queues:
            - name: ipsc
              maxapplications: 7
              limits:
                - {limit: users, users: ["*"], maxapplications: 3}
                - {limit: system, groups: [system], maxapplications: 2}
parameters:
  user_jobs:
    path: partitions[0].queues[0].queues[0].limits[0].maxapplications
    values: [2, 3, 4, 5]
  queue_jobs:
    path: partitions[0].queues[0].queues[0].maxapplications
    values: [5, 7, null]
"""
SWEEPS = {
    "NASA trace, first JOBS jobs": _CONFIG + """\
workloads: [{source: builtin:nasa-ipsc, jobs: JOBS}]
cluster: {nodes: 1, resources: {vcore: "128"}}
""",
    "synthetic, 40 jobs": _CONFIG + """\
workloads:
  - synthetic:jobs=40,users=4,seed=3,max_tasks=8,interarrival=30,duration=300
cluster: {nodes: 1, resources: {vcore: "128"}}
""",
}


class _Quiet:
    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


def measure(jobs: int) -> list[str]:
    workers = default_workers()
    lines = [f"Sweeps of 12 points (4 x 3), {workers} workers for the pool and Ray. Start-up is "
             "included (the pool spawns its workers, Ray starts and stops a local instance), "
             "except in the last row, where Ray was started before the clock.", "",
             *header("sweep", "executor", "points", "wall s", "points/min",
                     "replay s per point", "overhead s per point", "speed-up vs 1 worker")]
    for title, template in SWEEPS.items():
        spec = parse_sweep(template.replace("JOBS", str(jobs)))
        baseline = 0.0
        rows: list[object] = []
        for name, executor, count in (("1 worker (this process)", "local", 1),
                                      (f"process pool ({workers})", "local", workers),
                                      (f"Ray local ({workers} CPUs)", "ray", workers),
                                      ("Ray local, already running", "ray-warm", workers)):
            started = 0.0
            if executor == "ray-warm":
                import ray

                clock = time.perf_counter()
                ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
                started = time.perf_counter() - clock
            with tempfile.TemporaryDirectory() as folder:
                outcome = run_sweep(spec, Path(folder), executor=executor[:5],  # type: ignore[arg-type]
                                    workers=count, progress=_Quiet())
            if executor == "ray-warm":
                ray.shutdown()
                name += f" (its start: {started:.1f} s)"
            points = len(outcome.rows)
            wall = outcome.wall_seconds
            baseline = baseline or wall
            rows.append(outcome.rows)
            overhead = (wall * count - outcome.replay_seconds) / points
            lines.append(f"| {title.replace('JOBS', str(jobs))} | {name} | {points} | {wall:.1f} | "
                         f"{points / wall * 60:.1f} | {outcome.replay_seconds / points:.2f} | "
                         f"{overhead:.2f} | {baseline / wall:.2f} |")
        if any(r != rows[0] for r in rows):
            lines.append("")
            lines.append("**rows differ between executors**")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2000, help="NASA jobs per replay")
    parser.add_argument("--record", action="store_true", help="append to bench/RESULTS.md")
    args = parser.parse_args()
    lines = measure(args.jobs)
    print("\n".join(lines))
    if args.record:
        stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
        block = [f"## {stamp}: sweep executors (`python bench/sweep_bench.py`)", "",
                 f"Machine: {machine()}", "", *lines, ""]
        results = Path(__file__).resolve().parent / "RESULTS.md"
        with results.open("a", encoding="utf-8") as handle:
            handle.write("\n" + "\n".join(block))


if __name__ == "__main__":
    main()

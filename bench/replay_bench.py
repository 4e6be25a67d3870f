"""The main job's cost: replay the bundled NASA trace under the demo's config and under a tight
one, and 100k synthetic jobs, timing each against the demo replay measured in the same run.

    python bench/replay_bench.py            # demo, tight, 100k synthetic
    python bench/replay_bench.py --quick    # 20k synthetic jobs instead of 100k
    python bench/replay_bench.py --scale    # synthetic only: 10k, 20k, 50k, 100k jobs
    python bench/replay_bench.py --scale 20000,50000   # synthetic only, these sizes

The tight config is the one a new user wrote in issue 20: a user limit smaller than some of
that user's jobs, a queue cap on running applications, two applications per user, and group
limits (system personnel share one running job, normal users 96 of the 128 processors). Its
replay took 184 s before the retry indexing (the demo: 8 s); the goal is within 2x the demo.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from markdown import header

from quotactor.scheduler import Scheduler, VirtualClock
from quotactor.sim.inputs.cluster import ClusterSpec, uniform_cluster
from quotactor.sim.inputs.demo import (
    demo_cluster,
    demo_config_text,
    demo_workload,
    tight_config_text,
)
from quotactor.sim.inputs.jobs import Workload
from quotactor.sim.inputs.synthetic import generate, parse_synthetic
from quotactor.sim.models.replay import ReplayOptions, replay
from quotactor.sim.models.result import SimulationResult

TIGHT = tight_config_text()

SYNTHETIC_CONFIG = """\
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: batch
            maxapplications: 40
            limits:
              - limit: each user
                users: ["*"]
                maxapplications: 4
                maxresources: {vcore: "96"}
              - limit: group g1
                groups: [g1]
                maxresources: {vcore: "128"}
          - name: interactive
            resources:
              max: {vcore: "64"}
"""


@dataclass(frozen=True)
class Row:
    name: str
    jobs: int
    wall: float
    result: SimulationResult


def _timed_replay(config: str, workload: Workload,
                  cluster: ClusterSpec) -> tuple[float, float, SimulationResult]:
    """(wall seconds, CPU seconds of this process, result): on a shared machine the CPU time
    is the steadier figure, since other processes' load stretches only the wall time."""
    with Scheduler.start(config, clock=VirtualClock(workload.jobs[0].submit)) as scheduler:
        started, cpu = time.perf_counter(), time.process_time()
        result = replay(scheduler, workload, cluster, ReplayOptions(progress=False))
        return time.perf_counter() - started, time.process_time() - cpu, result


def _synthetic(jobs: int) -> Workload:
    return generate(parse_synthetic(
        f"synthetic:jobs={jobs},users=300,groups=4,interarrival=60,max_tasks=64,"
        "queues=root.batch;root.interactive;root.batch;root.batch"))


def run(quick: bool = False) -> list[Row]:
    nasa = demo_workload()
    synthetic_jobs = 20_000 if quick else 100_000
    synthetic = _synthetic(synthetic_jobs)
    scenarios = [
        ("NASA demo config", demo_config_text(), nasa, demo_cluster()),
        ("NASA tight config", TIGHT, nasa, demo_cluster()),
        (f"synthetic {synthetic_jobs // 1000}k jobs", SYNTHETIC_CONFIG, synthetic,
         uniform_cluster(8, {"vcore": "64"})),
    ]
    rows = []
    for name, config, workload, cluster in scenarios:
        wall, _, result = _timed_replay(config, workload, cluster)
        rows.append(Row(name, len(workload.jobs), wall, result))
        print(f"{name}: {wall:.1f}s", file=sys.stderr)
    return rows


def scale(sizes: tuple[int, ...] = (10_000, 20_000, 50_000, 100_000)) -> str:
    """Wall time against the number of synthetic jobs at one arrival rate: flat per-job cost
    means the work per event does not grow with the backlog. The largest backlog (jobs
    submitted and not started) is shown beside it, since that is what it must not follow."""
    lines = header("synthetic jobs", "wall s", "CPU s", "CPU µs per job", "largest backlog",
                   "cycles", "tracker calls")
    for jobs in sizes:
        wall, cpu, result = _timed_replay(SYNTHETIC_CONFIG, _synthetic(jobs),
                                          uniform_cluster(8, {"vcore": "64"}))
        backlog = max(count for _, count in result.pending_series)
        perf = result.performance
        lines.append(f"| {jobs:,} | {wall:.1f} | {cpu:.1f} | {cpu / jobs * 1e6:,.0f} | "
                     f"{backlog:,} | {perf.cycles:,} | {perf.tracker_calls:,} |")
        print(lines[-1], file=sys.stderr, flush=True)
    return "\n".join(lines)


def table(rows: list[Row]) -> str:
    base = rows[0].wall
    lines = header("replay", "jobs", "never", "cycles", "tracker calls", "wall s",
                   "x demo", "µs per job")
    for row in rows:
        perf = row.result.performance
        lines.append(f"| {row.name} | {row.jobs:,} | {row.result.everybody.never_started:,} | "
                     f"{perf.cycles:,} | {perf.tracker_calls:,} | {row.wall:.1f} | "
                     f"{row.wall / base:.2f} | {row.wall / row.jobs * 1e6:,.0f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    if "--scale" in sys.argv:
        given = sys.argv[sys.argv.index("--scale") + 1:]
        print(scale(tuple(int(n) for n in given[0].split(","))) if given else scale())
    else:
        print(table(run("--quick" in sys.argv)))

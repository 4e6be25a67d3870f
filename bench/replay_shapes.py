"""Replay cost per job on a machine's two shapes: one node of N vcores, and N nodes of one.

    python bench/replay_shapes.py                           # NASA (bundled) and 100k synthetic
    python bench/replay_shapes.py --swf KTH-SP2-1996-2.1-cln.swf.gz   # plus another SWF log
    python bench/replay_shapes.py --no-synthetic --jobs 5000 --prefixes 50,100

Every trace is replayed through the embedded YuniKorn model on `--nodes 1 --node-vcore N` and
on `--nodes N --node-vcore 1`, N being the machine's processors (the SWF header's MaxProcs,
else MaxNodes; `--synthetic-procs` for the synthetic workload). The growth columns replay the
first 10 %, 25 %, 50 % and 100 % of the trace, each as a replay of its own: flat cost means
the same ms per job in every column. Beside them, the mean backlog of each prefix: the jobs
still waiting after a scheduling cycle, averaged over its cycles. A replay whose cost per job
followed the backlog would grow as much as it does. SWF logs go to the demo's queue config
(every job in root.ipsc under user, group and queue limits; `--config` for another), the
synthetic workload to the replay bench's config.

The cost per job is given in wall and in CPU milliseconds of this process, and the growth
columns in CPU milliseconds: on a shared machine other processes stretch only the wall time.
The machine and the load average (at the start and after each row) are printed with the
table. With `--repeat N` every replay runs N times and the run of least CPU time is shown: a
busy machine slows a single run by 10-40 % (its neighbours take the caches and the memory
bus), and only ever slows it, so the fastest run is the nearest to the replay's own cost. The
runs go in rounds, every prefix once per round, so that a busy spell lands on every prefix
rather than on one.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from markdown import header
from replay_bench import SYNTHETIC_CONFIG
from run import machine

from quotactor.scheduler import Scheduler, VirtualClock
from quotactor.sim.inputs.cluster import ClusterSpec, uniform_cluster
from quotactor.sim.inputs.demo import DEMO_GROUPS, DEMO_TRACE, demo_config_text, demo_workload
from quotactor.sim.inputs.jobs import Workload
from quotactor.sim.inputs.swf import read_swf
from quotactor.sim.inputs.synthetic import generate, parse_synthetic
from quotactor.sim.models.replay import PLACEMENTS, Placement, ReplayOptions, replay

SYNTHETIC = ("synthetic:jobs=100000,users=300,groups=4,interarrival=60,max_tasks=64,"
             "queues=root.batch;root.interactive;root.batch;root.batch")
"""The replay bench's synthetic workload (bench/replay_bench.py), 100k jobs."""
SYNTHETIC_PROCS = 512
"""The replay bench runs it on 8 nodes of 64 vcores."""
PREFIXES = (10, 25, 50, 100)


@dataclass(frozen=True)
class Trace:
    name: str
    workload: Workload
    processors: int
    config: str


@dataclass(frozen=True)
class Timing:
    jobs: int
    wall: float
    cpu: float
    never: int
    backlog: float
    """Jobs still waiting after a scheduling cycle, on average over the replay's cycles."""


def _processors(workload: Workload) -> int:
    for key in ("MaxProcs", "MaxNodes"):
        value = workload.header.get(key, "").split()
        if value and value[0].isdigit() and int(value[0]) > 0:
            return int(value[0])
    raise SystemExit(f"{workload.source}: the header names neither MaxProcs nor MaxNodes")


def _first(workload: Workload, jobs: int | None) -> Workload:
    if jobs is None or jobs >= len(workload.jobs):
        return workload
    return Workload(workload.source, workload.jobs[:jobs], workload.bad_lines,
                    workload.problems, workload.header)


def traces(args: argparse.Namespace) -> Iterator[Trace]:
    """The traces to replay, each read when the loop reaches it: a replay holds its own
    workload only, as a user's replay of that trace would."""
    config = args.config.read_text(encoding="utf-8") if args.config else demo_config_text()
    if not args.no_nasa:
        yield _nasa(args.jobs, config)
    for path in args.swf:
        yield _swf(path, args.jobs, config)
    if not args.no_synthetic:
        yield _synthetic(args.workload, args.jobs, args.synthetic_procs)


def _nasa(jobs: int | None, config: str) -> Trace:
    nasa = demo_workload()
    return Trace(DEMO_TRACE.split("-cln")[0], _first(nasa, jobs), _processors(nasa), config)


def _swf(path: Path, jobs: int | None, config: str) -> Trace:
    log = read_swf(path, group_names=DEMO_GROUPS if path.name == DEMO_TRACE else None)
    return Trace(path.name.split("-cln")[0].removesuffix(".swf.gz"), _first(log, jobs),
                 _processors(log), config)


def _synthetic(spec: str, jobs: int | None, processors: int) -> Trace:
    synthetic = generate(parse_synthetic(spec))
    return Trace(f"synthetic {len(synthetic.jobs) // 1000}k", _first(synthetic, jobs),
                 processors, SYNTHETIC_CONFIG)


def shapes(processors: int, wanted: list[str]) -> list[tuple[str, ClusterSpec]]:
    """The machine as one node of all its vcores, and as one node per processor."""
    made = {"one node": (f"1 x {processors}", uniform_cluster(1, {"vcore": str(processors)})),
            "unit nodes": (f"{processors} x 1", uniform_cluster(processors, {"vcore": "1"}))}
    return [made[name] for name in wanted]


def timed(trace: Trace, cluster: ClusterSpec, jobs: int, placement: Placement) -> Timing:
    workload = _first(trace.workload, jobs)
    options = ReplayOptions(progress=False, placement=placement)
    with Scheduler.start(trace.config, clock=VirtualClock(workload.jobs[0].submit)) as sched:
        wall, cpu = time.perf_counter(), time.process_time()
        result = replay(sched, workload, cluster, options)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    done = result.performance
    backlog = (done.decisions - done.allocations) / done.cycles if done.cycles else 0.0
    return Timing(len(workload.jobs), wall, cpu, result.everybody.never_started, backlog)


def _load() -> str:
    return "/".join(f"{value:.1f}" for value in os.getloadavg())


def run(args: argparse.Namespace) -> str:
    prefixes = tuple(int(p) for p in args.prefixes.split(","))
    lines = [f"Machine: {machine()}; load average (1/5/15 min) at start {_load()}; "
             f"placement {args.placement}; fastest of {args.repeat} run(s) each.", ""]
    lines += header("trace", "shape", "jobs", "never", "wall s", "CPU s", "wall ms/job",
                    "CPU ms/job", *(f"CPU ms/job {p} %" for p in prefixes),
                    "mean backlog " + " / ".join(f"{p} %" for p in prefixes), "load after")
    for trace in traces(args):
        for shape, cluster in shapes(trace.processors, args.shape):
            runs: dict[int, list[Timing]] = {percent: [] for percent in prefixes}
            for _ in range(args.repeat):  # in rounds: a slow spell slows every prefix alike
                for percent in prefixes:
                    jobs = max(1, len(trace.workload.jobs) * percent // 100)
                    runs[percent].append(timed(trace, cluster, jobs, args.placement))
                    print(f"{trace.name} {shape} {percent}%: {runs[percent][-1]}",
                          file=sys.stderr, flush=True)
            per_prefix = {percent: min(timings, key=lambda t: t.cpu)
                          for percent, timings in runs.items()}
            whole = per_prefix[max(prefixes)]
            growth = " | ".join(f"{t.cpu / t.jobs * 1e3:.2f}" for t in per_prefix.values())
            backlog = " / ".join(f"{t.backlog:,.0f}" for t in per_prefix.values())
            lines.append(f"| {trace.name} | {shape} | {whole.jobs:,} | {whole.never:,} | "
                         f"{whole.wall:.1f} | {whole.cpu:.1f} | "
                         f"{whole.wall / whole.jobs * 1e3:.2f} | "
                         f"{whole.cpu / whole.jobs * 1e3:.2f} | {growth} | {backlog} | "
                         f"{_load()} |")
            print(lines[-1], file=sys.stderr, flush=True)
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--swf", type=Path, action="append", default=[], metavar="PATH",
                        help="another SWF log (gzipped or not); repeatable")
    parser.add_argument("--no-nasa", action="store_true", help="skip the bundled NASA log")
    parser.add_argument("--workload", default=SYNTHETIC, metavar="synthetic:...",
                        help="the synthetic workload (default: the replay bench's 100k)")
    parser.add_argument("--no-synthetic", action="store_true", help="skip it")
    parser.add_argument("--synthetic-procs", type=int, default=SYNTHETIC_PROCS, metavar="N",
                        help=f"processors of the synthetic machine (default {SYNTHETIC_PROCS})")
    parser.add_argument("--config", type=Path, help="queue config for the SWF logs "
                        "(default: the demo's)")
    parser.add_argument("--jobs", type=int, help="only the first N jobs of every trace")
    parser.add_argument("--prefixes", default=",".join(map(str, PREFIXES)),
                        help="percentages of each trace to replay (default 10,25,50,100)")
    parser.add_argument("--placement", choices=PLACEMENTS, default=ReplayOptions().placement,
                        help="how a parallel job's tasks are placed (default: the replay's)")
    parser.add_argument("--shape", action="append", choices=("one node", "unit nodes"),
                        help="only this shape (repeatable; default both)")
    parser.add_argument("--repeat", type=int, default=1, metavar="N",
                        help="run every replay N times and show the fastest (default 1)")
    args = parser.parse_args(argv)
    if not 1 <= args.repeat <= 25:
        parser.error("--repeat must be between 1 and 25")
    args.shape = args.shape or ["one node", "unit nodes"]
    print(run(args))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

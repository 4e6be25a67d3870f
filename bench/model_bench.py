"""The four quota models on the bundled NASA trace: how long each replay takes, and what it
decided, with the YuniKorn demo replay measured in the same run as the baseline.

    python bench/model_bench.py             # the whole trace (18,239 jobs)
    python bench/model_bench.py --jobs 3000 # its first 3,000 jobs

Each model replays the trace under its demo quota file (`quotactor demo --model ...`):
YuniKorn limits, Koordinator ElasticQuotas, an MCAD quota tree, Kueue ClusterQueues.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from markdown import header

from quotactor.sim.inputs.demo import DEMO_CONFIGS, demo_cluster, demo_config_text, demo_workload
from quotactor.sim.model_runs import build_model
from quotactor.sim.models.models import ModelOptions, replay_model
from quotactor.sim.models.replay import ReplayOptions
from quotactor.sim.models.result import SimulationResult
from quotactor.sim.session import load_runs, run_config


def _yunikorn(jobs: int | None, directory: Path) -> SimulationResult:
    config = directory / DEMO_CONFIGS["yunikorn"]
    config.write_text(demo_config_text(), encoding="utf-8")
    return run_config(load_runs([config])[0], demo_workload(jobs), demo_cluster(),
                      ReplayOptions(label="yunikorn", progress=False))


def _model(kind: str, jobs: int | None) -> SimulationResult:
    cluster = demo_cluster()
    model = build_model(kind, demo_config_text(kind), cluster.capacity)
    return replay_model(model, demo_workload(jobs), cluster,
                        ModelOptions(label=kind, progress=False))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int)
    args = parser.parse_args()
    import tempfile

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind in DEMO_CONFIGS:
            started = time.perf_counter()
            result = (_yunikorn(args.jobs, Path(tmp)) if kind == "yunikorn"
                      else _model(kind, args.jobs))
            wall = time.perf_counter() - started
            done = sum(1 for o in result.outcomes if o.state.value == "completed")
            rows.append((kind, wall, result.performance.wall_seconds, len(result.outcomes),
                         done, result.preemptions.victims, bool(result.leftover)))
    base = rows[0][2]
    print("\n".join(header("model", "wall (with loading)", "replay", "vs YuniKorn", "jobs",
                           "completed", "revoked/preempted", "leftover")))
    for kind, wall, replay_s, jobs, done, victims, left in rows:
        print(f"| {kind} | {wall:.1f} s | {replay_s:.1f} s | {replay_s / base:.2f}x | {jobs:,} "
              f"| {done:,} | {victims} | {'yes' if left else 'none'} |")


if __name__ == "__main__":
    main()

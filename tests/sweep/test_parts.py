"""Smaller parts of the sweep: the workload transport, the Pareto front, failing replays."""

from __future__ import annotations

import io
import pickle
from pathlib import Path

import pytest

from quotactor.cli import main
from quotactor.sim import generate, uniform_cluster
from quotactor.sim.inputs.demo import demo_workload
from quotactor.sim.inputs.synthetic import SyntheticSpec
from quotactor.sweep import executors as executors_module
from quotactor.sweep import figures_for, load_sweep, run_sweep
from quotactor.sweep.plots import pareto_front
from quotactor.sweep.transport import (
    pack_cluster,
    pack_workload,
    unpack_cluster,
    unpack_workload,
)

pytestmark = pytest.mark.timeout(120)


def test_packed_workloads_and_clusters_come_back_equal() -> None:
    for workload in (demo_workload(300),
                     generate(SyntheticSpec(jobs=50, memory="1Gi", queues="root.a;root.b"))):
        back = unpack_workload(pickle.loads(pickle.dumps(pack_workload(workload))))
        assert back == workload
        # jobs alike share their parts in a worker too, as the parser made them
        assert len({id(job.task_groups) for job in back.jobs}) \
            == len({job.task_groups for job in back.jobs}) < len(back.jobs)
    cluster = uniform_cluster(3, {"vcore": "4", "memory": "8Gi"})
    assert unpack_cluster(pickle.loads(pickle.dumps(pack_cluster(cluster)))) == cluster


def test_pareto_front_keeps_the_undominated_points() -> None:
    figures = {f.name: f for f in figures_for("yunikorn")}
    rows = [{"point": 0, "mean_wait": 10.0, "fairness_users": 0.5},
            {"point": 1, "mean_wait": 20.0, "fairness_users": 0.9},
            {"point": 2, "mean_wait": 15.0, "fairness_users": 0.4},   # beaten by 0
            {"point": 3, "mean_wait": 10.0, "fairness_users": 0.5},   # tied with 0: kept
            {"point": 4, "mean_wait": 30.0, "fairness_users": 0.95},
            {"point": 5, "mean_wait": 25.0, "fairness_users": 0.9},   # beaten by 1
            {"point": 6, "mean_wait": None, "fairness_users": 1.0}]   # no figure: left out
    front = pareto_front(rows, figures["mean_wait"], figures["fairness_users"])
    assert [row["point"] for row in front] == [0, 3, 1, 4]


def test_a_failing_replay_is_listed_and_the_sweep_goes_on(
        tiny_sweep: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    real = executors_module.run_config

    def flaky(run, workload, cluster, options):  # type: ignore[no-untyped-def]
        if options.label == "point-2":
            raise RuntimeError("disk on fire")
        return real(run, workload, cluster, options)

    monkeypatch.setattr(executors_module, "run_config", flaky)
    out = tiny_sweep.parent / "out"
    outcome = run_sweep(load_sweep(tiny_sweep), out, workers=1, progress=io.StringIO())
    assert [row["point"] for row in outcome.failed] == [2]
    assert outcome.failed[0]["error"] == "RuntimeError: disk on fire"
    assert [row["point"] for row in outcome.rows] == [0, 4, 6]
    code = main(["sweep", str(tiny_sweep), "--out", str(out), "--workers", "1", "--no-plots"])
    printed = capsys.readouterr().out
    assert code == 1
    assert "failed: point 2 (tiny: user_vcore=8, queue_apps=6, group_apps=2): RuntimeError" \
        in printed

"""The replay under `--model kueue`: jobs as workloads, borrowing, reclaim, StrictFIFO,
rejections, and the bundled NASA demo keeping every invariant."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quotactor.cli import main
from quotactor.core.resources import Resource
from quotactor.kueue import KueueError
from quotactor.sim import (
    ClusterSpec,
    Job,
    JobOutcome,
    ModelOptions,
    SimulationResult,
    TaskGroup,
    Workload,
    replay_model,
    uniform_cluster,
    verify,
)
from quotactor.sim.inputs.demo import DEMO_TRACE, demo_cluster, demo_config_text, demo_workload
from quotactor.sim.model_runs import MODELS, build_model
from quotactor.sim.models.kueue_model import KueueModel, load_kueue_model
from quotactor.sweep.grid import expand
from quotactor.sweep.headline import figures_for
from quotactor.sweep.spec import parse_sweep
from tests.sim.test_model_scheduling import EagerModel

CONFIG = """\
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: team-a}
spec:
  cohort: all
  namespaceSelector: {}
  queueingStrategy: QUEUEING_A
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources: [{name: cpu, nominalQuota: 4, borrowingLimit: 4}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: team-b}
spec:
  cohort: all
  namespaceSelector: {}
  preemption: {reclaimWithinCohort: Any}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default
      resources: [{name: cpu, nominalQuota: 4}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: a, name: jobs}
spec: {clusterQueue: team-a}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: b, name: jobs}
spec: {clusterQueue: team-b}
"""


def job(job_id: str, group: str, submit: float, duration: float, cores: int,
        tasks: int = 1, **tags: str) -> Job:
    return Job(job_id, f"user-{group}", (group,), None, submit, duration,
               (TaskGroup("tasks", tasks, Resource({"vcore": cores * 1000})),), tags)


def replay(jobs: list[Job], strategy: str = "BestEffortFIFO", cores: int = 8
           ) -> SimulationResult:
    cluster = uniform_cluster(1, {"vcore": str(cores)})
    model = load_kueue_model(CONFIG.replace("QUEUEING_A", strategy), cluster.capacity)
    return replay_model(model, Workload("test", tuple(jobs)), cluster)


def outcome(result: SimulationResult, job_id: str) -> JobOutcome:
    return next(o for o in result.outcomes if o.job_id == job_id)


def test_kueue_is_a_replay_model() -> None:
    assert "kueue" in MODELS
    assert isinstance(build_model("kueue", CONFIG.replace("QUEUEING_A", "StrictFIFO"),
                                  {"vcore": 8000}), KueueModel)


def test_borrowing_then_reclaim_revokes_the_borrower() -> None:
    result = replay([job("a1", "a", 0, 100, 8), job("b1", "b", 10, 10, 4)])
    assert result.preemptions.victims == 1
    assert outcome(result, "b1").start == 10
    assert outcome(result, "a1").start == 20  # restarted once b1 ended
    assert verify(result) == []


def test_a_borrower_within_its_limit_runs_and_the_limit_holds() -> None:
    result = replay([job("a1", "a", 0, 100, 6), job("a2", "a", 1, 10, 4)], cores=16)
    assert outcome(result, "a1").start == 0
    assert outcome(result, "a2").start == 100  # 6 + 4 > nominal 4 + borrowing limit 4
    assert "quota of ClusterQueue team-a" in outcome(result, "a2").held_by


def test_strict_fifo_head_blocks_a_smaller_job() -> None:
    jobs = [job("a0", "a", 0, 50, 6), job("a1", "a", 1, 10, 4), job("a2", "a", 2, 10, 1)]
    best_effort = replay(jobs, "BestEffortFIFO", cores=16)
    strict = replay(jobs, "StrictFIFO", cores=16)
    assert outcome(best_effort, "a2").start == 2
    assert outcome(strict, "a2").start == 50  # behind a1, the head, until a0 ends
    assert "the StrictFIFO head of ClusterQueue team-a" in outcome(strict, "a2").held_by


def test_jobs_that_can_never_run_are_rejected_with_the_reason() -> None:
    result = replay([job("big", "a", 0, 10, 9, **{}), job("lost", "c", 0, 10, 1)], cores=16)
    reasons = {o.job_id: o.reason for o in result.outcomes}
    assert "exceeds the most ClusterQueue team-a can ever hold" in reasons["big"]
    assert "no LocalQueue in namespace c" in reasons["lost"]


def test_quota_files_with_workloads_or_errors_are_refused() -> None:
    with pytest.raises(KueueError, match="holds Workloads"):
        load_kueue_model(CONFIG.replace("QUEUEING_A", "StrictFIFO") + (
            "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\nmetadata: {name: w}\n"
            "spec: {queueName: jobs, podSets: []}\n"), {"vcore": 1000})
    with pytest.raises(KueueError, match=r"spec\.queueingStrategy"):
        load_kueue_model(CONFIG.replace("QUEUEING_A", "Lifo"), {"vcore": 1000})


def test_the_nasa_demo_keeps_every_invariant() -> None:
    cluster = demo_cluster()
    model = build_model("kueue", demo_config_text("kueue"), cluster.capacity)
    result = replay_model(model, demo_workload(2000), cluster)
    assert verify(result) == []
    assert len(result.outcomes) == 2000
    figures = model.figures()
    assert set(figures) == {"normal", "system"}
    assert figures["normal"].min == Resource({"vcore": 96000})
    assert figures["normal"].max == Resource({"vcore": 128000})


# -- the replay's contract: within the cluster and quotas, refusals remembered soundly ----

@st.composite
def workloads(draw: st.DrawFn) -> tuple[ClusterSpec, list[Job], str]:
    nodes = draw(st.sampled_from([1, 2, 8]))
    cluster = uniform_cluster(nodes, {"vcore": str(8 // nodes)})
    jobs = [job(f"j{i}", draw(st.sampled_from(["a", "b", "c"])), draw(st.integers(0, 40)),
                draw(st.integers(1, 30)), 1, draw(st.integers(1, 8)),
                priority=str(draw(st.integers(0, 2))))
            for i in range(draw(st.integers(1, 14)))]
    strategy = draw(st.sampled_from(["StrictFIFO", "BestEffortFIFO"]))
    return cluster, sorted(jobs, key=lambda j: j.submit), strategy


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drawn=workloads())
def test_replays_keep_the_invariants_and_remembered_refusals_lose_nothing(
        drawn: tuple[ClusterSpec, list[Job], str]) -> None:
    cluster, jobs, strategy = drawn
    config = CONFIG.replace("QUEUEING_A", strategy)
    results = []
    for model in (load_kueue_model(config, cluster.capacity),
                  EagerModel(load_kueue_model(config, cluster.capacity))):
        result = replay_model(model, Workload("test", tuple(jobs)), cluster,
                              ModelOptions(progress=False))
        assert verify(result) == []
        results.append([(o.job_id, o.state, o.runs) for o in result.outcomes])
    assert results[0] == results[1]


# -- the commands: demo, simulate (with another model to compare), sweep --------------------

def test_demo_under_kueue_writes_the_report(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--model", "kueue", "--jobs", "400", "--out", str(tmp_path),
                 "--no-plots"]) == 0
    out = capsys.readouterr().out
    assert "kueue model: ClusterQueues normal" in out
    assert "QUOTA GROUP" in out and "normal" in out and "system" in out
    assert (tmp_path / "report.json").exists()
    assert (tmp_path / "nasa-ipsc-kueue.yaml").exists()


def test_two_models_on_one_workload(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    queues = tmp_path / "queues.yaml"
    queues.write_text(demo_config_text("yunikorn"))
    kueue = tmp_path / "kueue.yaml"
    kueue.write_text(demo_config_text("kueue"))
    trace = tmp_path / "nasa.swf.gz"
    trace.write_bytes((files("quotactor.sim") / "data" / DEMO_TRACE).read_bytes())
    assert main(["simulate", "--model", "yunikorn", "--config", str(queues), "--compare",
                 str(kueue), "--compare-model", "kueue", "--workload", str(trace),
                 "--jobs", "300", "--nodes", "1", "--node-vcore", "128", "--swf-groups",
                 "1=normal,2=system", "--out", str(tmp_path / "out"), "--no-plots"]) == 0
    out = capsys.readouterr().out
    assert "== A: queues ==" in out and "== B: kueue ==" in out
    assert (tmp_path / "out" / "b-kueue" / "report.json").exists()
    assert main(["simulate", "--config", str(queues), "--compare-model", "kueue",
                 "--workload", str(trace), "--nodes", "1", "--node-vcore", "128",
                 "--out", str(tmp_path / "out2")]) == 2
    assert "--compare-model needs --compare" in capsys.readouterr().err


def test_a_sweep_over_kueue_nominal_quotas_and_borrowing_limits(tmp_path: Path) -> None:
    shipped = (files("quotactor.sweep") / "data" / "nasa-kueue-sweep.yaml").read_text()
    spec = parse_sweep(shipped.replace("jobs: 3000", "jobs: 200"), folder=tmp_path)
    assert spec.model == "kueue" and len(spec.parameters) == 2
    grid = expand(spec)
    assert len(grid.points) == 9 and grid.invalid == ()
    bound = yaml.safe_load_all(grid.points[-1].config_text)
    normal = next(d for d in bound if d.get("metadata", {}).get("name") == "normal")
    quota = normal["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]
    assert (quota["nominalQuota"], quota["borrowingLimit"]) == (112, 32)
    assert "preemptions" in [f.name for f in figures_for("kueue")]

"""A sweep row is the replay's own figures: the same values `analyse` and `--check` give for a
direct replay of the point, constraints that answer as checks do, and preemption figures when
a parameter binds a queue's guarantee."""

from __future__ import annotations

from pathlib import Path

import pytest

from quotactor.config import load_config
from quotactor.sim import ReplayOptions, SimulationResult, uniform_cluster
from quotactor.sim.inputs.jobfile import parse_jsonl
from quotactor.sim.models.stats import percentile
from quotactor.sim.reports.checks import RUN_FIELDS, evaluate, parse_check, run_figures
from quotactor.sim.reports.whatif import analyse
from quotactor.sim.session import ConfigRun, run_config
from quotactor.sweep import figures_for, headline, jain, load_sweep, parse_constraint, run_sweep

CONFIG = """\
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        properties: {preemption.delay: 10s}
        queues:
          - name: gold
            resources: {guaranteed: {vcore: "2"}}
          - name: silver
            limits:
              - {limit: each, users: ["*"], maxapplications: 1}
"""
JOBS = [
    '{"job_id": "long", "user": "sue", "groups": ["lab"], "queue": "root.silver", "submit": 0,'
    ' "duration": 100, "tasks": 4}',
    '{"job_id": "more", "user": "sue", "groups": ["lab"], "queue": "root.silver", "submit": 150,'
    ' "duration": 10, "tasks": 1}',
    '{"job_id": "urgent", "user": "bob", "groups": ["ops"], "queue": "root.gold",'
    ' "submit": 20, "duration": 50, "tasks": 2}',
    '{"job_id": "later", "user": "ann", "groups": ["ops"], "queue": "root.silver",'
    ' "submit": 300, "duration": 30, "tasks": 2}',
]
SWEEP = """\
config:
  partitions:
    - name: default
      queues:
        - name: root
          submitacl: "*"
          properties: {preemption.delay: 10s}
          queues:
            - name: gold
              resources: {guaranteed: {vcore: "2"}}
            - name: silver
              limits:
                - {limit: each, users: ["*"], maxapplications: 1}
workloads:
  - name: jobs
    source: jobs.jsonl
cluster: {nodes: 1, resources: {vcore: "4"}}
replay: {packing: none}
parameters:
  gold_guarantee:
    path: partitions[0].queues[0].queues[0].resources.guaranteed.vcore
    values: [0, 2]
"""


def _direct(guarantee: str = "2") -> SimulationResult:
    config = load_config(CONFIG.replace('vcore: "2"', f'vcore: "{guarantee}"'))
    return run_config(ConfigRun("direct", "direct", config), parse_jsonl(JOBS),
                      uniform_cluster(1, {"vcore": "4"}),
                      ReplayOptions(progress=False, packing="none"))


def test_jain_index() -> None:
    assert jain([1.0, 1.0, 1.0]) == pytest.approx(1.0)
    assert jain([1.0, 0.0, 0.0, 0.0]) == pytest.approx(0.25)
    assert jain([]) is None
    assert jain([0.0, 0.0]) == 1.0


def test_a_row_holds_every_check_field_with_the_checks_value() -> None:
    result = _direct()
    row = headline(result)
    assert list(row) == [f.name for f in figures_for("yunikorn")]
    assert set(RUN_FIELDS) <= set(row)
    checked = run_figures(result)
    assert {name: row[name] for name in RUN_FIELDS} == checked  # exactly, not approximately
    what_if = analyse(result)
    assert row["utilization"] == what_if.utilization
    assert row["fairness_users"] == what_if.fairness_users
    assert row["mean_slowdown"] == what_if.mean_slowdown
    assert row["held"] == sum(result.everybody.held.values())
    waits = sorted(o.wait for o in result.outcomes if o.wait is not None)
    assert row["p50_wait"] == percentile(waits, 0.5)
    assert row["p99_wait"] == percentile(waits, 0.99)
    assert row["p95_wait"] == result.everybody.p95_wait
    stats = what_if.preemptions
    assert row["preemptions"] == stats.victims == 1
    assert row["work_lost_core_hours"] == stats.work_lost_core_hours > 0
    # placed whole, the preemptor reserves only the node it preempted on, until the victim
    # left (the same moment here)
    assert row["reservations"] == stats.reservations == 1
    assert row["reserved_node_hours"] == stats.reserved_node_hours


EXPRESSIONS = [
    "never == 0", "preemptions >= 1", "preemptions == 0", "p95_wait < 1m", "p95_wait <= 2h",
    "mean_wait > 30s", "held_user > 0", "held_node >= 10", "held < 1d", "utilization >= 50%",
    "utilization < 0.99", "fairness_users > 0.9", "fairness_groups<=1", "mean_slowdown < 2",
    "p95_slowdown >= 1.5", "completed == 5", "jobs != 5", "rejected == 0", "max_wait < 90s",
]


@pytest.mark.parametrize("text", EXPRESSIONS)
def test_a_constraint_keeps_a_row_exactly_when_the_check_passes(text: str) -> None:
    result = _direct()
    row = headline(result)
    ((_, passed, _),) = evaluate([parse_check(text)], result)
    assert parse_constraint(text, row).holds(row) is passed


def test_the_sweep_row_is_the_direct_replays_figures_and_a_guarantee_preempts(
        tmp_path: Path) -> None:
    (tmp_path / "jobs.jsonl").write_text("\n".join(JOBS) + "\n", encoding="utf-8")
    (tmp_path / "sweep.yaml").write_text(SWEEP, encoding="utf-8")
    outcome = run_sweep(load_sweep(tmp_path / "sweep.yaml"), tmp_path / "out", workers=1)
    rows = {row["gold_guarantee"]: row for row in outcome.rows}
    assert set(rows) == {0, 2}, outcome
    for guarantee, row in rows.items():
        direct = headline(_direct(str(guarantee)))
        assert {name: row[name] for name in direct} == direct
    assert rows[2]["preemptions"] == 1 and rows[0]["preemptions"] == 0
    assert rows[2]["work_lost_core_hours"] > 0 == rows[0]["work_lost_core_hours"]  # type: ignore[operator]
    assert rows[2]["reservations"] == 1 and rows[0]["reservations"] == 0


def test_models_without_preemption_leave_its_figures_out() -> None:
    preemption = {"preemptions", "work_lost_core_hours", "reservations", "reserved_node_hours"}
    for model in ("yunikorn", "elastic", "quotatree"):  # revocations count as preemptions
        assert preemption <= {f.name for f in figures_for(model)}
    names = {f.name for f in figures_for("a model that never preempts")}
    assert names.isdisjoint(preemption)
    assert {"p95_wait", "held", "fairness_groups", "mean_slowdown"} <= names

"""jobs.csv: one row per job with its runs, so restarted jobs show their waits and lost work."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from quotactor.core.resources import Resource
from quotactor.scheduler import Scheduler, VirtualClock
from quotactor.sim.inputs.cluster import uniform_cluster
from quotactor.sim.inputs.jobfile import parse_jsonl
from quotactor.sim.inputs.jobs import Job, TaskGroup, Workload
from quotactor.sim.models.models import ModelOptions, replay_model
from quotactor.sim.models.quotatree_model import load_quotatree_model
from quotactor.sim.models.replay import ReplayOptions, replay
from quotactor.sim.models.result import SimulationResult
from quotactor.sim.reports.report import write_jobs_csv

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
"""
WORKLOAD = parse_jsonl([
    '{"job_id": "long", "user": "sue", "groups": ["lab"], "queue": "root.silver", "submit": 0,'
    ' "duration": 100, "resources": {"vcore": "4", "memory": "2Gi"}}',
    '{"job_id": "urgent", "user": "bob", "groups": ["ops"], "queue": "root.gold",'
    ' "submit": 20, "duration": 50, "resources": {"vcore": "2"}}',
    '{"job_id": "late", "user": "bob", "groups": ["ops"], "queue": "root.silver",'
    ' "submit": 25, "duration": 10, "resources": {"vcore": "1"}}',
])
CLUSTER = uniform_cluster(1, {"vcore": "4", "memory": "8Gi"})
TREE = {"kind": "QuotaTree", "metadata": {"name": "t"}, "spec": {
    "resourceNames": ["cpu"], "nodes": {
        "root": {"parent": "nil", "hard": "true", "quota": {"cpu": "8"}},
        "a": {"parent": "root", "hard": "false", "quota": {"cpu": "4"}},
        "b": {"parent": "root", "hard": "false", "quota": {"cpu": "4"}}}}}


def yunikorn(kill: bool = False) -> SimulationResult:
    with Scheduler.start(CONFIG, clock=VirtualClock(0)) as scheduler:
        return replay(scheduler, WORKLOAD, CLUSTER,
                      ReplayOptions(progress=False, kill_preempted=kill))


def tree_job(job_id: str, cores: int, submit: float, duration: float, leaf: str) -> Job:
    return Job(job_id, "u1", (leaf,), None, submit, duration,
               (TaskGroup("main", 1, Resource({"vcore": cores * 1000})),), line=int(submit))


def quotatree() -> SimulationResult:
    """a1 borrows b's share and is preempted twice as b's jobs come back."""
    jobs = (tree_job("a1", 6, 0, 100, "a"), tree_job("b1", 4, 10, 50, "b"),
            tree_job("a2", 2, 15, 30, "a"), tree_job("b2", 4, 100, 20, "b"),
            tree_job("a3", 6, 105, 40, "a"))
    return replay_model(load_quotatree_model(json.dumps(TREE)), Workload("t", jobs),
                        uniform_cluster(1, {"vcore": "8"}), ModelOptions(progress=False))


def rows(result: SimulationResult, tmp_path: Path) -> dict[str, dict[str, str]]:
    with write_jobs_csv(result, tmp_path).open(encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))
    assert len(table) == len(result.workload.jobs)
    by_id = {row["job_id"]: row for row in table}
    assert len(by_id) == len(table)
    return by_id


def runs(row: dict[str, str]) -> list[tuple[float, float]]:
    return [(float(a), float(b)) for a, b in (run.split("-") for run in row["runs"].split(";")
                                              if run)]


def consistent(result: SimulationResult, table: dict[str, dict[str, str]]) -> None:
    """Every row's figures agree with its runs, and all runs fit the cluster together."""
    for row in table.values():
        ran = runs(row)
        assert int(row["restarts"]) == max(0, len(ran) - 1)
        if ran:
            assert float(row["first_start"]) == ran[0][0]
        if row["state"] == "completed":
            final_start, end, submit = (float(row[k]) for k in ("final_start", "end", "submit"))
            assert float(row["first_start"]) <= final_start
            assert ran[-1] == (final_start, end)
            assert float(row["total_wait"]) == pytest.approx(
                (end - submit) - sum(b - a for a, b in ran))
            assert float(row["wait"]) == pytest.approx(final_start - submit)
            lost = sum(b - a for a, b in ran[:-1])
        else:
            assert row["final_start"] == row["end"] == row["total_wait"] == ""
            lost = sum(b - a for a, b in ran)
        assert float(row["lost_seconds"]) == pytest.approx(lost)
    sizes = {job.job_id: job.total for job in result.workload.jobs}
    edges = sorted((t, -1 if end else 1, job_id) for job_id, row in table.items()
                   for a, b in runs(row) for t, end in ((a, False), (b, True)))
    held = Resource()
    for _, sign, job_id in edges:  # ends before starts at the same moment: runs are [a, b)
        held = held + sizes[job_id] if sign > 0 else held - sizes[job_id]
        assert held.fits_within_strict(result.cluster.capacity), held


def test_a_preempted_job_shows_both_starts_its_restart_and_its_lost_work(
        tmp_path: Path) -> None:
    table = rows(yunikorn(), tmp_path)
    long = table["long"]
    assert runs(long) == [(0, 30), (80, 180)]
    assert (long["first_start"], long["final_start"], long["end"]) == ("0", "80", "180")
    assert (long["wait"], long["restarts"], long["total_wait"]) == ("80", "1", "50")
    assert (long["lost_seconds"], long["work_lost_core_seconds"],
            long["work_lost_gib_seconds"]) == ("30", "120", "60")
    urgent = table["urgent"]
    assert (urgent["first_start"], urgent["final_start"], urgent["restarts"],
            urgent["lost_seconds"], urgent["work_lost_core_seconds"]) == ("30", "30", "0",
                                                                          "0", "0")
    consistent(yunikorn(), table)


def test_a_preempted_and_killed_job_keeps_its_lost_run(tmp_path: Path) -> None:
    result = yunikorn(kill=True)
    table = rows(result, tmp_path)
    long = table["long"]
    assert long["state"] == "never-started"
    assert (long["first_start"], long["runs"], long["restarts"]) == ("0", "0-30", "0")
    assert (long["lost_seconds"], long["work_lost_core_seconds"]) == ("30", "120")
    consistent(result, table)


def test_restarts_in_a_quota_tree_are_counted_and_the_runs_fit_the_cluster(
        tmp_path: Path) -> None:
    result = quotatree()
    table = rows(result, tmp_path)
    a1 = table["a1"]
    assert runs(a1) == [(0, 10), (60, 100), (120, 220)]
    assert (a1["first_start"], a1["final_start"], a1["restarts"]) == ("0", "120", "2")
    assert (a1["total_wait"], a1["lost_seconds"], a1["work_lost_core_seconds"]) == (
        "70", "50", "300")
    assert "work_lost_gib_seconds" not in a1
    assert runs(table["a3"]) == [(220, 260)]
    consistent(result, table)

"""`--check`: a small expression language over the report, exit 1 when a check fails."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from quotactor.scheduler import Scheduler, VirtualClock
from quotactor.sim.inputs.cluster import uniform_cluster
from quotactor.sim.inputs.jobfile import parse_jsonl
from quotactor.sim.models.replay import ReplayOptions, replay
from quotactor.sim.models.result import SimulationResult
from quotactor.sim.reports.checks import CheckError, evaluate, judge, parse_check

sys.path.insert(0, str(Path(__file__).parent))
from test_cli import CONFIG, quotactor
from test_whatif import _run

STARVING = """\
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: work
            limits:
              - limit: each user
                users: ["*"]
                maxapplications: 1
                maxresources: {vcore: "VCORES"}
"""
"""One job per user at a time, at most VCORES cores per user."""


def starving_jobs() -> list[str]:
    """u3's 100 jobs of 1000 s, one at a time: 14 of 4 cores and 86 of 12 (which a limit of
    8 cores per user never starts), and u1's 3 short jobs (unaffected by either limit)."""
    u3 = [{"job_id": f"j{i}", "user": "u3", "queue": "root.work", "submit": i,
           "duration": 1000, "tasks": 4 if i % 7 == 0 and i < 98 else 12} for i in range(100)]
    u1 = [{"job_id": f"o{i}", "user": "u1", "queue": "root.work", "submit": i, "duration": 10,
           "tasks": 1} for i in range(3)]
    return [json.dumps(job) for job in (*u3, *u1)]


def starving_run(vcores: str) -> SimulationResult:
    """The jobs above on 64 cores: under 16 cores per user all start (u3 waits 13.7 h on
    average); under 8, 86 of u3's never start and the 14 that do wait 1.8 h on average."""
    with Scheduler.start(STARVING.replace("VCORES", vcores), clock=VirtualClock(0)) as s:
        return replay(s, parse_jsonl(starving_jobs()), uniform_cluster(1, {"vcore": "64"}),
                      ReplayOptions(progress=False, label=f"max{vcores}"))


def test_checks_parse_units_and_scopes() -> None:
    check = parse_check("p95_wait < 2h")
    assert (check.field, check.op, check.value) == ("p95_wait", "<", 7200.0)
    assert parse_check("utilization >= 85%").value == pytest.approx(0.85)
    scoped = parse_check("held[user:u4] <= 1.5d")
    assert (scoped.scope, scoped.name, scoped.value) == ("user", "u4", 129600.0)
    for bad in ("p95_wait", "p95 < 2h", "never < 2h", "mean_wait < 5%", "never <> 0",
                "fairness_users[user:u4] > 0"):
        with pytest.raises(CheckError):
            parse_check(bad)


@pytest.mark.parametrize(("text", "message"), [
    ("utilization >= 101%", "utilization is between 0.0% and 100.0%, so 101.0% is out of range"),
    ("utilization <= 1.5", "so 150.0% is out of range"),
    ("utilization > 100%", "can never pass: utilization is between 0.0% and 100.0%"),
    ("utilization < 0%", "can never pass"),
    ("p95_wait < -1h", "p95_wait is 0s or more, so -3600s is out of range"),
    ("held[user:u4] < 0s", "can never pass: held is 0s or more"),
    ("never >= -1", "never is 0 or more, so -1 is out of range"),
    ("never < 0", "can never pass"),
    ("never == 1.5", "never is a count, a whole number"),
    ("completed[group:g1] > 2.5", "completed is a count, a whole number"),
    ("fairness_users > 1", "can never pass: fairness_users is between 0 and 1"),
    ("fairness_groups <= 1.2", "so 1.2 is out of range"),
    ("mean_slowdown < 1", "can never pass: mean_slowdown is 1 or more"),
    ("p95_slowdown <= 0.5", "so 0.5 is out of range"),
])
def test_checks_refuse_bounds_out_of_the_fields_range(text: str, message: str) -> None:
    with pytest.raises(CheckError, match=r"^check ") as refused:
        parse_check(text)
    assert message in str(refused.value)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize("text", [
    "utilization <= 100%", "utilization >= 0%", "utilization < 0.99", "utilization == 1",
    "never >= 0", "never == 0", "fairness_users <= 1", "fairness_groups > 0",
    "mean_slowdown >= 1", "p95_slowdown > 1", "max_wait >= 0s", "preemptions <= 3"])
def test_checks_accept_every_bound_in_range(text: str) -> None:
    assert parse_check(text).text == text


def test_checks_pass_and_fail_on_the_run_figures() -> None:
    result = _run()  # 2 never started; u2 held back 100 s; u11 never held
    outcome = {c.text: (ok, line) for c, ok, line in evaluate(
        [parse_check(t) for t in ("never == 0", "never <= 2", "held[user:u2] < 1m",
                                  "held[user:u11] == 0", "p95_wait[user:nobody] < 1h",
                                  "preemptions == 0")], result)}
    assert outcome["never == 0"] == (False, "never == 0: 2")
    assert outcome["never <= 2"][0] is True
    assert outcome["held[user:u2] < 1m"] == (False, "held[user:u2] < 1m: 1.7m")
    assert outcome["held[user:u11] == 0"][0] is True
    assert outcome["p95_wait[user:nobody] < 1h"] == (False, "p95_wait[user:nobody] < 1h: missing")
    assert outcome["preemptions == 0"][0] is True


def test_a_wait_check_fails_when_the_run_started_fewer_jobs_than_its_baseline() -> None:
    loose, tight = starving_run("16"), starving_run("8")
    check = parse_check("mean_wait[user:u3] < 2h")
    (baseline,) = judge([check], loose)
    assert not baseline.passed and not baseline.warning  # every job started: 13.7 h
    assert baseline.line == "mean_wait[user:u3] < 2h: 13.7h"
    # the tighter config's 1.8 h is over the 14 jobs it started: it must not pass
    (verdict,) = judge([check], tight, baseline=loose)
    assert not verdict.passed
    assert verdict.line == ("mean_wait[user:u3] < 2h: 1.8h, over 14 of 100 jobs started "
                            "(86 fewer than under max16)")
    # whatever the bound and whichever started-only figure, and run-wide too
    for text in ("max_wait[user:u3] < 1d", "p95_wait < 1d", "mean_slowdown >= 1",
                 "p95_wait[group:(none)] > 0"):
        (verdict,) = judge([parse_check(text)], tight, baseline=loose)
        assert not verdict.passed, verdict.line
        assert verdict.line.endswith("(86 fewer than under max16)"), verdict.line
    # u1 started all its jobs in both runs; other figures are not started-only
    for text in ("mean_wait[user:u1] < 1m", "held[user:u3] >= 0", "never[user:u3] == 86"):
        (verdict,) = judge([parse_check(text)], tight, baseline=loose)
        assert verdict.passed and not verdict.warning, verdict.line
        assert "over" not in verdict.line


def test_a_wait_check_without_a_baseline_warns_with_the_count() -> None:
    tight = starving_run("8")
    (verdict,) = judge([parse_check("mean_wait[user:u3] < 2h")], tight)
    assert verdict.passed and verdict.warning
    assert verdict.line == "mean_wait[user:u3] < 2h: 1.8h, over 14 of 100 jobs started"
    (failed,) = judge([parse_check("mean_wait[user:u3] < 1h")], tight)
    assert not failed.passed and failed.warning
    # a baseline that started no more jobs leaves the warning, not a failure
    (same,) = judge([parse_check("mean_wait[user:u3] < 2h")], tight,
                    baseline=replace(tight, label="other"))
    assert same.passed and same.warning
    assert evaluate([parse_check("p95_wait < 1d")], tight) == [
        (parse_check("p95_wait < 1d"), True, "p95_wait < 1d: 3.6h, over 17 of 103 jobs started")]


def test_simulate_exits_1_listing_failed_checks_and_2_on_a_bad_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "q.yaml"
    config.write_text(CONFIG)
    common = ("simulate", "--config", str(config), "--workload",
              "synthetic:jobs=40,users=3,seed=3", "--nodes", "2", "--node-vcore", "64",
              "--out", str(tmp_path / "out"), "--no-plots")
    assert quotactor(*common, "--check", "never == 0", "--check", "completed == 40") == 0
    assert "PASS  never == 0: 0" in capsys.readouterr().out
    assert quotactor(*common, "--check", "completed > 40", "--check", "never == 0") == 1
    captured = capsys.readouterr()
    assert "FAIL  completed > 40: 40" in captured.out
    assert "1 check failed: q: completed > 40: 40" in captured.err
    assert quotactor(*common, "--check", "p99_wait < 1h") == 2
    assert "unknown field 'p99_wait'" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["simulate", "demo"])
def test_an_impossible_bound_is_refused_before_anything_runs(
        tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "q.yaml"
    config.write_text(CONFIG)
    args = (("--config", str(config), "--workload", "synthetic:jobs=5", "--nodes", "1")
            if command == "simulate" else ())
    out = tmp_path / "out"
    assert quotactor(command, *args, "--out", str(out), "--no-plots",
                     "--check", "utilization >= 101%") == 2
    captured = capsys.readouterr()
    assert captured.err == (f"quotactor {command}: check 'utilization >= 101%': utilization is "
                            "between 0.0% and 100.0%, so 101.0% is out of range\n")
    assert captured.out == "" and not out.exists()


def test_simulate_compare_fails_a_wait_check_on_fewer_started_jobs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "jobs.jsonl").write_text("\n".join(starving_jobs()) + "\n")
    for vcores in ("16", "8"):
        (tmp_path / f"max{vcores}.yaml").write_text(STARVING.replace("VCORES", vcores))
    common = ("simulate", "--workload", str(tmp_path / "jobs.jsonl"), "--nodes", "1",
              "--node-vcore", "64", "--out", str(tmp_path / "out"), "--no-plots",
              "--check", "mean_wait[user:u3] < 1d")
    assert quotactor(*common, "--config", str(tmp_path / "max16.yaml"),
                     "--compare", str(tmp_path / "max8.yaml")) == 1
    captured = capsys.readouterr()
    assert "PASS  mean_wait[user:u3] < 1d: 13.7h\n" in captured.out
    assert ("FAIL  mean_wait[user:u3] < 1d: 1.8h, over 14 of 100 jobs started (86 fewer than "
            "under max16)") in captured.out
    assert "1 check failed: max8: mean_wait[user:u3] < 1d: 1.8h" in captured.err
    # alone, the tighter config passes on its started jobs, loudly
    assert quotactor(*common, "--config", str(tmp_path / "max8.yaml")) == 0
    captured = capsys.readouterr()
    assert "WARN  mean_wait[user:u3] < 1d: 1.8h, over 14 of 100 jobs started" in captured.out
    assert ("warning: 1 check passed on the jobs that started only: max8: "
            "mean_wait[user:u3] < 1d: 1.8h, over 14 of 100 jobs started") in captured.err


def test_simulate_help_documents_the_wait_checks_and_the_compare_rows(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        quotactor("simulate", "--help")
    text = " ".join(capsys.readouterr().out.split())
    assert "a bound out of the field's range is refused" in text
    assert ("Waits and slowdowns cover started jobs only: such a check fails when the run "
            "started fewer of its jobs than the first config of --compare, and is WARN "
            "(passed, with the count) when some did not start") in text
    assert "rows per table of --compare, largest change first (0: all)" in text

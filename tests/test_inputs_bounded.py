"""Inputs bounded everywhere, errors in one line: results folders that cannot be written,
job files with numbers, fields and lines past their bounds, an empty config, and a large
synthetic workload's generation."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from quotactor.cli import main
from quotactor.config import ConfigError, load_scheduler_config
from quotactor.sim.inputs import synthetic
from quotactor.sim.inputs.collect import MAX_LINE
from quotactor.sim.inputs.jobfile import MAX_FIELD, parse_jsonl, read_jsonl
from quotactor.sim.inputs.jobs import WorkloadError

JOB = {"user": "sue", "submit": 0, "duration": 60, "tasks": 1, "queue": "root.a"}
CONFIG = """
partitions:
  - name: default
    placementrules: [{name: provided, create: true}]
    queues: [{name: root, submitacl: '*'}]
"""


def _simulate(tmp_path: Path, workload: str, out: Path | None = None) -> int:
    config = tmp_path / "queues.yaml"
    config.write_text(CONFIG)
    return main(["simulate", "--config", str(config), "--workload", workload, "--nodes", "1",
                 "--node-vcore", "4", "--no-plots", "--out", str(out or tmp_path / "out")])


def _one_line(err: str, command: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"quotactor {command}: "), err
    assert "Traceback" not in err and "Errno" not in err
    return lines[0]


@pytest.mark.parametrize("under", [False, True])
def test_demo_out_onto_a_file_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], under: bool,
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    out = blocker / "below" if under else blocker
    assert main(["demo", "--jobs", "5", "--no-plots", "--out", str(out)]) == 2
    line = _one_line(capsys.readouterr().err, "demo")
    assert f"{blocker}" in line and "is a file, not a folder" in line
    assert blocker.read_text() == "not a folder\n"


def test_simulate_out_onto_a_file_is_said_before_any_replay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    jobs = tmp_path / "jobs.jsonl"
    jobs.write_text(json.dumps(JOB) + "\n")
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    code = _simulate(tmp_path, str(jobs), blocker)
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert "is a file, not a folder" in _one_line(captured.err, "simulate")


def test_sweep_out_onto_a_file_is_said_before_the_points_are_announced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    example = tmp_path / "sweep.yaml"
    assert main(["sweep", "--example", str(example)]) == 0
    capsys.readouterr()
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    assert main(["sweep", str(example), "--out", str(blocker)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "is a file, not a folder" in _one_line(captured.err, "sweep")


@pytest.mark.parametrize(("field", "value"), [
    ("submit", 1e308), ("duration", 1e308), ("submit", "1e400"), ("submit", True),
])
def test_times_past_the_bound_are_bad_lines_naming_the_field(field: str, value: object) -> None:
    record = {**JOB, field: value}
    workload = parse_jsonl([json.dumps(record), json.dumps({**JOB, "job_id": "ok"})])
    assert [j.job_id for j in workload.jobs] == ["ok"]
    (problem,) = workload.problems
    assert field in problem.reason


def test_a_jsonl_job_submitted_at_1e308_is_refused_with_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    jobs = tmp_path / "jobs.jsonl"
    jobs.write_text(json.dumps({**JOB, "submit": 1e308}) + "\n")
    code = _simulate(tmp_path, str(jobs))
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "submit must be between 0 and 1e+10 seconds" in err


@pytest.mark.parametrize(("field", "value"), [
    ("user", "u" * (MAX_FIELD + 1)), ("job_id", "j" * (MAX_FIELD + 1)),
    ("queue", "root." + "q" * MAX_FIELD), ("groups", [f"g{i}" for i in range(300)]),
    ("tags", {f"k{i}": "v" for i in range(300)}), ("tags", {"k": "v" * (MAX_FIELD + 1)}),
    ("tasks", 10**7),
])
def test_a_field_past_its_bound_is_a_bad_line_with_a_short_reason(field: str, value: object
                                                                   ) -> None:
    workload = parse_jsonl([json.dumps({**JOB, field: value}),
                            json.dumps({**JOB, "job_id": "ok"})])
    assert [j.job_id for j in workload.jobs] == ["ok"]
    (problem,) = workload.problems
    assert len(problem.reason) < 300


def test_a_huge_line_is_a_bad_line_read_past_in_pieces(tmp_path: Path) -> None:
    path = tmp_path / "jobs.jsonl.gz"
    huge = json.dumps({**JOB, "user": "x" * (3 * MAX_LINE)})
    with gzip.open(path, "wt", encoding="utf-8") as out:
        out.write(huge + "\n" + json.dumps({**JOB, "job_id": "after"}) + "\n")
    workload = read_jsonl(path)
    assert [j.job_id for j in workload.jobs] == ["after"]
    (problem,) = workload.problems
    assert problem.line == 1 and f"longer than {MAX_LINE} characters" in problem.reason


def test_an_empty_config_gets_one_answer_everywhere(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """`quotactor validate` (as `POST /validate-conf`: tests/rest/test_serve_edges.py) refuses
    what `serve`, `simulate` and `PUT /config` refuse: a config without a partition."""
    empty = tmp_path / "empty.yaml"
    empty.write_text("# nothing yet\n")
    with pytest.raises(ConfigError, match="no partition"):
        load_scheduler_config(empty)
    assert main(["validate", str(empty)]) == 1
    assert "partitions: the configuration has no partition" in capsys.readouterr().out
    jobs = tmp_path / "jobs.jsonl"
    jobs.write_text(json.dumps(JOB) + "\n")
    assert main(["simulate", "--config", str(empty), "--workload", str(jobs), "--nodes", "1",
                 "--node-vcore", "4", "--no-plots", "--out", str(tmp_path / "out")]) == 2
    assert "no partition" in capsys.readouterr().err


def test_a_large_synthetic_workload_reports_its_progress(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path,
) -> None:
    monkeypatch.setattr(synthetic, "PROGRESS_EVERY", 40)
    seen: list[tuple[int, int]] = []
    workload = synthetic.generate(synthetic.parse_synthetic("synthetic:jobs=100"),
                                  lambda done, total: seen.append((done, total)))
    assert len(workload.jobs) == 100 and seen == [(40, 100), (80, 100)]
    _simulate(tmp_path, "synthetic:jobs=100,queues=root.a")
    err = capsys.readouterr().err
    assert "generating synthetic jobs: 40 of 100" in err


def test_the_synthetic_bound_is_refused_up_front() -> None:
    with pytest.raises(WorkloadError, match="5,000,000"):
        synthetic.parse_synthetic(f"synthetic:jobs={synthetic.MAX_JOBS + 1}")

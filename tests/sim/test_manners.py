"""Command-line manners: progress lines off a terminal, Ctrl-C, closed pipes, file errors,
bounded inputs, plain seconds in jobs.csv."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from quotactor import cli as top_cli
from quotactor.sim import cli as sim_cli
from quotactor.sim.inputs.jobfile import parse_jsonl
from quotactor.sim.inputs.jobs import WorkloadError
from quotactor.sim.inputs.synthetic import parse_synthetic
from quotactor.sim.models.progress import Progress

sys.path.insert(0, str(Path(__file__).parent))
from test_cli import CONFIG, quotactor


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_progress_off_a_terminal_is_a_line_every_interval_with_an_eta() -> None:
    out, clock = io.StringIO(), FakeClock()
    progress = Progress(100, "replay", stream=out, interval=5.0, clock=clock)
    progress.update(10, 0.0)
    assert out.getvalue() == ""  # nothing before the first interval: short runs stay quiet
    clock.now = 6.0
    progress.update(25, 86400.0)
    assert out.getvalue() == ("replay: 25/100 jobs ended (25%), day 1.0, 6s elapsed, "
                              "ETA 18s\n")
    clock.now = 8.0
    progress.update(50, 86400.0)
    assert out.getvalue().count("\n") == 1
    progress.close()
    assert "\r" not in out.getvalue()


def test_ctrl_c_ends_with_one_line_and_130(monkeypatch, capsys) -> None:
    def interrupted(args):
        raise KeyboardInterrupt

    parser = top_cli.build_parser()
    monkeypatch.setattr(top_cli, "build_parser", lambda: parser)
    parser._subparsers._group_actions[0].choices["tour"].set_defaults(func=interrupted)
    assert top_cli.main(["tour"]) == 130
    assert capsys.readouterr().err.strip() == "quotactor tour: interrupted"


def test_ctrl_c_during_the_second_replay_keeps_the_first_results(
        tmp_path: Path, monkeypatch, capsys) -> None:
    config = tmp_path / "a.yaml"
    config.write_text(CONFIG)
    other = tmp_path / "b.yaml"
    other.write_text(CONFIG.replace("maxapplications: 2", "maxapplications: 3"))
    real = sim_cli.run_config
    calls = []

    def second_interrupted(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(sim_cli, "run_config", second_interrupted)
    out = tmp_path / "out"
    code = quotactor("simulate", "--config", str(config), "--compare", str(other),
                     "--workload", "synthetic:jobs=30,users=3", "--nodes", "2",
                     "--node-vcore", "64", "--out", str(out), "--no-plots")
    assert code == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"quotactor simulate: interrupted; results of a are in {out}"]
    assert (out / "a-a" / "report.json").is_file()


@pytest.mark.slow
def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    # `quotactor demo ... | head -0`: the reader is gone before the first line is written.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "quotactor", "demo", "--jobs", "50", "--no-plots", "--out",
             str(tmp_path / "out")],
            stdout=write_end, stderr=subprocess.PIPE, timeout=120, check=False)
    finally:
        os.close(write_end)
    err = proc.stderr.decode()
    assert proc.returncode == 141
    assert "Traceback" not in err and "BrokenPipe" not in err


def test_missing_files_say_cannot_read(tmp_path: Path, capsys) -> None:
    config = tmp_path / "q.yaml"
    config.write_text(CONFIG)
    missing = tmp_path / "missing.yaml"
    for argv, name in (
        (("--config", str(missing), "--workload", "synthetic"), missing),
        (("--config", str(config), "--workload", str(tmp_path / "t.swf")), tmp_path / "t.swf"),
    ):
        assert quotactor("simulate", *argv, "--nodes", "1", "--out", str(tmp_path)) == 2
        assert capsys.readouterr().err.strip() == (
            f"quotactor simulate: cannot read {name}: No such file or directory")


def test_inputs_are_bounded() -> None:
    deep = "[" * 2000 + "]" * 2000
    with pytest.raises(WorkloadError, match="nested too deeply"):
        parse_jsonl([deep])
    with pytest.raises(WorkloadError, match="more than 5,000,000"):
        parse_synthetic("synthetic:jobs=1000000000")


def test_jobs_csv_times_are_plain_seconds(tmp_path: Path) -> None:
    from quotactor.scheduler import Scheduler, VirtualClock
    from quotactor.sim.inputs.cluster import uniform_cluster
    from quotactor.sim.models.replay import ReplayOptions, replay
    from quotactor.sim.reports.report import write_jobs_csv

    workload = parse_jsonl(['{"job_id": "j", "user": "u", "queue": "root.work", '
                            '"submit": 7500000, "duration": 12.5}'])
    with Scheduler.start(CONFIG, clock=VirtualClock(7500000)) as scheduler:
        result = replay(scheduler, workload, uniform_cluster(1, {"vcore": "4"}),
                        ReplayOptions(progress=False))
    row = write_jobs_csv(result, tmp_path).read_text().splitlines()[1].split(",")
    assert row[5:10] == ["7500000", "7500000", "7500000", "7500012.5", "0"]


def test_elastic_and_quotatree_say_cannot_read_too(tmp_path: Path, capsys) -> None:
    missing = tmp_path / "nope.yaml"
    assert top_cli.main(["elastic", str(missing), "--total", "cpu=1"]) != 0
    assert capsys.readouterr().err.strip() == (
        f"quotactor elastic: cannot read {missing}: No such file or directory")
    assert top_cli.main(["quotatree", str(missing), "--consumers", str(tmp_path)]) == 1
    assert capsys.readouterr().err.strip() == (
        f"quotactor quotatree: cannot read {missing}: No such file or directory")


def test_the_shipped_elastic_examples_print_the_documented_table(capsys) -> None:
    examples = Path(top_cli.__file__).parent / "elastic" / "examples"
    assert top_cli.main(["elastic", str(examples / "quotas.yaml"), "--total", "cpu=120",
                         "--requests", str(examples / "pods.yaml")]) == 0
    printed = capsys.readouterr().out
    page = (Path(top_cli.__file__).parent.parent / "docs" / "library" / "elastic.md").read_text()
    block = page[page.index("cluster total: cpu 120"):]
    block = block[:block.index("```")]
    assert printed.strip() == block.strip()

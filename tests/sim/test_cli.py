"""`quotactor simulate` and `quotactor demo` end to end, through the parser the lead wires."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from quotactor.sim.cli import add_parser

CONFIG = """\
partitions:
  - name: default
    placementrules:
      - name: fixed
        value: root.work
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: work
            limits:
              - limit: each user
                users: ["*"]
                maxapplications: 2
"""


def quotactor(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="quotactor")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(list(argv))
    code: int = args.func(args)
    return code


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "queues.yaml"
    path.write_text(CONFIG)
    return path


@pytest.mark.slow
def test_simulate_synthetic_writes_report_and_plots(
        tmp_path: Path, config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    code = quotactor("simulate", "--config", str(config), "--workload",
                     "synthetic:jobs=150,users=6,seed=2", "--nodes", "4", "--node-vcore", "16",
                     "--out", str(out))
    assert code == 0
    printed = capsys.readouterr().out
    assert "GROUP" in printed and "USER" in printed and "HELD:USER" in printed
    assert f"report: {out / 'report.json'}" in printed
    report = json.loads((out / "report.json").read_text())
    assert report["workload"]["jobs"] == 150 and report["leftoverUsage"] == {}
    assert report["totals"]["jobs"] == 150
    assert {u["name"] for u in report["users"]} <= {f"user-{i}" for i in range(1, 7)}
    assert report["performance"]["decisions"] > 0
    for name in ("usage-groups.png", "usage-top-users.png", "wait-times.png", "jobs.csv",
                 "utilization.png", "queues.png", "held-back-users.png"):
        assert (out / name).stat().st_size > 0
    assert (out / "jobs.csv").read_text().count("\n") == 151


def test_simulate_reports_bad_lines_and_refuses_bad_inputs(
        tmp_path: Path, config: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "jobs.csv"
    trace.write_text("user,submit,duration,tasks\nsue,0,10,2\nbob,x,10,1\nann,5,10,1\n")
    code = quotactor("simulate", "--config", str(config), "--workload", str(trace),
                     "--nodes", "1", "--node-vcore", "8", "--out", str(tmp_path / "o"),
                     "--no-plots")
    assert code == 0
    err = capsys.readouterr().err
    assert "skipped 1 bad line" in err and "line 3: submit must be a number" in err

    empty = tmp_path / "empty.csv"
    empty.write_text("user,submit,duration\nsue,oops,1\n")
    assert quotactor("simulate", "--config", str(config), "--workload", str(empty),
                     "--nodes", "1") == 2
    assert "no usable job" in capsys.readouterr().err

    broken = tmp_path / "broken.yaml"
    broken.write_text("partitions:\n  - name: default\n    queues: 7\n")
    assert quotactor("simulate", "--config", str(broken), "--workload", str(trace),
                     "--nodes", "1") == 2
    assert "broken.yaml" in capsys.readouterr().err

    assert quotactor("simulate", "--config", str(config), "--workload", str(trace)) == 2
    assert "--nodes" in capsys.readouterr().err

    assert quotactor("simulate", "--config", str(config), "--workload", str(trace),
                     "--nodes", "1", "--partition", "nope") == 2
    assert "no partition 'nope'" in capsys.readouterr().err


@pytest.mark.slow
def test_simulate_compares_two_configs(tmp_path: Path, config: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    looser = tmp_path / "looser.yaml"
    looser.write_text(CONFIG.replace("maxapplications: 2", "maxapplications: 5"))
    out = tmp_path / "cmp"
    code = quotactor("simulate", "--config", str(config), "--compare", str(looser),
                     "--workload", "synthetic:jobs=200,users=4,seed=9,interarrival=20",
                     "--nodes", "8", "--node-vcore", "16", "--out", str(out), "--no-plots")
    assert code == 0
    printed = capsys.readouterr().out
    assert "== A: queues ==" in printed and "== B: looser ==" in printed
    assert "comparison: A = queues, B = looser" in printed and " -> " in printed
    assert (out / "a-queues" / "report.json").exists()
    assert (out / "b-looser" / "report.json").exists()
    comparison = json.loads((out / "comparison.json").read_text())
    assert comparison["a"] == "queues" and comparison["users"]


@pytest.mark.slow
def test_demo_on_a_truncated_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "demo"
    assert quotactor("demo", "--jobs", "600", "--out", str(out)) == 0
    printed = capsys.readouterr().out
    assert "NASA Ames iPSC/860" in printed
    assert "Thanks to Bill Nitzberg" in printed and "Feitelson, D. Tsafrir, D. Krakov" in printed
    assert "normal" in printed and "system" in printed
    report = json.loads((out / "report.json").read_text())
    assert report["workload"]["jobs"] == 600 and report["leftoverUsage"] == {}
    assert "Bill Nitzberg" in report["acknowledgement"]
    assert (out / "nasa-ipsc-queues.yaml").exists()
    assert (out / "NASA-iPSC-1993-3.1-cln.swf.gz").exists()
    assert (out / "usage-top-users.png").exists()


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_full_demo(tmp_path: Path) -> None:
    """The whole trace (about 25 s here; bench/sim_RESULTS.md has the figures)."""
    assert quotactor("demo", "--out", str(tmp_path), "--no-plots") == 0
    report = json.loads((tmp_path / "report.json").read_text())
    totals = report["totals"]
    assert totals["jobs"] == 18239 == totals["completed"]
    assert report["leftoverUsage"] == {}
    held = totals["heldSeconds"]
    assert held["userLimit"] > 0 and held["groupLimit"] > 0 and held["queueLimit"] > 0


@pytest.mark.slow
def test_serve_keeps_the_api_up_until_interrupted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    import httpx

    from quotactor.sim import cli

    seen: dict[str, object] = {}

    def instead_of_waiting(url: str) -> None:
        with httpx.Client(base_url=url, timeout=10) as client:
            seen["apps"] = client.get("/partition/default/applications/completed").json()
            seen["users"] = client.get("/partition/default/usage/users").json()

    monkeypatch.setattr(cli, "_wait_for_interrupt", instead_of_waiting)
    assert quotactor("demo", "--jobs", "50", "--out", str(tmp_path), "--no-plots",
                     "--serve", "--port", "0") == 0
    assert len(seen["apps"]) == 50  # type: ignore[arg-type]
    assert isinstance(seen["users"], list)
    assert "serving http://127.0.0.1:" in capsys.readouterr().err


PREEMPTION_CONFIG = """\
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
PREEMPTION_JOBS = (
    '{"job_id": "long", "user": "sue", "groups": ["lab"], "queue": "root.silver", "submit": 0,'
    ' "duration": 100, "tasks": 4}\n'
    '{"job_id": "urgent", "user": "bob", "groups": ["ops"], "queue": "root.gold",'
    ' "submit": 20, "duration": 50, "tasks": 2}\n')


@pytest.mark.parametrize(("flags", "restarted", "killed", "urgent_start"), [
    ((), 1, 0, 30), (("--kill-preempted",), 0, 1, 30),
    (("--kill-preempted", "--preemption-grace", "7"), 0, 1, 37)])
def test_simulate_preemption_flags_reach_the_replay(
        tmp_path: Path, flags: tuple[str, ...], restarted: int, killed: int,
        urgent_start: int) -> None:
    (tmp_path / "queues.yaml").write_text(PREEMPTION_CONFIG)
    (tmp_path / "jobs.jsonl").write_text(PREEMPTION_JOBS)
    out = tmp_path / "out"
    code = quotactor("simulate", "--config", str(tmp_path / "queues.yaml"), "--workload",
                     str(tmp_path / "jobs.jsonl"), "--nodes", "1", "--node-vcore", "4",
                     "--packing", "none", "--no-plots", "--out", str(out), *flags)
    assert code == 0
    report = json.loads((out / "report.json").read_text())
    stats = report["preemptions"]
    assert (stats["victims"], stats["restarted"], stats["killed"]) == (1, restarted, killed)
    jobs = (out / "jobs.csv").read_text()
    urgent = next(line for line in jobs.splitlines() if line.startswith("urgent,"))
    assert f",{urgent_start}," in urgent or f",{urgent_start}.0," in urgent


@pytest.mark.parametrize(("flags", "message"), [
    (("--preemption-grace", "-1"), "must be 0 or more seconds"),
    (("--preemption-grace", "soon"), "not a number of seconds")])
def test_simulate_refuses_a_bad_grace_in_one_line(
        tmp_path: Path, config: Path, flags: tuple[str, ...], message: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        quotactor("simulate", "--config", str(config), "--workload", "synthetic:jobs=5",
                  "--nodes", "1", *flags)
    assert exited.value.code == 2
    assert message in capsys.readouterr().err


def test_simulate_help_documents_the_preemption_flags(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        quotactor("simulate", "--help")
    text = " ".join(capsys.readouterr().out.split())
    assert "--kill-preempted" in text and "instead of restarting it" in text
    assert "--preemption-grace SECONDS" in text

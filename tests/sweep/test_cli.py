"""`quotactor sweep` from the command line: outputs, exit codes, one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from quotactor.cli import main
from quotactor.sweep import runner

pytestmark = pytest.mark.timeout(240)


@pytest.mark.slow
def test_a_sweep_writes_tables_summary_and_plots(tiny_sweep: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    out = tiny_sweep.parent / "out"
    code = main(["sweep", str(tiny_sweep), "--out", str(out), "--workers", "1",
                 "--objective", "mean_wait", "--constraint", "never == 0",
                 "--pareto", "mean_wait,fairness_users"])
    printed = capsys.readouterr()
    assert code == 0
    assert "objective: mean_wait (lower is better); constraints: never == 0" in printed.out
    assert "invalid: point 1 (tiny: user_vcore=8, queue_apps=2, group_apps=0)" in printed.out
    assert "sweep: 4/4 points in" in printed.err
    names = {p.name for p in out.iterdir()}
    assert {"results.csv", "results.jsonl", "invalid.jsonl", "points.jsonl", "summary.txt",
            "vs-user_vcore.png", "vs-queue_apps.png",
            "pareto-mean_wait-fairness_users.png"} <= names
    assert "vs-group_apps.png" not in names  # one valid value only: nothing to plot against
    header = (out / "results.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header.startswith("point,workload,user_vcore,queue_apps,group_apps,jobs,")
    assert (out / "vs-user_vcore.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(("args", "message"), [
    (["--objective", "p96_wait"], "--objective: 'p96_wait' is not a figure"),
    (["--constraint", "never = 0"], "expected FIELD OP VALUE"),
    (["--pareto", "mean_wait"], "--pareto: two different figures"),
    (["--workers", "0"], "--workers must be at least 1"),
])
def test_bad_options_are_one_line_and_exit_2(tiny_sweep: Path, args: list[str], message: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["sweep", str(tiny_sweep), "--out", str(tiny_sweep.parent / "o"), *args])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("quotactor sweep: ") and message in err
    assert err.count("\n") == 1
    assert not (tiny_sweep.parent / "o").exists()


def test_a_bad_sweep_file_is_one_line(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("model: elastic\n", encoding="utf-8")
    assert main(["sweep", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err == "quotactor sweep: config: missing (a path to the model's quota file, or " \
                  "it inline)\n"


def test_ctrl_c_is_one_line_and_exit_130(tiny_sweep: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    def interrupt(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "run_sweep", interrupt)
    assert main(["sweep", str(tiny_sweep), "--out", str(tiny_sweep.parent / "o")]) == 130
    assert capsys.readouterr().err == \
        "quotactor sweep: interrupted before any replay finished\n"


def test_example_is_written_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["sweep", "--example"]) == 0
    text = (tmp_path / "nasa-sweep.yaml").read_text(encoding="utf-8")
    assert "builtin:nasa-ipsc" in text
    assert main(["sweep", "--example"]) == 2
    assert "nasa-sweep.yaml exists" in capsys.readouterr().err

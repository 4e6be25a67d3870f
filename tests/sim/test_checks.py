"""`--check`: a small expression language over the report, exit 1 when a check fails."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from quotactor.sim.checks import CheckError, evaluate, parse_check

sys.path.insert(0, str(Path(__file__).parent))
from test_cli import CONFIG, quotactor
from test_whatif import _run


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

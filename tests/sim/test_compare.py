"""`--compare`: differences ranked by size, never an unchanged row, deltas as printed, waits
beside the jobs that never started."""

from __future__ import annotations

import re
import sys
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

import pytest

from quotactor.sim.models.result import SimulationResult
from quotactor.sim.models.stats import ALL, EntityStats
from quotactor.sim.reports import compare
from quotactor.sim.reports.compare import compare_json, format_comparison, natural_key
from quotactor.sim.reports.whatif import WhatIf, analyse

sys.path.insert(0, str(Path(__file__).parent))
from test_checks import starving_run
from test_cli import quotactor
from test_whatif import CONFIG, _run


def _stats(name: str, mean: float | None = 600.0, never: int = 0, p95: float | None = 900.0,
           held: float = 0.0, kind: str = "user", jobs: int = 100) -> EntityStats:
    return EntityStats(kind, name, jobs, jobs - never, 0, never, mean, p95, p95,
                       MappingProxyType({"user": held, "group": 0.0, "queue": 0.0,
                                         "node": 0.0}))


def _pair(a: list[EntityStats], b: list[EntityStats],
          everybody: tuple[EntityStats, EntityStats] | None = None,
          ) -> tuple[SimulationResult, SimulationResult]:
    """Two runs of one replay whose users (and everybody) are the given figures."""
    base = _run()
    same = _stats(ALL, kind="all")
    x, y = everybody or (same, same)
    return (replace(base, label="A", users=tuple(a), groups=(), everybody=x),
            replace(base, label="B", users=tuple(b), groups=(), everybody=y))


def _user_rows(text: str) -> list[str]:
    rows = []
    for line in text[text.index("USER"):].splitlines()[1:]:
        if not line or line.startswith(("...", "comparison:")):
            break
        rows.append(line)
    return rows


def test_rows_are_ranked_by_size_and_the_rest_counted() -> None:
    names = [f"u{i}" for i in range(1, 21)]
    a = [_stats(n) for n in names]
    # u_i waits i minutes longer under B; u7 also has 5 jobs that no longer start
    b = [_stats(n, 600.0 + 60 * i) for i, n in enumerate(names, 1)]
    b[6] = _stats("u7", 600.0 + 60 * 7, never=5)
    x, y = _pair(a, b)
    text = format_comparison(x, y, top=5)
    rows = _user_rows(text)
    assert [row.split()[0] for row in rows] == ["u7", "u20", "u19", "u18", "u17"]
    assert "0 -> 5 (+5)" in rows[0] and "10.0m -> 17.0m (+7.0m)" in rows[0]
    assert "10.0m -> 30.0m (+20.0m)" in rows[1]
    assert text.endswith("... and 15 more differences")
    everyone = format_comparison(x, y, top=0)
    assert len(_user_rows(everyone)) == 20 and "more difference" not in everyone
    assert "... and 1 more difference" in format_comparison(x, y, top=19)
    assert len(_user_rows(format_comparison(x, y))) == compare.DEFAULT_TOP == 15


def test_a_row_is_listed_only_when_its_printed_figures_differ() -> None:
    a = [_stats("u23", 0.2, p95=0.3), _stats("u5", 3.24 * 3600, p95=None),
         _stats("u6", 100.0, held=10.0)]
    b = [_stats("u23", 0.4, p95=0.1), _stats("u5", 2.16 * 3600, p95=None),
         _stats("u6", 100.4, held=10.3)]
    x, y = _pair(a, b)
    text = format_comparison(x, y)
    rows = _user_rows(text)
    assert [row.split()[0] for row in rows] == ["u5"]
    # the delta is that of the printed figures (3.2h - 2.2h), not of the raw ones (1.08 h)
    assert "3.2h -> 2.2h (-1.0h)" in rows[0]
    for left, right in re.findall(r"(\S+) -> (\S+)", text):
        assert left != right, text
    assert "no group or user differs" in format_comparison(*_pair(a[:1], b[:1]))


def test_waits_are_shown_beside_the_jobs_that_never_started() -> None:
    before = _stats(ALL, 3 * 3600.0, p95=10 * 3600.0, kind="all")
    after = _stats(ALL, 2 * 3600.0, never=86, p95=10 * 3600.0, kind="all")
    x, y = _pair([_stats("u3", 3 * 3600.0)], [_stats("u3", 2 * 3600.0, never=86)],
                 (before, after))
    lines = format_comparison(x, y).splitlines()
    assert ("mean wait 3.0h -> 2.0h (-1.0h), p95 wait 10.0h, never started 0 -> 86 (+86)"
            in lines)
    assert "B started 86 fewer jobs than A: its waits cover only the jobs that started" in lines
    header = lines[lines.index(next(line for line in lines if line.startswith("USER")))]
    assert header.split()[:4] == ["USER", "DONE", "NEVER", "MEAN"]
    (row,) = _user_rows("\n".join(lines))
    assert re.search(r"100 -> 14 \(-86\)\s+0 -> 86 \(\+86\)\s+3\.0h -> 2\.0h \(-1\.0h\)", row)
    # unchanged waits still sit beside a change in jobs that never started
    x, y = _pair([_stats("u3")], [_stats("u3", never=2)],
                 (_stats(ALL, kind="all"), _stats(ALL, never=2, kind="all")))
    assert ("mean wait 10.0m, p95 wait 15.0m, never started 0 -> 2 (+2)"
            in format_comparison(x, y).splitlines())


def test_a_starved_user_shows_its_jobs_that_never_started() -> None:
    text = format_comparison(starving_run("16"), starving_run("8"))
    assert "never started 0 -> 86 (+86)" in text
    assert "B started 86 fewer jobs than A" in text
    (row,) = _user_rows(text)  # u1 is the same under both
    assert row.startswith("u3 ") and "0 -> 86 (+86)" in row and "13.7h -> 1.8h" in row


@pytest.mark.parametrize(("left", "right", "line"), [
    (0.574, 0.566, "utilization: 57.4% -> 56.6% (-0.8 points)"),
    (0.574, 0.556, "utilization: 57% -> 56% (-1 point)"),
    (0.574, 0.5449, "utilization: 57% -> 54% (-3 points)"),
    (0.5704, 0.5701, None),
])
def test_utilization_changes_as_printed(monkeypatch: pytest.MonkeyPatch, left: float,
                                        right: float, line: str | None) -> None:
    x, y = _pair([_stats("u1")], [_stats("u1")])
    figures = {"A": replace(analyse(x), utilization=left),
               "B": replace(analyse(y), utilization=right)}

    def fixed(result: SimulationResult) -> WhatIf:
        return figures[result.label]

    monkeypatch.setattr(compare, "analyse", fixed)
    lines = format_comparison(x, y).splitlines()
    shown = [entry for entry in lines if entry.startswith("utilization")]
    assert shown == ([] if line is None else [line])


def test_ratios_get_a_decimal_when_rounding_would_hide_the_change(
        monkeypatch: pytest.MonkeyPatch) -> None:
    x, y = _pair([_stats("u1")], [_stats("u1")])
    figures = {"A": replace(analyse(x), fairness_users=0.901, fairness_groups=0.5,
                            mean_slowdown=1.2),
               "B": replace(analyse(y), fairness_users=0.904, fairness_groups=0.5001,
                            mean_slowdown=1.5)}
    monkeypatch.setattr(compare, "analyse", lambda result: figures[result.label])
    text = format_comparison(x, y)
    assert "fairness, users: 0.901 -> 0.904 (+0.003)" in text
    assert "fairness, groups" not in text
    assert "bounded slowdown, mean: 1.20 -> 1.50 (+0.30)" in text


def test_comparison_of_two_replays_and_its_json() -> None:
    assert sorted(["u11", "u2", "u1"], key=natural_key) == ["u1", "u2", "u11"]
    a = _run()
    b = _run(CONFIG.replace("maxapplications: 1", "maxapplications: 2"))
    text = format_comparison(a, b)
    users = _user_rows(text)
    assert [row.split()[0] for row in users] == ["u2"]   # u11 did not change
    assert "1.7m -> 0s (-1.7m)" in users[0]
    assert "utilization" in text
    (u2,) = (row for row in compare_json(a, b)["users"]  # type: ignore[attr-defined]
             if row["name"] == "u2")
    assert u2["a"]["neverStarted"] == 1 and u2["a"]["rejected"] == 0


@pytest.mark.slow
def test_simulate_compare_lists_as_many_rows_as_users_says(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = """\
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
                maxapplications: 1
"""
    (tmp_path / "one.yaml").write_text(config)
    (tmp_path / "four.yaml").write_text(config.replace("maxapplications: 1",
                                                       "maxapplications: 4"))
    common = ("simulate", "--config", str(tmp_path / "one.yaml"), "--compare",
              str(tmp_path / "four.yaml"), "--workload",
              "synthetic:jobs=150,users=8,seed=5,interarrival=20", "--nodes", "4",
              "--node-vcore", "16", "--out", str(tmp_path / "out"), "--no-plots")
    assert quotactor(*common, "--users", "3") == 0
    printed = capsys.readouterr().out
    text = printed[printed.index("comparison: A = one"):]
    assert len(_user_rows(text)) == 3
    assert "... and 5 more differences" in text
    assert quotactor(*common, "--users", "0") == 0
    printed = capsys.readouterr().out
    assert len(_user_rows(printed[printed.index("comparison: A = one"):])) == 8

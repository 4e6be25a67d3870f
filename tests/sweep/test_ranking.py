"""Objective and constraints: parsing, units, direction, ties in grid order."""

from __future__ import annotations

import pytest

from quotactor.sweep import SweepError, figures_for, parse_constraint, parse_objective, rank

FIGURES = figures_for("yunikorn")
COLUMNS = ["user_vcore", *(f.name for f in FIGURES)]
ROWS = [
    {"point": 0, "user_vcore": "8", "p95_wait": 7200.0, "never": 0, "fairness_users": 0.9,
     "utilization": 0.4},
    {"point": 1, "user_vcore": "16", "p95_wait": 600.0, "never": 3, "fairness_users": 0.7,
     "utilization": 0.6},
    {"point": 2, "user_vcore": "32", "p95_wait": 1800.0, "never": 0, "fairness_users": 0.95,
     "utilization": 0.5},
    {"point": 3, "user_vcore": "64", "p95_wait": 1800.0, "never": 0, "fairness_users": 0.8,
     "utilization": None},
    {"point": 4, "user_vcore": None, "p95_wait": None, "never": 0, "fairness_users": None,
     "utilization": 0.7},
]


def _points(objective: str, *constraints: str) -> list[int]:
    ranking = rank(ROWS, parse_objective(objective, FIGURES),
                   [parse_constraint(c, COLUMNS) for c in constraints])
    return [int(row["point"]) for row in ranking.ranked]


def test_objective_with_a_constraint() -> None:
    assert _points("p95_wait", "never == 0") == [2, 3, 0, 4]  # tie in grid order, None last
    assert _points("p95_wait") == [1, 2, 3, 0, 4]


def test_direction_follows_the_figure_unless_given() -> None:
    assert _points("fairness_users") == [2, 0, 3, 1, 4]
    assert _points("min:fairness_users") == [1, 3, 0, 2, 4]
    assert _points("max:p95_wait") == [0, 2, 3, 1, 4]


def test_units_and_parameters_in_constraints() -> None:
    assert _points("p95_wait", "p95_wait < 1h") == [1, 2, 3]
    assert _points("p95_wait", "p95_wait <= 30m", "never == 0") == [2, 3]
    assert _points("p95_wait", "utilization >= 50%") == [1, 2, 4]
    assert _points("p95_wait", "user_vcore > 10") == [1, 2, 3]
    assert _points("p95_wait", "user_vcore == null") == [4]
    assert _points("p95_wait", "user_vcore != null") == [1, 2, 3, 0]


def test_excluded_points_are_counted() -> None:
    ranking = rank(ROWS, parse_objective("p95_wait", FIGURES),
                   [parse_constraint("never == 0", COLUMNS)])
    assert ranking.excluded == 1


@pytest.mark.parametrize(("text", "message"), [
    ("never = 0", "expected FIELD OP VALUE"),
    ("nevr == 0", "'nevr' is neither a figure nor a parameter"),
    ("p95_wait < soon", "cannot parse check"),
    ("p99_wait < soon", "'soon' is not a number"),
    ("never < 2h", "never is not a duration"),
    ("p95_wait < 50%", "% applies to utilization only"),
    ("never[user:u4] == 0", "run-wide figures only"),
])
def test_bad_constraints_are_explained(text: str, message: str) -> None:
    with pytest.raises(SweepError, match=message):
        parse_constraint(text, COLUMNS)


def test_bad_objectives_are_explained() -> None:
    with pytest.raises(SweepError, match="'p96_wait' is not a figure"):
        parse_objective("p96_wait", FIGURES)
    with pytest.raises(SweepError, match="say min:p95_wait or max:p95_wait"):
        parse_objective("best:p95_wait", FIGURES)

"""Ranking sweep points: an objective to optimise, constraints every kept point must meet.

```
--objective p95_wait                  # lower is better (waits, held time, never-started, ...)
--objective max:fairness_users        # or say which way; higher is better for fairness and
                                      # utilization by default
--constraint "never == 0" --constraint "p95_wait < 2h" --constraint "utilization >= 50%"
```
A constraint on a figure `quotactor simulate --check` knows is a check: parsed by
`quotactor.sim.reports.checks.parse_check` (same fields, units and errors) and compared by its
`holds`, against the same value (a row holds `run_figures`), so a constraint keeps a point
exactly when the check passes on that point's replay. A row has run-wide figures only, so the
checks' per-user and per-group form (`never[user:u4] == 0`) is refused with a clear error.

The sweep adds two kinds of NAME the checks cannot know: its extra figures (`p50_wait`,
`p99_wait`, `work_lost_core_hours`, ...) and its parameters. They take the same
`NAME OP VALUE` with the same units (`s`, `m`, `h`, `d`; `%`); a parameter may also be
compared as text with `==`/`!=` (`user_jobs == null`). Ties keep grid order, so the ranking of
the same rows is always the same.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from quotactor.sim.reports.checks import RUN_FIELDS, Check, CheckError, holds, parse_check
from quotactor.sweep.errors import SweepError
from quotactor.sweep.headline import Figure

__all__ = ["Constraint", "Objective", "Ranking", "parse_constraint", "parse_objective", "rank"]

_CONSTRAINT = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(<=|>=|==|!=|<|>)\s*(\S+)\s*$")
_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "%": 0.01}
_NUMBER = re.compile(r"^(-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)([smhd%]?)$")


@dataclass(frozen=True, slots=True)
class Objective:
    name: str
    lower_is_better: bool

    def describe(self) -> str:
        return f"{self.name} ({'lower' if self.lower_is_better else 'higher'} is better)"


@dataclass(frozen=True, slots=True)
class Constraint:
    name: str
    op: str
    value: float | str
    text: str

    def holds(self, row: Mapping[str, Any]) -> bool:
        actual = row.get(self.name)
        if isinstance(self.value, str):
            shown = "null" if actual is None else str(actual).lower() \
                if isinstance(actual, bool) else str(actual)
            return (shown == self.value) == (self.op == "==")
        return holds(Check(self.text, self.name, self.op, self.value), _number(actual))


@dataclass(frozen=True, slots=True)
class Ranking:
    """The rows meeting every constraint, best first; how many others there were."""

    objective: Objective
    constraints: tuple[Constraint, ...]
    ranked: tuple[Mapping[str, Any], ...]
    excluded: int


def parse_objective(text: str, figures: Sequence[Figure]) -> Objective:
    direction, _, name = text.rpartition(":")
    known = {f.name: f for f in figures}
    if name not in known:
        raise SweepError(f"--objective: {name!r} is not a figure (one of {', '.join(known)})")
    if direction not in ("", "min", "max"):
        raise SweepError(f"--objective: say min:{name} or max:{name}, not {direction}:{name}")
    lower = known[name].lower_is_better if not direction else direction == "min"
    return Objective(name, lower)


def parse_constraint(text: str, columns: Iterable[str]) -> Constraint:
    """`NAME OP VALUE` over a row's `columns`: a check when NAME is a check's field."""
    match = _CONSTRAINT.match(text)
    known = list(columns)
    if match is None or match.group(1) in RUN_FIELDS:
        try:
            check = parse_check(text)
        except CheckError as error:
            raise SweepError(f"--constraint: {error}") from None
        if check.scope:
            raise SweepError(f"--constraint {text!r}: a sweep row holds run-wide figures "
                             "only; per-user and per-group checks need `quotactor simulate "
                             "--check` on the point's config")
        if check.field not in known:
            raise SweepError(f"--constraint {text!r}: this model's rows have no "
                             f"{check.field!r}")
        return Constraint(check.field, check.op, check.value, check.text.strip())
    name, op, raw = match.groups()
    if name not in known:
        raise SweepError(f"--constraint {text!r}: {name!r} is neither a figure nor a parameter "
                         f"(one of {', '.join(known)})")
    number = _NUMBER.match(raw)
    value: float | str
    if number is not None:
        value = float(number.group(1)) * _UNITS.get(number.group(2), 1.0)
    elif op in ("==", "!="):
        value = raw
    else:
        raise SweepError(f"--constraint {text!r}: {raw!r} is not a number (units: s m h d %)")
    return Constraint(name, op, value, text.strip())


def rank(rows: Sequence[Mapping[str, Any]], objective: Objective,
         constraints: Sequence[Constraint] = ()) -> Ranking:
    kept = [row for row in rows if all(c.holds(row) for c in constraints)]

    def order(item: tuple[int, Mapping[str, Any]]) -> tuple[bool, float, int]:
        position, row = item
        value = _number(row.get(objective.name))
        if value is None:
            return (True, 0.0, position)
        return (False, value if objective.lower_is_better else -value, position)

    ranked = tuple(row for _, row in sorted(enumerate(kept), key=order))
    return Ranking(objective, tuple(constraints), ranked, len(rows) - len(kept))


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    try:
        return float(str(value))
    except ValueError:
        return None

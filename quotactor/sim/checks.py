"""Policy checks for CI: `--check "p95_wait < 2h"` gates a config change on a replay's figures.

A check is one comparison, `FIELD OP VALUE`:

- FIELD is a run-wide figure (`jobs`, `completed`, `rejected`, `never`, `mean_wait`,
  `p95_wait`, `max_wait`, `held_user`, `held_group`, `held_queue`, `held_node`, `held`,
  `utilization`, `fairness_users`, `fairness_groups`, `mean_slowdown`, `p95_slowdown`,
  `preemptions`), or a per-user or per-group one written `FIELD[user:NAME]` or
  `FIELD[group:NAME]` (the figures a user or group has: jobs ... held);
- OP is one of `<`, `<=`, `>`, `>=`, `==`, `!=`;
- VALUE is a number, a duration with a unit (`90s`, `30m`, `2h`, `1.5d`), or a percentage
  (`85%`, for `utilization`).

A figure that does not exist in a run (no job started, so no wait; a user not in the trace)
fails the check. Checks are parsed before the replay, so a typo costs nothing.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass

from quotactor.sim.fmt import duration
from quotactor.sim.result import SimulationResult
from quotactor.sim.stats import EntityStats
from quotactor.sim.whatif import WhatIf, analyse

__all__ = ["RUN_FIELDS", "Check", "CheckError", "evaluate", "holds", "parse_check",
           "run_figures"]

_OPS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le, ">=": operator.ge, "==": operator.eq, "!=": operator.ne,
    "<": operator.lt, ">": operator.gt,
}
_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "%": 0.01}
_PATTERN = re.compile(r"^\s*([a-z_0-9]+)(?:\[(user|group):([^\]]+)\])?\s*(<=|>=|==|!=|<|>)\s*"
                      r"(-?\d+(?:\.\d+)?)\s*(s|m|h|d|%)?\s*$")
_STATS_FIELDS = ("jobs", "completed", "rejected", "never", "mean_wait", "p95_wait",
                 "max_wait", "held_user", "held_group", "held_queue", "held_node", "held")
_RUN_FIELDS = (*_STATS_FIELDS, "utilization", "fairness_users", "fairness_groups",
               "mean_slowdown", "p95_slowdown", "preemptions")
RUN_FIELDS = _RUN_FIELDS
"""The run-wide fields, in the order `run_figures` gives them."""
_DURATIONS = {"mean_wait", "p95_wait", "max_wait", "held_user", "held_group", "held_queue",
              "held_node", "held"}


class CheckError(ValueError):
    """A check that cannot be parsed; the message says what is wrong."""


@dataclass(frozen=True, slots=True)
class Check:
    """One parsed check: `field` (of everybody, or of `scope` `name`) `op` `value`."""

    text: str
    field: str
    op: str
    value: float
    scope: str = ""
    name: str = ""

    def describe(self, actual: float | None) -> str:
        """`p95_wait < 2h: 3.1h` (the figure shown in the check's own unit)."""
        shown = "missing" if actual is None else _show(self.field, actual)
        return f"{self.text.strip()}: {shown}"


def parse_check(text: str) -> Check:
    match = _PATTERN.match(text)
    if match is None:
        raise CheckError(f"cannot parse check {text!r}: expected FIELD OP VALUE, e.g. "
                         "\"p95_wait < 2h\" or \"never[user:u4] == 0\"")
    field, scope, name, op, number, unit = match.groups()
    allowed = _STATS_FIELDS if scope else _RUN_FIELDS
    if field not in allowed:
        raise CheckError(f"unknown field {field!r} in check {text!r} (known: "
                         f"{', '.join(allowed)})")
    if unit == "%" and field != "utilization":
        raise CheckError(f"check {text!r}: % applies to utilization only")
    if unit in ("s", "m", "h", "d") and field not in _DURATIONS:
        raise CheckError(f"check {text!r}: {field} is not a duration")
    value = float(number) * _UNITS.get(unit or "s", 1.0)
    return Check(text, field, op, value, scope or "", name or "")


def _show(field: str, value: float) -> str:
    if field in _DURATIONS:
        return duration(value)
    if field == "utilization":
        return f"{value:.1%}"
    return f"{value:g}"


def _from_stats(stats: EntityStats, field: str) -> float | None:
    held = stats.held
    values: dict[str, float | None] = {
        "jobs": stats.jobs, "completed": stats.completed, "rejected": stats.rejected,
        "never": stats.never_started, "mean_wait": stats.mean_wait,
        "p95_wait": stats.p95_wait, "max_wait": stats.max_wait,
        "held_user": held.get("user", 0.0), "held_group": held.get("group", 0.0),
        "held_queue": held.get("queue", 0.0), "held_node": held.get("node", 0.0),
        "held": sum(held.values()),
    }
    return values[field]


def run_figures(result: SimulationResult,
                what_if: WhatIf | None = None) -> dict[str, float | None]:
    """Every run-wide field's value in `result`, as checks compare it (a sweep row shows the
    same numbers); `what_if` is `analyse(result)` when the caller already has it."""
    w = analyse(result) if what_if is None else what_if
    run: dict[str, float | None] = {
        field: _from_stats(result.everybody, field) for field in _STATS_FIELDS}
    run.update({
        "utilization": w.utilization, "fairness_users": w.fairness_users,
        "fairness_groups": w.fairness_groups, "mean_slowdown": w.mean_slowdown,
        "p95_slowdown": w.p95_slowdown, "preemptions": float(w.preemptions.victims),
    })
    return run


def holds(check: Check, actual: float | None) -> bool:
    """Whether `actual` passes `check`; a missing figure never does."""
    return actual is not None and _OPS[check.op](actual, check.value)


def _figure(check: Check, result: SimulationResult, what_if: WhatIf) -> float | None:
    if check.scope:
        rows = result.users if check.scope == "user" else result.groups
        found = next((s for s in rows if s.name == check.name), None)
        return None if found is None else _from_stats(found, check.field)
    return run_figures(result, what_if)[check.field]


def evaluate(checks: list[Check], result: SimulationResult) -> list[tuple[Check, bool, str]]:
    """Each check with whether it passed and the line that says so."""
    what_if = analyse(result)
    out = []
    for check in checks:
        actual = _figure(check, result, what_if)
        passed = holds(check, actual)
        out.append((check, passed, check.describe(actual)))
    return out

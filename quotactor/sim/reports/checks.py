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
fails the check. Checks are parsed before the replay, so a typo costs nothing, and so is a
bound no run can meet or miss: a VALUE outside its field's range (`utilization >= 101%`, a
negative wait or count, a fairness index above 1, a slowdown below 1, a fractional count of
jobs) or a strict comparison with the range's end (`never < 0`, `fairness_users > 1`).

The wait figures (`mean_wait`, `p95_wait`, `max_wait`) and the slowdowns are computed over the
jobs that started, so a configuration that stops jobs from starting makes them look better.
Hence, for a check on one of them:

- given a baseline (the first configuration of `--compare`, for the second), the check fails
  when the run started fewer jobs in the check's scope than the baseline did, whatever the
  figure, and its line says how many fewer;
- otherwise, when some jobs of the scope did not start (never started or rejected), the check
  is decided on the figure as it stands but carries a warning with the count (`WARN` rather
  than `PASS` in the command's output), since no run shows whether they could have started.

Either way the line says over how many of the scope's jobs the figure was taken.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass

from quotactor.sim.fmt import duration
from quotactor.sim.models.outcomes import JobOutcome
from quotactor.sim.models.result import SimulationResult
from quotactor.sim.models.stats import NO_GROUP, EntityStats
from quotactor.sim.reports.whatif import WhatIf, analyse

__all__ = ["RUN_FIELDS", "STARTED_ONLY", "Check", "CheckError", "Verdict", "evaluate", "holds",
           "judge", "parse_check", "run_figures"]

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
_COUNTS = {"jobs", "completed", "rejected", "never", "preemptions"}
_INF = float("inf")
_RANGES: dict[str, tuple[float, float]] = {
    **dict.fromkeys((*_DURATIONS, *_COUNTS), (0.0, _INF)),
    "utilization": (0.0, 1.0), "fairness_users": (0.0, 1.0), "fairness_groups": (0.0, 1.0),
    "mean_slowdown": (1.0, _INF), "p95_slowdown": (1.0, _INF),
}
"""The values each field can take (Jain's index lies in (0, 1]; bounded slowdown is >= 1)."""
STARTED_ONLY = frozenset({"mean_wait", "p95_wait", "max_wait", "mean_slowdown",
                          "p95_slowdown"})
"""The fields computed over the jobs that started only."""


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
    _refuse_impossible(text, field, op, value)
    return Check(text, field, op, value, scope or "", name or "")


def _refuse_impossible(text: str, field: str, op: str, value: float) -> None:
    """`CheckError` for a bound outside `field`'s range or a strict one at its end."""
    low, high = _RANGES[field]
    bounds = (f"{_show(field, low)} or more" if high == _INF
              else f"between {_show(field, low)} and {_show(field, high)}")
    if not low <= value <= high:
        raise CheckError(f"check {text!r}: {field} is {bounds}, so {_show(field, value)} is "
                         "out of range")
    if field in _COUNTS and not value.is_integer():
        raise CheckError(f"check {text!r}: {field} is a count, a whole number")
    if (op == "<" and value == low) or (op == ">" and value == high):
        raise CheckError(f"check {text!r} can never pass: {field} is {bounds}")


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


def _in_scope(check: Check) -> Callable[[JobOutcome], bool]:
    if check.scope == "user":
        return lambda o: o.user == check.name
    if check.scope == "group":
        return lambda o: (o.group or NO_GROUP) == check.name
    return lambda o: True


def _figure(check: Check, result: SimulationResult, what_if: WhatIf) -> float | None:
    if check.scope:
        rows = result.users if check.scope == "user" else result.groups
        found = next((s for s in rows if s.name == check.name), None)
        return None if found is None else _from_stats(found, check.field)
    return run_figures(result, what_if)[check.field]


def _started(check: Check, result: SimulationResult) -> tuple[int, int]:
    """(jobs that started, jobs) in the check's scope."""
    in_scope = _in_scope(check)
    scoped = [o for o in result.outcomes if in_scope(o)]
    return sum(o.wait is not None for o in scoped), len(scoped)


@dataclass(frozen=True, slots=True)
class Verdict:
    """One check on one run: whether it passed, the line that says so, and for a figure
    taken over part of its scope's jobs (see the module's docstring) a warning."""

    check: Check
    passed: bool
    line: str
    warning: bool = False
    """Passed or not on a figure over the started jobs only, while others did not start."""


def _verdict(check: Check, actual: float | None, result: SimulationResult,
             baseline: SimulationResult | None) -> Verdict:
    line = check.describe(actual)
    passed = holds(check, actual)
    if check.field not in STARTED_ONLY:
        return Verdict(check, passed, line)
    started, jobs = _started(check, result)
    if started == jobs:
        return Verdict(check, passed, line)
    line += f", over {started} of {jobs} jobs started"
    if baseline is not None:
        fewer = _started(check, baseline)[0] - started
        if fewer > 0:
            return Verdict(check, False, f"{line} ({fewer} fewer than under {baseline.label})")
    return Verdict(check, passed, line, warning=True)


def judge(checks: list[Check], result: SimulationResult,
          baseline: SimulationResult | None = None) -> list[Verdict]:
    """Each check on `result`; a wait or slowdown check fails when `result` started fewer of
    its scope's jobs than `baseline` (a replay of the same workload) and is flagged when some
    did not start."""
    what_if = analyse(result)
    return [_verdict(check, _figure(check, result, what_if), result, baseline)
            for check in checks]


def evaluate(checks: list[Check], result: SimulationResult,
             baseline: SimulationResult | None = None) -> list[tuple[Check, bool, str]]:
    """Each check with whether it passed and the line that says so (see `judge`)."""
    return [(v.check, v.passed, v.line) for v in judge(checks, result, baseline)]

"""Two replays of one workload side by side: what a configuration change does to each user
and group, largest differences first.

A figure counts as changed only when its printed form changes, and every delta is the
difference of the two printed figures, so a row never reads `0s -> 0s (+0s)` and a headline
never reads `57% -> 57% (-1 point)`: a percentage or ratio that its usual rounding would hide
gets one more decimal, and one that still looks the same is left out.

Wait figures cover only the jobs that started, so each is shown beside the change in jobs
that never started: a configuration that stops a user's jobs from starting cannot pass for one
that shortens their waits. Rows are ranked by the change in jobs that did not start (never
started or rejected: a job that no longer starts outweighs any change in wait), then by the
change in mean wait, in 95th-percentile wait and in time held back by limits, each in seconds
as printed; the first `top` rows of each table are listed and the rest counted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from quotactor.sim.fmt import duration, render_table
from quotactor.sim.models.result import SimulationResult
from quotactor.sim.models.stats import EntityStats
from quotactor.sim.reports.whatif import analyse

__all__ = ["DEFAULT_TOP", "compare_json", "format_comparison", "natural_key"]

DEFAULT_TOP = 15
"""Rows listed per table unless the caller says otherwise."""

_HEADER = ("DONE", "NEVER", "MEAN WAIT", "P95 WAIT", "HELD:LIMITS")
_SHOWN_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(s|m|h|d)$")
_UNIT_SECONDS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def _limits_held(stats: EntityStats) -> float:
    return sum(v for k, v in stats.held.items() if k != "node")


def natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """`u2` before `u11`: digits compare as numbers, the rest as text."""
    return tuple((0, int(part)) if part.isdigit() else (1, part)
                 for part in re.split(r"(\d+)", name) if part)


def _shown_seconds(seconds: float) -> float:
    """`seconds` as `duration` prints it, read back to the millisecond (`3.24h` prints
    `3.2h`: 11,520 s), so that the difference of two printed figures is what they show."""
    match = _SHOWN_DURATION.match(duration(seconds))
    if match is None:
        return seconds
    return round(float(match.group(1)) * _UNIT_SECONDS[match.group(2)], 3)


@dataclass(frozen=True, slots=True)
class _Cell:
    """One figure of both runs as printed, and the size of its printed change."""

    text: str
    changed: bool
    size: float


def _duration_cell(a: float | None, b: float | None) -> _Cell:
    """`A -> B (+delta)`, the delta being that of the printed figures; `A` when they print
    alike. A figure missing on one side (no job started) is a change of unknown size, ranked
    as that of the other side's figure."""
    if duration(a) == duration(b):
        return _Cell(duration(a), False, 0.0)
    if a is None or b is None:
        present = a if b is None else b
        return _Cell(f"{duration(a)} -> {duration(b)}", True,
                     _shown_seconds(present) if present is not None else 0.0)
    x, y = _shown_seconds(a), _shown_seconds(b)
    sign = "+" if y > x else "-"
    return _Cell(f"{duration(a)} -> {duration(b)} ({sign}{duration(abs(y - x))})", True,
                 abs(y - x))


def _count_cell(a: int, b: int) -> _Cell:
    if a == b:
        return _Cell(str(a), False, 0.0)
    return _Cell(f"{a} -> {b} ({b - a:+d})", True, float(abs(b - a)))


@dataclass(frozen=True, slots=True)
class _Row:
    name: str
    cells: tuple[_Cell, ...]
    rank: tuple[float, ...]

    def text(self) -> list[str]:
        return [self.name, *(cell.text for cell in self.cells)]


def _not_started(stats: EntityStats | None) -> int:
    return 0 if stats is None else stats.never_started + stats.rejected


def _row(name: str, a: EntityStats | None, b: EntityStats | None) -> _Row | None:
    """The row of `name`, or None when none of its printed figures differ."""
    done = _count_cell(a.completed if a else 0, b.completed if b else 0)
    never = _count_cell(a.never_started if a else 0, b.never_started if b else 0)
    mean = _duration_cell(a.mean_wait if a else None, b.mean_wait if b else None)
    p95 = _duration_cell(a.p95_wait if a else None, b.p95_wait if b else None)
    held = _duration_cell(_limits_held(a) if a else 0.0, _limits_held(b) if b else 0.0)
    cells = (done, never, mean, p95, held)
    if not any(cell.changed for cell in cells):
        return None
    fate = float(abs(_not_started(b) - _not_started(a)))
    return _Row(name, cells, (fate, mean.size, p95.size, held.size))


def _ranked(a: Sequence[EntityStats], b: Sequence[EntityStats]) -> list[_Row]:
    """The rows that differ, largest change first (ties in natural order of names)."""
    left = {s.name: s for s in a}
    right = {s.name: s for s in b}
    rows = [row for name in sorted(set(left) | set(right), key=natural_key)
            if (row := _row(name, left.get(name), right.get(name))) is not None]
    return sorted(rows, key=lambda row: tuple(-x for x in row.rank))


def _table(title: str, rows: list[_Row], top: int) -> list[str]:
    shown = rows if top <= 0 else rows[:top]
    lines = [render_table((title, *_HEADER), [row.text() for row in shown])]
    if len(shown) < len(rows):
        more = len(rows) - len(shown)
        lines.append(f"... and {more} more difference{'s' if more != 1 else ''}")
    return lines


def _decimal_pair(left: float, right: float, digits: int, unit: str = "",
                  points: bool = False) -> str | None:
    """`57% -> 56% (-1 point)`: both figures rounded to `digits` decimals, or one more when
    that rounding would make them look alike, and the delta of the rounded figures; None when
    they look alike at both."""
    for places in (digits, digits + 1):
        x, y = round(left, places), round(right, places)
        if x != y:
            delta = f"{y - x:+.{places}f}"
            if points:
                delta += " point" if abs(round(y - x, places)) == 1 else " points"
            return f"{x:.{places}f}{unit} -> {y:.{places}f}{unit} ({delta})"
    return None


def _jobs_line(a: SimulationResult, b: SimulationResult) -> list[str]:
    """Everybody's waits beside the jobs that never started, when any of them changed; and a
    note when B started fewer jobs, whose waits then cover fewer jobs."""
    x, y = a.everybody, b.everybody
    cells = (("mean wait", _duration_cell(x.mean_wait, y.mean_wait)),
             ("p95 wait", _duration_cell(x.p95_wait, y.p95_wait)),
             ("never started", _count_cell(x.never_started, y.never_started)))
    if not any(cell.changed for _, cell in cells):
        return []
    lines = [", ".join(f"{name} {cell.text}" for name, cell in cells)]
    fewer = _not_started(y) - _not_started(x)
    if fewer > 0:
        lines.append(f"B started {fewer} fewer job{'s' if fewer != 1 else ''} than A: its "
                     "waits cover only the jobs that started")
    return lines


def _overall(a: SimulationResult, b: SimulationResult) -> list[str]:
    """The run-wide figures that changed as printed, one per line."""
    x, y = analyse(a), analyse(b)
    lines = _jobs_line(a, b)
    rejected = _count_cell(a.everybody.rejected, b.everybody.rejected)
    if rejected.changed:
        lines.append(f"rejected: {rejected.text}")
    held = _duration_cell(_limits_held(a.everybody), _limits_held(b.everybody))
    if held.changed:
        lines.append(f"held back by limits: {held.text}")
    utilization = _decimal_pair(x.utilization * 100, y.utilization * 100, 0, "%", points=True)
    if utilization is not None:
        lines.append(f"utilization: {utilization}")
    for name, left, right in (("fairness, users", x.fairness_users, y.fairness_users),
                              ("fairness, groups", x.fairness_groups, y.fairness_groups),
                              ("bounded slowdown, mean", x.mean_slowdown, y.mean_slowdown)):
        shown = None if left is None or right is None else _decimal_pair(left, right, 2)
        if shown is not None:
            lines.append(f"{name}: {shown}")
    return [*lines, ""] if lines else []


def format_comparison(a: SimulationResult, b: SimulationResult, top: int = DEFAULT_TOP) -> str:
    """The run-wide changes, then the groups and the users whose printed figures differ,
    largest change first, at most `top` of each (0: all) and a count of the rest."""
    lines = [f"comparison: A = {a.label}, B = {b.label} (rows whose figures differ, largest "
             "change first; HELD:LIMITS = held back by user, group and queue limits)", ""]
    lines += _overall(a, b)
    groups = _ranked(a.groups, b.groups)
    users = _ranked(a.users, b.users)
    if not groups and not users:
        lines.append("no group or user differs")
        return "\n".join(lines)
    if groups:
        lines += _table("GROUP", groups, top)
        lines.append("")
    if users:
        lines += _table("USER", users, top)
    else:
        lines.append("no user differs")
    return "\n".join(lines)


def compare_json(a: SimulationResult, b: SimulationResult) -> dict[str, object]:
    """The comparison in the report: per user and group, each side's key figures."""
    def side(stats: EntityStats | None) -> dict[str, object] | None:
        if stats is None:
            return None
        return {"completed": stats.completed, "neverStarted": stats.never_started,
                "rejected": stats.rejected, "meanWaitSeconds": stats.mean_wait,
                "p95WaitSeconds": stats.p95_wait, "heldByLimitsSeconds": _limits_held(stats)}

    def table(x: Sequence[EntityStats], y: Sequence[EntityStats]) -> list[dict[str, object]]:
        left = {s.name: s for s in x}
        right = {s.name: s for s in y}
        return [{"name": n, "a": side(left.get(n)), "b": side(right.get(n))}
                for n in sorted(set(left) | set(right), key=natural_key)]

    return {"a": a.label, "b": b.label, "groups": table(a.groups, b.groups),
            "users": table(a.users, b.users)}

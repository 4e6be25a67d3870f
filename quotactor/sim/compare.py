"""Two replays of one workload side by side: what a configuration change does to each user
and group. Only rows whose figures differ are listed, so a small change reads as a small diff."""

from __future__ import annotations

import re
from collections.abc import Sequence

from quotactor.sim.fmt import duration, render_table
from quotactor.sim.result import SimulationResult
from quotactor.sim.stats import ALL, EntityStats
from quotactor.sim.whatif import analyse

__all__ = ["compare_json", "format_comparison", "natural_key"]

_HEADER = ("DONE", "MEAN WAIT", "P95 WAIT", "HELD:LIMITS")


def _limits_held(stats: EntityStats) -> float:
    return sum(v for k, v in stats.held.items() if k != "node")


def natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """`u2` before `u11`: digits compare as numbers, the rest as text."""
    return tuple((0, int(part)) if part.isdigit() else (1, part)
                 for part in re.split(r"(\d+)", name) if part)


def _pair(a: float | None, b: float | None) -> str:
    """`A -> B (+delta)`: the change and its size, in durations."""
    if a == b:
        return duration(a)
    if a is None or b is None:
        return f"{duration(a)} -> {duration(b)}"
    sign = "+" if b > a else "-"
    return f"{duration(a)} -> {duration(b)} ({sign}{duration(abs(b - a))})"


def _count_pair(a: int, b: int) -> str:
    return str(a) if a == b else f"{a} -> {b} ({b - a:+d})"


def _row(a: EntityStats | None, b: EntityStats | None) -> list[str] | None:
    name = (a or b).name  # type: ignore[union-attr]
    done = (a.completed if a else 0, b.completed if b else 0)
    waits = ((a.mean_wait if a else None), (b.mean_wait if b else None))
    p95 = ((a.p95_wait if a else None), (b.p95_wait if b else None))
    held = (_limits_held(a) if a else 0.0, _limits_held(b) if b else 0.0)
    if done[0] == done[1] and waits[0] == waits[1] and p95[0] == p95[1] and held[0] == held[1]:
        return None
    return [name, _count_pair(*done), _pair(*waits), _pair(*p95), _pair(*held)]


def _rows(a: Sequence[EntityStats], b: Sequence[EntityStats]) -> list[list[str]]:
    left = {s.name: s for s in a}
    right = {s.name: s for s in b}
    rows = []
    for name in sorted(set(left) | set(right), key=lambda n: (n == ALL, natural_key(n))):
        row = _row(left.get(name), right.get(name))
        if row is not None:
            rows.append(row)
    return rows


def _overall(a: SimulationResult, b: SimulationResult) -> list[str]:
    """The run-wide figures that changed, one per line."""
    x, y = analyse(a), analyse(b)
    figures = [
        ("never started", a.everybody.never_started, b.everybody.never_started, "d"),
        ("rejected", a.everybody.rejected, b.everybody.rejected, "d"),
        ("utilization", x.utilization, y.utilization, "%"),
        ("fairness, users", x.fairness_users, y.fairness_users, "f"),
        ("fairness, groups", x.fairness_groups, y.fairness_groups, "f"),
        ("bounded slowdown, mean", x.mean_slowdown, y.mean_slowdown, "f"),
    ]
    lines = []
    for name, left, right, kind in figures:
        if left == right or left is None or right is None:
            continue
        if kind == "d":
            lines.append(f"{name}: {_count_pair(int(left), int(right))}")
        elif kind == "%":
            lines.append(f"{name}: {left:.0%} -> {right:.0%} ({(right - left) * 100:+.0f} points)")
        else:
            lines.append(f"{name}: {left:.2f} -> {right:.2f} ({right - left:+.2f})")
    return [*lines, ""] if lines else []


def format_comparison(a: SimulationResult, b: SimulationResult) -> str:
    """Differences per group and per user, as `A -> B`."""
    lines = [f"comparison: A = {a.label}, B = {b.label} (only differing rows; "
             "HELD:LIMITS = held back by user, group and queue limits)", ""]
    lines += _overall(a, b)
    groups = _rows([*a.groups, a.everybody], [*b.groups, b.everybody])
    users = _rows(a.users, b.users)
    if not groups and not users:
        lines.append("no differences")
        return "\n".join(lines)
    if groups:
        lines.append(render_table(("GROUP", *_HEADER), groups))
        lines.append("")
    if users:
        lines.append(render_table(("USER", *_HEADER), users))
    else:
        lines.append("no user differs")
    return "\n".join(lines)


def compare_json(a: SimulationResult, b: SimulationResult) -> dict[str, object]:
    """The comparison in the report: per user and group, each side's key figures."""
    def side(stats: EntityStats | None) -> dict[str, object] | None:
        if stats is None:
            return None
        return {"completed": stats.completed, "meanWaitSeconds": stats.mean_wait,
                "p95WaitSeconds": stats.p95_wait, "heldByLimitsSeconds": _limits_held(stats)}

    def table(x: Sequence[EntityStats], y: Sequence[EntityStats]) -> list[dict[str, object]]:
        left = {s.name: s for s in x}
        right = {s.name: s for s in y}
        return [{"name": n, "a": side(left.get(n)), "b": side(right.get(n))}
                for n in sorted(set(left) | set(right), key=natural_key)]

    return {"a": a.label, "b": b.label, "groups": table(a.groups, b.groups),
            "users": table(a.users, b.users)}

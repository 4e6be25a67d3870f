"""Two replays of one workload side by side: what a configuration change does to each user
and group. Only rows whose figures differ are listed, so a small change reads as a small diff."""

from __future__ import annotations

from collections.abc import Sequence

from quotactor.sim.fmt import duration, render_table
from quotactor.sim.result import SimulationResult
from quotactor.sim.stats import EntityStats

__all__ = ["compare_json", "format_comparison"]

_HEADER = ("DONE", "MEAN WAIT", "P95 WAIT", "HELD:LIMITS")


def _limits_held(stats: EntityStats) -> float:
    return sum(v for k, v in stats.held.items() if k != "node")


def _pair(a: float | None, b: float | None) -> str:
    if a == b:
        return duration(a)
    return f"{duration(a)} -> {duration(b)}"


def _row(a: EntityStats | None, b: EntityStats | None) -> list[str] | None:
    name = (a or b).name  # type: ignore[union-attr]
    done = (a.completed if a else 0, b.completed if b else 0)
    waits = ((a.mean_wait if a else None), (b.mean_wait if b else None))
    p95 = ((a.p95_wait if a else None), (b.p95_wait if b else None))
    held = (_limits_held(a) if a else 0.0, _limits_held(b) if b else 0.0)
    if done[0] == done[1] and waits[0] == waits[1] and p95[0] == p95[1] and held[0] == held[1]:
        return None
    return [name, str(done[0]) if done[0] == done[1] else f"{done[0]} -> {done[1]}",
            _pair(*waits), _pair(*p95), _pair(*held)]


def _rows(a: Sequence[EntityStats], b: Sequence[EntityStats]) -> list[list[str]]:
    left = {s.name: s for s in a}
    right = {s.name: s for s in b}
    rows = []
    for name in sorted(set(left) | set(right)):
        row = _row(left.get(name), right.get(name))
        if row is not None:
            rows.append(row)
    return rows


def format_comparison(a: SimulationResult, b: SimulationResult) -> str:
    """Differences per group and per user, as `A -> B`."""
    lines = [f"comparison: A = {a.label}, B = {b.label} (only differing rows; "
             "HELD:LIMITS = held back by user, group and queue limits)", ""]
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
                for n in sorted(set(left) | set(right))]

    return {"a": a.label, "b": b.label, "groups": table(a.groups, b.groups),
            "users": table(a.users, b.users)}

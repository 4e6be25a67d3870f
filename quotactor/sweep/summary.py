"""The text summary of a sweep: what ran, what was skipped and why, and the ranking table.

Printed by `quotactor sweep` and written to `summary.txt` beside the tables, so a reader of the
output folder sees the answer without a spreadsheet.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from quotactor.sweep.headline import Figure
from quotactor.sweep.ranking import Ranking
from quotactor.sweep.runner import SweepOutcome

__all__ = ["format_summary", "shown"]

_KEY_FIGURES = ("mean_wait", "p95_wait", "never", "utilization", "fairness_users")
_SHOWN_INVALID = 10


def format_summary(outcome: SweepOutcome, parameters: Sequence[str], figures: Sequence[Figure],
                   ranking: Ranking, top: int = 10) -> str:
    units = {f.name: f.unit for f in figures}
    lines = [f"sweep: {len(outcome.rows)} points with results ({outcome.ran} replayed now, "
             f"{outcome.reused} from earlier runs), {len(outcome.invalid)} invalid, "
             f"{len(outcome.failed)} failed"]
    if outcome.interrupted:
        lines.append("interrupted: rerun the same command to replay the remaining points")
    for row in outcome.invalid[:_SHOWN_INVALID]:
        lines.append(f"  invalid: {_point(row, parameters)}: {row['reason']}")
    if len(outcome.invalid) > _SHOWN_INVALID:
        lines.append(f"  ... {len(outcome.invalid) - _SHOWN_INVALID} more in invalid.jsonl")
    for row in outcome.failed:
        lines.append(f"  failed: {_point(row, parameters)}: {row['error']}")
    constraints = ", ".join(c.text for c in ranking.constraints) or "none"
    lines.append("")
    lines.append(f"objective: {ranking.objective.describe()}; constraints: {constraints}")
    lines.append(f"{len(ranking.ranked)} of {len(outcome.rows)} points meet the constraints"
                 + ("; best first:" if ranking.ranked else ""))
    if ranking.ranked:
        names = [ranking.objective.name]
        names += [c.name for c in ranking.constraints if c.name not in names
                  and c.name not in parameters]
        names += [n for n in _KEY_FIGURES if n not in names]
        multi = len({row["workload"] for row in outcome.rows}) > 1
        columns = ["rank", "point", *(["workload"] if multi else []), *parameters, *names]
        table = [columns]
        for place, best in enumerate(ranking.ranked[:top], start=1):
            table.append([str(place), *(shown(best.get(c), units.get(c, ""))
                                        for c in columns[1:])])
        widths = [max(len(r[i]) for r in table) for i in range(len(columns))]
        lines.extend("  ".join(cell.rjust(w) for cell, w in zip(r, widths, strict=True))
                     for r in table)
        if len(ranking.ranked) > top:
            lines.append(f"... {len(ranking.ranked) - top} more in results.csv")
    return "\n".join(lines)


def _point(row: Mapping[str, Any], parameters: Sequence[str]) -> str:
    values = ", ".join(f"{p}={shown(row.get(p), '')}" for p in parameters)
    return f"point {row['point']} ({row['workload']}: {values})"


def shown(value: Any, unit: str) -> str:
    """A cell for people: times in s/m/h/d, shares and indices with 3 digits, null as none."""
    if value is None:
        return "none" if unit == "" else "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    if unit == "s" and isinstance(value, int | float):
        return _duration(float(value))
    if unit in ("share", "index", "ratio") and isinstance(value, int | float):
        return f"{value:.3f}"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _duration(seconds: float) -> str:
    for size, suffix in ((86400.0, "d"), (3600.0, "h"), (60.0, "m")):
        if seconds >= size:
            return f"{seconds / size:.1f}{suffix}"
    return f"{seconds:.0f}s"

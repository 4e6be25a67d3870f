"""Per-user and per-group figures of a replay: the rows of the summary table and the report.

Wait statistics cover the jobs that started (a job that never ran has no wait to speak of;
it is counted apart). The 95th percentile is the nearest-rank one, so it is always a wait some
job really had, and the same outcomes always give the same figure.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from quotactor.core.resources import Resource
from quotactor.sim.models.outcomes import HELD_KINDS, JobOutcome, JobState
from quotactor.sim.models.usage import Series

__all__ = ["EntityStats", "highest", "lowest", "percentile", "summarise"]

ALL = "(all)"
NO_GROUP = "(none)"


@dataclass(frozen=True, slots=True)
class EntityStats:
    """The figures of one user, one group, or of everybody (`name` "(all)")."""

    kind: str
    name: str
    jobs: int
    completed: int
    rejected: int
    never_started: int
    mean_wait: float | None
    p95_wait: float | None
    max_wait: float | None
    held: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    peak: Resource = field(default_factory=Resource)
    peak_running: int = 0


def percentile(values: Sequence[float], share: float) -> float | None:
    """Nearest-rank percentile of sorted `values` (None when empty)."""
    if not values:
        return None
    rank = max(1, math.ceil(share * len(values)))
    return values[rank - 1]


def highest(values: Iterable[Resource]) -> Resource:
    """The largest quantity of each resource over `values` (empty for none)."""
    top = Resource()
    for value in values:
        top = top.component_max(value)
    return top


def lowest(values: Sequence[Resource]) -> Resource:
    """The smallest quantity of each resource over `values` (empty for none)."""
    low = values[0] if values else Resource()
    for value in values:
        low = low.component_min(value)
    return low


def _stats(kind: str, name: str, outcomes: Iterable[JobOutcome],
           series: Series | None) -> EntityStats:
    jobs = completed = rejected = never = 0
    waits: list[float] = []
    held = dict.fromkeys(HELD_KINDS, 0.0)
    for outcome in outcomes:
        jobs += 1
        if outcome.state is JobState.COMPLETED:
            completed += 1
        elif outcome.state is JobState.REJECTED:
            rejected += 1
        else:
            never += 1
        wait = outcome.wait
        if wait is not None:
            waits.append(wait)
        for kind_name, seconds in outcome.held.items():
            held[kind_name] += seconds
    waits.sort()
    return EntityStats(
        kind, name, jobs, completed, rejected, never,
        sum(waits) / len(waits) if waits else None,
        percentile(waits, 0.95),
        waits[-1] if waits else None,
        MappingProxyType(held),
        series.peak() if series is not None else Resource(),
        series.peak_running() if series is not None else 0,
    )


def summarise(
    outcomes: Sequence[JobOutcome],
    users: Mapping[str, Series],
    groups: Mapping[str, Series],
    total: Series | None = None,
) -> tuple[EntityStats, tuple[EntityStats, ...], tuple[EntityStats, ...]]:
    """(everybody, per user sorted by name, per group sorted by name); `total` is the
    cluster-wide usage series, whose peak is everybody's."""
    by_user: dict[str, list[JobOutcome]] = {}
    by_group: dict[str, list[JobOutcome]] = {}
    for outcome in outcomes:
        by_user.setdefault(outcome.user, []).append(outcome)
        by_group.setdefault(outcome.group or NO_GROUP, []).append(outcome)

    everybody = _stats("all", ALL, outcomes, total)
    user_rows = tuple(_stats("user", n, by_user[n], users.get(n)) for n in sorted(by_user))
    group_rows = tuple(_stats("group", n, by_group[n], groups.get(n)) for n in sorted(by_group))
    return everybody, user_rows, group_rows

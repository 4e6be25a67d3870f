"""What preemption and reservations cost a replay: victims by user, group and queue, lost work.

The replay plays YuniKorn's shim: it confirms each release the scheduler asks for, at once or
after a grace period. A preempted job then either restarts from scratch (all its tasks are
released and ask again; everything it ran so far is lost) or is killed. Lost work is counted
only for jobs that were running (all their tasks placed): the job's cores times the time it
had run, in core-hours.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from quotactor.core.resources import Resource

__all__ = ["PreemptionStats", "PreemptionTally"]


def _frozen(counter: Counter[str]) -> Mapping[str, int]:
    return MappingProxyType(dict(sorted(counter.items())))


@dataclass(frozen=True, slots=True)
class PreemptionStats:
    """Victims confirmed during a replay and what they cost.

    `reserved_node_hours` is the time nodes spent held by reservations (for big asks, or for
    preemptors waiting for their victims).
    """

    victims: int = 0
    restarted: int = 0
    killed: int = 0
    by_user: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    by_group: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    by_queue: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    work_lost_core_hours: float = 0.0
    reserved_node_hours: float = 0.0
    reservations: int = 0
    work_lost: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    """Per resource, quantity-seconds (base units) of the runs that were lost."""

    def to_json(self) -> dict[str, object]:
        return {"victims": self.victims, "restarted": self.restarted, "killed": self.killed,
                "byUser": dict(self.by_user), "byGroup": dict(self.by_group),
                "byQueue": dict(self.by_queue),
                "workLostCoreHours": round(self.work_lost_core_hours, 3),
                "reservedNodeHours": round(self.reserved_node_hours, 3),
                "reservations": self.reservations,
                "workLostQuantitySeconds": {k: round(v, 3) for k, v in self.work_lost.items()}}


class PreemptionTally:
    """Counts victims as the replay confirms them."""

    def __init__(self) -> None:
        self.by_user: Counter[str] = Counter()
        self.by_group: Counter[str] = Counter()
        self.by_queue: Counter[str] = Counter()
        self.restarted = 0
        self.killed = 0
        self.lost = 0.0
        self.lost_work: defaultdict[str, float] = defaultdict(float)

    def victim(self, user: str, group: str | None, queue: str) -> None:
        self.by_user[user] += 1
        if group is not None:
            self.by_group[group] += 1
        self.by_queue[queue] += 1

    def lost_run(self, total: Resource, ran_seconds: float) -> None:
        """A running job lost everything it had run."""
        self.lost += total.get("vcore", 0) / 1000 * ran_seconds / 3600
        for name, quantity in total.items():
            self.lost_work[name] += quantity * ran_seconds

    def stats(self, counts: Mapping[str, float]) -> PreemptionStats:
        return PreemptionStats(
            victims=sum(self.by_queue.values()), restarted=self.restarted, killed=self.killed,
            by_user=_frozen(self.by_user), by_group=_frozen(self.by_group),
            by_queue=_frozen(self.by_queue), work_lost_core_hours=self.lost,
            reserved_node_hours=counts.get("reservedSeconds", 0.0) / 3600,
            reservations=int(counts.get("reservations", 0)),
            work_lost=MappingProxyType(dict(sorted(self.lost_work.items()))))

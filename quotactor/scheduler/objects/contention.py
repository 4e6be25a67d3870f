"""What a partition remembers about contention: reservations, victims, release requests.

The records here are plain state, owned by the partition (`Partition.contention`) and changed
only by `reservation`, `preemption` and `quota_preemption`. A victim stays allocated, and keeps
counting for its user, group and queues, until the shim confirms its release through the
ordinary `release` call (seed 000: no tracking update before the shim's confirmation); the
records of a released victim are dropped lazily at the next cycle.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from quotactor.core.resources import Resource

if TYPE_CHECKING:
    from collections.abc import Mapping

    from quotactor.scheduler.objects.application import Application, PendingAsk

__all__ = ["AskKey", "Contention", "PreemptionVictim", "Reservation", "VictimReason",
           "preempting_by_queue"]

AskKey = tuple[str, str]
"""(application ID, ask or allocation key)."""

VictimReason = Literal["preemption", "required-node", "quota"]
"""Who chose a victim: the default preemptor, the required-node (daemon-set) preemptor for
an ask pinned to the victim's node, or quota preemption."""


@dataclass(frozen=True, slots=True)
class PreemptionVictim:
    """An allocation the scheduler preempted, which the shim is asked to release.

    Embedders take these from `Scheduler.release_requests()`; a scheduler serving remote shims
    (`SchedulerOptions.shim_confirms_releases`) also asks for each one as a `ReleaseRequest`
    of termination `PREEMPTED_BY_SCHEDULER`, which reaches the shim API's decision stream.

    `reason` is `preemption` (for the ask `preemptor_ask` of `preemptor_application`),
    `required-node` (for that ask, pinned to the victim's node) or `quota` (the queue
    `queue_path` is above a lowered maximum).
    """

    partition: str
    application_id: str
    allocation_key: str
    node_id: str
    resource: Resource
    queue_path: str
    reason: VictimReason
    preemptor_application: str
    preemptor_ask: str
    at: float


@dataclass(slots=True)
class Reservation:
    """An ask holding a node until it fits there (after a preemption, or because it fits no
    node now). `held_since` is when a limit last started to hold the ask back; `required`
    marks an ask pinned to the node (several of those may hold one node)."""

    application_id: str
    app_seq: int
    ask_key: str
    node_id: str
    created: float
    preemption: bool
    held_since: float | None = None
    required: bool = False

    def key(self) -> AskKey:
        return (self.application_id, self.ask_key)

    def token(self) -> str:
        """YuniKorn's way of naming a reservation in its views."""
        return f"{self.node_id}|{self.ask_key}"


class Contention:
    """Reservations, victims awaiting release, and the counters reports read."""

    def __init__(self) -> None:
        self.reservations: dict[AskKey, Reservation] = {}
        self.victims: dict[AskKey, PreemptionVictim] = {}
        """Preempted allocations whose release the shim has not confirmed yet."""
        self.outbox: list[PreemptionVictim] = []
        """Release requests the shim has not collected yet."""
        self.triggered: dict[AskKey, PendingAsk] = {}
        """Asks that preempted once (YuniKorn lets an ask trigger preemption only once); an
        entry counts only for the very pending ask it was made for, not for a later ask that
        reuses the key."""
        self.checked: dict[AskKey, tuple[PendingAsk, float]] = {}
        """When each ask last tried preemption."""
        self.quota_due: dict[str, float] = {}
        """Queue path -> when its usage above a lowered maximum is preempted."""
        self.next_wake: float | None = None
        """The earliest time an ask becomes able to reserve or preempt."""
        self.preempted: Counter[str] = Counter()
        """Victims chosen, by reason."""
        self.reservations_made = 0
        self.reservations_expired = 0
        self.reservations_cancelled = 0
        """Reservations a preemptor or an ask pinned to the node took away."""
        self.reserved_seconds = 0.0
        """Node-seconds held by reservations that have ended."""
        self._cycles = 0

    def wake_at(self, when: float) -> None:
        """Bring `next_wake` forward to `when` (a simulator comes back then)."""
        if self.next_wake is None or when < self.next_wake:
            self.next_wake = when

    def take_requests(self) -> list[PreemptionVictim]:
        out, self.outbox = self.outbox, []
        return out

    def forget_released(self, apps: Mapping[str, Application]) -> None:
        """Drop the records of victims that are gone (released, or their application); the
        per-ask records of asks that are gone are swept every 64 cycles (they only cost
        memory, and a long backlog would make a sweep per cycle expensive)."""
        for key in [k for k in self.victims if not _still_preempted(apps, k)]:
            del self.victims[key]
        self._cycles += 1
        if self._cycles % 64:
            return
        for key in [k for k, v in self.triggered.items() if not _pending(apps, k, v)]:
            del self.triggered[key]
        for key in [k for k, v in self.checked.items() if not _pending(apps, k, v[0])]:
            del self.checked[key]

    def has_triggered(self, key: AskKey, pending: PendingAsk) -> bool:
        return self.triggered.get(key) is pending

    def last_check(self, key: AskKey, pending: PendingAsk) -> float | None:
        entry = self.checked.get(key)
        return entry[1] if entry is not None and entry[0] is pending else None


def _still_preempted(apps: Mapping[str, Application], key: AskKey) -> bool:
    app = apps.get(key[0])
    allocation = app.allocations.get(key[1]) if app is not None else None
    return allocation is not None and allocation.preempted


def _pending(apps: Mapping[str, Application], key: AskKey, pending: PendingAsk) -> bool:
    app = apps.get(key[0])
    return app is not None and app.asks.get(key[1]) is pending


def preempting_by_queue(contention: Contention,
                        apps: Mapping[str, Application]) -> dict[str, Resource]:
    """What each queue (with its ancestors) is about to lose to confirmed victims."""
    out: dict[str, Resource] = {}
    for key, request in contention.victims.items():
        if not _still_preempted(apps, key):
            continue
        app = apps[key[0]]
        if app.queue is None:
            continue
        for level in app.queue.lineage():
            out[level.path] = out.get(level.path, Resource()) + request.resource
    return out

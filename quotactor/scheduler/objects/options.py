"""Scheduler settings that are not part of the queue configuration."""

from __future__ import annotations

from dataclasses import dataclass, field

from quotactor.scheduler.objects.events import DEFAULT_EVENT_LIMIT

__all__ = ["SchedulerOptions", "Timeouts"]


@dataclass(frozen=True, slots=True)
class Timeouts:
    """YuniKorn's application timeouts, in seconds of scheduler time.

    `starting`: Starting moves on to Running by itself (state-aware scheduling);
    `completing`: Completing becomes Completed if nothing new arrives; `terminated`: a
    Completed, Failed or Rejected application expires and is forgotten.
    """

    starting: float = 5 * 60.0
    completing: float = 30.0
    terminated: float = 3 * 24 * 3600.0


@dataclass(frozen=True, slots=True)
class SchedulerOptions:
    """Timeouts, how many events each application remembers, and the UGM call timeout.

    `shim_confirms_releases`: releases the scheduler decides on (placeholder replacement and
    timeout, preemption) wait for the shim's confirmation before usage changes, as a remote
    shim needs (`quotactor serve`); False, the default, applies them at once (embedded).

    `exhaustive_retries`: the reference mode of the backlog index. Nothing is settled: every
    pending application is screened for reservation and preemption each cycle, and every
    application woken is attempted, even one its parking shows would only meet full nodes
    again (parking and waking are the same in both modes): the same decisions, at a cost
    that grows with the backlog. It exists so that tests (and a doubting operator) can check
    the indexed mode against it; leave it False.

    `reservations`: an ask that fits no node may reserve one (YuniKorn's behaviour, the
    default); False never reserves, so a large ask waits without holding a node back from
    smaller ones (what a replay compares node shapes with).
    """

    timeouts: Timeouts = field(default_factory=Timeouts)
    event_limit: int = DEFAULT_EVENT_LIMIT
    ugm_timeout: float = 30.0
    shim_confirms_releases: bool = False
    exhaustive_retries: bool = False
    reservations: bool = True

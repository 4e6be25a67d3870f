"""Pods as the quota engine sees them: a request charged to one quota, and an importance.

A pod counts in its quota's *request* from the moment it is added (pending) and also in its
*used* once the scheduler has assigned it. Importance orders victims and revocations the way
Kubernetes' `MoreImportantPod` does: higher priority first, then the pod that started earlier.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

from quotactor.core.resources import Resource

__all__ = ["Pod", "importance", "least_important_first"]


@dataclass(frozen=True, slots=True)
class Pod:
    """One pod charged to a quota.

    Attributes:
        id: unique pod id.
        quota: the quota it is charged to (the default group when it named none or one that
            does not exist yet).
        request: its resource request, unmasked (each quota masks it to its own `max` names).
        priority: Kubernetes priority; only comparable within one quota.
        preemptible: False pins the pod to its quota's min; it is never a victim.
        assigned: whether the scheduler placed it (then it counts in `used`).
        wanted_quota: the quota it named, when it is parked in the default group until that
            quota exists.
        started: order of assignment (earlier started is more important among equals).
    """

    id: str
    quota: str
    request: Resource
    priority: int = 0
    preemptible: bool = True
    assigned: bool = False
    wanted_quota: str | None = None
    started: int = 0

    def assign(self, started: int) -> Pod:
        return replace(self, assigned=True, started=started)

    def unassign(self) -> Pod:
        return replace(self, assigned=False, started=0)

    def moved_to(self, quota: str) -> Pod:
        return replace(self, quota=quota, wanted_quota=None)


def importance(pod: Pod) -> tuple[int, int, str]:
    """Sort key, most important first: priority desc, earlier start, then id (determinism)."""
    return (-pod.priority, pod.started, pod.id)


def least_important_first(pods: Iterable[Pod]) -> list[Pod]:
    """Eviction order: the reverse of importance."""
    return sorted(pods, key=importance, reverse=True)

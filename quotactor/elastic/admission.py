"""Admission, in-quota preemption and over-use revocation, as pure functions of a snapshot.

Koordinator checks a pod against its quota's *runtime*, not its max: a group may use what it
has borrowed, but only until the lenders want it back. Getting it back is not preemption across
quotas (priorities of different teams are not comparable) but revocation: a group that stays
over its runtime gives back its least important pods until it fits again. Within one quota a
pod may preempt strictly lower-priority, preemptible pods of the same quota.

Only the names of the quota's `max` are checked; a name of `max` absent from the runtime is 0
and blocks. A group with an empty `max` (the system group, the default group unless given
one) is unlimited.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from quotactor.core.resources import Resource
from quotactor.elastic.pods import Pod, importance, least_important_first
from quotactor.elastic.spec import DEFAULT_QUOTA
from quotactor.elastic.status import QuotaStatus

__all__ = [
    "Admission",
    "admit",
    "exceeded_names",
    "is_over_runtime",
    "revoke_list",
    "select_victims",
]


@dataclass(frozen=True, slots=True)
class Admission:
    """The answer to "may this pod run in this quota now?".

    Attributes:
        ok: whether it may.
        quota: the quota the request was judged in (the default group for pods without one).
        reason: why not (empty when ok).
        exceeded: the resource names that would go over the limit, sorted.
    """

    ok: bool
    quota: str
    reason: str = ""
    exceeded: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return self.ok


def exceeded_names(amount: Resource, limit: Resource, names: Iterable[str]) -> tuple[str, ...]:
    """The `names` on which `amount` is above `limit` (a name absent from `limit` is 0)."""
    return tuple(sorted(n for n in names if amount.get(n, 0) > limit.get(n, 0)))


def admit(status: QuotaStatus, request: Resource, non_preemptible: bool = False) -> Admission:
    """Whether `used + request <= runtime` (and, for a non-preemptible pod, within min)."""
    spec = status.spec
    if spec.is_parent:
        return Admission(False, spec.name, f"quota {spec.name} is a parent quota and cannot "
                                           f"run pods")
    over = exceeded_names(status.used + request, status.runtime, spec.max)
    if over:
        return Admission(False, spec.name, _insufficient(
            "quotas", status, "runtime", status.runtime, status.used, request, over), over)
    if non_preemptible:
        used = status.non_preemptible_used
        over = exceeded_names(used + request, spec.min, spec.max)
        if over:
            return Admission(False, spec.name, _insufficient(
                "non-preemptible quotas", status, "min", spec.min, used, request, over), over)
    return Admission(True, spec.name)


def _insufficient(what: str, status: QuotaStatus, bound_name: str, bound: Resource,
                  used: Resource, request: Resource, over: tuple[str, ...]) -> str:
    """Koordinator's refusal text, with the figures that explain it."""
    return (f"Insufficient {what}, quota: {status.name}, {bound_name}: {bound}, used: {used}, "
            f"pod request: {request.restricted_to(status.spec.max)}, "
            f"exceeded: {', '.join(over)}")


def is_over_runtime(status: QuotaStatus) -> bool:
    """Whether the quota uses more than its runtime (what the revoke monitor watches)."""
    return bool(exceeded_names(status.used, status.runtime, status.spec.max))


def select_victims(status: QuotaStatus, preemptor: Pod, candidates: Iterable[Pod],
                   allow_in_default: bool = False) -> list[Pod]:
    """The pods to evict so that `preemptor` is admitted, least important first.

    Candidates are assigned pods of the same quota, preemptible and of strictly lower
    priority. All are taken out; if the preemptor still does not fit, there is nothing to
    gain and no victim is returned. Otherwise they are put back most important first as long
    as the preemptor still fits ("existUsed - preempted + preemptor <= runtime").
    """
    potential = [
        pod for pod in candidates
        if pod.assigned and pod.quota == preemptor.quota and pod.preemptible
        and pod.priority < preemptor.priority and pod.id != preemptor.id
    ]
    if not potential or (status.spec.name == DEFAULT_QUOTA and not allow_in_default):
        return []
    used = status.used
    for pod in potential:
        used -= pod.request
    if not _fits(status, used + preemptor.request):
        return []
    victims: list[Pod] = []
    for pod in sorted(potential, key=importance):
        if _fits(status, used + pod.request + preemptor.request):
            used += pod.request
        else:
            victims.append(pod)
    return least_important_first(victims)


def revoke_list(status: QuotaStatus, pods: Sequence[Pod]) -> list[Pod]:
    """The pods to evict so that the quota's used is back within its runtime, in order.

    Takes assigned preemptible pods away from the least important up until the quota fits,
    then gives back the most important of those that still fit. If even all preemptible pods
    are not enough, all of them are returned.
    """
    used = status.used
    tried: list[Pod] = []
    for pod in least_important_first([p for p in pods if p.assigned]):
        if _fits(status, used):
            break
        if not pod.preemptible:
            continue
        used -= pod.request
        tried.append(pod)
    if not _fits(status, used):
        return tried
    revoked: list[Pod] = []
    for pod in reversed(tried):
        if _fits(status, used + pod.request):
            used += pod.request
        else:
            revoked.append(pod)
    revoked.reverse()
    return revoked


def _fits(status: QuotaStatus, amount: Resource) -> bool:
    return not exceeded_names(amount, status.runtime, status.spec.max)


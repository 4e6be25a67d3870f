"""Marking preemption victims: the allocation flagged, its application told, the shim asked.

Every preemptor (the default one in `preemption`, the required-node one in `required_node`,
quota preemption in `quota_preemption`) ends here, so a victim looks the same whoever chose
it: `preempted` on the allocation (application and node), a `PreemptionVictim` record until
the shim confirms the release, and, for a remote shim, a `ReleaseRequest`. Marking a batch is
all or nothing, a KeyboardInterrupt included.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from quotactor.scheduler.objects.allocation import Allocation
from quotactor.scheduler.objects.contention import PreemptionVictim, VictimReason

if TYPE_CHECKING:
    from quotactor.scheduler.booking.context import PartitionContext

__all__ = ["VictimReason", "mark_victim", "mark_victims", "unmark_victims"]


_WHY = {"quota": "preempted: queue {queue} is above its lowered maximum",
        "required-node": "preempted to make room on {node} for ask {ask} of {app}, which"
                         " must run there",
        "preemption": "preempted for ask {ask} of {app}"}


def mark_victims(p: PartitionContext, allocations: list[Allocation], reason: VictimReason,
                 preemptor_app: str, preemptor_ask: str, now: float) -> None:
    """Mark every victim, or none if interrupted (a KeyboardInterrupt included)."""
    done: list[Allocation] = []
    try:
        for allocation in allocations:
            mark_victim(p, allocation, reason, preemptor_app, preemptor_ask, now)
            done.append(allocation)
    except BaseException:
        unmark_victims(p, done)
        raise


def unmark_victims(p: PartitionContext, allocations: list[Allocation]) -> None:
    """Put victims back as they were before `mark_victim` (their release not requested)."""
    c = p.contention
    for allocation in allocations:
        key = (allocation.application_id, allocation.key)
        request = c.victims.pop(key, None)
        if request is None:
            continue
        if request in c.outbox:
            c.outbox.remove(request)
        c.preempted[request.reason] -= 1
        app = p.apps.get(allocation.application_id)
        if app is not None and key[1] in app.allocations:
            app.allocations[key[1]] = allocation
        node = p.nodes.nodes.get(allocation.node_id)
        if node is not None and key in node.allocations:
            node.allocations[key] = allocation


def mark_victim(p: PartitionContext, allocation: Allocation, reason: VictimReason,
                preemptor_app: str, preemptor_ask: str, now: float) -> None:
    """Mark `allocation` preempted, tell its application, and ask the shim to release it."""
    victim_app = p.apps[allocation.application_id]
    marked = allocation.marked_preempted()
    victim_app.allocations[allocation.key] = marked
    node = p.nodes.nodes.get(allocation.node_id)
    if node is not None:
        node.allocations[allocation.application_id, allocation.key] = marked
    request = PreemptionVictim(p.name, allocation.application_id, allocation.key,
                               allocation.node_id, allocation.resource, victim_app.queue_path,
                               reason, preemptor_app, preemptor_ask, now)
    p.contention.victims[allocation.application_id, allocation.key] = request
    p.contention.outbox.append(request)
    p.contention.preempted[request.reason] += 1
    why = _WHY[reason].format(queue=victim_app.queue_path, node=allocation.node_id,
                              ask=preemptor_ask, app=preemptor_app)
    victim_app.note(now, "preempted", f"{allocation.key} on {allocation.node_id}: {why}")
    if p.releases.confirming:  # a remote shim hears of it with the other release requests
        p.releases.request(p.name, allocation.application_id, allocation.key,
                           "PREEMPTED_BY_SCHEDULER", why)
    p.log.info("scheduler.preempted", app=allocation.application_id,
               allocation=allocation.key, node=allocation.node_id, reason=request.reason,
               preemptor=preemptor_app or None, ask=preemptor_ask or None)

"""Quota preemption: work above a lowered queue maximum is preempted after a delay.

As in YuniKorn 1.8: a queue with `quota.preemption.delay` set (default 0: off) whose maximum a
new configuration lowers below its usage starts a timer; when it runs out, and the partition has
`preemption.quotapreemptionenabled: true`, allocations of the queue's subtree are preempted,
never more than the excess and never taking any queue of the subtree below its guarantee. An
allocation that would overshoot the excess is skipped, so the queue may stay a little above its
maximum until some of its work ends by itself. Victims are preferred in YuniKorn's order:
those holding more of the excess resource types first, originators last and opted-out
allocations just before them, then lowest priority, newest. The victims go
through the same shim round trip as priority preemption. YuniKorn has no preemption for user or
group limits: a lowered user or group limit only stops new work, and so it does here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from quotactor.core.resources import Resource
from quotactor.scheduler.objects.allocation import Allocation
from quotactor.scheduler.objects.contention import preempting_by_queue
from quotactor.scheduler.objects.queue import Queue
from quotactor.scheduler.preemption.preemption import victim_order
from quotactor.scheduler.preemption.preemption_settings import quota_preemption_delay
from quotactor.scheduler.preemption.victims import mark_victims

if TYPE_CHECKING:
    from quotactor.scheduler.booking.context import PartitionContext

__all__ = ["MaxSnapshot", "max_snapshot", "quota_changed", "run_due"]

MaxSnapshot = dict[str, tuple[Mapping[str, int] | None, float]]
_EMPTY = Resource()


def max_snapshot(p: PartitionContext) -> MaxSnapshot:
    """Each queue's maximum and quota preemption delay, before a configuration change."""
    return {q.path: (q.max_resources, quota_preemption_delay(q)) for q in p.queues.root.walk()}


def _excess(queue: Queue, used: Resource) -> Resource:
    limit = queue.max_resources or {}
    return Resource({n: used.get(n, 0) - cap for n, cap in limit.items()
                     if used.get(n, 0) > cap})


def quota_changed(p: PartitionContext, before: MaxSnapshot) -> None:
    """After a configuration change: start, move or clear each queue's quota timer."""
    due = p.contention.quota_due
    now = p.now()
    for queue in p.queues.root.walk():
        delay = quota_preemption_delay(queue)
        if delay <= 0 or not queue.max_resources or not _excess(queue, queue.allocated):
            due.pop(queue.path, None)
            continue
        old_max, old_delay = before.get(queue.path, (None, 0.0))
        if queue.path in due:
            due[queue.path] += delay - old_delay
        elif old_max != queue.max_resources or old_delay != delay:
            due[queue.path] = now + delay
    p.log.debug("scheduler.quota_timers", queues=len(due))


def run_due(p: PartitionContext) -> None:
    """Preempt for every queue whose quota timer has run out (once per lowering)."""
    due = p.contention.quota_due
    if not due:
        return
    now = p.now()
    for path in sorted(due):
        when = due[path]
        if when > now:
            p.contention.wake_at(when)
            continue
        if not p.spec.quota_preemption_enabled:
            continue
        queue = p.queues.get(path)
        if queue is not None:
            _preempt(p, queue, now)
        del due[path]


def _room_above_guarantee(queue: Queue, used: dict[str, Resource]) -> dict[str, int] | None:
    """What the queue and its ancestors may lose before one falls below its guarantee
    (None: no guarantee anywhere, so no floor)."""
    room: dict[str, int] | None = None
    for level in queue.lineage():
        if not level.guaranteed:
            continue
        level_used = used.get(level.path, level.allocated)
        for name, floor in level.guaranteed.items():
            spare = max(0, level_used.get(name, 0) - floor)
            room = room if room is not None else {}
            room[name] = min(room.get(name, spare), spare)
    return room


def _preempt(p: PartitionContext, queue: Queue, now: float) -> None:
    preempting = preempting_by_queue(p.contention, p.apps)
    used = {q.path: q.allocated - preempting.get(q.path, _EMPTY) for q in queue.walk()}
    for level in queue.lineage():
        used.setdefault(level.path, level.allocated - preempting.get(level.path, _EMPTY))
    excess = _excess(queue, used[queue.path])
    if not excess:
        return
    candidates: list[tuple[Allocation, Queue]] = []
    for leaf in queue.walk():
        if leaf.children:
            continue
        for app in leaf.apps.values():
            for allocation in app.allocations.values():
                if not allocation.preempted and any(n in excess for n in allocation.resource):
                    candidates.append((allocation, leaf))
    candidates.sort(key=lambda c: (-sum(1 for n in c[0].resource if n in excess),
                                   victim_order(c[0])))
    taken = _EMPTY
    victims: list[Allocation] = []
    for allocation, leaf in candidates:
        share = allocation.resource.restricted_to(excess.keys())
        if not (taken + share).fits_within(excess):
            continue
        room = _room_above_guarantee(leaf, used)
        if room is not None and any(share.get(n, 0) > spare for n, spare in room.items()):
            continue
        taken = taken + share
        for level in leaf.lineage():
            if level.path in used:
                used[level.path] = used[level.path] - allocation.resource
        victims.append(allocation)
    mark_victims(p, victims, "quota", "", "", now)
    p.log.info("scheduler.quota_preemption", queue=queue.path, excess=str(excess),
               victims=len(victims), claimed=str(taken))

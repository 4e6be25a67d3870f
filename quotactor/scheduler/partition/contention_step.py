"""The two steps a cycle adds around its walk for reservations and preemption.

`before_walk` runs first (YuniKorn's order: reservations, then placeholder replacements, then
regular asks): it forgets released victims, runs due quota preemptions, and places reserved
asks. `after_walk` runs last: every application still waiting that the application counts
admit (YuniKorn's `TryAllocate` tries no other) offers its first ask that fits no node (or
breaks its queue's maximum) to preemption, then to a reservation, and the applications
holding a reservation are told why they wait. At most `MAX_PREEMPTION_ATTEMPTS`
asks try preemption per cycle (YuniKorn's limit per queue, applied to the partition here), so
a long backlog costs a bounded amount of work.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from quotactor.core.resources import Resource
from quotactor.scheduler.objects.allocation import Allocation
from quotactor.scheduler.objects.application import Application, PendingAsk
from quotactor.scheduler.objects.reasons import Wait
from quotactor.scheduler.preemption.preemption import may_preempt, try_preempt
from quotactor.scheduler.preemption.preemption_settings import RESERVATION_DELAY
from quotactor.scheduler.preemption.quota_preemption import run_due
from quotactor.scheduler.preemption.reservation import (
    allocate_reserved,
    reservation_wait,
    try_reserve,
)

if TYPE_CHECKING:
    from quotactor.scheduler.booking.context import PartitionContext

__all__ = ["MAX_PREEMPTION_ATTEMPTS", "after_walk", "before_walk"]

MAX_PREEMPTION_ATTEMPTS = 10


def before_walk(p: PartitionContext) -> list[Allocation]:
    c = p.contention
    c.next_wake = None
    c.forget_released(p.apps)
    run_due(p)
    if not c.reservations:
        return []
    return allocate_reserved(p)


def after_walk(p: PartitionContext, runnable: Callable[[Application], bool]) -> None:
    """Offer the waiting asks to preemption, then to reservations, in the walk's order; an
    application is offered only once `runnable` says the application counts admit it (it
    holds one that they do not, as the walk would)."""
    if not p.nodes.nodes:
        return
    now = p.now()
    c = p.contention
    attempts = MAX_PREEMPTION_ATTEMPTS
    reserving = p.options.reservations
    room_for_reservations = reserving and p.nodes.has_unreserved_node()
    can_preempt = p.spec.preemption_enabled
    waiting = _waiting(p, room_for_reservations, can_preempt)
    preemptible = sum(1 for *_, may in waiting if may)
    held: set[str] = set()
    for app, pending, may in waiting:
        preemptible -= may
        if not room_for_reservations:
            if not (attempts and (preemptible or may)):
                break  # neither step can act on the rest: every node is reserved, and no
                # ask left may preempt (no guarantee above its queue, or attempts used up)
            if not may:
                continue
        if app.application_id in held:
            continue
        # the counts are asked only of an application about to be offered something
        key = (app.application_id, pending.ask.key)
        if attempts and may:
            if not runnable(app):
                held.add(app.application_id)
                continue
            if may_preempt(p, app, pending, now):
                attempts -= 1
                if try_preempt(p, app, pending, now):
                    room_for_reservations = reserving and p.nodes.has_unreserved_node()
                    continue
        if room_for_reservations and key not in c.reservations and not app.placed_whole \
                and _fits_no_node(p, app, pending):
            # an application placed whole reserves nothing: one ask's node cannot hold all
            if pending.added_at + RESERVATION_DELAY <= now and not runnable(app):
                held.add(app.application_id)
                continue
            if try_reserve(p, app, pending, now) is not None:
                room_for_reservations = reserving and p.nodes.has_unreserved_node()
    for reservation in c.reservations.values():
        holder = p.apps.get(reservation.application_id)
        if holder is not None and holder.seq == reservation.app_seq \
                and reservation.ask_key in holder.asks:
            current = holder.wait
            if current is None or current.kind in ("node", "reservation", "preemption"):
                p.set_wait(holder, reservation_wait(p, reservation, holder))


def _fits_no_node(p: PartitionContext, app: Application, pending: PendingAsk) -> bool:
    queue = app.queue
    resource = pending.ask.resource
    return queue is not None and queue.over_max(resource) is None \
        and p.nodes.find_fit(resource) is None


def _waiting(p: PartitionContext, can_reserve: bool,
             can_preempt: bool) -> list[tuple[Application, PendingAsk, bool]]:
    """The unreserved asks that nodes or their queue's maximum hold back, in the order the
    walk would reach them: priority (with the queues' offsets) first, then the queue furthest
    below its guarantee at each level, then age. An application's asks after one that a user
    or group limit holds back are not offered. When every node is reserved only queues with a
    guarantee (which may preempt) are looked at, so a long backlog costs little. Each ask comes
    with whether it may preempt at all (preemption on, a guarantee at or above its queue)."""
    found: list[tuple[int, tuple[float, ...], float, int, Application, PendingAsk, bool]] = []
    c = p.contention
    capacity = p.nodes.capacity
    shares: dict[str, tuple[float, ...]] = {}
    guaranteed: dict[str, bool] = {}
    priority: dict[str, tuple[bool, int]] = {}
    """Per queue, how the root sees an ask's priority: (fixed, value) or (added, offset)."""
    for queue in p.queues.root.walk():
        parent = queue.parent
        here = _share(queue.allocated, queue.guaranteed, capacity)
        if parent is None:
            shares[queue.path] = (here,)
            guaranteed[queue.path] = bool(queue.guaranteed)
            priority[queue.path] = (queue.priority_fence, queue.priority_offset)
        else:
            shares[queue.path] = (*shares[parent.path], here)
            guaranteed[queue.path] = guaranteed[parent.path] or bool(queue.guaranteed)
            fixed, value = priority[parent.path]
            own = queue.priority_offset
            if fixed:
                priority[queue.path] = (True, value)
            elif queue.priority_fence:
                priority[queue.path] = (True, own + value)
            else:
                priority[queue.path] = (False, own + value)
        if queue.children:
            continue
        offer = can_reserve or (can_preempt and guaranteed[queue.path])
        # also forgets those no longer pending
        screened = p.backlog.screened(queue) if offer else p.backlog.limit_held(queue)
        if not screened:
            continue
        fixed, value = priority[queue.path]
        for app in screened:
            if not offer:
                wait = app.wait
                if wait is not None and wait.kind in ("user", "group"):
                    held = app.asks.get(wait.ask)
                    if held is not None:
                        _limit_lifted(p, app, held)
                continue
            for pending in app.sorted_asks():
                key = (app.application_id, pending.ask.key)
                if app.awaits_replacement(pending.ask) or c.has_triggered(key, pending):
                    continue
                wait = pending.wait
                if wait is not None and wait.kind in ("user", "group"):
                    _limit_lifted(p, app, pending)
                    break
                if wait is None or wait.kind != "queue" or wait.limit == "resources":
                    effective = value if fixed else pending.ask.priority + value
                    found.append((-effective, shares[queue.path], pending.added_at,
                                  pending.seq, app, pending,
                                  can_preempt and guaranteed[queue.path]))
    found.sort()  # an ask's `seq` is unique in its partition: applications are never compared
    return [(app, pending, may) for *_, app, pending, may in found]


def _limit_lifted(p: PartitionContext, app: Application, pending: PendingAsk) -> None:
    """A user or group limit held the ask back, but its counter has moved since and the walk
    never reached the ask again (no node has room for it): if the limit no longer holds it,
    say that nodes do, so the reason shown is the one that applies now."""
    blocked = pending.blocked
    if blocked is None or p.accounting.still_blocked(blocked) or app.wait != pending.wait:
        return
    if not app.tracked and pending.wait is not None and pending.wait.is_count:
        return  # a new app's count comes first: the walk asks it, in the leaf's order
    resource = pending.ask.resource
    if p.nodes.find_fit(resource) is not None:
        return
    p.accounting.calls += 1
    headroom = p.ugm.headroom(app.queue_path, app.application_id, app.user)
    if headroom is not None and any(q > headroom.get(n, q) for n, q in resource.items()):
        # a limit still holds it, but the headroom folds user and group together: which one
        # is for the walk's own attempt to find out (and block it on the right counter)
        pending.blocked = None
        return
    pending.wait = Wait("node", "", app.queue_path, "capacity",
                        f"no schedulable node has {resource} available", pending.ask.key)
    pending.blocked = p.accounting.token(pending.wait)
    p.set_wait(app, pending.wait)


def _share(used: Resource, guaranteed: Mapping[str, int] | None, capacity: Resource) -> float:
    """Dominant share of `used` against the guarantee (the capacity where none is set)."""
    best = 0.0
    for name, quantity in used.items():
        base = (guaranteed or {}).get(name, 0) or capacity.get(name, 0)
        if base > 0:
            best = max(best, quantity / base)
    return best

"""The two steps a cycle adds around its walk for reservations and preemption.

`before_walk` runs first (YuniKorn's order: reservations, then placeholder replacements, then
regular asks): it forgets released victims, runs due quota preemptions, and places reserved
asks. `after_walk` runs last: every application still waiting offers its first ask that
fits no node (or breaks its queue's maximum) to preemption, then to a reservation, and the
applications holding a reservation are told why they wait. At most `MAX_PREEMPTION_ATTEMPTS`
asks try preemption per cycle, highest priority and oldest first, so a long backlog costs a
bounded amount of work.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from quotactor.scheduler.allocation import Allocation
from quotactor.scheduler.application import Application, PendingAsk
from quotactor.scheduler.preemption import may_preempt, try_preempt
from quotactor.scheduler.quota_preemption import run_due
from quotactor.scheduler.reservation import allocate_reserved, reservation_wait, try_reserve

if TYPE_CHECKING:
    from quotactor.scheduler.partition import Partition

__all__ = ["MAX_PREEMPTION_ATTEMPTS", "after_walk", "before_walk"]

MAX_PREEMPTION_ATTEMPTS = 10


def before_walk(p: Partition) -> list[Allocation]:
    c = p.contention
    c.next_wake = None
    c.forget_released(p)
    run_due(p)
    if not c.reservations:
        return []
    return allocate_reserved(p)


def after_walk(p: Partition) -> None:
    if not p.nodes.nodes:
        return
    now = p.now()
    c = p.contention
    attempts = MAX_PREEMPTION_ATTEMPTS
    room_for_reservations = len(p.nodes.reserved) < len(p.nodes.nodes)
    for app, pending in _waiting(p):
        key = (app.application_id, pending.ask.key)
        if attempts and may_preempt(p, app, pending, now):
            attempts -= 1
            if try_preempt(p, app, pending, now):
                room_for_reservations = len(p.nodes.reserved) < len(p.nodes.nodes)
                continue
        if room_for_reservations and key not in c.reservations \
                and _fits_no_node(p, app, pending) \
                and try_reserve(p, app, pending, now) is not None:
            room_for_reservations = len(p.nodes.reserved) < len(p.nodes.nodes)
    for reservation in c.reservations.values():
        holder = p.apps.get(reservation.application_id)
        if holder is not None and holder.seq == reservation.app_seq \
                and reservation.ask_key in holder.asks:
            current = holder.wait
            if current is None or current.kind in ("node", "reservation", "preemption"):
                p.set_wait(holder, reservation_wait(p, reservation, holder))


def _fits_no_node(p: Partition, app: Application, pending: PendingAsk) -> bool:
    queue = app.queue
    resource = pending.ask.resource
    return queue is not None and queue.over_max(resource) is None \
        and p.nodes.find_fit(resource) is None


def _waiting(p: Partition) -> list[tuple[Application, PendingAsk]]:
    """Per waiting application, its first ask that nodes or its queue's maximum hold back."""
    found: list[tuple[Application, PendingAsk]] = []
    for queue in p.queues.root.walk():
        if queue.children or not queue.pending_apps:
            continue
        for app in queue.pending_apps.values():
            for pending in app.sorted_asks():
                if app.awaits_replacement(pending.ask):
                    continue
                wait = pending.wait
                if wait is None or wait.kind in ("node", "reservation", "preemption") or (
                        wait.kind == "queue" and wait.limit == "resources"):
                    found.append((app, pending))
                break
    found.sort(key=lambda f: (-f[1].ask.priority, f[1].added_at, f[1].seq))
    return found

"""Reservations: an ask that fits no node holds one, so small asks cannot starve it forever.

YuniKorn's rules, as modelled here. An ask that has waited two seconds, is within
its queue and user limits, and fits no node's free room but some node's capacity, reserves the
schedulable node where its shortfall is smallest. A node holds at most one reservation and an
ask at most one node; a reserved node takes no other (unpinned) ask. Each cycle starts with the
reservations: the ask is placed on its node when it fits, else on any other free node (the
reservation is then dropped). A reservation goes away with its ask, its application or its
node, and expires when a limit has held its ask back for an hour.

An ask pinned to a node (`Ask.required_node`) follows YuniKorn's required-node rules instead:
when the walk reaches it, it cancels the node's unpinned reservation, and if it does not fit
it reserves its node at once (several pinned asks may share one node). A reserved pinned ask
is placed only on its node; while the node is full it preempts there once
(`required_node.preempt_on_node`). A preemptor may also cancel old reservations of
lower-priority asks (`preemption`); `cancel` is the one way both take a reservation away.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from quotactor.core.resources import Resource
from quotactor.scheduler.booking.accounting import queue_max_wait
from quotactor.scheduler.booking.booking import allocate
from quotactor.scheduler.objects.allocation import Allocation
from quotactor.scheduler.objects.application import Application, PendingAsk
from quotactor.scheduler.objects.contention import Reservation
from quotactor.scheduler.objects.node import Node
from quotactor.scheduler.objects.reasons import Wait
from quotactor.scheduler.preemption.preemption_settings import (
    RESERVATION_DELAY,
    RESERVATION_WAIT_TIMEOUT,
)
from quotactor.scheduler.preemption.required_node import preempt_on_node

if TYPE_CHECKING:
    from quotactor.scheduler.booking.context import PartitionContext

__all__ = ["allocate_reserved", "cancel", "claim_required_node", "limits_hold",
           "reservation_wait", "reserve", "reserve_required_node", "try_reserve", "unreserve"]


def reserve(p: PartitionContext, app: Application, pending: PendingAsk, node_id: str, now: float,
            preemption: bool) -> Reservation:
    """Hold `node_id` for the ask (moving its reservation if it had one elsewhere)."""
    key = (app.application_id, pending.ask.key)
    old = p.contention.reservations.get(key)
    if old is not None:
        if old.node_id == node_id:
            old.preemption = old.preemption or preemption
            return old
        unreserve(p, old, f"moved to node {node_id}")
    required = pending.ask.required_node is not None
    reservation = Reservation(app.application_id, app.seq, pending.ask.key, node_id, now,
                              preemption, required=required)
    p.contention.reservations[key] = reservation
    if required:
        p.nodes.pinned.setdefault(node_id, {})[key] = None
    else:
        p.nodes.reserved[node_id] = key
    p.contention.reservations_made += 1
    app.note(now, "reserved", f"{pending.ask.key} reserved node {node_id}")
    p.log.info("scheduler.reserved", app=app.application_id, ask=pending.ask.key, node=node_id,
               preemption=preemption)
    return reservation


def unreserve(p: PartitionContext, reservation: Reservation, why: str) -> None:
    """Give the node back: other asks may land on it again."""
    if p.contention.reservations.get(reservation.key()) is reservation:
        del p.contention.reservations[reservation.key()]
        p.contention.reserved_seconds += p.now() - reservation.created
    if p.nodes.reserved.get(reservation.node_id) == reservation.key():
        del p.nodes.reserved[reservation.node_id]
        p.nodes.freed()
    pinned = p.nodes.pinned.get(reservation.node_id)
    if pinned is not None and reservation.key() in pinned:
        del pinned[reservation.key()]
        if not pinned:
            del p.nodes.pinned[reservation.node_id]
            p.nodes.freed()
    app = p.apps.get(reservation.application_id)
    if app is not None and app.seq == reservation.app_seq:
        app.note(p.now(), "unreserved", f"{reservation.ask_key} on {reservation.node_id}: {why}")
    p.log.debug("scheduler.unreserved", app=reservation.application_id,
                ask=reservation.ask_key, node=reservation.node_id, reason=why)


def cancel(p: PartitionContext, reservation: Reservation, why: str) -> None:
    """Take the node away from another ask's reservation (a preemptor or an ask pinned to
    the node needs it). The ask waits for room again and may reserve anew after the walk."""
    unreserve(p, reservation, f"cancelled: {why}")
    p.contention.reservations_cancelled += 1
    app = p.apps.get(reservation.application_id)
    if app is None or app.seq != reservation.app_seq:
        return
    wait = app.wait
    if wait is not None and wait.ask == reservation.ask_key \
            and wait.kind in ("reservation", "preemption"):
        p.set_wait(app, Wait("node", "", app.queue_path, "capacity",
                             f"its reservation of node {reservation.node_id} was cancelled"
                             f" ({why}); it waits for room", reservation.ask_key))


def claim_required_node(p: PartitionContext, app: Application, pending: PendingAsk) -> None:
    """An ask pinned to a node that its limits allow cancels the node's reservation by an
    unpinned ask (YuniKorn does so before it even tries the node)."""
    node_id = pending.ask.required_node
    holder = p.nodes.reserved.get(node_id) if node_id is not None else None
    if holder is None:
        return
    reservation = p.contention.reservations.get(holder)
    if reservation is not None:
        cancel(p, reservation, f"ask {pending.ask.key} of {app.application_id} must run on"
               f" node {node_id}")


def reserve_required_node(p: PartitionContext, app: Application, pending: PendingAsk,
                          now: float) -> None:
    """A pinned ask that does not fit its node reserves it at once (there is no other node
    to wait for); a node too small for it, or not registered yet, is not reserved."""
    node_id = pending.ask.required_node
    node = p.nodes.nodes.get(node_id) if node_id is not None else None
    key = (app.application_id, pending.ask.key)
    if node is None or key in p.contention.reservations \
            or not pending.ask.resource.fits_within_strict(node.capacity):
        return
    reserve(p, app, pending, node.node_id, now, preemption=False)


def _shortfall(ask: Resource, node: Node) -> float:
    """YuniKorn's fit score: how much of the ask the node's free room lacks (0 = fits)."""
    available = node.available
    return sum(max(0, q - int(available.get(n, 0))) / q for n, q in ask.items() if q > 0)


def try_reserve(p: PartitionContext, app: Application, pending: PendingAsk,
                now: float) -> Reservation | None:
    """Reserve the best node for an ask that fits none now, if the rules allow it."""
    ask = pending.ask
    if ask.required_node is not None:
        return None
    if now < pending.added_at + RESERVATION_DELAY:
        p.contention.wake_at(pending.added_at + RESERVATION_DELAY)
        return None
    best: Node | None = None
    best_score = 0.0
    for node_id in sorted(p.nodes.nodes):
        node = p.nodes.nodes[node_id]
        if not node.schedulable or p.nodes.is_reserved(node_id) \
                or not ask.resource.fits_within_strict(node.capacity):
            continue
        score = _shortfall(ask.resource, node)
        if best is None or score < best_score:
            best, best_score = node, score
    if best is None or limits_hold(p, app, pending):
        return None
    return reserve(p, app, pending, best.node_id, now, preemption=False)


def limits_hold(p: PartitionContext, app: Application, pending: PendingAsk) -> bool:
    """Whether the user's or group's headroom is too small for the ask (YuniKorn checks it
    before it reserves or preempts). If so the ask waits on that limit until it moves."""
    p.accounting.calls += 1
    headroom = p.ugm.headroom(app.queue_path, app.application_id, app.user)
    resource = pending.ask.resource
    if headroom is None or all(q <= headroom.get(n, q) for n, q in resource.items()):
        return False
    wait = Wait("user", app.user.user, app.queue_path, "resources",
                f"user or group headroom {Resource(headroom)} is below the ask {resource}",
                pending.ask.key)
    pending.wait = wait
    # the headroom merges user and group limits: any release may lift it
    pending.blocked = ("any", "", p.accounting.releases)
    if app.wait is None or app.wait.kind in ("node", "reservation", "preemption"):
        p.set_wait(app, wait)
    return True


def reservation_wait(p: PartitionContext, reservation: Reservation, app: Application) -> Wait:
    """Why the reserved ask waits: the node, and any victims whose release is awaited."""
    victims = sum(1 for r in p.contention.victims.values()
                  if r.preemptor_application == app.application_id
                  and r.preemptor_ask == reservation.ask_key)
    if victims:
        return Wait("preemption", reservation.node_id, app.queue_path, "capacity",
                    f"preempted {victims} allocation(s) on node {reservation.node_id} and"
                    " waits for the shim to release them", reservation.ask_key)
    return Wait("reservation", reservation.node_id, app.queue_path, "capacity",
                f"has reserved node {reservation.node_id} and waits for room there",
                reservation.ask_key)


def allocate_reserved(p: PartitionContext) -> list[Allocation]:
    """The first step of a cycle: place reserved asks, drop reservations that lost meaning."""
    made: list[Allocation] = []
    now = p.now()
    for reservation in sorted(p.contention.reservations.values(), key=lambda r: r.created):
        app = p.apps.get(reservation.application_id)
        pending = app.asks.get(reservation.ask_key) if app is not None else None
        node = p.nodes.nodes.get(reservation.node_id)
        if app is None or app.seq != reservation.app_seq or pending is None:
            unreserve(p, reservation, "ask gone")
            continue
        if node is None or not pending.ask.resource.fits_within_strict(node.capacity):
            unreserve(p, reservation, "node gone or too small")
            continue
        if app.placed_whole:
            # its preemption's node waits for the walk to place all its asks together
            p.backlog.unpark((app,))
            continue
        target = node if node.schedulable and node.fits(pending.ask.resource) else None
        if target is None and reservation.required:
            if node.fits(pending.ask.resource):  # room, but the node takes no work now
                reservation.held_since = None
            else:
                _make_room(p, app, pending, reservation, node, now)
            continue
        if target is None:
            target = p.nodes.find_fit(pending.ask.resource)
        if target is None:
            reservation.held_since = None
            continue
        count = None if app.tracked else p.accounting.count_wait(app)
        if count is not None:  # a new application's count comes first and holds it whole,
            app.block_asks(count, p.accounting.token(count))  # as in the walk
            _held(p, app, reservation, count, now)
            continue
        result = allocate(p, app, pending, target)
        if isinstance(result, Allocation):
            unreserve(p, reservation, f"allocated on {target.node_id}")
            made.append(result)
            if app.asks:
                p.fresh[app.application_id] = app
            continue
        _held(p, app, reservation, result, now)
    return made


def _make_room(p: PartitionContext, app: Application, pending: PendingAsk,
               reservation: Reservation, node: Node, now: float) -> None:
    """A pinned ask whose node is still full: if its limits allow it, it preempts there once
    (`required_node`); if they do not, the reservation is held as any other."""
    queue = app.queue
    over = queue.over_max(pending.ask.resource) if queue is not None else None
    if over is not None:
        _held(p, app, reservation, queue_max_wait(over, pending.ask.resource), now)
        return
    if limits_hold(p, app, pending):
        assert pending.wait is not None
        _held(p, app, reservation, pending.wait, now)
        return
    reservation.held_since = None
    if not p.contention.has_triggered(reservation.key(), pending):
        preempt_on_node(p, app, pending, node, now)


def _held(p: PartitionContext, app: Application, reservation: Reservation, wait: Wait,
          now: float) -> None:
    """A limit refused the reserved ask: it keeps the node for an hour at most."""
    if reservation.held_since is None:
        reservation.held_since = now
    if now - reservation.held_since >= RESERVATION_WAIT_TIMEOUT:
        p.contention.reservations_expired += 1
        unreserve(p, reservation, f"expired: held back by a limit for"
                  f" {RESERVATION_WAIT_TIMEOUT:.0f}s")
    else:
        p.contention.wake_at(reservation.held_since + RESERVATION_WAIT_TIMEOUT)
    if wait.limit != "applications":  # an application count holds the application whole
        wait = dataclasses.replace(wait, ask=reservation.ask_key)
    p.set_wait(app, wait)

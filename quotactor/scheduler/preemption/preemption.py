"""Priority preemption, as YuniKorn's default preemptor does it.

An ask may preempt when the partition allows it, the ask allows it (`allow_preempt_other`), it
is not pinned to a node, it has not triggered preemption before, it has waited its leaf's
`preemption.delay`, its last attempt is at least 15 s old, and its user and group limits
leave room for it (YuniKorn checks the user headroom first: preemption would not help). Its
queue, or an ancestor, must have a guaranteed resource: a queue without any guarantee never
preempts.

Victims come from the subtree of the *fence root*: the nearest queue upwards that has
`preemption.policy: fence`, whose maximum the ask would break, or root. Inside it, every leaf
but the ask's own (and any leaf whose policy is `disabled`) offers its allocations whose
priority is at most the ask's, with `priority.offset` subtracted on the way down and a
`priority.policy: fence` subtree offering everything or nothing depending on its offset.
Removing a victim must never take any of its queues below its guarantee, and the ask, once
placed, must not push any of its own queues above its guarantee or maximum (both measured
after the victims are gone, so moving usage between two children of one parent is neutral).

Allocations pinned to a node (daemon-set pods, see `required_node`) and placeholders whose
release was already asked for are never victims.

A node reserved by another ask is skipped, unless that reservation may be cancelled (YuniKorn
1.7): the reserved ask has a lower priority than the preemptor, is not pinned to the node,
has not preempted itself, and its reservation is more than an hour old. Such reservations are
cancelled while the nodes are looked at, whether or not the node is then used, as in YuniKorn.

On each node where the ask could fit, victims are taken in order (originators last, opted-out
allocations just before them, then lowest priority first and newest first) until the ask
fits; then victims that turn out unnecessary are dropped again, and the node that loses least
wins. The victims are marked preempted (`victims`), the shim is asked to release them, and the
node is reserved for the ask.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from quotactor.core.resources import Resource
from quotactor.scheduler.objects.allocation import Allocation
from quotactor.scheduler.objects.application import Application, PendingAsk
from quotactor.scheduler.objects.ask import Ask
from quotactor.scheduler.objects.contention import AskKey, Reservation, preempting_by_queue
from quotactor.scheduler.objects.node import Node
from quotactor.scheduler.objects.queue import Queue
from quotactor.scheduler.preemption.preemption_settings import (
    ATTEMPT_INTERVAL,
    RESERVATION_DELAY,
    RESERVATION_WAIT_TIMEOUT,
    is_fence,
    preemption_delay,
    victims_disabled,
)
from quotactor.scheduler.preemption.reservation import cancel, limits_hold, reserve
from quotactor.scheduler.preemption.victims import mark_victims, unmark_victims

if TYPE_CHECKING:
    from quotactor.scheduler.booking.context import PartitionContext

__all__ = ["may_preempt", "try_preempt", "victim_order"]

_EMPTY = Resource()


def may_preempt(p: PartitionContext, app: Application, pending: PendingAsk, now: float) -> bool:
    """The preconditions on the ask; registers when a waiting ask becomes eligible."""
    ask = pending.ask
    leaf = app.queue
    if not p.spec.preemption_enabled or leaf is None or not ask.allow_preempt_other \
            or ask.required_node is not None:
        return False
    key = (app.application_id, ask.key)
    c = p.contention
    if c.has_triggered(key, pending) or not any(q.guaranteed for q in leaf.lineage()):
        return False
    eligible = pending.added_at + preemption_delay(leaf)
    if now < eligible:
        # a simulator jumps to the end of the delay; later retries wait for other events
        c.wake_at(eligible)
        return False
    last = c.last_check(key, pending)
    return last is None or now >= last + ATTEMPT_INTERVAL


def victim_order(allocation: Allocation) -> tuple[bool, bool, int, float, str]:
    """Originators last, opted-out ones just before them; then lowest priority, newest."""
    return (allocation.originator, not allocation.allow_preempt_self, allocation.priority,
            -allocation.allocated_at, allocation.key)


class _Books:
    """Queue usage as it will be once the chosen victims are gone."""

    def __init__(self, leaf: Queue, ask: Resource, preempting: dict[str, Resource],
                 incoming: dict[str, Resource]) -> None:
        self.leaf = leaf
        self.ask = ask
        self.ask_paths = {q.path for q in leaf.lineage()}
        self.preempting = preempting
        self.incoming = incoming
        self.removed: dict[str, Resource] = {}

    def used(self, queue: Queue) -> Resource:
        return queue.allocated - self.preempting.get(queue.path, _EMPTY) \
            - self.removed.get(queue.path, _EMPTY)

    def floor_ok(self, queue: Queue, resource: Resource) -> bool:
        """Taking `resource` from `queue` leaves every one of its queues at or above its
        guarantee (shared ancestors with the ask are unaffected)."""
        for level in queue.lineage():
            if level.path in self.ask_paths or not level.guaranteed:
                continue
            after = self.used(level) - resource
            for name, floor in level.guaranteed.items():
                if resource.get(name, 0) > 0 and after.get(name, 0) < floor:
                    return False
        return True

    def take(self, queue: Queue, resource: Resource) -> None:
        for level in queue.lineage():
            self.removed[level.path] = self.removed.get(level.path, _EMPTY) + resource

    def give_back(self, queue: Queue, resource: Resource) -> None:
        self.take(queue, -resource)

    def ask_breaks(self) -> Queue | None:
        """The first queue of the ask, leaf upwards, that the ask would push above its
        guarantee or maximum once the victims are gone (counting the asks of the queue that
        already preempted and wait for their victims)."""
        for level in self.leaf.lineage():
            growth = self.ask - self.removed.get(level.path, _EMPTY)
            after = self.used(level) + self.incoming.get(level.path, _EMPTY) + self.ask
            for limits in (level.guaranteed, level.max_resources):
                if not limits:
                    continue
                for name, cap in limits.items():
                    if growth.get(name, 0) > 0 and after.get(name, 0) > cap:
                        return level
        return None


def _fence_root(leaf: Queue, ask_priority: int, ask: Resource) -> tuple[Queue, dict[str, int]]:
    """The queue whose subtree victims come from, and the ask's priority at each level."""
    priorities: dict[str, int] = {}
    current = ask_priority
    queue = leaf
    while True:
        current = queue.priority_offset if queue.priority_fence \
            else current + queue.priority_offset
        priorities[queue.path] = current
        over_max = queue.max_resources is not None and not (queue.allocated + ask).fits_within(
            queue.max_resources)
        if queue.parent is None or is_fence(queue) or over_max:
            return queue, priorities
        queue = queue.parent


def _candidates(p: PartitionContext, fence: Queue, leaf: Queue, priorities: dict[str, int],
                ask: Resource) -> list[tuple[Allocation, Queue]]:
    """Every allocation under `fence` that the ask's priority may take."""
    found: list[tuple[Allocation, Queue]] = []
    asked = p.releases.asked  # placeholders whose release is asked for are no victims

    def walk(queue: Queue, threshold: int, fenced: bool) -> None:
        if queue is leaf:
            return
        if not queue.children:
            if victims_disabled(queue):
                return
            for app in queue.apps.values():
                for allocation in app.allocations.values():
                    if allocation.preempted or allocation.required_node is not None \
                            or not any(n in ask for n in allocation.resource) \
                            or (asked and (app.application_id, allocation.key) in asked):
                        continue
                    if fenced or allocation.priority <= threshold:
                        found.append((allocation, queue))
            return
        for name in sorted(queue.children):
            child = queue.children[name]
            known = priorities.get(child.path)
            if known is not None:
                walk(child, known, fenced)
            elif child.priority_fence:
                if child.priority_offset <= threshold:
                    walk(child, threshold, True)
            else:
                walk(child, threshold - child.priority_offset, fenced)

    walk(fence, priorities[fence.path], False)
    return found


def _covers(available: Resource, ask: Resource) -> bool:
    return ask.fits_within_strict(available)


def _plan_node(books: _Books, node: Node, ask: Resource,
               candidates: list[tuple[Allocation, Queue]]
               ) -> list[tuple[Allocation, Queue]] | None:
    """The victims that let the ask fit on `node`, fewest and smallest, or None."""
    chosen: list[tuple[Allocation, Queue]] = []
    available = node.available
    for allocation, queue in candidates:
        if _covers(available, ask):
            break
        if allocation.node_id != node.node_id:
            continue
        needed = (ask - available).clamp_non_negative()
        if not any(n in needed for n in allocation.resource):
            continue
        if not books.floor_ok(queue, allocation.resource):
            continue
        books.take(queue, allocation.resource)
        chosen.append((allocation, queue))
        available = available + allocation.resource
    if not _covers(available, ask):
        return None
    while (level := books.ask_breaks()) is not None:
        extra = _extra_victim(books, level, candidates, chosen)
        if extra is None:
            return None
        books.take(extra[1], extra[0].resource)
        chosen.append(extra)
    for victim in reversed(list(chosen)):
        allocation, queue = victim
        books.give_back(queue, allocation.resource)
        local = [a.resource for a, _ in chosen if a is not allocation and a.node_id == node.node_id]
        room = node.available + sum(local, _EMPTY)
        if _covers(room, ask) and books.ask_breaks() is None:
            chosen.remove(victim)
        else:
            books.take(queue, allocation.resource)
    return chosen


def _extra_victim(books: _Books, level: Queue, candidates: list[tuple[Allocation, Queue]],
                  chosen: list[tuple[Allocation, Queue]]) -> tuple[Allocation, Queue] | None:
    """One more victim under `level` (on any node) to bring the ask's queue within bounds."""
    taken = {id(a) for a, _ in chosen}
    for allocation, queue in candidates:
        if id(allocation) in taken:
            continue
        if not any(q is level for q in queue.lineage()):
            continue
        if books.floor_ok(queue, allocation.resource):
            return allocation, queue
    return None


def _cost(victims: Iterable[tuple[Allocation, Queue]], capacity: Resource) -> tuple[float, int]:
    total = 0.0
    count = 0
    for allocation, _ in victims:
        count += 1
        total += max((q / capacity[n] for n, q in allocation.resource.items()
                      if capacity.get(n, 0) > 0), default=0.0)
    return (total, count)


def _incoming(p: PartitionContext, own: tuple[str, str]) -> dict[str, Resource]:
    """Per queue, the asks that preempted and hold their node until the victims go."""
    out: dict[str, Resource] = {}
    for key, reservation in p.contention.reservations.items():
        if not reservation.preemption or key == own:
            continue
        app = p.apps.get(reservation.application_id)
        pending = app.asks.get(reservation.ask_key) if app is not None else None
        if app is None or pending is None or app.queue is None:
            continue
        for level in app.queue.lineage():
            out[level.path] = out.get(level.path, _EMPTY) + pending.ask.resource
    return out


def try_preempt(p: PartitionContext, app: Application, pending: PendingAsk, now: float) -> bool:
    """Try to make room for the ask by preemption; True if victims were chosen."""
    ask = pending.ask
    leaf = app.queue
    assert leaf is not None
    key = (app.application_id, ask.key)
    p.contention.checked[key] = (pending, now)
    if limits_hold(p, app, pending):
        return False  # preemption would not help
    fence, priorities = _fence_root(leaf, ask.priority, ask.resource)
    candidates = sorted(_candidates(p, fence, leaf, priorities, ask.resource),
                        key=lambda c: victim_order(c[0]))
    if not candidates:
        return False
    best: tuple[tuple[float, int, str], Node, list[tuple[Allocation, Queue]]] | None = None
    preempting = preempting_by_queue(p.contention, p.apps)
    incoming = _incoming(p, key)
    for node_id in sorted(p.nodes.nodes):
        node = p.nodes.nodes[node_id]
        if not _free_of_other_reservations(p, node_id, key, ask, now) or not node.schedulable \
                or not ask.resource.fits_within_strict(node.capacity):
            continue
        books = _Books(leaf, ask.resource, preempting, incoming)
        plan = _plan_node(books, node, ask.resource, candidates)
        if not plan:
            continue
        score = (*_cost(plan, p.nodes.capacity), node_id)
        if best is None or score < best[0]:
            best = (score, node, plan)
    if best is None:
        return False
    _, node, victims = best
    held = p.contention.reservations.get(key)
    try:
        mark_victims(p, [a for a, _ in victims], "preemption", app.application_id, ask.key,
                     now)
        p.contention.triggered[key] = pending
        reserve(p, app, pending, node.node_id, now, preemption=True)
    except BaseException:
        _restore(p, key, held, [a for a, _ in victims])
        raise
    app.note(now, "preempting", f"{ask.key} preempts {len(victims)} allocation(s) on"
             f" {node.node_id}")
    return True


def _free_of_other_reservations(p: PartitionContext, node_id: str, key: AskKey, ask: Ask,
                                now: float) -> bool:
    """Whether the preemptor may use `node_id`: it holds no other ask's reservation, or only
    one it may cancel (YuniKorn's rule: the reserved ask has a lower priority than the
    preemptor, is not pinned to the node, has not preempted itself, and is old: YuniKorn
    takes the ask's age from its creation shifted by the reservation wait timeout and delay,
    and cancels once that exceeds the timeout again, so at more than twice the timeout plus
    the delay after the ask was created, however young the reservation). Cancelling happens
    while the nodes are looked at, whether or not this node is then chosen, as in YuniKorn."""
    if node_id in p.nodes.pinned:
        return False
    holder = p.nodes.reserved.get(node_id)
    if holder is None or holder == key:
        return True
    c = p.contention
    reservation = c.reservations.get(holder)
    app = p.apps.get(holder[0])
    pending = app.asks.get(holder[1]) if app is not None else None
    if reservation is None or pending is None or reservation.preemption \
            or c.has_triggered(holder, pending) or pending.ask.priority >= ask.priority:
        return False
    due = pending.added_at + RESERVATION_DELAY + 2 * RESERVATION_WAIT_TIMEOUT
    if now <= due:
        c.wake_at(due)  # a simulator comes back when it may be cancelled
        return False
    cancel(p, reservation, f"ask {ask.key} of {key[0]} (priority {ask.priority}) preempts and"
           f" the reserved ask is older than {due - pending.added_at:.0f}s")
    return True


def _restore(p: PartitionContext, key: tuple[str, str], held: Reservation | None,
             victims: list[Allocation]) -> None:
    """Undo an interrupted preemption: victims unmarked, the ask's reservation as before."""
    c = p.contention
    c.triggered.pop(key, None)
    current = c.reservations.get(key)
    if current is not None and current is not held:
        del c.reservations[key]
        if p.nodes.reserved.get(current.node_id) == key:
            del p.nodes.reserved[current.node_id]
    if held is not None:
        c.reservations[key] = held
        p.nodes.reserved[held.node_id] = key
    unmark_victims(p, victims)

"""Required-node (daemon-set) preemption: an ask pinned to a node makes room on that node.

An ask pinned to one node (`Ask.required_node`, as a daemon-set pod is) never takes part in
the default preemptor: it cannot move, so fairness between queues has nothing to offer it.
YuniKorn gives it its own, node-centric preemptor instead, and quotactor follows it:

- When the walk reaches a pinned ask within its queue's maximum (and within its user and group
  headroom when a refusal earlier in the cycle already measured it; the trackers are asked only
  when a node has room), any reservation of the node by an ask that is *not* pinned is
  cancelled (`reservation.claim_required_node`), whether or not the ask then fits. If it does
  not fit, it reserves its node at once (no 2-second reservation delay); several pinned asks
  may hold one node.
- At the start of the next cycle the reserved ask is placed if its node has room. If not, and
  its limits still allow it, and it has not preempted before, victims are taken on that node
  only (`preempt_on_node`): no preemption delay, no guarantee, fence or queue checks, and the
  partition's `preemption.enabled` switch does not apply (YuniKorn runs this preemptor from its
  reserved-allocation step, outside those rules).
- Candidates: every allocation on the node except those pinned to a node themselves, those of
  a higher priority than the ask (raw priorities: queue offsets do not apply here), those
  already preempted, placeholders whose release was already asked for, and those sharing no
  resource type with the ask. Order: ordinary ones, then opted-out ones
  (`allow_preempt_self=False`), then originators; within each lowest priority first, then
  newest, then smallest.
- Victims are taken in that order until *their own sum* covers the ask, as YuniKorn does
  (free room on the node is not counted while collecting, so this may take more than a
  minimal set); the set is used only if, with the node's free room, the ask then fits.
- Found victims are marked (reason `required-node`), the shim is asked to release them, and
  the ask is marked as having preempted: it never preempts again, and waits on its node.
  Finding none leaves an event on the application (once per ask) and is tried again next
  cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from quotactor.core.resources import Resource
from quotactor.scheduler.objects.allocation import Allocation
from quotactor.scheduler.objects.application import Application, PendingAsk
from quotactor.scheduler.objects.node import Node
from quotactor.scheduler.preemption.victims import mark_victims, unmark_victims

if TYPE_CHECKING:
    from quotactor.scheduler.booking.context import PartitionContext

__all__ = ["preempt_on_node", "required_node_candidates", "required_node_order"]


def required_node_order(allocation: Allocation,
                        capacity: Resource) -> tuple[int, int, float, float, str, str]:
    """Ordinary first, opted-out next, originators last; then lowest priority, newest, and
    smallest (its largest share of the node's capacity)."""
    kind = 2 if allocation.originator else 1 if not allocation.allow_preempt_self else 0
    size = max((q / capacity[n] for n, q in allocation.resource.items()
                if capacity.get(n, 0) > 0), default=0.0)
    return (kind, allocation.priority, -allocation.allocated_at, size,
            allocation.application_id, allocation.key)


def required_node_candidates(p: PartitionContext, node: Node, ask_priority: int,
                             ask: Resource) -> list[Allocation]:
    """The allocations on `node` a pinned ask of `ask_priority` may take, in taking order."""
    found = [a for a in node.allocations.values()
             if a.required_node is None and a.priority <= ask_priority and not a.preempted
             and not p.releases.is_asked(a.application_id, a.key)
             and any(n in ask for n in a.resource)]
    found.sort(key=lambda a: required_node_order(a, node.capacity))
    return found


def preempt_on_node(p: PartitionContext, app: Application, pending: PendingAsk, node: Node,
                    now: float) -> bool:
    """Preempt on the ask's own node so it fits there; True if victims were marked."""
    ask = pending.ask
    key = (app.application_id, ask.key)
    c = p.contention
    victims: list[Allocation] = []
    freed = Resource()
    for allocation in required_node_candidates(p, node, ask.priority, ask.resource):
        if ask.resource.fits_within_strict(freed):
            break
        victims.append(allocation)
        freed = freed + allocation.resource
    if not victims or not ask.resource.fits_within_strict(freed + node.available):
        if c.last_check(key, pending) is None:
            c.checked[key] = (pending, now)
            app.note(now, "preemption-failed", f"{ask.key} found no victims on its required"
                     f" node {node.node_id}")
        return False
    try:
        mark_victims(p, victims, "required-node", app.application_id, ask.key, now)
        c.triggered[key] = pending
    except BaseException:
        c.triggered.pop(key, None)
        unmark_victims(p, victims)
        raise
    app.note(now, "preempting", f"{ask.key} preempts {len(victims)} allocation(s) on its"
             f" required node {node.node_id}")
    p.log.info("scheduler.required_node_preemption", app=app.application_id, ask=ask.key,
               node=node.node_id, victims=len(victims))
    return True

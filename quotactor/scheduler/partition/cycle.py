"""One scheduling cycle of a partition: replace placeholders, then fill nodes fairly.

The cycle walks the queue tree from root, at every parent picking the child furthest below its
guaranteed share (priorities first when the parent sorts by priority), and at a leaf the first
application in the leaf's order (`fifo` or `fair`, priorities first unless disabled). Each
step places one ask; the chosen queue and application then re-enter their heaps with their
new keys, so fairness is re-evaluated after every allocation without re-sorting everything.

Capacity only shrinks during a cycle, so an ask that finds no room is not tried again in the
same cycle, and across cycles it waits until the counter that could change the answer moves
(see `Accounting.token`). For each application the user group manager is asked at most for
one increase per placed ask plus, after a resource refusal, one `headroom` to screen the
application's remaining asks.

A new application is first asked whether its user and group may run one more application
(YuniKorn's `CanRunApp`, before any of its asks is tried): an application count holds it back
whatever its size and whatever the nodes hold. A user whose count is at its limit stays there
for the rest of the cycle (nothing is released during a cycle), so after the first refusal the
user's other new applications in that leaf are held back with the same reason without asking
again, and those still to come wait in a line (see `Accounting.queue_up`) that a release opens
one application at a time: after a release the cost is a refusal per user, not one per job.
Before that, a new application whose user has an earlier one asking alike in the same leaf
waits its turn untried (`quotactor/scheduler/booking/turns.py`). A new application that met
full nodes while a slot was free waits for its count again at the walk's end if another took
the slot (`_recount`); one that would only meet them again is passed over (`_pass_over`).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from quotactor.core.identity import UserGroup
from quotactor.core.resources import Resource
from quotactor.scheduler.booking import whole
from quotactor.scheduler.booking.accounting import queue_apps_wait, queue_max_wait
from quotactor.scheduler.booking.backlog import Counter
from quotactor.scheduler.booking.booking import allocate, allocate_all, replace, retire_placeholder
from quotactor.scheduler.booking.lifecycle import ask_release
from quotactor.scheduler.objects.allocation import Allocation
from quotactor.scheduler.objects.application import Application, BlockToken, PendingAsk
from quotactor.scheduler.objects.queue import Queue, current_priority
from quotactor.scheduler.objects.reasons import Wait
from quotactor.scheduler.partition.contention_step import after_walk, before_walk
from quotactor.scheduler.preemption.reservation import (
    claim_required_node,
    reserve_required_node,
    unreserve,
)

if TYPE_CHECKING:
    from quotactor.scheduler.booking.context import PartitionContext

__all__ = ["Cycle"]

Untried = tuple[BlockToken, Counter]
"""What an application passed over untried would have been left with by its attempt, with
full nodes as its reason: that reason's token, and the counter it would wait on."""

_FULL_NODES = Wait("node", "", "", "capacity", "", "")
"""Any wait for room on the nodes (they all have the same token at a given moment)."""


class Cycle:
    """The state of one cycle: heaps built on first visit, and what each app may still use."""

    def __init__(self, partition: PartitionContext) -> None:
        self.p = partition
        self.allocations: list[Allocation] = []
        self._capacity = partition.nodes.capacity
        self._done: set[str] = set()
        self._queue_heaps: dict[str, list[tuple[Any, ...]]] = {}
        self._app_heaps: dict[str, list[tuple[Any, ...]]] = {}
        self._priority: dict[str, int] = {}
        self._headroom: dict[str, dict[str, int] | None] = {}
        self._limit_wait: dict[str, Wait] = {}
        self._no_room: dict[Resource, str] = {}
        self._no_new_apps: dict[tuple[str, UserGroup], Wait] = {}
        self._full_queues: dict[tuple[str, int], Wait] = {}
        """The reason a full queue gives, by its path and running count (`_counts_hold`)."""
        self._untried: dict[str, Untried] = {}
        """What an attempt would have left each head skipped in its line with
        (`_passable`)."""
        self._met_nodes: list[tuple[Application, Untried | None]] = []
        """New applications that met full nodes in this cycle, in the order they met them
        (see `_recount`), each with what is kept of it when it was passed over untried."""

    def run(self) -> list[Allocation]:
        backlog = self.p.backlog
        backlog.unpark(self.p.fresh.values())
        for app in self.p.fresh.values():
            if app.queue is not None:
                backlog.enlist(app, self._app_key(app.queue, app))
        backlog.chained.clear()  # woken between cycles: ready, so the walk finds them
        self.allocations.extend(before_walk(self.p))  # reservations first, as in YuniKorn's cycle
        self._replace_placeholders()
        root = self.p.queues.root
        if self.p.nodes.nodes:
            backlog.skipped.clear()  # left by a walk that failed: they wait in their lines
            backlog.passable = self._passable
            try:
                while self._allocate_in(root):
                    pass
            finally:
                backlog.passable = None
        self._explain_fresh()
        self._recount()
        after_walk(self.p, self._runnable)  # then asks still waiting may preempt or reserve
        return self.allocations

    def _explain_fresh(self) -> None:
        """Give a reason to new asks the walk never reached (their queue could take nothing).

        Nothing can normally be placed for them in this cycle, so trying them records the
        first obstacle each one meets.
        """
        fresh = sorted(self.p.fresh.values(), key=lambda a: a.seq)
        self.p.fresh.clear()
        for app in fresh:
            if app.asks and app.queue is not None:
                made = self._allocate_app(app.queue, app)
                if made:
                    self.allocations.extend(made)
                else:
                    self._park_if_blocked(app.queue, app)

    def _recount(self) -> None:
        """A new application that met full nodes when its counts admitted it, and that a
        count holds now (another application took the slot later in the walk), waits for
        that count: YuniKorn asks an application's counts before anything else each time it
        looks at it, so at the cycle's end that is what holds it back. One passed over or
        skipped untried is left as its attempt would have left it."""
        self._settle_skipped()
        met, self._met_nodes = self._met_nodes, []
        for app, untried in met:
            if untried is not None:
                if app.queue is not None and app.asks and self._runnable(app):
                    self._left_on_full_nodes(app, untried)  # the slot is still free
                continue
            wait = app.wait
            if not app.tracked and wait is not None and wait.kind == "node" \
                    and app.queue is not None and app.asks:
                self._runnable(app)

    def _settle_skipped(self) -> None:
        """Heads the lines skipped in this walk (`_passable`) that are there still: one the
        same count holds stays; one another count holds moves to its line; one its counts
        admit (no one took the slot) joins those that met full nodes."""
        backlog = self.p.backlog
        skipped, backlog.skipped = backlog.skipped, []
        for app, key, stamp in skipped:
            if not backlog.still_listed(app, key, stamp):
                continue  # woken again later in the walk, and dealt with there
            leaf = app.queue
            assert leaf is not None  # still pending
            held = self._counts_hold(leaf, app)
            if held is not None and held == app.wait:
                continue  # it waits in its line for the same count, as after an attempt
            backlog.leave_line(app)
            if held is not None:
                self._block_all(app, held)
                self._park_if_blocked(leaf, app)
            else:
                backlog.activate(app)
                self._met_nodes.append((app, self._untried[app.application_id]))
        self._untried.clear()

    def _left_on_full_nodes(self, app: Application, untried: Untried) -> None:
        """`app`, passed over untried, as its attempt would have left it: waiting for room
        on the nodes, with that reason's token, parked on the counter for its asks."""
        token, counter = untried
        lead = app.sorted_asks()[0]
        reason = self._no_node(app, app.pending if app.placed_whole else lead.ask.resource,
                               lead.ask.key)
        app.block_asks(reason, token)
        self.p.set_wait(app, reason)
        self.p.backlog.park(app, (counter,))

    # -- gang ------------------------------------------------------------------------------

    def _replace_placeholders(self) -> None:
        for app in sorted(self.p.gang_apps.values(), key=lambda a: a.seq):
            for pending in list(app.sorted_asks()):
                ask = pending.ask
                if ask.placeholder or not ask.task_group or ask.key not in app.asks:
                    continue
                releases = self.p.releases
                if releases.is_replacing(app.application_id, ask.key):
                    continue
                for placeholder in app.placeholders(ask.task_group):
                    if releases.is_asked(app.application_id, placeholder.key):
                        continue
                    if not ask.resource.fits_within_strict(placeholder.resource):
                        retire_placeholder(self.p, app, placeholder, ask.key)
                        continue
                    if releases.confirming:
                        ask_release(self.p, app, placeholder.key, "PLACEHOLDER_REPLACED",
                                    f"replaced by {ask.key}", replacement=ask.key)
                        break
                    self.allocations.append(replace(self.p, app, pending, placeholder))
                    self.p.fresh[app.application_id] = app
                    break

    # -- queues ------------------------------------------------------------------------------

    def _queue_key(self, parent: Queue, queue: Queue) -> tuple[Any, ...]:
        share = _share(queue.allocated, queue.guaranteed, self._capacity)
        known = self._priority.get(queue.path)
        priority = -(current_priority(queue, self._priority) if known is None else known)
        if parent.sort_priority:
            return (priority, share, queue.path)
        return (share, priority, queue.path)

    def _allocate_in(self, queue: Queue) -> bool:
        if not queue.pending or queue.path in self._done:
            return False
        if not queue.pinned and not any(self._may_fit(queue, s) for s in queue.shapes):
            for leaf in queue.walk():
                if not leaf.children and leaf.pending:
                    self._set_aside_all(leaf)
            self._done.add(queue.path)
            return False
        if not queue.children:
            placed = self._allocate_leaf(queue)
        else:
            heap = self._queue_heaps.get(queue.path)
            if heap is None:
                heap = [(*self._queue_key(queue, c), c) for c in queue.children.values()
                        if c.pending]
                heapq.heapify(heap)
                self._queue_heaps[queue.path] = heap
            placed = False
            while heap:
                child: Queue = heapq.heappop(heap)[-1]
                if self._allocate_in(child):
                    heapq.heappush(heap, (*self._queue_key(queue, child), child))
                    placed = True
                    break
        if not placed:
            self._done.add(queue.path)
        return placed

    # -- applications ----------------------------------------------------------------------

    def _app_key(self, leaf: Queue, app: Application) -> tuple[Any, ...]:
        priority = -app.priority
        if leaf.sort_fair:
            share = _share(app.allocated + app.placeholder_allocated, None, self._capacity)
            order: tuple[Any, ...] = (share, app.submitted_at, app.seq)
        else:
            order = (app.submitted_at, app.seq)
        if leaf.sort_priority:
            return (priority, *order)
        return (*order[:-1], priority, order[-1])

    def _allocate_leaf(self, leaf: Queue) -> bool:
        heap = self._app_heaps.get(leaf.path)
        if heap is None:
            heap = []
            for candidate in self._woken(leaf):
                self._take(leaf, heap, candidate)
            heapq.heapify(heap)
            self._app_heaps[leaf.path] = heap
        while heap:
            app: Application = heapq.heappop(heap)[-1]
            if self._still_held_by_full_queue(leaf, app):
                continue
            made: list[Allocation] = []
            counters = self._blockers(app)
            if counters is not None:
                # the room that woke it went to those before it in this cycle: it waits
                # for the same thing as before, so it is not attempted
                self._set_aside(leaf, app, counters)
            else:
                made = self._allocate_app(leaf, app)
                if made:
                    self.allocations.extend(made)
                    if app.asks:
                        self.p.fresh[app.application_id] = app
                        heapq.heappush(heap, (*self._app_key(leaf, app), app))
                else:
                    self._park_if_blocked(leaf, app)
            for following in self._chained(leaf):
                self._take(leaf, heap, following)
            if made:
                return True
        return False

    def _set_aside_all(self, leaf: Queue) -> None:
        """Nothing pending in `leaf` can be placed now (its queues' maximums or the nodes hold
        every size it asks for), but the applications woken there are tried all the same: the
        first obstacle each meets is its reason to wait, and it is parked on that (a new
        application's count, asked first, may hold it rather than the room). Left ready, they
        would be looked at by every cycle's end with the reason they had before. One that
        would meet what held it before is set aside as the walk sets it aside (`_take`)."""
        for app in self._woken(leaf):
            if self._held_aside(leaf, app):
                continue
            # an application placed whole may use nodes it reserved, which no size fits
            self.allocations.extend(self._allocate_app(leaf, app))
            self._park_if_blocked(leaf, app)

    def _woken(self, leaf: Queue) -> Iterator[Application]:
        """The applications ready in `leaf`, then each one a head among them lets in as it
        moves on (taken after the caller has dealt with the one before)."""
        backlog = self.p.backlog
        woken = backlog.ready(leaf)
        backlog.chained.clear()  # woken before: ready, so among `woken`
        for app in woken:
            yield app
            woken.extend(self._chained(leaf))

    def _take(self, leaf: Queue, heap: list[tuple[Any, ...]], app: Application) -> None:
        """Put a ready application in the leaf's heap, or aside when it cannot be placed."""
        if not self._held_aside(leaf, app):
            heapq.heappush(heap, (*self._app_key(leaf, app), app))

    def _held_aside(self, leaf: Queue, app: Application) -> bool:
        """Whether `app` is left untried: a full queue still holds it, or it is set aside on
        the counters it waits on (`_blockers`)."""
        if self._still_held_by_full_queue(leaf, app):
            return True
        counters = self._blockers(app)
        if counters is None:
            return False
        self._set_aside(leaf, app, counters)
        return True

    def _chained(self, leaf: Queue) -> list[Application]:
        """The applications of `leaf` whose turn in a line has just come (those of other
        leaves are ready and join their leaf's walk). The walk takes them in after the head
        that moved on, which the leaf's order puts before them: so it reaches each exactly
        when it would have, had the whole line been woken."""
        chained = self.p.backlog.chained
        if not chained:
            return []
        mine = [app for app in chained if app.queue is leaf]
        chained.clear()
        return mine

    def _still_held_by_full_queue(self, leaf: Queue, app: Application) -> bool:
        """A new application that already waits for a queue's `maxapplications`, which is
        reached again: trying it would only record the same reason, so it is parked as it is
        (nothing is released during a cycle, so a full queue stays full to its end). This
        keeps the cost of one ending application at one cheap check per application waiting
        for a slot, not a full attempt each."""
        if app.tracked or app.wait is None:
            return False
        wait = app.wait
        if not wait.is_queue_count:
            return False
        full = leaf.full_of_apps(app.application_id)
        if full is None or full.path != wait.name:
            return False
        self.p.backlog.queue_up(app, ("queue", full.path), self._app_key(leaf, app))
        return True

    def _park_if_blocked(self, leaf: Queue, app: Application) -> None:
        """Set a refused application aside until something it waits on changes."""
        counters = self._blockers(app)
        if counters is not None:
            self._set_aside(leaf, app, counters)

    def _set_aside(self, leaf: Queue, app: Application, counters: set[Counter]) -> None:
        """Park `app` on `counters`; a new application that an application count holds back
        joins the line of that count instead, in the leaf's order, and so does one that a
        queue's maximum holds back (the line of the room for its size there: a release
        wakes its head, and the next once the head has moved on)."""
        wait = app.wait
        if wait is not None and len(counters) == 1:
            counter = next(iter(counters))
            if not app.tracked and (wait.is_count or wait.is_queue_count):
                self.p.backlog.queue_up(app, counter, self._app_key(leaf, app))
                return
            if wait.is_queue_maximum and counter[0] == "room":
                self.p.backlog.queue_up(app, counter, self._app_key(leaf, app),
                                        held_otherwise=self._held_before_asks)
                return
        self.p.backlog.park(app, counters)

    def _may_fit(self, queue: Queue, shape: Resource) -> bool:
        """Whether an ask of this size could be placed now (queue limits and nodes only)."""
        return queue.over_max(shape) is None and self.p.nodes.find_fit(shape) is not None

    def _blockers(self, app: Application) -> set[tuple[str, str]] | None:
        """The counters every ask of `app` waits on, or None when one ask is worth trying."""
        if app.wait is not None and app.wait.is_turn and not app.tracked:
            return set() if self.p.backlog.turns.ahead_of(app) is not None else None
        if app.placed_whole:
            return self._whole_blockers(app)
        accounting = self.p.accounting
        unfit = self.p.nodes.known_unfit
        counters: set[tuple[str, str]] = set()
        stale = False
        for pending in app.asks.values():
            token = pending.blocked
            ask = pending.ask
            wait = pending.wait
            if token is not None and accounting.still_blocked(token):
                if token[0] == "node" and ask.required_node is None:
                    counters.add(self.p.backlog.node_counter(ask.resource))
                elif wait is not None and wait.is_queue_maximum:
                    counters.add(self.p.backlog.room_counter(token[1], ask.resource))
                else:
                    counters.add((token[0], token[1]))
                continue
            if not app.tracked and wait is not None and (wait.is_count or wait.is_queue_count):
                return None  # its counts come first, and only the walk knows them in order
            if wait is not None and wait.is_queue_maximum and (queue := app.queue) is not None:
                over = queue.over_max(ask.resource)
                if over is not None and token is not None and over.path == token[1] \
                        and not self._held_before_asks(app):
                    # the release there left no room for it: it waits as before, unattempted,
                    # its token renewed as an attempt would (so it is settled again)
                    counters.add(self.p.backlog.room_counter(over.path, ask.resource))
                    pending.blocked = accounting.token(wait)
                    continue
            if ask.required_node is None and unfit(ask.resource):
                counters.add(self.p.backlog.node_counter(ask.resource))
                if pending.wait is None or pending.wait.kind != "node":
                    stale = True  # what held it (a limit) moved; now only room does
                    pending.wait = self._no_node(app, ask.resource, ask.key)
                    pending.blocked = accounting.token(pending.wait)
                continue
            return None
        if stale:
            self.p.set_wait(app, next((p.wait for p in app.sorted_asks() if p.wait), None))
        return counters

    def _whole_blockers(self, app: Application) -> set[tuple[str, str]] | None:
        """The one counter an application placed whole waits on (its asks share a token), or
        None when it is worth trying."""
        asks = app.sorted_asks()
        lead = asks[0]
        token = lead.blocked
        backlog = self.p.backlog
        if token is None:
            return None
        if not self.p.accounting.still_blocked(token):
            wait = lead.wait
            queue = app.queue
            if wait is not None and wait.is_queue_maximum and queue is not None:
                over = queue.over_max(app.pending)
                if over is not None and over.path == token[1] \
                        and not self._held_before_asks(app):
                    # the release there left no room for all of it, and nothing an attempt
                    # asks first (a new application's turn and counts) holds it: it waits as
                    # before, unattempted, its token renewed as an attempt would (so it is
                    # settled again, not screened by every cycle's end until its counter moves)
                    app.block_asks(wait, self.p.accounting.token(wait))
                    return {backlog.room_counter(over.path, app.pending)}
            return None
        if token[0] == "node":
            owns = any((app.application_id, pending.ask.key) in self.p.contention.reservations
                       for pending in asks)
            return {backlog.whole_counter(app, app.application_id if owns else "")}
        wait = lead.wait
        if wait is not None and wait.is_queue_maximum:
            return {backlog.room_counter(token[1], app.pending)}
        return {(token[0], token[1])}

    def _held_before_asks(self, app: Application) -> bool:
        """Whether an attempt of `app` would stop before its asks: it is new, and an earlier
        alike application's turn or an application count holds it (`_allocate_app`)."""
        leaf = app.queue
        return not app.tracked and leaf is not None \
            and (self.p.backlog.turns.ahead_of(app) is not None
                 or self._counts_hold(leaf, app) is not None)

    def _allocate_app(self, leaf: Queue, app: Application) -> list[Allocation]:
        """Place the first ask of `app` that fits (every ask, for an application placed
        whole), and record why its first ask waits."""
        p = self.p
        fresh = p.fresh.pop(app.application_id, None) is not None
        p.backlog.activate(app)
        newly = not app.tracked
        if newly:
            if p.backlog.turns.ahead_of(app) is not None:
                self._wait_turn(app)
                return []
            held = self._counts_hold(leaf, app)
            if held is not None:
                self._block_all(app, held)
                return []
            if not fresh and self._pass_over(leaf, app):
                return []
        if app.placed_whole:
            made = self._allocate_whole(leaf, app)
            if newly and not made:
                self._note_met_nodes(app)
            return made
        first: Wait | None = None
        for pending in app.sorted_asks():
            if pending.blocked is not None and p.accounting.still_blocked(pending.blocked):
                first = first or pending.wait
                continue
            if app.awaits_replacement(pending.ask):
                continue
            result = self._try(leaf, app, pending)
            if isinstance(result, Allocation):
                self.p.set_wait(app, first)
                return [result]
            pending.wait = result
            pending.blocked = p.accounting.token(result)
            first = first or result
            if result.is_count:
                if not app.tracked:
                    self._no_new_apps[(leaf.path, app.user)] = result
                self._block_all(app, result)
                return []
        self.p.set_wait(app, first)
        if newly:
            self._note_met_nodes(app)
        return []

    def _note_met_nodes(self, app: Application) -> None:
        wait = app.wait
        if wait is not None and wait.kind == "node":
            self._met_nodes.append((app, None))

    def _pass_over(self, leaf: Queue, app: Application) -> bool:
        """Pass over a new application that a count held until a release woke it, when its
        counts admit it but its asks (one, or all placed whole) would only meet full nodes
        again (`_unfit_again`). An attempt would say so, and once another application takes
        the slot (the usual end) `_recount` would put it back where it was, waiting for the
        count. So its reason is left as it is until the walk ends: the next in its line is
        woken as the change would wake it, and `_recount` settles it as the attempt would
        have (without logging a reason that changed and changed back). The reference mode
        attempts it (`Backlog.still_unfit`)."""
        untried = self._unfit_again(leaf, app)
        if untried is None:
            return False
        self.p.backlog.moved_on(app)
        self.p.backlog.untried(app)
        self._met_nodes.append((app, untried))
        return True

    def _passable(self, app: Application) -> bool:
        """Whether `app`, about to be woken in its line because the head before it moved on
        in this walk, would only be passed over (`_pass_over`): its turn has come, its counts
        admit it (by what is known without asking the user group manager, so that skipping
        asks it no more often than attempts would), and its asks would only meet full nodes
        again. Then the line skips it, untouched, and `_recount` settles it at the walk's
        end as the attempt would have. (Whatever the walk reaches between two heads may take
        the slot; a skipped head then waits for the count as before, which `_recount`
        checks.)"""
        leaf = app.queue
        p = self.p
        if leaf is None or app.tracked or p.backlog.turns.ahead_of(app) is not None \
                or not p.accounting.known_to_admit(app) \
                or leaf.full_of_apps(app.application_id) is not None:
            return False
        untried = self._unfit_again(leaf, app)
        if untried is None:
            return False
        self._untried[app.application_id] = untried
        return True

    def _unfit_again(self, leaf: Queue, app: Application) -> Untried | None:
        """What an attempt of a new application held by a count until now, and admitted by
        its counts, would leave it with, when its asks (one, or all placed whole) would
        only meet full nodes again (`Backlog.still_unfit`); None when it is worth trying."""
        wait = app.wait
        if wait is None or not (wait.is_count or wait.is_queue_count):
            return None
        asks = app.sorted_asks()
        together = app.placed_whole
        if not together and len(asks) != 1:
            return None
        lead = asks[0]
        token = lead.blocked
        p = self.p
        if token is None or p.accounting.still_blocked(token) \
                or leaf.over_max(app.pending) is not None \
                or app.application_id in self._headroom:
            return None
        if not together and (lead.ask.required_node is not None
                             or app.awaits_replacement(lead.ask)):
            return None
        reservations = p.contention.reservations
        if reservations and any((app.application_id, pending.ask.key) in reservations
                                for pending in asks):
            return None
        counter = p.backlog.still_unfit(app, together)
        if counter is None:
            return None
        return (p.accounting.token(_FULL_NODES), counter)

    def _allocate_whole(self, leaf: Queue, app: Application) -> list[Allocation]:
        """Every pending ask of `app` at once, or none: its queues' maximums, room for all of
        them on the nodes, then one increase for the total (`whole`). A refusal is recorded
        on every ask with one token, so the application waits on one counter."""
        p = self.p
        asks = app.sorted_asks()
        lead = asks[0]
        if lead.blocked is not None and p.accounting.still_blocked(lead.blocked):
            p.set_wait(app, lead.wait)
            return []
        total = app.pending
        over = leaf.over_max(total)
        result: list[Allocation] | Wait
        if over is not None:
            result = _for_ask(queue_max_wait(over, total), lead.ask.key)
        else:
            owner = app.application_id
            nodes = whole.plan(p.nodes, [pending.ask.resource for pending in asks], owner)
            if nodes is None:
                result = self._no_node(app, total, lead.ask.key)
            else:
                result = allocate_all(p, app, list(zip(asks, nodes, strict=True)))
        if isinstance(result, list):
            for allocation in result:  # a reservation its preemption made is used up
                held = p.contention.reservations.get((app.application_id, allocation.key))
                if held is not None:
                    unreserve(p, held, f"allocated on {allocation.node_id}")
            p.set_wait(app, None)
            return result
        token = p.accounting.token(result)
        for pending in asks:
            pending.wait = result
            pending.blocked = token
        if result.is_count and not app.tracked:
            self._no_new_apps[(leaf.path, app.user)] = result
        p.set_wait(app, result)
        return []

    def _try(self, leaf: Queue, app: Application, pending: PendingAsk) -> Allocation | Wait:
        """One ask: queue maximums, user/group headroom, nodes, then the tracker increase."""
        p = self.p
        ask = pending.ask
        resource = ask.resource
        over = leaf.over_max(resource)
        if over is not None:
            return _for_ask(queue_max_wait(over, resource), ask.key)
        app_id = app.application_id
        headroom = self._headroom.get(app_id)
        if headroom is not None and not _fits(resource, headroom):
            return _for_ask(self._limit_wait[app_id], ask.key)
        pinned = ask.required_node is not None
        if pinned:
            claim_required_node(p, app, pending)
        node = p.nodes.find_fit(resource, ask.required_node)
        if node is None:
            if pinned:
                reserve_required_node(p, app, pending, p.now())
            return self._no_node(app, resource, ask.key)
        result = allocate(p, app, pending, node)
        if isinstance(result, Allocation):
            if headroom is not None:
                _take(headroom, resource)
            return result
        if result.is_user_or_group_maximum and app_id not in self._headroom:
            self._limit_wait[app_id] = result
            p.accounting.calls += 1
            self._headroom[app_id] = p.ugm.headroom(app.queue_path, app_id, app.user)
        return result

    def _app_count_wait(self, leaf: Queue, app: Application) -> Wait | None:
        """The user's or group's `maxApplications` that a new `app` would break, if any: a
        refusal is asked of the user group manager once per user and leaf in a cycle (a
        count only grows during a cycle, so it holds to its end); an admission is
        remembered by `Accounting.count_wait` until a count it read rises."""
        key = (leaf.path, app.user)
        known = self._no_new_apps.get(key)
        if known is not None:
            return known
        wait = self.p.accounting.count_wait(app)
        if wait is not None:
            self._no_new_apps[key] = wait
        return wait

    def _runnable(self, app: Application) -> bool:
        """Whether the application counts admit `app`, asked before it may reserve or preempt
        at the end of the cycle: YuniKorn tries (and so reserves or preempts for) only the
        applications its queues' and its user's and group's counts admit (`TryAllocate` skips
        the others). A new application that one holds is held as the walk would hold it (a
        job that met full nodes while its user had a free slot keeps that reason until it is
        tried again, in a later cycle; the slot may have gone to another job since)."""
        leaf = app.queue
        if app.tracked or leaf is None:
            return True
        held = self._counts_hold(leaf, app)
        if held is None:
            return True
        self._block_all(app, held)
        self._park_if_blocked(leaf, app)
        return False

    def _counts_hold(self, leaf: Queue, app: Application) -> Wait | None:
        """What a new `app` meets before any of its asks is tried: its user's or group's
        `maxApplications` (YuniKorn's `CanRunApp`), then its queues' `maxapplications`."""
        count = self._app_count_wait(leaf, app)
        if count is not None:
            return count
        full = leaf.full_of_apps(app.application_id)
        if full is None:
            return None
        key = (full.path, len(full.running))
        wait = self._full_queues.get(key)
        if wait is None:
            wait = self._full_queues[key] = queue_apps_wait(full)
        return wait

    def _no_node(self, app: Application, resource: Resource, key: str) -> Wait:
        detail = self._no_room.get(resource)
        if detail is None:
            detail = self._no_room[resource] = f"no schedulable node has {resource} available"
        return Wait("node", "", app.queue_path, "capacity", detail, key)

    def _wait_turn(self, app: Application) -> None:
        """An earlier alike application goes first (`Turns.ahead_of`): `app` waits for its
        turn, untried."""
        user = app.user.user
        key = next(iter(app.sorted_asks())).ask.key
        wait = Wait("user", user, app.queue_path, "turn",
                    f"an earlier application of {user} asking the same goes first", key)
        app.block_asks(wait, None)
        self.p.set_wait(app, wait)

    def _block_all(self, app: Application, wait: Wait) -> None:
        """A limit on the number of applications holds back every ask of `app`."""
        app.block_asks(wait, self.p.accounting.token(wait))
        self.p.set_wait(app, wait)



def _for_ask(wait: Wait, key: str) -> Wait:
    return Wait(wait.kind, wait.name, wait.queue_path, wait.limit, wait.detail, key)


def _share(used: Resource, guaranteed: Mapping[str, int] | None, capacity: Resource) -> float:
    """Dominant share of `used`: against the guarantee where one is set, else the capacity."""
    best = 0.0
    for name, quantity in used.items():
        base = guaranteed.get(name, 0) if guaranteed is not None else 0
        if base <= 0:
            base = capacity.get(name, 0)
        if base > 0:
            best = max(best, quantity / base)
    return best


def _fits(resource: Resource, headroom: dict[str, int]) -> bool:
    return all(q <= headroom[n] for n, q in resource.items() if n in headroom)


def _take(headroom: dict[str, int], resource: Resource) -> None:
    for name, quantity in resource.items():
        if name in headroom:
            headroom[name] -= quantity

"""The backlog index: pending applications by what they wait on, so a cycle looks at what moved.

An application all of whose asks wait on unmoved counters (`Accounting.token`) is *parked*
under those counters, and a cycle only looks at the applications that are ready (new asks, a
counter of theirs moved, or not parked yet). So a cycle after one release costs what that
release could change, not a pass over every pending application. Counters: releases per user,
per group (the shared `*` group's by its members' releases), per queue (the queue and each
ancestor), anywhere (`any`),
room on the nodes for an ask's size (the node set's epoch), and room for an ask's size under a
queue's maximum.

The end of a cycle (reservations, preemption, reasons that went stale) screens the pending
applications too, and most of a long backlog has nothing to offer it: an application whose
every ask waits for a queue's `maxapplications`, for a user or group limit whose counter has
not moved, or for a queue's maximum where no preemption can help, would be passed over. Such
an application is *settled* when it is parked and screened again only once it is woken or
changes (`screened`), so that step also costs what changed, not the backlog. When it can offer
nothing in a leaf (every node reserved, no preemption possible there), it only brings up to
date the reasons of applications a user's or group's resource limit holds (`limit_held`, an
index kept as reasons change), so a full cluster's backlog of jobs waiting for room costs
nothing per cycle.

New applications held back by a user's or group's `maxApplications` wait in *lines*: one per
counter, leaf, reason and user, in the leaf's order. A new application is asked about its
application count before anything else (YuniKorn's `CanRunApp`), a count cannot drop during a
cycle, and a group's count is asked after the user's own: so every application of that user
behind one refused for that count again would be refused alike. A move of the counter wakes
only the head of each line, and the next in line is woken only once the head has moved on (it
started, something else holds it now, or it went away): a user with a thousand jobs behind
`maxApplications: 4` costs a few attempts per release, not a thousand, and each job records
exactly the reasons it would had all of them been woken (the reference mode,
`SchedulerOptions.exhaustive_retries`, still wakes them all and settles nothing). Jobs that a
queue's maximum holds wait in lines too, one per room counter (a size under that maximum) and
leaf: they ask alike there, so a head held again keeps the rest behind it, but for those that
what an attempt asks first (a new application's turn and counts) would now hold (`queue_up`).
A head that its counts admit but whose asks are still parked where no room has come since
(`still_unfit`) is passed over untried: the walk wakes the next in line as the attempt would
have, and at the walk's end it waits for its count again, or for room if no one took the slot
(`Cycle._pass_over`). Heads behind it that would be passed over alike are skipped in the line,
untouched (`passable`, `skipped`), so a slot that frees costs a heap operation per such head.

A user's new applications that ask alike take turns (`quotactor/scheduler/booking/turns.py`): only
the first of them is tried, the others wait untried, parked on nothing, and the backlog wakes
the next when the first starts, goes away or asks otherwise (`turn_passed`). That is part of
what the scheduler decides, not of the index, so the reference mode keeps turns too.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

from quotactor.core.identity import UserGroup
from quotactor.core.resources import Resource, sum_of
from quotactor.scheduler.booking import whole
from quotactor.scheduler.booking.turns import Turns
from quotactor.scheduler.objects.application import Application, BlockToken
from quotactor.scheduler.objects.node import NodeSet
from quotactor.scheduler.objects.queue import Queue
from quotactor.scheduler.objects.reasons import Wait

__all__ = ["Backlog", "Counter"]

_MIN_SWEEP = 1024
_MAX_NAMED = 4096

Counter = tuple[str, str]
LineKey = tuple[Counter, str, Wait | None, UserGroup | None]
"""A line: the counter its applications wait on, their leaf, the reason they share, and their
user (a group's count is asked after the user's own, so only one user's are alike; None for a
queue's count, which holds every user's alike). A queue maximum's line (its counter is the
room for one size under that maximum) names neither: the size and the queue make them alike."""
LineEntry = tuple[tuple[Any, ...], int, Application]
"""(the application's order in its leaf, the parking's stamp, the application)."""


def _still_pending(app: Application) -> bool:
    queue = app.queue
    return queue is not None and queue.pending_apps.get(app.application_id) is app


def _merged(first: list[LineEntry], second: list[LineEntry]) -> list[LineEntry]:
    """One line of two (heaps): the shorter pushed into the longer."""
    if len(first) < len(second):
        first, second = second, first
    for entry in second:
        heapq.heappush(first, entry)
    return first


def _one_size_key(count: int, size: Resource) -> str:
    """The whole counter's name for `count` asks all of `size`."""
    return f"{count} x {size}"


def _mixed_key(sizes: tuple[Resource, ...], owner: str) -> str:
    """The whole counter's name for asks of `sizes` that differ (or may use `owner`'s
    reservations)."""
    return ",".join(str(size) for size in sizes) + (f"@{owner}" if owner else "")


class Backlog:
    """Where each pending application waits: parked, in a line, ready, or to be screened."""

    def __init__(self, nodes: NodeSet, still_blocked: Callable[[BlockToken], bool], *,
                 exhaustive: bool = False) -> None:
        self.nodes = nodes
        self._still_blocked = still_blocked
        self.exhaustive = exhaustive
        """The reference mode (`SchedulerOptions.exhaustive_retries`): nothing is settled and
        no line is kept."""
        self.preemption_enabled = True
        """The partition's `preemption` setting (the partition keeps it current)."""
        self._parked: dict[Counter, dict[str, Application]] = {}
        self._ready: defaultdict[str, dict[str, Application]] = defaultdict(dict)
        self._active: defaultdict[str, dict[str, Application]] = defaultdict(dict)
        """Per leaf, the pending applications that are not settled (see `screened`)."""
        self._limit_held: defaultdict[str, dict[str, Application]] = defaultdict(dict)
        """Per leaf, the applications whose reason is a user's or group's resource limit
        (kept by `reason_changed`; see `limit_held`)."""
        self._epoch_seen = nodes.epoch
        self._shapes: dict[str, Resource] = {}
        self._room_shapes: dict[str, dict[str, Resource]] = {}
        """Per queue, the sizes its maximum holds back (see `room_counter`)."""
        self._node_counters: dict[Resource, Counter] = {}
        self._whole_names: dict[tuple[int, Resource], Counter] = {}
        """The whole counters of asks all of one size named so far, by count and size."""
        self._wholes: dict[str, tuple[Resource, tuple[Resource, ...], str]] = {}
        """Per whole counter (`whole_counter`) of asks that differ in size or may use an
        application's reservations, the total and the sizes it waits to place, and that
        application."""
        self._whole_counts: dict[Resource, list[int]] = {}
        """Per size, the ask counts (sorted) of the whole counters of asks all of that size
        and no reservation (`whole_counter`): the nodes hold such a set at once exactly when
        they hold that many asks of the size, so a release wakes a prefix of each list."""
        self._room_counters: dict[tuple[str, Resource], Counter] = {}
        """The counters named so far, so that naming one does not format a size each time
        (asks usually come in few sizes; forgotten past `_MAX_NAMED`, as a live scheduler may
        see ever new ones)."""
        self._parkings = 0
        self._parkings_made = 0
        self._sweep_at = _MIN_SWEEP
        self._lines: dict[Counter, dict[LineKey, list[LineEntry]]] = {}
        self._in_line: dict[str, tuple[LineKey, int]] = {}
        """Per application in a line (parked or behind a woken head): its line and stamp."""
        self._behind: dict[LineKey, list[LineEntry]] = {}
        """The rest of a line whose head was woken, waiting for the head's outcome."""
        self._head_of: dict[str, LineKey] = {}
        """Per woken head, the line waiting behind it."""
        self.turns = Turns(_still_pending)
        """A user's alike new applications, in turn (`Turns.ahead_of`)."""
        self.chained: list[Application] = []
        """Applications woken because the head of their line moved on, for the walk to take
        in (`Cycle` drains it after each attempt; the rest find them ready next time)."""
        self.passable: Callable[[Application], bool] | None = None
        """While a walk runs, whether a head about to be woken when the one before it moved
        on would only be passed over (`Cycle._pass_over`): then it stays in its line,
        untouched, and the next is looked at (`_wake_head`)."""
        self.skipped: list[tuple[Application, LineKey, int]] = []
        """The heads left in their lines so (with their place), for the walk's end."""
        self._moves = 0
        """How many times something moved that may hold new applications before their asks
        (`recheck_user`): the clock of `_screened`."""
        self._user_moved: dict[str, int] = {}
        """Per user, `_moves` when its application counts or turns last moved."""
        self._all_moved = 0
        """`_moves` when anyone's counts last moved (a group's count, the limits)."""
        self._screened: dict[str, int] = {}
        """Per application in a line behind a queue's maximum, `_moves` when it was last
        known not to be held before its asks (queued, or screened by `_keep_alike`)."""

    def recheck_user(self, user: str | None) -> None:
        """`user`'s application counts rose or its alike applications moved (None: anyone's
        counts, as when a group's rose or the limits changed): its new applications behind a
        queue's maximum may now be held before their asks, so the next screen of their line
        asks `held_otherwise` again (`queue_up`). Until then, nothing that moved can hold them."""
        self._moves += 1
        if user is None or len(self._user_moved) >= _MAX_NAMED:
            self._user_moved.clear()
            self._all_moved = self._moves
        else:
            self._user_moved[user] = self._moves

    def enlist(self, app: Application, order: tuple[Any, ...]) -> None:
        """Place a new or changed `app` among its alike applications (`Turns.enlist`); if it
        was the first of others and asks otherwise now, the next one's turn comes."""
        self.recheck_user(app.user.user)
        self._woken_turn(self.turns.enlist(app, order))

    def turn_passed(self, app: Application) -> None:
        """`app` started, went away or asks otherwise now: if it was the first of its alike
        applications, the next one's turn has come (woken, into `chained`)."""
        self._woken_turn(self.turns.passed(app))

    def _woken_turn(self, app: Application | None) -> None:
        if app is not None:
            self._make_ready(app)
            self.chained.append(app)

    def released(self, app: Application) -> None:
        """`app` gave something back: wake what waits on its user, groups, queues, anywhere."""
        self.wake(("user", app.user.user))
        for group in app.user.groups:
            self.wake(("group", group))
        if app.queue is not None:
            for queue in app.queue.lineage():
                self.wake(("queue", queue.path))
                shapes = self._room_shapes.get(queue.path, {})
                for key, shape in list(shapes.items()):
                    if queue.admits(shape):
                        del shapes[key]
                        self.wake(("room", key))
        self.wake(("any", ""))

    def unpark(self, apps: Iterable[Application]) -> None:
        """Make `apps` (new or changed asks, a new configuration) ready again."""
        for app in apps:
            self._make_ready(app)

    def _make_ready(self, app: Application) -> None:
        app_id = app.application_id
        self._in_line.pop(app_id, None)  # its entry in a line, if any, is stale from now on
        self._ready[app.queue_path][app_id] = app
        self.activate(app)

    def activate(self, app: Application) -> None:
        """`app`'s asks are about to be tried, so their reasons may change: screen it again."""
        self._active[app.queue_path][app.application_id] = app

    def screened(self, leaf: Queue) -> list[Application]:
        """The pending applications of `leaf` that the end of a cycle must look at: all of
        them in the reference mode, else those not settled since they were last woken."""
        pending = leaf.pending_apps
        if self.exhaustive:
            self._active.pop(leaf.path, None)  # nothing reads it in this mode: keep it empty
            return list(pending.values())
        active = self._active.get(leaf.path)
        if not active:
            return []
        # asked every cycle for every leaf, so an application placed or removed since is
        # forgotten here at the latest one cycle later, and the index never outgrows the backlog
        kept = [app for key, app in active.items() if pending.get(key) is app]
        if len(kept) < len(active):
            self._active[leaf.path] = {app.application_id: app for app in kept}
        return kept

    def limit_held(self, leaf: Queue) -> list[Application]:
        """The applications of `leaf` that the end of a cycle must look at when it can offer
        nothing there (every node reserved, no preemption possible): those a user's or group
        limit holds whose counter may have moved, for their reason to be brought up to date.
        Not settled, as `screened`, but found without a pass over the others (at a full
        cluster, most of a long backlog waits for room, and none of it needs a look): all
        pending ones in the reference mode."""
        if self.exhaustive:
            return self.screened(leaf)
        pending = leaf.pending_apps
        active = self._active.get(leaf.path)
        if active is not None and len(active) > len(pending):
            self.screened(leaf)  # forgets those no longer pending, as every cycle used to
            active = self._active.get(leaf.path)
        held = self._limit_held.get(leaf.path)
        if not held or not active:
            return []
        found = []
        for app_id, app in list(held.items()):
            if pending.get(app_id) is not app:
                del held[app_id]  # placed or removed since
            elif app_id in active:
                found.append(app)
        return found

    def reason_changed(self, app: Application) -> None:
        """`app.wait` changed: keep the limit-held index, and move its line on (`moved_on`)."""
        wait = app.wait
        held = self._limit_held[app.queue_path]
        if wait is not None and wait.is_user_or_group_maximum:
            held[app.application_id] = app
        else:
            held.pop(app.application_id, None)
        self.moved_on(app)

    def _settled(self, app: Application) -> bool:
        """Whether the end of a cycle would pass `app` over until one of its counters moves:
        every ask waits for a queue's application count (which that step never offers to
        reservation or preemption), for a user or group limit whose counter is unmoved (the
        step only looks again at those whose counter moved), for a queue's maximum that has
        not moved where no preemption can help (no reservation is made above a queue's
        maximum), or for room on the nodes where no preemption can help and the application
        is placed whole (it reserves no node: one node cannot hold all its asks)."""
        seen: tuple[Wait, BlockToken | None] | None = None
        may_preempt: bool | None = None
        for pending in app.asks.values():
            wait = pending.wait
            if wait is None:
                return False
            token = pending.blocked
            if seen is not None and wait is seen[0] and token is seen[1]:
                continue  # as the ask before (an application placed whole shares one)
            seen = (wait, token)
            if wait.is_turn or wait.is_queue_count:
                continue
            if token is None or not self._still_blocked(token):
                return False
            if wait.kind in ("user", "group"):
                continue
            if wait.is_queue_maximum or (wait.kind == "node" and app.placed_whole):
                if may_preempt is None:
                    may_preempt = self._may_preempt(app)
                if not may_preempt:
                    continue
            return False
        return True

    def _may_preempt(self, app: Application) -> bool:
        """Whether an ask of `app` could preempt: preemption is on and a queue at or above
        its leaf has a guarantee (as `may_preempt` requires before anything else)."""
        leaf = app.queue
        return self.preemption_enabled and leaf is not None \
            and any(q.guaranteed for q in leaf.lineage())

    def ready(self, leaf: Queue) -> list[Application]:
        """The pending applications of `leaf` that may be worth trying: those made ready
        and not parked since, or woken by a counter that moved."""
        if self.nodes.epoch != self._epoch_seen:
            self._epoch_seen = self.nodes.epoch
            self.wake(("node", ""))
            for shape_key, shape in list(self._shapes.items()):
                if self.nodes.find_fit(shape) is not None:
                    del self._shapes[shape_key]
                    self.wake(("node", shape_key))
            if self._whole_counts:
                alike = list(self._whole_counts)
                for size, fitting in zip(alike, whole.room_for(self.nodes, alike), strict=True):
                    counts = self._whole_counts[size]
                    fit = bisect_right(counts, fitting)
                    for count in counts[:fit]:
                        self.wake(self._one_size_counter(count, size))
                    if fit == len(counts):
                        del self._whole_counts[size]
                    else:
                        del counts[:fit]
            if self._wholes:
                rooms = {"": whole.free_room(self.nodes)}
                for whole_key, (total, sizes, owner) in list(self._wholes.items()):
                    room = rooms.get(owner)
                    if room is None:
                        room = rooms[owner] = whole.free_room(self.nodes, owner)
                    if total.fits_within_strict(room) \
                            and whole.plan(self.nodes, sizes, owner) is not None:
                        del self._wholes[whole_key]
                        self.wake(("whole", whole_key))
        ready = self._ready[leaf.path]
        pending = leaf.pending_apps
        stale = [k for k, app in ready.items() if pending.get(k) is not app]
        for key in stale:
            self.moved_on(ready.pop(key))  # a woken head that went away: the line moves on
        return list(ready.values())

    def node_counter(self, shape: Resource) -> Counter:
        """The counter for asks of `shape` that found no node: it moves only when capacity
        was freed and some node has room for `shape` again, so a release of one vcore does
        not wake every job waiting for sixty-four."""
        counter = self._node_counters.get(shape)
        if counter is None:
            if len(self._node_counters) >= _MAX_NAMED:
                self._node_counters.clear()
            counter = self._node_counters[shape] = ("node", str(shape))
        self._shapes[counter[1]] = shape
        return counter

    def whole_counter(self, app: Application, owner: str = "") -> Counter:
        """The counter for an application placed whole whose asks found no room together:
        it moves only when capacity was freed and the nodes hold all of them at once again
        (`whole.plan`). `owner` names the application when nodes it reserved (by preempting)
        count as its room; applications without reservations share counters."""
        sizes, first = app.ask_sizes()
        if first is not None and not owner:
            counts = self._whole_counts.setdefault(first, [])
            at = bisect_left(counts, len(sizes))
            if at == len(counts) or counts[at] != len(sizes):
                counts.insert(at, len(sizes))  # dropped when woken, as `_wholes`
            return self._one_size_counter(len(sizes), first)
        key = _mixed_key(sizes, owner)
        if key not in self._wholes:  # dropped when woken, so never more than those parked
            self._wholes[key] = (sum_of(sizes), sizes, owner)
        return ("whole", key)

    def _one_size_counter(self, count: int, size: Resource) -> Counter:
        """The whole counter for `count` asks all of `size` (named once, as `node_counter`)."""
        counter = self._whole_names.get((count, size))
        if counter is None:
            if len(self._whole_names) >= _MAX_NAMED:
                self._whole_names.clear()
            counter = self._whole_names[count, size] = ("whole", _one_size_key(count, size))
        return counter

    def still_unfit(self, app: Application, together: bool) -> Counter | None:
        """The counter `app` waits on, if its asks (one, or all placed whole when `together`,
        on nodes it has not reserved) would again find no room: it is parked there (it found
        none, and the counter has not moved since) and no capacity was freed since the
        counters were last looked at (`ready`). None when an attempt could place them, and
        always in the reference mode, which tries everything it wakes."""
        if self.exhaustive or self.nodes.epoch != self._epoch_seen:
            return None
        sizes, first = app.ask_sizes()
        if first is None:
            if not together:
                return None
            counter = ("whole", _mixed_key(sizes, ""))
        elif together:
            counter = self._one_size_counter(len(sizes), first)
        else:
            named = self._node_counters.get(first)  # parked ones are named (`node_counter`)
            if named is None:
                return None
            counter = named
        parked = self._parked.get(counter)
        return counter if parked is not None and parked.get(app.application_id) is app \
            else None

    def untried(self, app: Application) -> None:
        """`app` is passed over in this cycle (it would only meet full nodes again): it
        leaves the ready ones, as it would by being parked where it waits."""
        self._ready[app.queue_path].pop(app.application_id, None)

    def room_counter(self, queue_path: str, shape: Resource) -> Counter:
        """The counter for asks of `shape` that `queue_path`'s maximum holds back: it moves
        only when a release there leaves room for `shape` under that maximum, so a release
        of one vcore does not wake every job waiting for sixty-four."""
        counter = self._room_counters.get((queue_path, shape))
        if counter is None:
            if len(self._room_counters) >= _MAX_NAMED:
                self._room_counters.clear()
            counter = self._room_counters[queue_path, shape] = ("room", f"{queue_path} {shape}")
        self._room_shapes.setdefault(queue_path, {})[counter[1]] = shape
        return counter

    def park(self, app: Application, counters: Iterable[Counter]) -> None:
        """Set `app` aside until one of `counters` moves (every ask waits on one of them)."""
        app_id = app.application_id
        self._ready[app.queue_path].pop(app_id, None)
        for counter in counters:
            self._parked.setdefault(counter, {})[app_id] = app
            self._parkings += 1
        if not self.exhaustive:
            self._parked_now(app)

    def _parked_now(self, app: Application) -> None:
        """`app` waits on every counter its asks wait on, so a move wakes (and activates) it:
        until then, settled, it is not screened. Sweeps when enough parkings piled up."""
        if self._settled(app):
            self._active[app.queue_path].pop(app.application_id, None)
        if self._parkings + self.turns.dropped >= self._sweep_at:
            self._sweep()

    def queue_up(self, app: Application, counter: Counter, order: tuple[Any, ...], *,
                 held_otherwise: Callable[[Application], bool] | None = None) -> None:
        """Park `app` in the line of its counter, leaf and reason, at `order` (its place in
        the leaf's order): a new application that an application count holds back
        (`app.wait`), or one that a queue's maximum holds back (`counter` is the room for its
        size there). When `app` is a woken head held again for the line's own reason, those
        behind it wait with it, but those `held_otherwise` picks (they would now be held by
        something an attempt asks first) are woken, into `chained`."""
        if self.exhaustive or app.wait is None:
            self.park(app, (counter,))
            return
        app_id = app.application_id
        key: LineKey
        if app.wait.is_queue_maximum:
            key = (counter, app.queue_path, None, None)
        else:
            # a queue's count holds every new application alike, whoever its user
            user = None if app.wait.is_queue_count else app.user
            key = (counter, app.queue_path, app.wait, user)
        self._ready[app.queue_path].pop(app_id, None)
        self._parkings += 1
        stamp = self._parkings_made = self._parkings_made + 1
        self._in_line[app_id] = (key, stamp)
        self._screened[app_id] = self._moves
        lines = self._lines.setdefault(counter, {})
        line = lines.setdefault(key, [])
        heapq.heappush(line, (order, stamp, app))
        if self._head_of.get(app_id) == key:
            # a woken head held for the line's own reason: whoever is behind it would be
            # refused alike, so they wait with it again
            del self._head_of[app_id]
            behind = self._behind.pop(key, [])
            if held_otherwise is not None:
                self._keep_alike(key, behind, held_otherwise)
            lines[key] = _merged(line, behind)
        self._parked_now(app)

    def _keep_alike(self, key: LineKey, line: list[LineEntry],
                    held_otherwise: Callable[[Application], bool]) -> None:
        """Wake the entries of `line` that `held_otherwise` picks, into `chained` in the
        line's order (their entries in `line` go stale; the rest keep their places). Only
        the entries whose user's counts or turns moved since they were last known not held
        are asked about (`recheck_user`): nothing else can hold them now. Their queues'
        counts cannot, since the head, in the same leaf, was just held by the maximum, after
        those counts."""
        moved, user_moved, screened = self._all_moved, self._user_moved, self._screened
        asked = [entry for entry in line
                 if max(moved, user_moved.get(entry[2].user.user, 0))
                 > screened.get(entry[2].application_id, -1)
                 and self.still_listed(entry[2], key, entry[1])]
        for _, _, app in sorted(asked):
            if held_otherwise(app):
                self._make_ready(app)
                self.chained.append(app)
            else:
                screened[app.application_id] = self._moves

    def moved_on(self, app: Application) -> None:
        """`app`'s reason to wait changed (or it started, or went away): if it was woken at
        the head of a line, the next in line is woken too, into `chained` (only a head held
        again for the line's own reason keeps the rest waiting, see `queue_up`)."""
        app_id = app.application_id
        key = self._head_of.pop(app_id, None)
        if key is None:
            self._leave_line(app)
            return
        head = self._wake_head(key, self._behind.pop(key, []), self.passable)
        if head is not None:
            self.chained.append(head)

    def still_listed(self, app: Application, key: LineKey, stamp: int) -> bool:
        """Whether `app`'s entry in line `key` made at `stamp` still stands (it was not woken,
        placed, removed or queued elsewhere since): so for a head `skipped` in its line."""
        return self._in_line.get(app.application_id) == (key, stamp) and _still_pending(app)

    def leave_line(self, app: Application) -> None:
        """`app` leaves its line (its entry goes stale), to be parked or queued elsewhere."""
        self._in_line.pop(app.application_id, None)

    def _leave_line(self, app: Application) -> None:
        """A reason set from elsewhere (a reserved ask tried first in a cycle) makes an
        application in a line no longer alike the others: it leaves the line (its entry goes
        stale) and waits as any other, woken if its counter moved since it joined."""
        placed = self._in_line.pop(app.application_id, None)
        if placed is None:
            return
        counter = placed[0][0]
        token = next((p.blocked for p in app.asks.values() if p.blocked is not None), None)
        if token is not None and self._still_blocked(token):
            self._parked.setdefault(counter, {})[app.application_id] = app
        else:
            self._make_ready(app)

    def _sweep(self) -> None:
        """Drop parked applications that no longer wait (removed, or placed after a config
        change): a counter that never moves again would otherwise keep them forever (the
        lines and the limit-held index alike). Runs
        when the parkings since the last sweep reach twice the number kept then (amortised
        O(1), and stale entries never outnumber live ones by more than two to one)."""
        kept = 0
        for counter in list(self._parked):
            apps = self._parked[counter]
            for app_id in [k for k, a in apps.items() if not _still_pending(a)]:
                del apps[app_id]
            if apps:
                kept += len(apps)
            else:
                del self._parked[counter]
        for path in list(self._limit_held):
            held = self._limit_held[path]
            for app_id in [k for k, a in held.items() if not _still_pending(a)]:
                del held[app_id]
            if not held:
                del self._limit_held[path]
        in_line: dict[str, tuple[LineKey, int]] = {}
        for lines in [*self._lines.values(), self._behind]:
            for key in list(lines):
                line = [e for e in lines[key] if self.still_listed(e[2], key, e[1])]
                if not line:
                    del lines[key]
                    continue
                heapq.heapify(line)
                lines[key] = line
                kept += len(line)
                in_line.update((e[2].application_id, (key, e[1])) for e in line)
        self._in_line = in_line
        self._screened = {app_id: known for app_id, known in self._screened.items()
                          if app_id in in_line}
        self._lines = {counter: lines for counter, lines in self._lines.items() if lines}
        kept += self.turns.sweep()
        self._parkings = 0
        self._sweep_at = max(_MIN_SWEEP, 2 * kept)

    def screened_count(self) -> int:
        """Applications kept for the end-of-cycle screening, in every leaf (for tests)."""
        return sum(len(apps) for apps in self._active.values())

    def limit_held_count(self) -> int:
        """Applications in the limit-held index, in every leaf (for tests)."""
        return sum(len(apps) for apps in self._limit_held.values())

    def parked_count(self) -> int:
        """Parked entries (an application parked on two counters counts twice), in lines
        or behind a woken head too (stale line entries until a sweep drops them)."""
        return sum(len(apps) for apps in self._parked.values()) \
            + sum(len(line) for lines in self._lines.values() for line in lines.values()) \
            + sum(len(line) for line in self._behind.values())

    def wake(self, counter: Counter) -> None:
        apps = self._parked.pop(counter, None)
        if apps:
            for app in apps.values():
                self._make_ready(app)
        for key, line in self._lines.pop(counter, {}).items():
            self._wake_head(key, line)

    def _wake_head(self, key: LineKey, line: list[LineEntry],
                   passable: Callable[[Application], bool] | None = None) -> Application | None:
        """Wake the first of `line` still in it; the rest wait behind it (behind any head of
        the same line woken before and not tried yet: two moves before a cycle leave two
        heads and one line behind them). Heads `passable` picks stay in the line, skipped
        (`skipped`), and the one after them is woken."""
        passed: list[LineEntry] = []
        head = None
        while line:
            entry = heapq.heappop(line)
            app = entry[2]
            if not self.still_listed(app, key, entry[1]):
                continue
            if passable is not None and passable(app):
                passed.append(entry)
                self.skipped.append((app, key, entry[1]))
                continue
            head = app
            break
        for entry in passed:
            heapq.heappush(line, entry)
        if head is not None:
            self._make_ready(head)
            self._head_of[head.application_id] = key
            merged = _merged(line, self._behind.pop(key, []))
            if merged:
                self._behind[key] = merged
        elif line:  # only skipped heads are left (those behind were taken): the line waits
            lines = self._lines.setdefault(key[0], {})
            lines[key] = _merged(lines.get(key, []), line)
        return head

"""A user's alike new applications take turns: only the first of them is tried.

Alike: new applications (not started yet) of one user in one leaf whose asks are the same
(sizes, priorities, whether they may preempt), none for a given node and none of a gang.
Whatever holds the first of them back holds back the others the same way: the application
counts and resource limits of the same user and groups in the same queues, the same queue
maximums, and no node with room for the same size (nothing a later one could use is free
while the first waits, and an allocation in between only takes room away). So trying the
others places nothing the first could not; they wait untried (`Wait.is_turn`), and the next
one's turn comes when the first starts, goes away or asks otherwise.

Why: a heavy user's backlog is thousands of jobs of a few sizes. Tried one by one, each of
them changed its reason every time the user gained or lost a free slot while the nodes were
full (its `maxApplications`, then the nodes, then the count again), so a replay's cost per
job grew with the backlog. In turns, such an event costs one attempt per size.

What it changes: only the first of alike applications is offered a reservation or
preemption at the end of a cycle (a user's count admits the others no sooner), and the reason
an application shows while it waits its turn is its own; the replay charges that time to
whatever holds the first back (`quotactor.sim.models.outcomes`), so held-time reports read as
before.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from itertools import groupby
from typing import Any

from quotactor.core.identity import UserGroup
from quotactor.core.resources import Resource
from quotactor.scheduler.objects.application import Application

__all__ = ["Turns", "alike_key"]

AlikeKey = tuple[str, UserGroup, tuple[tuple[Resource, int, bool, int], ...]]
"""(queue path, user, the asks in order as runs of (size, priority, may preempt, how many))."""
Entry = tuple[tuple[Any, ...], str, Application]
"""(the application's order in its leaf, its id, the application)."""


def alike_key(app: Application) -> AlikeKey | None:
    """What makes `app` alike others, or None if it takes no turns: started, of a gang, or
    with an ask for a given node (whose fit is its own). Equal asks in a row are one run, so
    a job of many equal tasks has a key of one run."""
    if app.tracked or app.gang is not None or app.queue is None or not app.asks:
        return None
    asks = []
    for pending in app.sorted_asks():
        ask = pending.ask
        if ask.required_node is not None or ask.placeholder or ask.task_group:
            return None
        asks.append((ask.resource, ask.priority, ask.allow_preempt_other))
    runs = [(*kind, len(list(alike))) for kind, alike in groupby(asks)]
    return (app.queue_path, app.user, tuple(runs))


class Turns:
    """Alike applications in their leaf's order, per key (heaps; stale entries dropped when
    met, and by `sweep`)."""

    def __init__(self, still_pending: Callable[[Application], bool]) -> None:
        self._still_pending = still_pending
        self._lines: dict[AlikeKey, list[Entry]] = {}
        self._placed: dict[str, tuple[AlikeKey, tuple[Any, ...]]] = {}
        """Per application taking turns: its key and its order when enlisted."""
        self.dropped = 0
        """Entries gone stale since the last sweep."""

    def enlist(self, app: Application, order: tuple[Any, ...]) -> Application | None:
        """Place a new or changed `app` at `order` (its place in the leaf's order); returns
        the application whose turn came if `app` led others and asks otherwise now."""
        key = alike_key(app)
        app_id = app.application_id
        placed = self._placed.get(app_id)
        if placed == (key, order):
            return None
        woken = self.passed(app) if placed is not None else None
        if key is not None:
            self._placed[app_id] = (key, order)
            heapq.heappush(self._lines.setdefault(key, []), (order, app_id, app))
        return woken

    def ahead_of(self, app: Application) -> Application | None:
        """The first of the applications alike `app`, if that is not `app` itself."""
        placed = self._placed.get(app.application_id)
        if placed is None:
            return None
        first = self._first(placed[0])
        return None if first is None or first is app else first

    def passed(self, app: Application) -> Application | None:
        """`app` started, went away or asks otherwise now: the application whose turn has
        come, if `app` was the first and the next one waits its turn."""
        placed = self._placed.get(app.application_id)
        if placed is None:
            return None
        key = placed[0]
        if self._still_pending(app) and not app.tracked and alike_key(app) == key:
            return None
        del self._placed[app.application_id]
        self.dropped += 1
        first = self._first(key)
        if first is not None and first.wait is not None and first.wait.is_turn:
            return first
        return None

    def _first(self, key: AlikeKey) -> Application | None:
        line = self._lines.get(key)
        while line:
            order, _, app = line[0]
            if self._valid(key, order, app):
                return app
            heapq.heappop(line)
        if line is not None:
            del self._lines[key]
        return None

    def _valid(self, key: AlikeKey, order: tuple[Any, ...], app: Application) -> bool:
        return self._placed.get(app.application_id) == (key, order) \
            and self._still_pending(app) and not app.tracked

    def sweep(self) -> int:
        """Drop stale entries (applications placed, removed or changed since); returns the
        number kept."""
        kept = 0
        for key in list(self._lines):
            line = [e for e in self._lines[key] if self._valid(key, e[0], e[2])]
            if line:
                heapq.heapify(line)
                self._lines[key] = line
                kept += len(line)
            else:
                del self._lines[key]
        listed = {entry[1] for line in self._lines.values() for entry in line}
        self._placed = {app_id: placed for app_id, placed in self._placed.items()
                        if app_id in listed}
        self.dropped = 0
        return kept

    def listed(self) -> int:
        """Entries kept, stale ones included (for tests)."""
        return sum(len(line) for line in self._lines.values())

"""Where usage moves: the user group manager first, then the queue hierarchy (seed 000).

Increases follow the seed's order exactly: the user's and group's usage is increased (atomic
in quotactor: refused whole or applied whole), then the queue hierarchy is checked and
updated; if a queue refuses, the user and group increase is rolled back. An application starts
counting as running with its first increase and stops with the decrease that leaves it with
nothing allocated and nothing pending (`remove_app=True`); queues count running
applications the same way, so queue and tracker never disagree on what runs.

Accounting also keeps the counters that say when a refused ask may fit again: a release by a
user, by a member of a group (of the shared `*` group: a user whose groups no limit names),
anywhere in the partition, or on the nodes. An ask refused
under a counter's value is not asked about again until that counter moves, which keeps the
number of actor round trips per cycle proportional to what changed.

The same counters index the backlog (`quotactor/scheduler/booking/backlog.py`): what a cycle looks
at follows what moved, not the number of pending applications.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

from quotactor.core.identity import WILDCARD, UserGroup
from quotactor.core.limits import LimitTable
from quotactor.core.resources import Resource
from quotactor.scheduler.booking.backlog import Backlog
from quotactor.scheduler.objects.application import Application, BlockToken
from quotactor.scheduler.objects.node import NodeSet
from quotactor.scheduler.objects.queue import Queue
from quotactor.scheduler.objects.reasons import Wait

if TYPE_CHECKING:
    from quotactor.ugm import UserGroupManager

__all__ = ["Accounting", "queue_apps_wait", "queue_max_wait"]

_EMPTY = Resource()
_MAX_ADMITTED = 65536
class Accounting:
    """Charges and refunds an application's usage against its user, group and queues."""

    def __init__(self, ugm: UserGroupManager, nodes: NodeSet, *,
                 exhaustive: bool = False) -> None:
        self.ugm = ugm
        self.nodes = nodes
        self.calls = 0
        self.releases = 0
        self._by_user: defaultdict[str, int] = defaultdict(int)
        self._by_group: defaultdict[str, int] = defaultdict(int)
        self._by_queue: defaultdict[str, int] = defaultdict(int)
        self.changed_waits: dict[str, Application] = {}
        """Applications whose reason to wait changed since a reader last took them (kept
        only once a reader asked, so a scheduler nobody reads this from keeps nothing)."""
        self.watch_waits = False
        self._admitted: dict[str, set[tuple[str, UserGroup]]] = {}
        """Per user, the (leaf, user) pairs whose application counts last admitted one more
        (see `count_wait`), under the limit table `_admitted_under`."""
        self._admitted_under: LimitTable | None = None
        self.backlog = Backlog(nodes, self.still_blocked, exhaustive=exhaustive)
        """The pending applications, indexed by what they wait on (`backlog.py`)."""

    def charge(self, app: Application, resource: Resource, *, enforce: bool = True) -> Wait | None:
        """Add `resource` to the app's user and group, then to its queues; a Wait if refused.

        With `enforce=False` (recovery) queue limits are not checked: the work already runs.
        """
        queue = app.queue
        assert queue is not None, "only a placed application can hold resources"
        newly = not app.tracked
        self.calls += 1
        decision = self.ugm.decide_increase(app.queue_path, app.application_id, resource,
                                            app.user)
        if not decision.ok:
            if newly:
                self._count_rose(app)  # refused: perhaps for a count raised elsewhere
            if not enforce:
                raise RuntimeError(f"recovery increase refused: {decision.refusal}")
            assert decision.refusal is not None  # a refused Decision always says why
            return Wait.from_refusal(decision.refusal, "")
        if enforce:
            wait = _queue_refusal(app, resource, newly)
            if wait is not None:
                self.calls += 1
                self.ugm.decrease_tracked_resource(app.queue_path, app.application_id, resource,
                                                   app.user, remove_app=newly)
                return wait
        queue.add_allocated(resource)
        if newly:
            queue.start_app(app.application_id)
            app.tracked = True
            self._count_rose(app)
        return None

    def refund(self, app: Application, resource: Resource, remove_app: bool) -> None:
        """Take `resource` back from user, group and queues; `remove_app` ends the app there."""
        queue = app.queue
        assert queue is not None, "only a placed application can hold resources"
        if resource or (remove_app and app.tracked):
            self.calls += 1
            self.ugm.decrease_tracked_resource(app.queue_path, app.application_id, resource,
                                               app.user, remove_app=remove_app)
        if resource:
            queue.add_allocated(-resource)
        if remove_app and app.tracked:
            queue.end_app(app.application_id)
            app.tracked = False
        self._released(app)

    def count_wait(self, app: Application) -> Wait | None:
        """The user's or group's `maxApplications` that a new `app` would break, if any (a
        read of the user group manager: YuniKorn's `CanRunApp`, with its reason).

        An admission is remembered per leaf and user until a count it read can have risen:
        a new application of that user started (of anyone, when it counts for a group a
        limit counts the applications of: a group, the shared `*` one too, spans users), or
        the limits changed.
        Counts only rise at such a start, so until then the answer is the same; the
        increase itself still enforces the count, so even a count raised behind this
        partition's back (a host's own call to the user group manager) is never broken."""
        if self.known_to_admit(app):
            return None
        table = self.ugm.limit_table
        if table is not self._admitted_under:
            self._admitted.clear()
            self._admitted_under = table
            self.backlog.recheck_user(None)
        user = app.user
        key = (app.queue_path, user)
        self.calls += 1
        refusal = self.ugm.app_refusal(app.queue_path, app.application_id, user)
        if refusal is not None:
            return Wait.from_refusal(refusal, "")
        admitted = self._admitted.get(user.user)
        if admitted is None:
            if len(self._admitted) >= _MAX_ADMITTED:
                self._admitted.clear()  # a live scheduler may see ever new users
            admitted = self._admitted[user.user] = set()
        admitted.add(key)
        return None

    def known_to_admit(self, app: Application) -> bool:
        """Whether the user's and group's `maxApplications` admit a new `app` by what
        `count_wait` remembers, without asking the user group manager."""
        table = self.ugm.limit_table
        if not table.counts_applications:
            return True
        admitted = self._admitted.get(app.user.user)
        return table is self._admitted_under and admitted is not None \
            and (app.queue_path, app.user) in admitted

    def _count_rose(self, app: Application) -> None:
        """`app` now counts as running: forget the admissions its counts may no longer give
        (its user's; everybody's when the group it counts for has a limit on applications,
        since a group spans users), and have the backlog screen again the new applications
        those counts may now hold (`Backlog.recheck_user`)."""
        table = self.ugm.limit_table
        counted = table.application_count_groups
        if counted and app.queue is not None and app.user.groups \
                and self._group_of(app, app.queue) in counted:
            self._admitted.clear()
            self.backlog.recheck_user(None)
        else:
            self._admitted.pop(app.user.user, None)
            self.backlog.recheck_user(app.user.user)

    def _group_of(self, app: Application, leaf: Queue) -> str | None:
        """The group `app` counts for in `leaf`, its queue, as the user group manager resolves
        it (`LimitTable.resolve_group`)."""
        levels = [queue.path for queue in leaf.lineage()]
        return self.ugm.limit_table.resolve_group(levels, app.user.groups)

    def untrack(self, app: Application) -> None:
        """End an application that counts as running but holds nothing (its asks went away)."""
        if app.tracked and app.idle:
            self.refund(app, _EMPTY, remove_app=True)

    def _released(self, app: Application) -> None:
        self.releases += 1
        self._by_user[app.user.user] += 1
        for group in app.user.groups:
            self._by_group[group] += 1
        shared = False
        if app.queue is not None:
            for queue in app.queue.lineage():
                self._by_queue[queue.path] += 1
            if app.user.groups and WILDCARD not in app.user.groups:
                # a user whose groups no limit names counts in the shared `*` group
                shared = self._group_of(app, app.queue) == WILDCARD
        if shared:
            self._by_group[WILDCARD] += 1
        self.backlog.released(app)
        if shared:
            self.backlog.wake(("group", WILDCARD))

    # -- when to ask again ---------------------------------------------------------------

    def token(self, wait: Wait) -> BlockToken:
        """The counter whose next move may lift `wait`, with its current value."""
        if wait.kind == "user":
            return ("user", wait.name, self._by_user[wait.name])
        if wait.kind == "group":
            return ("group", wait.name, self._by_group[wait.name])
        if wait.kind == "node":
            return ("node", "", self.nodes.epoch)
        if wait.kind == "queue":
            return ("queue", wait.name or wait.queue_path, self._by_queue[wait.name or
                                                                    wait.queue_path])
        return ("any", "", self.releases)

    def still_blocked(self, token: BlockToken) -> bool:
        source, key, value = token
        if source == "user":
            return self._by_user[key] == value
        if source == "group":
            return self._by_group[key] == value
        if source == "node":
            return self.nodes.epoch == value
        if source == "queue":
            return self._by_queue[key] == value
        return self.releases == value


def _queue_refusal(app: Application, resource: Resource, newly: bool) -> Wait | None:
    queue = app.queue
    assert queue is not None
    if newly:
        full = queue.full_of_apps(app.application_id)
        if full is not None:
            return queue_apps_wait(full)
    over = queue.over_max(resource)
    return None if over is None else queue_max_wait(over, resource)


def queue_apps_wait(queue: Queue) -> Wait:
    """The Wait for a new application that `queue`'s `maxapplications` cannot take."""
    return Wait("queue", queue.path, queue.path, "applications",
                f"{len(queue.running)} running applications, maxapplications"
                f" {queue.max_applications}")


def queue_max_wait(queue: Queue, resource: Resource) -> Wait:
    """The Wait for an ask that `queue`'s `resources.max` cannot take."""
    limit = queue.max_resources or _EMPTY
    names = (queue.allocated + resource).exceeded_names(limit)
    detail = ", ".join(
        f"{n} allocated {queue.allocated.get(n, 0)} + {resource.get(n, 0)} above max {limit[n]}"
        for n in names
    )
    return Wait("queue", queue.path, queue.path, "resources", detail)

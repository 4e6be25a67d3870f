"""User and group tracker state: one queue tree each, plus the application links.

A user tracker remembers, per running application, the group the application counts for (or
that it counts for no group): the link is set by the first increase that is applied and stays
until the application is removed, so a later config change cannot move usage between groups.
A group tracker keys its applications by id and user (`AppKey`), as YuniKorn's user trackers
do theirs: two members running applications with the same id are two applications of the
group, each removed by its own user, so a group's usage is always the sum of its members'.

Every change is atomic: it either completes or, when any step raises, is undone whole before
the exception leaves (see `Journal`). A caller that needs to keep a change revocable a little
longer (a user tracker waiting for its group) passes a journal of its own and rolls it back.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final, Literal

from quotactor.core.decision import ACCEPTED, Decision
from quotactor.core.journal import Journal
from quotactor.core.limits import Limit, LimitTable
from quotactor.core.queue_path import ROOT, ancestors
from quotactor.core.queue_tracker import AppKey, QueueNode, Refusal, positive
from quotactor.core.resources import Resource

__all__ = [
    "APPLIED", "FAILED", "GROUP_UNTRACKED", "REFUSED", "UNTRACKED", "GroupTrackerState", "Link",
    "TrackerState", "UserTrackerState", "apply_both", "check_both", "decide_held",
    "decrease_both", "increase_both",
    "new_state", "settle_link",
]


class TrackerState:
    """What user and group trackers share: a name, a queue tree, and its emptiness; and the
    counts the actors' lazy retirement reads (see `quotactor.actors.manager`): `routed`, the
    operations routed to the tracker (written by the manager's route only), `handled`, those
    it has handled, and `idle_at`, the `handled` count at which a routed operation last left
    it empty with nothing else routed to it (both written only by the thread holding the
    tracker's claim). Plain counts kept here, on the state the compiled route and the
    compiled batch decisions already hold, so that they update them without reaching for an
    actor. `mark` is the route's: the stamp of the last route that named the tracker (each
    route lists the trackers it names once, without a set); `tracker` is the actor whose
    state this is while the manager lists it (None otherwise: set and cleared by the manager,
    so that the route finds tracker and state in one lookup, and an unlisted tracker and its
    state hold no cycle for the collector to free)."""

    __slots__ = ("handled", "idle_at", "mark", "name", "root", "routed", "tracker")

    kind: ClassVar[Literal["user", "group"]]

    def __init__(self, name: str) -> None:
        self.name = name
        self.root = QueueNode(ROOT)
        self.routed = 0
        self.handled = 0
        self.idle_at = -1
        self.mark = -1
        self.tracker: object = None

    def is_empty(self) -> bool:
        """No usage and no running application: the tracker can be retired."""
        return self.root.is_empty()

    def limit_lookup(self, table: LimitTable) -> Any:
        raise NotImplementedError

    def _check(
        self, table: LimitTable, parts: tuple[str, ...], key: AppKey, usage: Resource,
        paths: list[str] | None, added: dict[str, int] | None,
    ) -> Refusal | None:
        return self.root.check_increase(
            parts, ancestors(parts) if paths is None else paths, key, usage, table, self.kind,
            self.name, added,
        )

    def headroom(self, table: LimitTable, parts: tuple[str, ...]) -> dict[str, int] | None:
        return self.root.headroom(parts, ancestors(parts), self.limit_lookup(table))

    def _app_refusal(
        self, table: LimitTable, parts: tuple[str, ...], key: AppKey
    ) -> Refusal | None:
        return self.root.app_refusal(parts, ancestors(parts), key, self.limit_lookup(table),
                                     self.kind, self.name)


class Link:
    """An application's group link, as the manager's route keeps it (`UserTrackerState.links`):
    the group its items count for (None: no group), fixed when the link is made, and its two
    counts: `routed`, the items of the application routed while the link was there (written
    by the route only, under the user state's `links_lock`), and `handled`, those of them the
    user's tracker has handled (written only by the thread holding its claim). Each routed
    item carries its link, so that its handler counts it (invariant 13 of
    docs/concurrency.md)."""

    __slots__ = ("group", "handled", "routed")

    def __init__(self, group: str | None) -> None:
        self.group = group
        self.routed = 0
        self.handled = 0


class UserTrackerState(TrackerState):
    """A user's usage tree and the group link of each of its applications.

    `links` is the manager's, like `routed`: each application's `Link` (the group its items
    count for), set when the route (or a known call's start) links it (before the tracker
    applies its start, so that a later item finds it), and dropped by the tracker's holder
    once the tracker does not run the application and every item routed for it is handled
    (`settle_link`); None until the first and once the manager forgets them (see
    `quotactor.actors.manager`). Kept here, where the route already looks, not in a
    dictionary of its own: one lookup less per routed item. `links_lock` guards `links` and
    the links' `routed` counts: the manager's views lock, which the route holds (None for a
    state nothing is routed to)."""

    __slots__ = ("app_groups", "app_paths", "links", "links_lock")

    kind = "user"

    def __init__(self, name: str, links_lock: Any = None) -> None:
        super().__init__(name)
        self.app_groups: dict[str, str | None] = {}
        self.app_paths: dict[str, set[tuple[str, ...]]] = {}
        self.links: dict[str, Link] | None = None
        self.links_lock = links_lock

    def limit_lookup(self, table: LimitTable) -> Any:
        name = self.name

        def limit_at(path: str) -> Limit | None:
            return table.user_limit(path, name)

        return limit_at

    def is_empty(self) -> bool:
        return self.root.is_empty() and not self.app_groups

    def check_increase(
        self, table: LimitTable, parts: tuple[str, ...], app: str, usage: Resource,
        paths: list[str] | None = None, added: dict[str, int] | None = None,
    ) -> Refusal | None:
        """The first limit this increase would break, or None; `paths` (`ancestors(parts)`)
        and `added` (`positive(usage)`) when the caller has them already."""
        return self._check(table, parts, app, usage, paths, added)

    def app_refusal(self, table: LimitTable, parts: tuple[str, ...], app: str) -> Refusal | None:
        """The first `maxApplications` a new application would break; None if `app` runs."""
        return self._app_refusal(table, parts, app)

    def group_of(self, app: str) -> tuple[bool, str | None]:
        """(linked, group): whether the app has a link, and its group (None: no group)."""
        if app in self.app_groups:
            return True, self.app_groups[app]
        return False, None

    def increase(
        self, parts: tuple[str, ...], app: str, usage: Resource, group: str | None,
        journal: Journal | None = None,
    ) -> None:
        _increase(self.root, self.app_groups, self.app_paths, parts, app, usage, group, journal)

    def decrease(
        self, parts: tuple[str, ...], app: str, usage: Resource, remove_app: bool,
        journal: Journal | None = None,
    ) -> bool:
        """Apply a decrease for a known app on a tracked path; False (no change) otherwise."""
        return _decrease(self.root, self.app_groups, self.app_paths, parts, app, usage,
                         remove_app, journal)

    def snapshot(self, table: LimitTable) -> dict[str, Any]:
        out: dict[str, Any] = {"userName": self.name}
        groups = {app: g for app, g in sorted(self.app_groups.items()) if g is not None}
        if groups:
            out["groups"] = groups
        out["queues"] = self.root.render(
            self.limit_lookup(table), table.user_limit_paths(self.name)
        )
        return out


class GroupTrackerState(TrackerState):
    """A group's usage tree and its members' applications, each keyed (id, user)."""

    __slots__ = ("app_paths", "applications")

    kind = "group"

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.applications: dict[tuple[str, str], str] = {}
        self.app_paths: dict[tuple[str, str], set[tuple[str, ...]]] = {}

    def limit_lookup(self, table: LimitTable) -> Any:
        name = self.name

        def limit_at(path: str) -> Limit | None:
            return table.group_limit(path, name)

        return limit_at

    def is_empty(self) -> bool:
        return self.root.is_empty() and not self.applications

    def check_increase(
        self, table: LimitTable, parts: tuple[str, ...], app: str, user: str, usage: Resource,
        paths: list[str] | None = None, added: dict[str, int] | None = None,
    ) -> Refusal | None:
        """The first limit `user`'s increase of `app` would break, or None (as the user's)."""
        return self._check(table, parts, (app, user), usage, paths, added)

    def app_refusal(
        self, table: LimitTable, parts: tuple[str, ...], app: str, user: str
    ) -> Refusal | None:
        """The first `maxApplications` a new application would break; None if `user` runs
        `app` here already (another member's application with that id is another one)."""
        return self._app_refusal(table, parts, (app, user))

    def increase(
        self, parts: tuple[str, ...], app: str, usage: Resource, user: str,
        journal: Journal | None = None,
    ) -> None:
        _increase(self.root, self.applications, self.app_paths, parts, (app, user), usage, user,
                  journal)

    def decrease(
        self, parts: tuple[str, ...], app: str, usage: Resource, remove_app: bool, user: str,
        journal: Journal | None = None,
    ) -> bool:
        """Apply a decrease of `user`'s application on a tracked path; False (no change) when
        the group does not track that application or path."""
        return _decrease(self.root, self.applications, self.app_paths, parts, (app, user), usage,
                         remove_app, journal)

    def snapshot(self, table: LimitTable) -> dict[str, Any]:
        """The REST shape; `applications` lists an id once per member running it."""
        out: dict[str, Any] = {"groupName": self.name}
        if self.applications:
            out["applications"] = sorted(key[0] for key in self.applications)
        out["queues"] = self.root.render(
            self.limit_lookup(table), table.group_limit_paths(self.name)
        )
        return out


def increase_both(
    user: UserTrackerState, group: GroupTrackerState | None, table: LimitTable,
    parts: tuple[str, ...], app: str, usage: Resource, group_name: str | None,
) -> Refusal | None:
    """An increase of a user and of the group its application counts for (None: no group),
    both held by the caller: refused by the first limit it meets (user side first), else
    applied to both, or to neither if a step raises (the group's failure undoes the user's).

    What a user tracker asking its group comes to when one thread holds both (a batch, see
    `quotactor.actors.batch`); here, compiled with the rest of the core, for its cost.
    """
    refusal = check_both(user, group, table, parts, app, usage)
    if refusal is None:
        apply_both(user, group, parts, app, usage, group_name)
    return refusal


def check_both(
    user: UserTrackerState, group: GroupTrackerState | None, table: LimitTable,
    parts: tuple[str, ...], app: str, usage: Resource,
) -> Refusal | None:
    """The first limit an increase of a user and of its application's group (None: no
    group) would break, user side first, or None; nothing changes."""
    paths = ancestors(parts)
    added = positive(usage)  # both sides check the same quantities on the same paths
    refusal = user.check_increase(table, parts, app, usage, paths, added)
    if refusal is not None or group is None:
        return refusal
    return group.check_increase(table, parts, app, user.name, usage, paths, added)


def apply_both(
    user: UserTrackerState, group: GroupTrackerState | None, parts: tuple[str, ...],
    app: str, usage: Resource, group_name: str | None,
) -> None:
    """Apply an increase `check_both` accepted to the user and to the group (None: no
    group), both held by the caller: to both, or to neither if a step raises."""
    if group is None:
        user.increase(parts, app, usage, group_name)
        return
    journal = Journal()
    try:
        user.increase(parts, app, usage, group_name, journal)
        group.increase(parts, app, usage, user.name)
    except BaseException:
        journal.rollback()
        raise


UNTRACKED: Final = 0
"""`decrease_both`'s outcome when nothing changed (the user does not track the app or path)."""
APPLIED: Final = 1
"""... when the decrease was applied to the user and to the group (if any)."""
GROUP_UNTRACKED: Final = 2
"""... when it was applied to the user, whose group did not track it (a warning, no error)."""


def decrease_both(
    user: UserTrackerState, group: GroupTrackerState | None, parts: tuple[str, ...],
    app: str, usage: Resource, remove_app: bool,
) -> int:
    """A decrease of a user and of its application's group (None: no group), both held by the
    caller: applied to both or, if a step raises, to neither; the outcome (see `APPLIED`)."""
    if group is None:
        return APPLIED if user.decrease(parts, app, usage, remove_app) else UNTRACKED
    journal = Journal()
    try:
        if not user.decrease(parts, app, usage, remove_app, journal):
            return UNTRACKED
        return (APPLIED if group.decrease(parts, app, usage, remove_app, user.name)
                else GROUP_UNTRACKED)
    except BaseException:
        journal.rollback()
        raise


REFUSED: Final = 3
"""`decide_held`'s note for an increase refused by a limit (its `Refusal` beside it)."""
FAILED: Final = 4
"""... for an item whose step raised (nothing of it changed; the exception beside it)."""


def decide_held(
    items: list[tuple[Any, ...]], increase: type, results: list[Any], idle: set[Any]
) -> list[tuple[int, int, Any]]:
    """Decide a batch's held items in order, each by `increase_both` or `decrease_both`,
    writing each increase's `Decision` at its position in `results`; a note (index in
    `items`, kind, detail) for each item that is not simply applied: `REFUSED` (the
    `Refusal`), `UNTRACKED` or `GROUP_UNTRACKED` (a decrease that changed nothing or nothing
    of the group's) and `FAILED` (the exception: each item is atomic, so a failed one changed
    nothing, and the next ones are still decided).

    `items` are messages: one of type `increase` is laid out (position, parts, app, usage,
    group name, group tracker, table, user state, group state, user tracker, link), any other
    (position, parts, app, usage, -, group tracker, remove_app, user state, group state, user
    tracker, link), the group's fields None for no group: the routed messages of
    `quotactor.actors.messages`, whose user and group trackers the caller holds. The trackers
    are opaque here: counted (`handled`, on their states and the items' links) as each item
    is decided; the links of applications the trackers no longer run are settled
    (`settle_link`), and the trackers left idle (empty, every routed operation handled) are
    recorded (`idle_at`) and added to `idle`, as their handlers would. One compiled loop for
    the whole batch.
    """
    notes: list[tuple[int, int, Any]] = []
    linked: list[tuple[Any, ...]] = []
    index = -1
    for msg in items:
        index += 1
        user: UserTrackerState = msg[7]
        group: GroupTrackerState | None = msg[8]
        try:
            if type(msg) is increase:
                refusal = increase_both(user, group, msg[6], msg[1], msg[2], msg[3], msg[4])
                if refusal is None:
                    results[msg[0]] = ACCEPTED
                else:
                    results[msg[0]] = Decision(False, refusal)
                    notes.append((index, REFUSED, refusal))
            else:
                outcome = decrease_both(user, group, msg[1], msg[2], msg[3], msg[6])
                if outcome != APPLIED:
                    notes.append((index, outcome, None))
        except Exception as exc:  # nothing of the item changed
            notes.append((index, FAILED, exc))
        user.handled += 1
        if group is not None:
            group.handled += 1
        link: Link | None = msg[10]
        if link is not None:
            link.handled += 1
            linked.append(msg)
    for msg in linked:  # after every item: a later one may have started the application again
        settle_link(msg[7], msg[2], msg[10])
    for msg in items:  # after every item: a tracker is idle only once all its items are
        user = msg[7]
        handled = user.handled
        if user.idle_at != handled and user.routed == handled and user.is_empty():
            user.idle_at = handled
            idle.add(msg[9])
        group = msg[8]
        if group is not None:
            handled = group.handled
            if group.idle_at != handled and group.routed == handled and group.is_empty():
                group.idle_at = handled
                idle.add(msg[5])
    return notes


def settle_link(state: UserTrackerState, app: str, link: Link) -> None:
    """Drop `app`'s link if the user's tracker does not run `app` and every item routed for it
    is handled (`link.routed == link.handled`): then no item in flight counts for its group,
    and the next start of `app` chooses its group afresh, as a new application's. Run by the
    thread holding the tracker's claim, after it counted its items of `app` handled; the
    counts it compares and the links are read and changed under `links_lock` (invariant 13
    of docs/concurrency.md). A step that fails (the id's hash) leaves the link, for the next
    item of `app` handled to settle, or for the manager to forget with the idle tracker: the
    item's own outcome stands."""
    try:
        if app in state.app_groups:
            return
        with state.links_lock:
            if link.routed == link.handled:
                links = state.links
                if links is not None and links.get(app) is link:
                    del links[app]
    except Exception:  # the link stays (see above)
        pass


def _increase(
    root: QueueNode, links: dict[Any, Any], app_paths: dict[Any, set[tuple[str, ...]]],
    parts: tuple[str, ...], app: AppKey, usage: Resource, link: str | None,
    journal: Journal | None,
) -> None:
    """One increase of a user or a group tracker (`links`: app -> its group, or its user),
    undone whole if a step raises, unless the caller keeps it open in its own `journal`."""
    undo = Journal() if journal is None else journal
    try:
        if app not in links:
            undo.store(links, app, link)
        _link_path(app_paths, app, parts, undo)
        root.increase(parts, app, usage, undo)
    except BaseException:
        if journal is None:
            undo.rollback()
        raise


def _decrease(
    root: QueueNode, links: dict[Any, Any], app_paths: dict[Any, set[tuple[str, ...]]],
    parts: tuple[str, ...], app: AppKey, usage: Resource, remove_app: bool,
    journal: Journal | None,
) -> bool:
    """One decrease of a user or a group tracker, atomic as `_increase`; False when the
    app or the path is not tracked (nothing changed)."""
    if app not in links:
        return False
    undo = Journal() if journal is None else journal
    try:
        if not root.decrease(parts, app, usage, remove_app, undo):
            return False
        if remove_app:
            undo.pop(links, app)
            _unlink_app(root, app_paths, app, parts, undo)
    except BaseException:
        if journal is None:
            undo.rollback()
        raise
    return True


def _link_path(
    app_paths: dict[Any, set[tuple[str, ...]]], app: AppKey, parts: tuple[str, ...],
    journal: Journal,
) -> None:
    paths = app_paths.get(app)
    if paths is None:
        journal.store(app_paths, app, {parts})
    else:
        journal.add(paths, parts)


def _unlink_app(
    root: QueueNode, app_paths: dict[Any, set[tuple[str, ...]]], app: AppKey,
    done: tuple[str, ...], journal: Journal,
) -> None:
    """Forget `app` on every path it ran on but `done`, which the removing decrease has
    already cleared (and pruned)."""
    for path in journal.pop(app_paths, app):
        if path != done:
            root.remove_app(path, app, journal)


def new_state(kind: str, name: str) -> UserTrackerState | GroupTrackerState:
    """An empty tracker state: how a user or group without a live tracker (untracked, or only
    named by the config) is judged and shown."""
    return UserTrackerState(name) if kind == "user" else GroupTrackerState(name)


def count_answers(results: list[Any]) -> tuple[int, int, list[Any]]:
    """A batch's answers counted for its metrics: (decreases, accepted increases, the other
    increases' `Decision`s, refusals mostly). A decrease's answer is None, an accepted
    increase's most often the shared `ACCEPTED`: one compiled loop of identity tests (a
    `Decision`'s own `==` is interpreted, so it is not used here)."""
    decreases = accepted = 0
    others: list[Any] = []
    for result in results:
        if result is None:
            decreases += 1
        elif result is ACCEPTED:
            accepted += 1
        else:
            others.append(result)
    return decreases, accepted, others

"""Usage over virtual time per user, group and queue, as step functions.

The replay reports every allocation and release; each changes the usage of the job's user,
its group and its queue, and the number of their running jobs (a job runs, for the trackers,
from its first allocation to its release). One point is kept per series and timestamp (the
last value wins), so a job whose hundred tasks start in one cycle adds one point, not a
hundred.

Given the node classes of a cluster whose nodes differ, the timeline also keeps usage per
node class (kind `nodeclass`), from the allocations the replay reports per node.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping, MutableSequence
from dataclasses import dataclass
from typing import Literal

from quotactor.core.resources import Resource

__all__ = ["CLUSTER", "Series", "SeriesKind", "UsageTimeline", "accumulated", "combined"]

SeriesKind = Literal["user", "group", "queue", "cluster", "nodeclass"]
CLUSTER = "cluster"


@dataclass(frozen=True, slots=True)
class Series:
    """A step function: usage `values[i]` and `running[i]` jobs hold from `times[i]` until
    `times[i + 1]`."""

    kind: SeriesKind
    name: str
    times: tuple[float, ...]
    values: tuple[Resource, ...]
    running: tuple[int, ...]

    def peak(self) -> Resource:
        top = Resource()
        for value in self.values:
            top = top.component_max(value)
        return top

    def peak_running(self) -> int:
        return max(self.running, default=0)

    def integral(self, name: str, until: float) -> float:
        """Quantity-seconds of resource `name` from the first point up to `until`."""
        total = 0.0
        for i, value in enumerate(self.values):
            end = self.times[i + 1] if i + 1 < len(self.times) else until
            total += value.get(name, 0) * max(0.0, end - self.times[i])
        return total


def combined(kind: SeriesKind, name: str, parts: Iterable[Series]) -> Series:
    """The sum of step functions `parts` (usage and running jobs) as one series, with a
    point wherever any part changes."""
    changes: dict[float, tuple[Resource, int]] = {}
    for part in parts:
        before, running = Resource(), 0
        for when, value, count in zip(part.times, part.values, part.running, strict=True):
            delta, apps = changes.get(when, (Resource(), 0))
            changes[when] = (delta + (value - before), apps + count - running)
            before, running = value, count
    return accumulated(kind, name, changes)


def accumulated(kind: SeriesKind, name: str,
                changes: Mapping[float, tuple[Resource, int]]) -> Series:
    """The step function that starts at zero and changes by `changes[t]` (usage, running
    jobs) at each time t."""
    current, apps = Resource(), 0
    times: list[float] = []
    values: list[Resource] = []
    counts: list[int] = []
    for when in sorted(changes):
        delta, more = changes[when]
        current, apps = current + delta, apps + more
        times.append(when)
        values.append(current)
        counts.append(apps)
    if not times:
        return Series(kind, name, (0.0,), (Resource(),), (0,))
    return Series(kind, name, tuple(times), tuple(values), tuple(counts))


class _Track:
    """One series as it is built, in columns: the times, the running jobs and, per resource
    named so far, its quantity at each point, as arrays of machine numbers. A long replay's
    history then costs some bytes per point and no object at all, so neither the garbage
    collector nor the allocator's pools of small objects carry it (`series` makes `Resource`s
    once). A quantity beyond a 64-bit integer turns its column into a list."""

    __slots__ = ("apps", "columns", "current", "running", "times")

    def __init__(self) -> None:
        self.current = Resource()
        self.apps = 0
        self.times = array("d")
        self.running = array("q")
        self.columns: dict[str, MutableSequence[int]] = {}

    def add(self, now: float, delta: Resource, apps: int) -> None:
        current = self.current = self.current + delta
        self.apps += apps
        times, columns = self.times, self.columns
        for name in current:
            if name not in columns:  # named now: nothing of it held before
                columns[name] = array("q", bytes(8 * len(times)))
        if times and times[-1] == now:  # one point per timestamp: the last value wins
            self.running[-1] = self.apps
            for column in columns.values():
                del column[-1]
        else:
            times.append(now)
            self.running.append(self.apps)
        for name, column in columns.items():  # replacing a column keeps the dict's size
            _append(columns, name, column, current.get(name, 0))

    def series(self, kind: SeriesKind, name: str) -> Series:
        columns = list(self.columns.items())
        values = tuple(Resource({resource: column[i] for resource, column in columns
                                 if column[i]}) for i in range(len(self.times)))
        return Series(kind, name, tuple(self.times), values, tuple(self.running))


def _append(columns: dict[str, MutableSequence[int]], name: str,
            column: MutableSequence[int], quantity: int) -> None:
    try:
        column.append(quantity)
    except OverflowError:
        columns[name] = [*column, quantity]


class UsageTimeline:
    """Current and historical usage of every user, group and queue a replay touched."""

    def __init__(self, node_class: Mapping[str, str] | None = None) -> None:
        """`node_class` maps node ids to class names: usage per class is kept only when
        it is given (and not empty)."""
        self._tracks: dict[tuple[SeriesKind, str], _Track] = {}
        self._node_class = dict(node_class or {})
        self._on_nodes: dict[str, dict[tuple[str, bool], Resource]] = {}
        """Per application, what it holds per (node, placeholder or not)."""

    @property
    def tracks_nodes(self) -> bool:
        """Whether allocations per node are recorded (the timeline was given classes)."""
        return bool(self._node_class)

    def on_node(self, now: float, app_id: str, node_id: str, delta: Resource, *,
                placeholder: bool = False) -> None:
        """`app_id` holds `delta` more on `node_id` from `now` on (less, where negative: a
        release), as a placeholder or as real work; recorded for the node's class, and
        nothing at all when no classes were given."""
        if not self._node_class:
            return
        held = self._on_nodes.setdefault(app_id, {})
        where = (node_id, placeholder)
        left = held.get(where, Resource()) + delta
        if left:
            held[where] = left
        else:
            held.pop(where, None)
            if not held:
                del self._on_nodes[app_id]
        self._track("nodeclass", self._node_class.get(node_id, node_id)).add(now, delta, 0)

    def off_nodes(self, now: float, app_id: str, *, placeholders_only: bool = False) -> None:
        """Everything `app_id` still holds on nodes (only its placeholders, when
        `placeholders_only`) is released at `now`."""
        held = self._on_nodes.get(app_id, {})
        for where in [w for w in held if w[1] or not placeholders_only]:
            self._track("nodeclass", self._node_class.get(where[0], where[0])).add(
                now, -held.pop(where), 0)
        if not held:
            self._on_nodes.pop(app_id, None)

    def change(self, now: float, user: str, group: str | None, queue: str,
               delta: Resource, apps: int = 0) -> None:
        """Apply `delta` (negative for a release) and `apps` (+1 when a job starts holding,
        -1 when it lets go) to the user, the group, the queue and the cluster total."""
        self._track("cluster", CLUSTER).add(now, delta, apps)
        self._track("user", user).add(now, delta, apps)
        if group is not None:
            self._track("group", group).add(now, delta, apps)
        if queue:
            self._track("queue", queue).add(now, delta, apps)

    def _track(self, kind: SeriesKind, name: str) -> _Track:
        track = self._tracks.get((kind, name))
        if track is None:
            track = self._tracks[(kind, name)] = _Track()
        return track

    def leftover(self) -> dict[str, Resource]:
        """Usage and running jobs still counted, as `timeline:KIND:NAME` (empty once every
        job ended): the timeline's part of a replay's books."""
        return {f"timeline:{kind}:{name}": track.current + Resource({"runningJobs": track.apps})
                for (kind, name), track in self._tracks.items()
                if track.current or track.apps}

    def total(self) -> Series:
        """The whole cluster's usage."""
        return self.series("cluster").get(CLUSTER) or Series("cluster", CLUSTER, (0.0,),
                                                              (Resource(),), (0,))

    def series(self, kind: SeriesKind) -> dict[str, Series]:
        return {name: track.series(k, name)
                for (k, name), track in sorted(self._tracks.items()) if k == kind}

"""Usage over virtual time per user, group and queue, as step functions.

The replay reports every allocation and release; each changes the usage of the job's user,
its group and its queue, and the number of their running jobs (a job runs, for the trackers,
from its first allocation to its release). One point is kept per series and timestamp (the
last value wins), so a job whose hundred tasks start in one cycle adds one point, not a
hundred.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from quotactor.core.resources import Resource

__all__ = ["CLUSTER", "Series", "SeriesKind", "UsageTimeline"]

SeriesKind = Literal["user", "group", "queue", "cluster"]
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


class _Track:
    __slots__ = ("apps", "current", "running", "times", "values")

    def __init__(self) -> None:
        self.current = Resource()
        self.apps = 0
        self.times: list[float] = []
        self.values: list[Resource] = []
        self.running: list[int] = []

    def add(self, now: float, delta: Resource, apps: int) -> None:
        self.current = self.current + delta
        self.apps += apps
        if self.times and self.times[-1] == now:
            self.values[-1] = self.current
            self.running[-1] = self.apps
        else:
            self.times.append(now)
            self.values.append(self.current)
            self.running.append(self.apps)


class UsageTimeline:
    """Current and historical usage of every user, group and queue a replay touched."""

    def __init__(self) -> None:
        self._tracks: dict[tuple[SeriesKind, str], _Track] = {}

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
        return {name: Series(k, name, tuple(t.times), tuple(t.values), tuple(t.running))
                for (k, name), t in sorted(self._tracks.items()) if k == kind}

"""Blame by counterfactual: a wait is charged to a limit only while lifting it would let the
job start.

The scheduler names the first obstacle it meets for a job, in its own order of checks (a
queue's maximum before the nodes, say). That answers "what did the scheduler check first",
not "what held the job back": with a queue whose maximum equals the cluster, every wait for a
full machine would be charged to the queue, and a planner would raise that limit for nothing.
So the replay asks the counterfactual for every job a limit holds: had the limit been lifted,
could the job have started now, i.e. do the nodes have room for all of its asks at once? If
not, the time is charged to the cluster (`node`, "full nodes"); if so, to the limit, and to
every other limit that alone would hold the job too (named together, `A + B`: lifting either
alone would not start it). The answer is kept current as room comes and goes.

Jobs are grouped by the sizes of their asks. Most jobs ask several tasks of one size: for a
size, the nodes' room is asked once per scheduling cycle after which the nodes' room differs
(`room_state`; how many tasks of it they hold at once), and only the groups whose task count
lies between that figure and the one before change their answer, so a cycle costs the groups
it changes, not every group held. Jobs whose tasks differ in size are asked about one group at
a time.

Each group keeps a log of when the nodes had room for its jobs (`RoomLog`). A job that no
resources limit could ever hold (every limit on its path counts applications, or caps
resources it does not ask) is held by its own limit exactly while that log says there is room:
it is charged from the log when it is next read, so a change of room costs the group one entry
in its log, not a charge per job. Only the other jobs, whose binding limits depend on the
usage of the moment, are charged one by one.
"""

from __future__ import annotations

from bisect import bisect_right, insort
from collections.abc import Callable, Hashable, Iterator, Mapping
from typing import Any

from quotactor.core.limits import Limit
from quotactor.core.queue_path import ancestors, parse_queue_path
from quotactor.core.resources import Resource, ResourceLike, sum_of
from quotactor.scheduler import Scheduler
from quotactor.sim.models.outcomes import OutcomeRecorder, RoomLog

__all__ = ["FULL_NODES", "Counterfactual"]

FULL_NODES = "full nodes"
"""The owner a wait is charged to when the cluster has no room for the job."""
FULL = ("node", FULL_NODES)
"""What holds a job back while the nodes have no room for it, as (kind, owner)."""

Sizes = tuple[Resource, ...]

_MAX_STATES = 1024
"""How many room states `Counterfactual` remembers the room of sizes in (then it forgets)."""


class _Held:
    __slots__ = ("group", "kind", "owner", "plain", "queue", "sizes", "total", "user")

    def __init__(self, kind: str, owner: str, sizes: Sizes, total: Resource, plain: bool,
                 user: str, group: str | None, queue: str) -> None:
        self.kind = kind
        self.owner = owner
        self.sizes = sizes
        self.user = user
        self.group = group
        self.queue = queue
        self.total = total
        self.plain = plain
        """Whether no resources limit could ever hold the job along with `owner` (then it
        is charged from its size set's `RoomLog`)."""


class _SizeSet:
    """The jobs held by a limit whose asks still to place have the same sizes, and whether
    the nodes had room for those asks at the last look."""

    __slots__ = ("bound", "count", "jobs", "log", "one_size", "sizes")

    def __init__(self, sizes: Sizes, one_size: Resource | None, room: bool) -> None:
        self.sizes = sizes
        self.count = len(sizes)
        self.one_size = one_size
        """The size every ask asks, when they all ask the same (most jobs' asks are alike)."""
        self.jobs: dict[str, None] = {}
        self.bound: dict[str, None] = {}
        """The jobs (of `jobs`) that are not `plain`: charged one by one as room changes."""
        self.log = RoomLog(room, FULL)

    @property
    def room(self) -> bool:
        return self.log.room


class _Band:
    """The size sets whose asks are all of one size, by task count (the counts sorted), and
    how many asks of that size the nodes held at once at the last look."""

    __slots__ = ("counts", "room", "sets")

    def __init__(self, room: int) -> None:
        self.counts: list[int] = []
        self.sets: dict[int, _SizeSet] = {}
        self.room = room


class Counterfactual:
    """Tells the recorder what holds each limit-held job back, by the counterfactual."""

    def __init__(self, scheduler: Scheduler, partition: str, recorder: OutcomeRecorder,
                 queue_max: Callable[[str], Resource | None]) -> None:
        self._scheduler = scheduler
        self._partition = partition
        self._ugm = scheduler.ugm(partition)
        self._recorder = recorder
        self._queue_max = queue_max
        self._held: dict[str, _Held] = {}
        self._by_sizes: dict[Sizes, _SizeSet] = {}
        self._bands: dict[Resource, _Band] = {}
        """The size sets whose asks are all of one size, by that size."""
        self._mixed: dict[Sizes, _SizeSet] = {}
        """The size sets whose asks differ in size."""
        self._new: list[_SizeSet] = []
        """The size sets of one size made since the last refresh, looked at by the next
        (their answer was asked when they were made, not with their band's)."""
        self._new_bands: list[Resource] = []
        """The sizes whose band was made since the last refresh (its room was asked then)."""
        self._room_state: Hashable = None
        """The nodes' `room_state` at the last refresh: while it is the same, so is every
        band's room that was asked at a refresh."""
        self._rooms_in: dict[Hashable, dict[Resource, int]] = {}
        """Per `room_state` met, how many asks of each size asked the nodes held at once:
        the same in every moment of that state (`room_state`'s contract), and a cluster's
        room comes back to the same states again and again."""
        self._room_for: dict[Resource, int] = {}
        """How many asks of a size the nodes could take at once, asked once per cycle for all
        the jobs whose asks are all of that size."""
        self._plain_for: dict[tuple[str, str | None, str, Resource], bool] = {}
        """`_plain` per user, group, queue and total asked (the limits stay as they are)."""
        self._read: dict[tuple[str, str], dict[str, Resource]] = {}
        """Usage by queue path of users, groups (and queues, by kind "queue"), read once per
        cycle: usage only changes between cycles."""

    def held(self, job_id: str, now: float, kind: str, owner: str, sizes: Sizes, user: str,
             group: str | None, queue: str) -> None:
        """The scheduler says limit `owner` (of `kind`: user, group or queue) holds the job,
        whose asks still to place are `sizes`: charge the job by the counterfactual."""
        self.forget(job_id, now)
        total = sum_of(sizes)
        kind_of_job = (user, group, queue, total)
        plain = self._plain_for.get(kind_of_job)
        if plain is None:
            plain = self._plain_for[kind_of_job] = self._plain(*kind_of_job)
        entry = _Held(kind, owner, sizes, total, plain, user, group, queue)
        self._held[job_id] = entry
        alike = self._by_sizes.get(sizes)
        if alike is None:
            alike = self._by_sizes[sizes] = self._new_set(sizes)
        alike.jobs[job_id] = None
        if entry.plain:
            self._recorder.waiting(job_id, now, kind, owner, alike.log)
        else:
            alike.bound[job_id] = None
            self._charge(job_id, entry, now, alike.room)

    def forget(self, job_id: str, now: float) -> None:
        """The job is no longer held by a limit (it started, ended or waits for another
        reason) from `now` on."""
        entry = self._held.pop(job_id, None)
        if entry is None:
            return
        if entry.plain:
            self._recorder.fix(job_id, now)
        alike = self._by_sizes[entry.sizes]
        del alike.jobs[job_id]
        alike.bound.pop(job_id, None)
        if alike.jobs:
            return
        del self._by_sizes[entry.sizes]
        size = alike.one_size
        if size is None:
            del self._mixed[entry.sizes]
            return
        band = self._bands[size]
        del band.sets[alike.count]
        del band.counts[bisect_right(band.counts, alike.count) - 1]
        if not band.sets:
            del self._bands[size]

    def _new_set(self, sizes: Sizes) -> _SizeSet:
        first = sizes[0] if sizes else None
        size = first if all(size == first for size in sizes) else None
        if size is None:
            alike = _SizeSet(sizes, None,
                             self._scheduler.has_room(sizes, partition=self._partition))
            self._mixed[sizes] = alike
            return alike
        room = self._room_for.get(size)
        if room is None:
            [room] = self._scheduler.room_for([size], partition=self._partition)
            self._room_for[size] = room
        band = self._bands.get(size)
        if band is None:
            band = self._bands[size] = _Band(room)
            self._new_bands.append(size)
        alike = _SizeSet(sizes, size, len(sizes) <= room)
        band.sets[alike.count] = alike
        insort(band.counts, alike.count)
        self._new.append(alike)
        return alike

    def refresh(self, now: float) -> None:
        """Room may have come or gone: re-charge the jobs whose answer changed. Called once
        per scheduling cycle, after its waits were reported."""
        if self._bands:
            state = self._scheduler.room_state(partition=self._partition)
            if state == self._room_state:  # only the bands made since may be out of date
                sizes = [size for size in self._new_bands if size in self._bands]
            else:
                sizes = list(self._bands)
                self._room_state = state
            known = self._rooms_in.get(state)
            if known is None:
                if len(self._rooms_in) >= _MAX_STATES:
                    self._rooms_in.clear()
                known = self._rooms_in[state] = {}
            missing = [size for size in sizes if size not in known]
            if missing:
                known.update(zip(missing, self._scheduler.room_for(
                    missing, partition=self._partition), strict=True))
            for size in sizes:
                room = known[size]
                band = self._bands[size]
                was = band.room
                if room == was:
                    continue
                band.room = room
                counts = band.counts
                # only the sets whose count lies between the two figures can have changed
                low, high = (was, room) if was < room else (room, was)
                for count in counts[bisect_right(counts, low):bisect_right(counts, high)]:
                    self._recharge(band.sets[count], count <= room, now)
            for alike in self._new:
                held = self._bands.get(alike.one_size) if alike.one_size is not None else None
                if held is not None and held.sets.get(alike.count) is alike:
                    self._recharge(alike, alike.count <= held.room, now)
        self._new.clear()
        self._new_bands.clear()
        for alike in self._mixed.values():
            self._recharge(alike, self._scheduler.has_room(alike.sizes,
                                                           partition=self._partition), now)
        self._read.clear()
        self._room_for.clear()

    def _recharge(self, alike: _SizeSet, room: bool, now: float) -> None:
        if room == alike.room:
            return
        alike.log.set(now, room)
        for job_id in alike.bound:
            self._charge(job_id, self._held[job_id], now, room)

    def _charge(self, job_id: str, entry: _Held, now: float, room: bool) -> None:
        if not room:
            self._recorder.waiting(job_id, now, "node", FULL_NODES)
            return
        owners = sorted({entry.owner, *self._binding(entry)})
        self._recorder.waiting(job_id, now, entry.kind, " + ".join(owners))

    # -- which resource limits alone would hold the job ---------------------------------------

    def _plain(self, user: str, group: str | None, queue: str, total: Resource) -> bool:
        """Whether no resources limit on the path of a job of `user` (and `group`) in
        `queue` caps a resource it asks (`total`): then none can ever hold it along with its
        own limit (`_binding` names nothing, whatever the usage), for the limits stay as
        they are for the whole replay."""
        levels = ancestors(parse_queue_path(queue))
        if any((cap := self._queue_max(path)) is not None and _caps(cap, total)
               for path in levels):
            return False
        table = self._ugm.limit_table
        named: list[tuple[str, Callable[[str, str], Limit | None]]] = [(user, table.user_limit)]
        if group is not None:
            named.append((group, table.group_limit))
        return not any((limit := limit_at(path, name)) is not None
                       and _caps(limit.max_resources, total)
                       for name, limit_at in named for path in levels)

    def _binding(self, entry: _Held) -> Iterator[str]:
        """Every user, group or queue resources limit on the job's path that its total does
        not fit under now, named as the replay names owners."""
        levels = ancestors(parse_queue_path(entry.queue))
        for path in levels:
            cap = self._queue_max(path)
            if cap is not None and _over(entry.total, self._usage("queue", path).get(
                    path, Resource()), cap):
                yield f"queue {path}'s resources limit"
        table = self._ugm.limit_table
        yield from self._limits_over("user", entry.user, entry, levels, table.user_limit)
        if entry.group is not None:
            yield from self._limits_over("group", entry.group, entry, levels,
                                         table.group_limit)

    def _limits_over(self, kind: str, name: str, entry: _Held, levels: list[str],
                     limit_at: Callable[[str, str], Limit | None]) -> Iterator[str]:
        """The resources limits of user or group `name` on `levels` that the job's total does
        not fit under now. Usage is read only where a limit caps a resource the job asks:
        most limits count applications only, and a read is a snapshot of the whole tree."""
        caps = [(path, limit.max_resources) for path in levels
                if (limit := limit_at(path, name)) is not None
                and _caps(limit.max_resources, entry.total)]
        if caps:
            usage = self._usage(kind, name)
            for path, most in caps:
                if _over(entry.total, usage.get(path, Resource()), most):
                    yield f"{kind} {name}'s resources limit at {path}"

    def _usage(self, kind: str, name: str) -> dict[str, Resource]:
        """Queue path -> usage of a user, group or queue (this cycle's reading)."""
        key = (kind, name)
        usage = self._read.get(key)
        if usage is None:
            if kind == "queue":
                usage = {name: self._scheduler.queue_allocated(name, partition=self._partition)}
            elif kind == "user":
                usage = _usage_by_path(self._ugm.user_usage(name))
            else:
                usage = _usage_by_path(self._ugm.group_usage(name))
            self._read[key] = usage
        return usage


def _caps(cap: ResourceLike, total: Resource) -> bool:
    """Whether `cap` limits a resource `total` asks (else no usage can make `_over` true)."""
    return any(name in total for name in cap)


def _over(total: Resource, used: ResourceLike, cap: ResourceLike) -> bool:
    """Whether `total` more than `used` breaks `cap` (names `cap` does not set are free)."""
    return any(used.get(name, 0) + total.get(name, 0) > quantity
               for name, quantity in cap.items() if name in total)


def _usage_by_path(snapshot: Mapping[str, Any] | None) -> dict[str, Resource]:
    """Queue path -> usage, from a user's or group's usage snapshot (REST shape)."""
    out: dict[str, Resource] = {}
    stack = [snapshot["queues"]] if snapshot else []
    while stack:
        node = stack.pop()
        out[node["queuePath"]] = Resource(node.get("resourceUsage") or {})
        stack.extend(node.get("children") or ())
    return out

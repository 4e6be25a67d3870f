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
alone would not start it). The answer is kept current as room comes and goes: jobs are grouped
by the sizes of their asks, and each size set is asked once per scheduling cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from quotactor.core.queue_path import ancestors, parse_queue_path
from quotactor.core.resources import Resource
from quotactor.scheduler import Scheduler
from quotactor.sim.models.outcomes import OutcomeRecorder

__all__ = ["FULL_NODES", "Counterfactual"]

FULL_NODES = "full nodes"
"""The owner a wait is charged to when the cluster has no room for the job."""

Sizes = tuple[Resource, ...]


class _Held:
    __slots__ = ("group", "kind", "owner", "queue", "sizes", "total", "user")

    def __init__(self, kind: str, owner: str, sizes: Sizes, user: str, group: str | None,
                 queue: str) -> None:
        self.kind = kind
        self.owner = owner
        self.sizes = sizes
        self.user = user
        self.group = group
        self.queue = queue
        total = Resource()
        for size in sizes:
            total = total + size
        self.total = total


class _SizeSet:
    """The jobs held by a limit whose asks still to place have the same sizes, and whether
    the nodes had room for those asks at the last look."""

    __slots__ = ("count", "jobs", "one_size", "room", "sizes")

    def __init__(self, sizes: Sizes) -> None:
        self.sizes = sizes
        self.count = len(sizes)
        first = sizes[0] if sizes else None
        self.one_size = first if all(size == first for size in sizes) else None
        """The size every ask asks, when they all ask the same (most jobs' asks are alike)."""
        self.jobs: dict[str, None] = {}
        self.room = False


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
        self._room_for: dict[Resource, int] = {}
        """How many asks of a size the nodes could take at once, asked once per cycle for all
        the jobs whose asks are all of that size."""
        self._read: dict[tuple[str, str], dict[str, Resource]] = {}
        """Usage by queue path of users, groups (and queues, by kind "queue"), read once per
        cycle: usage only changes between cycles."""

    def held(self, job_id: str, now: float, kind: str, owner: str, sizes: Sizes, user: str,
             group: str | None, queue: str) -> None:
        """The scheduler says limit `owner` (of `kind`: user, group or queue) holds the job,
        whose asks still to place are `sizes`: charge the job by the counterfactual."""
        self.forget(job_id)
        entry = _Held(kind, owner, sizes, user, group, queue)
        self._held[job_id] = entry
        alike = self._by_sizes.get(sizes)
        if alike is None:
            alike = self._by_sizes[sizes] = _SizeSet(sizes)
            alike.room = self._has_room(alike)
        alike.jobs[job_id] = None
        self._charge(job_id, entry, now, alike.room)

    def forget(self, job_id: str) -> None:
        """The job is no longer held by a limit (it started, ended or waits for another
        reason)."""
        entry = self._held.pop(job_id, None)
        if entry is None:
            return
        alike = self._by_sizes[entry.sizes]
        del alike.jobs[job_id]
        if not alike.jobs:
            del self._by_sizes[entry.sizes]

    def refresh(self, now: float) -> None:
        """Room may have come or gone: re-charge the jobs whose answer changed. Called once
        per scheduling cycle, after its waits were reported."""
        wanted = {alike.one_size: None for alike in self._by_sizes.values()
                  if alike.one_size is not None and alike.one_size not in self._room_for}
        if wanted:
            found = self._scheduler.room_for(list(wanted), partition=self._partition)
            self._room_for.update(zip(wanted, found, strict=True))
        for alike in self._by_sizes.values():
            room = self._has_room(alike)
            if room == alike.room:
                continue
            alike.room = room
            for job_id in alike.jobs:
                self._charge(job_id, self._held[job_id], now, room)
        self._read.clear()
        self._room_for.clear()

    def _has_room(self, alike: _SizeSet) -> bool:
        size = alike.one_size
        if size is None:
            return self._scheduler.has_room(alike.sizes, partition=self._partition)
        room = self._room_for.get(size)
        if room is None:
            [room] = self._scheduler.room_for([size], partition=self._partition)
            self._room_for[size] = room
        return alike.count <= room

    def _charge(self, job_id: str, entry: _Held, now: float, room: bool) -> None:
        if not room:
            self._recorder.waiting(job_id, now, "node", FULL_NODES)
            return
        owners = sorted({entry.owner, *self._binding(entry)})
        self._recorder.waiting(job_id, now, entry.kind, " + ".join(owners))

    # -- which resource limits alone would hold the job ---------------------------------------

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
        user_usage = self._usage("user", entry.user)
        for path in levels:
            limit = table.user_limit(path, entry.user)
            if limit is not None and _over(entry.total, user_usage.get(path, Resource()),
                                           limit.max_resources):
                yield f"user {entry.user}'s resources limit at {path}"
        if entry.group is None:
            return
        group_usage = self._usage("group", entry.group)
        for path in levels:
            limit = table.group_limit(path, entry.group)
            if limit is not None and _over(entry.total, group_usage.get(path, Resource()),
                                           limit.max_resources):
                yield f"group {entry.group}'s resources limit at {path}"


    def _usage(self, kind: str, name: str) -> dict[str, Resource]:
        """Queue path -> usage of a user, group or queue (this cycle's reading)."""
        key = (kind, name)
        usage = self._read.get(key)
        if usage is None:
            if kind == "queue":
                usage = {name: self._scheduler.queue(name, partition=self._partition).allocated}
            elif kind == "user":
                usage = _usage_by_path(self._ugm.user_usage(name))
            else:
                usage = _usage_by_path(self._ugm.group_usage(name))
            self._read[key] = usage
        return usage


def _over(total: Resource, used: Mapping[str, int], cap: Mapping[str, int]) -> bool:
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

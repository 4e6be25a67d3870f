"""The discrete-event replay: a workload through the embedded scheduler in virtual time.

Time jumps from one event to the next (a submission or a job's end); at each moment the
replay first ends the jobs due, then submits the jobs due, then runs one scheduling cycle,
which places everything that fits. A job starts when its last ask is allocated and ends
`duration` seconds later, when the replay removes its application (releasing everything, as
a resource manager does when a job's pods finish). Nothing sleeps and nothing waits on wall
time, so a replay is deterministic and runs as fast as the scheduler decides.

A job that asks, on its own, for more than a limit allows (a user limit of 32 vcore and a job
of 64) can never start under that configuration, however long it waits. The replay checks
each job against the limits on its queue path when it is submitted (and again whenever the
scheduler names a resource limit for it), gives it up at once (`never-started`, cause
"exceeds user u4's limit: 32 vcore at root.ipsc") and removes it, so it neither counts as
held back nor costs the scheduler a retry after every release.

When no event is left but jobs still wait, nothing can ever change for them: they are given
up (`never-started`, with the scheduler's last reason) and removed, so every job ends and
every tracker returns to zero. A job needing more than the whole cluster is never submitted:
it would hold part of the cluster forever, and no scheduler setting could let it run.

A job of several asks is one parallel program. By default (`placement="whole"`) it is
submitted as an all-or-nothing application: the scheduler places none of its asks until it
can place all of them at once, so no task of a job that has not started holds capacity, and
the same capacity cut into one large node or many small ones gives the same starts (with node
reservations off: one large node can be reserved for a waiting job, many small ones are never
reserved for a job placed whole). With `placement="tasks"` asks are placed one by one, as
YuniKorn places pods: a job may then hold part of its tasks while it waits for the rest. When
nothing runs any more and such jobs still hold allocations, nothing will ever be released for
them: they are deadlocked. The replay then does what an operator would do, it kills them
(`never-started`, reason `deadlock`, with the capacity they held idle) so the rest of the
trace can run.

With `placement="gang"` a job of several asks is a YuniKorn gang: one task group per ask size,
whose placeholders the scheduler places first. The replay acts as YuniKorn's shim: it adds
the job's real asks (each naming its task group) only once every placeholder is placed, and
the scheduler then swaps each placeholder for a real ask in its place. Placeholders hold
capacity (it shows in the usage, as capacity reserved) but the job starts only when its last
real ask is placed. If the gang is not whole when its placeholder timeout passes, its
placeholders are released: a `Soft` gang goes on as a normal application, its asks placed one
by one (and may then deadlock like any partly placed job); a `Hard` one fails, and the job is
given up with the gang timeout as its reason. A job holding placeholders is never called
deadlocked: its timeout is what frees them, and the replay wakes for it.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from quotactor.core.errors import InvalidRequest
from quotactor.core.identity import UserGroup
from quotactor.core.queue_path import ancestors, parse_queue_path
from quotactor.core.resources import EMPTY, Resource
from quotactor.logs import get_logger
from quotactor.scheduler import ApplicationState, Ask, Scheduler, VirtualClock
from quotactor.scheduler.objects.application import ALL_OR_NOTHING
from quotactor.scheduler.objects.gang import DEFAULT_PLACEHOLDER_TIMEOUT, Gang, GangStyle, TaskGroup
from quotactor.scheduler.objects.reasons import Wait, WaitKind
from quotactor.sim.fmt import duration, humanize, resources_text
from quotactor.sim.inputs.cluster import ClusterSpec
from quotactor.sim.inputs.jobs import Job, Workload
from quotactor.sim.models.blame import FULL_NODES, Counterfactual
from quotactor.sim.models.limits import group_limits, user_limits
from quotactor.sim.models.outcomes import OutcomeRecorder
from quotactor.sim.models.packing import Packing, plan_asks
from quotactor.sim.models.preemptions import PreemptionTally
from quotactor.sim.models.progress import Progress
from quotactor.sim.models.result import Performance, SimulationResult
from quotactor.sim.models.stats import summarise
from quotactor.sim.models.usage import UsageTimeline
from quotactor.sim.models.utilization import node_class_of

__all__ = ["GANG_STYLES", "PLACEMENTS", "Placement", "ReplayOptions", "replay"]

log = get_logger()


Placement = Literal["whole", "tasks", "gang"]
"""How a job of several asks is placed: `whole`, all its asks at once or none (the scheduler's
all-or-nothing applications); `tasks`, ask by ask as YuniKorn places pods; `gang`, as a
YuniKorn gang whose placeholders hold capacity until the gang is whole or times out."""

PLACEMENTS: tuple[Placement, ...] = ("whole", "tasks", "gang")
GANG_STYLES: tuple[GangStyle, ...] = ("Soft", "Hard")


@dataclass(frozen=True, slots=True)
class ReplayOptions:
    """How to replay: the partition jobs go to, how jobs are placed, the report label.

    `partition` empty means the scheduler's first partition; `progress` None shows a bar only
    on a terminal. `placement` says how a parallel job's tasks are placed (see `Placement`);
    `packing` how tasks share a node. The replay acts as the shim for preemption: it confirms
    each release `preemption_grace` seconds after the scheduler asks, and a preempted job
    restarts (its work lost) or, with `kill_preempted`, is killed. `reservations` False starts
    the scheduler with no node reservations (see `SchedulerOptions.reservations`).
    `gang_style` and `gang_timeout` (seconds, positive) are those of every gang (placement
    `gang` only); `InvalidRequest` names a bad one.
    """

    partition: str = ""
    placement: Placement = "whole"
    packing: Packing = "dense"
    label: str = ""
    config_source: str = ""
    progress: bool | None = None
    preemption_grace: float = 0.0
    kill_preempted: bool = False
    reservations: bool = True
    gang_style: GangStyle = "Soft"
    gang_timeout: float = DEFAULT_PLACEHOLDER_TIMEOUT

    def __post_init__(self) -> None:
        if self.gang_style not in GANG_STYLES:
            raise InvalidRequest(f"gang_style must be Soft or Hard, got {self.gang_style!r}")
        if not 0 < self.gang_timeout < float("inf"):
            raise InvalidRequest(f"gang_timeout must be a positive number of seconds, got "
                                 f"{self.gang_timeout!r}")

    @property
    def placement_text(self) -> str:
        """The placement as a report names it: `whole`, `tasks`, or `gang (Soft, placeholders
        time out after 15.0m)`."""
        if self.placement != "gang":
            return self.placement
        return (f"gang ({self.gang_style}, placeholders time out after "
                f"{duration(self.gang_timeout)})")


class _Running:
    """A submitted job: what it still waits for, what it holds, where it was placed."""

    __slots__ = ("asks", "end_seq", "gang", "group", "held", "held_back", "held_since", "idle",
                 "job", "missing", "placeholders", "queue", "reserved", "started_at")

    def __init__(self, job: Job, asks: Mapping[str, Resource]) -> None:
        self.job = job
        self.asks = dict(asks)
        """The asks not placed yet, by key."""
        self.missing = len(asks)
        self.held: Resource = EMPTY
        self.held_since = 0.0
        self.idle: dict[str, float] = {}
        """Resource-seconds held while not running (a partly placed job's tasks)."""
        self.group: str | None = job.groups[0] if job.groups else None
        self.queue = ""
        self.started_at: float | None = None
        self.end_seq = -1
        self.gang: Gang | None = None
        self.held_back: tuple[Ask, ...] = ()
        """A gang's real asks, added once all its placeholders are placed (or they time
        out, for a Soft gang)."""
        self.placeholders: dict[str, int] = {}
        """Placeholders held, by task group."""
        self.reserved: Resource = EMPTY
        """What the placeholders hold (part of `held`)."""

    def wanted(self) -> tuple[Resource, ...]:
        """The sizes still to be placed for the job to start: its asks not placed, less
        those its placeholders already hold room for."""
        covered = dict(self.placeholders)
        sizes: list[Resource] = []
        for ask in self.held_back:
            if covered.get(ask.task_group, 0) > 0:
                covered[ask.task_group] -= 1
            else:
                sizes.append(ask.resource)
        return tuple(sizes) if self.held_back else tuple(self.asks.values())

    def whole(self) -> bool:
        """Whether every placeholder of the job's gang is placed (its real asks may come)."""
        return self.gang is not None and self.reserved == self.gang.placeholder_total

    def hold(self, now: float, held: Resource) -> None:
        """From `now` on the job holds `held`; what it held until now counts as idle while
        it has not started."""
        if self.started_at is None:
            for name, quantity in self.held.items():
                self.idle[name] = self.idle.get(name, 0.0) + quantity * (now - self.held_since)
        self.held, self.held_since = held, now


def replay(scheduler: Scheduler, workload: Workload, cluster: ClusterSpec,
           options: ReplayOptions | None = None) -> SimulationResult:
    """Replay `workload` on `cluster` through `scheduler`, whose clock must be a
    `VirtualClock` at or before the first submission; returns the result."""
    return _Replay(scheduler, workload, cluster, options or ReplayOptions()).run()


class _Replay:
    def __init__(self, scheduler: Scheduler, workload: Workload, cluster: ClusterSpec,
                 options: ReplayOptions) -> None:
        clock = scheduler.clock
        if not isinstance(clock, VirtualClock):
            raise TypeError("a replay needs a scheduler running on a VirtualClock")
        self.scheduler = scheduler
        self.clock = clock
        self.workload = workload
        self.cluster = cluster
        self.partition = options.partition or scheduler.partitions[0]
        self.options = options
        self.label = options.label or "simulation"
        self.ugm = scheduler.ugm(self.partition)
        self.recorder = OutcomeRecorder()
        self._users: dict[tuple[str, tuple[str, ...]], UserGroup] = {}
        """One `UserGroup` per user and groups, shared by their jobs."""
        self.blame = Counterfactual(scheduler, self.partition, self.recorder,
                                    self._queue_limit)
        self.timeline = UsageTimeline(node_class_of(cluster))
        self.running: dict[str, _Running] = {}
        self.waiting: dict[str, _Running] = {}
        self.reserving: dict[str, _Running] = {}
        """The waiting jobs whose gang holds placeholders."""
        self.ends: list[tuple[float, int, str]] = []
        self.largest = max((n.capacity for n in cluster.nodes),
                           key=lambda c: (sum(c.values()), sorted(c.items())))
        self.capacity = cluster.capacity
        self._queue_max: dict[str, Resource | None] = {}
        self.cycles = 0
        self.pending: list[tuple[float, int]] = []
        self.decisions = 0
        self.allocations = 0
        self.confirms: list[tuple[float, int, str, str]] = []
        self.tally = PreemptionTally()

    def run(self) -> SimulationResult:
        started = time.perf_counter()
        calls_before = self.scheduler.ugm_calls
        self.scheduler.take_wait_changes(partition=self.partition)
        for node in self.cluster.nodes:
            self.scheduler.add_node(node.node_id, node.capacity, partition=self.partition)
        jobs = self.workload.jobs
        progress = Progress(len(jobs), self.label, enabled=self.options.progress)
        ended = 0
        index = 0
        now = jobs[0].submit
        seq = 0
        try:
            while index < len(jobs) or self.ends or self.confirms \
                    or self._placeholder_wake() < float("inf"):
                next_arrival = jobs[index].submit if index < len(jobs) else float("inf")
                now = min(next_arrival, self.ends[0][0] if self.ends else float("inf"),
                          self._next_preemption_event(now), self._placeholder_wake())
                self.clock.set(now)
                while self.confirms and self.confirms[0][0] <= now:
                    _, _, app_id, key = heapq.heappop(self.confirms)
                    ended += self._confirm(app_id, key, now)
                while self.ends and self.ends[0][0] <= now:
                    _, end_seq, job_id = heapq.heappop(self.ends)
                    entry = self.running.get(job_id)
                    if entry is not None and entry.end_seq == end_seq:
                        self._end(job_id, now)
                        ended += 1
                while index < len(jobs) and jobs[index].submit <= now:
                    ended += self._submit(jobs[index], now)
                    index += 1
                seq = self._cycle(now, seq)
                if not self.running and not self.reserving \
                        and any(e.held for e in self.waiting.values()):
                    ended += self._break_deadlock(now)
                    seq = self._cycle(now, seq)
                progress.update(ended, now - jobs[0].submit)
            ended += self._give_up(now)
        finally:
            progress.close()
        wall = time.perf_counter() - started
        performance = Performance(wall, self.cycles, self.decisions, self.allocations,
                                  self.scheduler.ugm_calls - calls_before)
        log.info("sim.replayed", label=self.label, jobs=len(jobs), ended=ended,
                 wall_seconds=round(wall, 3), cycles=self.cycles)
        return self._result(now, performance)

    # -- events ------------------------------------------------------------------------------

    def _submit(self, job: Job, now: float) -> int:
        """Submit `job`; returns 1 if it ended at once (rejected), else 0."""
        self.recorder.submitted(job, job.groups[0] if job.groups else None)
        total = job.total
        if not total.fits_within_strict(self.capacity):
            self.recorder.rejected(job.job_id, now, f"needs {resources_text(total)}, more "
                                   f"than the whole cluster ({resources_text(self.capacity)})",
                                   "larger than the whole cluster")
            return 1
        asks = [Ask(plan.key, plan.resource)
                for plan in plan_asks(job, self.largest, self.options.packing)]
        tags: Mapping[str, str] = job.tags
        if self.options.placement == "whole" and len(asks) > 1:
            tags = {**job.tags, ALL_OR_NOTHING: "true"}
        gang = None
        if self.options.placement == "gang" and len(asks) > 1:
            gang, asks = self._gang(job.job_id, asks)
        user = self._users.get((job.user, job.groups))
        if user is None:
            user = self._users[job.user, job.groups] = UserGroup(job.user, job.groups)
        info = self.scheduler.submit(job.job_id, user,
                                     queue=job.queue or "", partition=self.partition,
                                     tags=tags, gang=gang, asks=() if gang else asks)
        if info.state is ApplicationState.REJECTED:
            self.recorder.rejected(job.job_id, now, humanize(info.rejected_message))
            return 1
        entry = _Running(job, {ask.key: ask.resource for ask in asks})
        if gang is not None:
            entry.gang, entry.held_back = gang, tuple(asks)
        entry.queue = info.queue_path
        entry.group = self._group(job, info.queue_path)
        self.recorder.placed(job.job_id, entry.queue, entry.group)
        self.recorder.lines_up(job.job_id, now, (entry.queue, job.user, job.groups,
                                                 tuple(ask.resource for ask in asks)))
        self.waiting[job.job_id] = entry
        cause = self._never_fits(job, entry)
        if cause is not None:
            self._kill(job.job_id, now, f"needs {resources_text(total)}: {cause}", cause)
            return 1
        return 0

    def _gang(self, job_id: str, asks: list[Ask]) -> tuple[Gang, list[Ask]]:
        """The gang of a job whose asks are `asks`: one task group per ask size (a dense
        packing's smaller last ask has one of its own), with the replay's style and timeout;
        and the asks, each naming its task group. The groups' names are chosen so that no
        placeholder's key (`<job>-<group>-<n>`) is also the key of a real ask."""
        prefix = "gang"
        while any(ask.key.startswith(f"{job_id}-{prefix}-") for ask in asks):
            prefix += "_"
        names: dict[Resource, str] = {}
        counts: dict[str, int] = {}
        tagged: list[Ask] = []
        for ask in asks:
            name = names.setdefault(ask.resource, f"{prefix}-{len(names)}")
            counts[name] = counts.get(name, 0) + 1
            tagged.append(Ask(ask.key, ask.resource, task_group=name))
        groups = tuple(TaskGroup(name, counts[name], size) for size, name in names.items())
        return Gang(groups, self.options.gang_style, self.options.gang_timeout), tagged

    def _never_fits(self, job: Job, entry: _Running) -> str | None:
        """The first limit on the job's queue path (leaf to root; user, group, queue) that
        its total alone exceeds, described; None when every limit could let it run."""
        for path in ancestors(parse_queue_path(entry.queue)):
            checks: list[tuple[WaitKind, str]] = [("user", job.user)]
            if entry.group is not None:
                checks.append(("group", entry.group))
            checks.append(("queue", path))
            for kind, name in checks:
                cause = self._exceeds(job.total, Wait(kind, name, path, "resources", ""))
                if cause is not None:
                    return cause
        return None

    def _group(self, job: Job, queue_path: str) -> str | None:
        """The group the trackers charge (decided by the limits), else the job's first group."""
        levels = ancestors(parse_queue_path(queue_path))
        resolved = self.ugm.limit_table.resolve_group(levels, job.groups)
        return resolved or (job.groups[0] if job.groups else None)

    def _cycle(self, now: float, seq: int) -> int:
        """Schedule at `now` until nothing more happens at this moment: each cycle's
        allocations are booked (a placeholder as held capacity, a real ask as part of its
        job, which starts with its last), victims due now are confirmed, gangs whole now get
        their real asks, and gangs whose placeholders timed out are dealt with."""
        while True:
            timeout = self._placeholder_wake()
            made = self.scheduler.schedule()
            self.cycles += 1
            self.allocations += len(made)
            again = False
            # a job's allocations come together: what they add is booked once per job
            adding: _Running | None = None
            added: dict[str, int] = {}
            for allocation in made:
                entry = self.waiting.get(allocation.application_id)
                if entry is None:
                    continue
                if entry is not adding:
                    if adding is not None:
                        self._hold(adding, now, Resource(added))
                    adding, added = entry, {}
                    if not entry.held:
                        self.recorder.leaves_line(entry.job.job_id, now)
                job_id = entry.job.job_id
                if allocation.placeholder:
                    self._hold(entry, now, self._reserve(entry, allocation.task_group, 1))
                    self.timeline.on_node(now, job_id, allocation.node_id, allocation.resource,
                                          placeholder=True)
                    if entry.held_back and entry.whole():
                        again = True
                        self._add_held_back(entry)
                    continue
                self.timeline.on_node(now, job_id, allocation.node_id, allocation.resource)
                for name, quantity in allocation.resource.items():
                    added[name] = added.get(name, 0) + quantity
                if allocation.placeholder_used:  # in its placeholder's place
                    freed = self._reserve(entry, allocation.task_group, -1)
                    self.timeline.on_node(now, job_id, allocation.node_id, freed,
                                          placeholder=True)
                    for name, quantity in freed.items():
                        added[name] = added.get(name, 0) + quantity
                entry.asks.pop(allocation.key, None)
                entry.missing -= 1
                if entry.missing == 0:
                    self._hold(entry, now, Resource(added))
                    adding, added = None, {}
                    self.blame.forget(job_id, now)
                    del self.waiting[job_id]
                    self.running[job_id] = entry
                    self.recorder.started(job_id, now)
                    seq += 1
                    entry.started_at, entry.end_seq = now, seq
                    heapq.heappush(self.ends, (now + entry.job.duration, seq, job_id))
            if adding is not None:
                self._hold(adding, now, Resource(added))
            self.decisions += len(made) + len(self.waiting)
            if timeout <= now:
                again = self._placeholders_timed_out(now) or again
            for request in self.scheduler.release_requests():
                seq += 1
                heapq.heappush(self.confirms, (now + self.options.preemption_grace, seq,
                                               request.application_id, request.allocation_key))
            if not again and (not self.confirms or self.confirms[0][0] > now):
                break
            while self.confirms and self.confirms[0][0] <= now:
                _, _, app_id, key = heapq.heappop(self.confirms)
                self._confirm(app_id, key, now)
        self._poll_waits(now)
        self.blame.refresh(now)
        self._note_pending(now)
        return seq

    def _hold(self, entry: _Running, now: float, delta: Resource) -> None:
        """From `now` on `entry` holds `delta` more (less, where negative), in the usage too;
        a job counts there as long as it holds anything."""
        if not delta:
            return
        before = entry.held
        after = before + delta
        self.timeline.change(now, entry.job.user, entry.group, entry.queue, delta,
                             (1 if after else 0) - (1 if before else 0))
        entry.hold(now, after)

    # -- the shim's side of gangs ------------------------------------------------------------

    def _reserve(self, entry: _Running, task_group: str, count: int) -> Resource:
        """`entry` holds `count` more placeholders of `task_group` (fewer, where negative);
        returns the change in what its placeholders hold."""
        assert entry.gang is not None, "only a gang's job holds placeholders"
        size = next(g.min_resource for g in entry.gang.task_groups if g.name == task_group)
        held = entry.placeholders.get(task_group, 0) + count
        if held:
            entry.placeholders[task_group] = held
        else:
            del entry.placeholders[task_group]
        change = size.scaled(count)
        entry.reserved = entry.reserved + change
        job_id = entry.job.job_id
        if entry.reserved:
            self.reserving[job_id] = entry
        else:
            self.reserving.pop(job_id, None)
        return change

    def _add_held_back(self, entry: _Running) -> None:
        """Add a gang's real asks (its gang is whole, or a Soft gang timed out)."""
        for ask in entry.held_back:
            self.scheduler.add_ask(entry.job.job_id, ask, partition=self.partition)
        entry.held_back = ()

    def _placeholder_wake(self) -> float:
        """When a gang holding placeholders next times out (infinity: none holds any)."""
        if not self.reserving:
            return float("inf")
        due = self.scheduler.next_placeholder_timeout()
        return float("inf") if due is None else due

    def _placeholders_timed_out(self, now: float) -> bool:
        """Book the gangs whose placeholders the scheduler released at their timeout: a Hard
        gang's job is given up; a Soft gang's real asks are added, to be placed one by one.
        Returns whether asks were added (so the scheduler has more to place at `now`)."""
        added = False
        for job_id in sorted(self.reserving, key=lambda j: self.reserving[j].job.line):
            entry = self.reserving[job_id]
            info = self.scheduler.application(job_id, partition=self.partition)
            if info.placeholder_allocated == entry.reserved:
                continue
            gang = entry.gang
            assert gang is not None, "only a gang's job holds placeholders"
            held = entry.reserved
            entry.placeholders.clear()
            entry.reserved = EMPTY
            del self.reserving[job_id]
            self._hold(entry, now, -held)
            self.timeline.off_nodes(now, job_id, placeholders_only=True)
            if info.state in (ApplicationState.FAILED, ApplicationState.FAILING):
                self._kill(job_id, now, f"gang timeout: its placeholders held "
                           f"{resources_text(held)} of {resources_text(gang.placeholder_total)}"
                           f" when the {duration(gang.timeout)} placeholder timeout passed; a "
                           f"Hard gang fails", "gang timeout: not whole in time (Hard)")
            else:
                self._add_held_back(entry)
                added = True
        return added

    # -- the shim's side of preemption -------------------------------------------------------

    def _next_preemption_event(self, now: float) -> float:
        """The next release to confirm, or the next moment a waiting ask may reserve or
        preempt (only while jobs wait and others run)."""
        due = self.confirms[0][0] if self.confirms else float("inf")
        if self.waiting and self.running:
            wake = self.scheduler.next_contention_check()
            if wake is not None and wake > now:
                due = min(due, wake)
        return due

    def _confirm(self, app_id: str, key: str, now: float) -> int:
        """Release a victim as the shim would; returns 1 if its job ended (killed).

        A restarted job starts over: the rest of its tasks are released too and all of them
        ask again (a job holding part of its tasks while it waits could deadlock the trace);
        a restarted gang's job asks as a normal application, its placeholders spent, as in
        YuniKorn. A preempted placeholder is released alone and counts as a victim of its
        job's user, group and queue, but no run is lost and nothing restarts: the gang can
        no longer be whole and waits for its timeout.
        """
        entry = self.running.get(app_id) or self.waiting.get(app_id)
        if entry is None:
            return 0
        held = {a.key: a for a in self.scheduler.application(
            app_id, partition=self.partition).allocations}
        victim = held.pop(key, None)
        if victim is None:
            return 0
        if victim.placeholder:
            self.scheduler.release(app_id, key, partition=self.partition)
            self._hold(entry, now, self._reserve(entry, victim.task_group, -1))
            self.timeline.on_node(now, app_id, victim.node_id, -victim.resource,
                                  placeholder=True)
            self.tally.victim(entry.job.user, entry.group, entry.queue)
            return 0
        released = [victim] if self.options.kill_preempted else [victim, *held.values()]
        for allocation in released:
            self.scheduler.release(app_id, allocation.key, partition=self.partition)
            self.timeline.on_node(now, app_id, allocation.node_id, -allocation.resource,
                                  placeholder=allocation.placeholder)
        freed = sum((a.resource for a in released), Resource())
        entry.hold(now, entry.held - freed)
        self.timeline.change(now, entry.job.user, entry.group, entry.queue, -freed,
                             0 if entry.held else -1)
        self.tally.victim(entry.job.user, entry.group, entry.queue)
        if app_id in self.running:
            del self.running[app_id]
            self.recorder.preempted(app_id, now)
            self.waiting[app_id] = entry
            entry.end_seq = -1
            if entry.started_at is not None:
                self.tally.lost_run(entry.job.total, now - entry.started_at)
        if self.options.kill_preempted:
            self.tally.killed += 1
            self._kill(app_id, now, f"preempted ({key}) and killed")
            return 1
        self.tally.restarted += 1
        entry.missing += len(released)
        for allocation in released:
            entry.asks[allocation.key] = allocation.resource
            self.scheduler.add_ask(app_id, Ask(allocation.key, allocation.resource),
                                   partition=self.partition)
        return 0

    def _poll_waits(self, now: float) -> None:
        """Record why waiting jobs wait. Only the jobs whose reason changed in this cycle are
        read (the scheduler keeps that list), so a long backlog costs nothing per cycle."""
        changes = self.scheduler.take_wait_changes(partition=self.partition)
        hopeless: list[tuple[str, str]] = []
        for job_id in sorted((j for j in changes if j in self.waiting),
                             key=lambda j: self.waiting[j].job.line):
            wait = changes[job_id]
            self.blame.forget(job_id, now)
            if wait is not None and wait.is_turn:
                self.recorder.waits_turn(job_id, now)  # charged as the first of its line
                continue
            if wait is not None and wait.kind in ("reservation", "preemption"):
                # a reserved or preempting ask waits for room on a node
                self.recorder.waiting(job_id, now, "node", FULL_NODES)
                continue
            if wait is not None and wait.kind in ("user", "group", "queue"):
                entry = self.waiting[job_id]
                self.blame.held(job_id, now, wait.kind, _owner(wait), entry.wanted(),
                                entry.job.user, entry.group, entry.queue)
            else:
                self.recorder.waiting(job_id, now, wait.kind if wait is not None else None,
                                      _owner(wait) if wait is not None else None)
            if wait is not None and wait.limit == "resources":
                cause = self._exceeds(self.waiting[job_id].job.total, wait)
                if cause is not None:
                    hopeless.append((job_id, cause))
        for job_id, cause in hopeless:
            total = resources_text(self.waiting[job_id].job.total)
            self._kill(job_id, now, f"needs {total}: {cause}", cause)

    def _exceeds(self, total: Resource, wait: Wait) -> str | None:
        """The limit named by `wait`, described, if `total` alone is more than it allows
        (so no release can ever let the job start); else None."""
        if wait.kind == "queue":
            cap = self._queue_limit(wait.queue_path)
            owner = f"queue {wait.queue_path}'s maximum"
        else:
            table = self.ugm.limit_table
            limit = (table.user_limit(wait.queue_path, wait.name) if wait.kind == "user"
                     else table.group_limit(wait.queue_path, wait.name))
            cap = Resource(limit.max_resources) if limit is not None else None
            owner = f"{wait.kind} {wait.name}'s limit"
        if cap is None:
            return None
        over = {n: q for n, q in cap.items() if total.get(n, 0) > q}
        if not over:
            return None
        where = "" if wait.kind == "queue" else f" at {wait.queue_path}"
        return f"exceeds {owner}: {resources_text(over)}{where}"

    def _queue_limit(self, path: str) -> Resource | None:
        if path not in self._queue_max:
            limit = self.scheduler.queue(path, partition=self.partition).max_resources
            self._queue_max[path] = Resource(limit) if limit is not None else None
        return self._queue_max[path]

    def _note_pending(self, now: float) -> None:
        count = len(self.waiting)
        pending = self.pending
        if pending and pending[-1][0] == now:
            pending[-1] = (now, count)
        elif not pending or pending[-1][1] != count:
            pending.append((now, count))

    def _end(self, job_id: str, now: float) -> None:
        self.blame.forget(job_id, now)
        entry = self.running.pop(job_id)
        self.scheduler.remove_application(job_id, partition=self.partition)
        self.timeline.change(now, entry.job.user, entry.group, entry.queue, -entry.held, -1)
        self.timeline.off_nodes(now, job_id)
        self.recorder.finished(job_id, now)

    def _give_up(self, now: float) -> int:
        """End every job still waiting: nothing is left that could let it start."""
        count = len(self.waiting)
        for job_id in sorted(self.waiting, key=lambda j: self.waiting[j].job.line):
            wait = self.scheduler.why_pending(job_id, partition=self.partition)
            if wait is None:
                self._kill(job_id, now, "still waiting when the replay ended")
            else:
                self._kill(job_id, now, humanize(str(wait)),
                           f"still held by {_owner(wait)} when the trace ended")
        return count

    def _break_deadlock(self, now: float) -> int:
        """Kill the partly allocated jobs when nothing runs that could ever free room."""
        victims = sorted((j for j, e in self.waiting.items() if e.held),
                         key=lambda j: self.waiting[j].job.line)
        log.info("sim.deadlock", at=now, jobs=victims)
        for job_id in victims:
            entry = self.waiting[job_id]
            entry.hold(now, entry.held)
            wait = self.scheduler.why_pending(job_id, partition=self.partition)
            self._kill(job_id, now, f"deadlock: held {resources_text(entry.held)} of "
                       f"{resources_text(entry.job.total)} with nothing running, "
                       f"{_work_text(entry.idle)} wasted"
                       + (f"; {humanize(str(wait))}" if wait is not None else ""),
                       "deadlock: partly placed with nothing running")
        return len(victims)

    def _kill(self, job_id: str, now: float, reason: str, cause: str = "") -> None:
        self.blame.forget(job_id, now)
        self.reserving.pop(job_id, None)
        entry = self.waiting.pop(job_id)
        self.scheduler.remove_application(job_id, partition=self.partition)
        if entry.held:
            self.timeline.change(now, entry.job.user, entry.group, entry.queue, -entry.held,
                                 -1)
        self.timeline.off_nodes(now, job_id)
        self.recorder.gave_up(job_id, now, reason, cause)

    # -- results -----------------------------------------------------------------------------

    def _leftover(self) -> dict[str, Resource]:
        """Usage or running applications still counted anywhere after every job ended
        (empty when the books balance): in the trackers, the queues and the timeline."""
        left: dict[str, Resource] = {}
        for kind, key, snapshots in (("user", "userName", self.ugm.users_usage()),
                                     ("group", "groupName", self.ugm.groups_usage())):
            for snapshot in snapshots:
                root = snapshot["queues"]
                held = Resource(root.get("resourceUsage", {})) + Resource(
                    {"runningApplications": len(root.get("runningApplications", ()))})
                if held:
                    left[f"{kind}:{snapshot[key]}"] = held
        for queue in self.scheduler.queues(partition=self.partition):
            held = queue.allocated + Resource({"runningApplications":
                                               len(queue.running_applications)})
            if held:
                left[f"queue:{queue.path}"] = held
        left.update(self.timeline.leftover())
        return left

    def _result(self, end: float, performance: Performance) -> SimulationResult:
        outcomes = self.recorder.outcomes()
        user_series = self.timeline.series("user")
        group_series = self.timeline.series("group")
        total = self.timeline.total()
        everybody, users, groups = summarise(outcomes, user_series, group_series, total)
        table = self.ugm.limit_table
        return SimulationResult(
            label=self.label,
            config_source=self.options.config_source,
            workload=self.workload,
            cluster=self.cluster,
            outcomes=outcomes,
            everybody=everybody,
            users=users,
            groups=groups,
            user_series=user_series,
            group_series=group_series,
            queue_series=self.timeline.series("queue"),
            node_class_series=self.timeline.series("nodeclass"),
            total_series=total,
            user_limits=user_limits(table, [u.name for u in users]),
            group_limits=group_limits(table, [g.name for g in groups]),
            start_time=self.workload.jobs[0].submit,
            end_time=end,
            leftover=self._leftover(),
            placement=self.options.placement_text,
            performance=performance,
            pending_series=(*self.pending, (end, 0)),
            preemptions=self.tally.stats(self.scheduler.preemption_counts(self.partition)),
            queue_max={q.path: Resource(q.max_resources) for q in self.scheduler.queues(
                partition=self.partition) if q.max_resources is not None},
        )


def _owner(wait: Wait) -> str:
    """Who holds a job back, for a cause: `user u4's limit (applications) at root.a`."""
    if wait.kind == "node":
        return FULL_NODES
    if wait.kind == "queue":
        return f"queue {wait.queue_path}'s {wait.limit} limit"
    return f"{wait.kind} {wait.name}'s {wait.limit} limit at {wait.queue_path}"


def _work_text(work: Mapping[str, float]) -> str:
    """Resource-seconds as a planner reads them: `3.5 core-hours, 2.0 GPU-hours`."""
    parts = []
    for name, unit, scale in (("vcore", "core-hours", 1000 * 3600),
                              ("nvidia.com/gpu", "GPU-hours", 3600)):
        if work.get(name):
            parts.append(f"{work[name] / scale:.1f} {unit}")
    return ", ".join(parts) or "nothing"

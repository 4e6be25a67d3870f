"""Replaying a workload under a quota model other than the embedded YuniKorn scheduler.

A quota model answers five questions as virtual time passes: may this job start now (and if
not, what holds it back), which running jobs must give their room back (revoked or
preempted), what a job's end releases, which groups may admit more than when they last
refused, and what each quota group's figures are (used, runtime, min, max). `replay_model`
drives any such model through the workload's events and builds the same `SimulationResult`
the YuniKorn replay does, so the summary, the what-if analysis, the checks and the plots are
shared.

Every waiting job is scheduled on its own, as Kubernetes schedules pods and MCAD dispatches
the next queued job when the head does not fit: after each event the backlog is tried in
order of priority, then submission, and any job that fits starts, whatever waits before it.
A job starts only where the cluster has room for the whole of it (what no running job holds,
plus what its start takes back from others), so the running total never exceeds the
cluster. A job refused while the cluster has no room for it waits for the cluster (a `node`
wait, `FULL_CLUSTER`), even if its quota would refuse it too; a job its quota refuses while
the cluster has room waits for its quota. A job whose total exceeds the cluster or its
group's max can never start and is rejected at submission. A revoked job restarts from
scratch (its work lost) or, with `kill_preempted`, is killed, and is counted in
`result.preemptions` as the YuniKorn replay's victims are.

Jobs of one group with the same priority and the same total form a line: the model cannot
tell them apart, so only the first is tried and the others are charged to what holds it. A
line refused for want of room is tried again once the cluster's free room covers its total
(or the model says a start could take back more), a line its quota refused once the model
says the group may admit more: a pass costs the lines that could start, not the backlog,
and starts what trying every waiting job would. An event is settled by passes until one
leaves nothing to try (at most eight: a tree's preemptions can go back and forth).

A job starts whole or not at all, so jobs can block one another: under an elastic quota each
waiting job's request shrinks its siblings' runtimes, and three jobs each bigger than the
share its quota gets while the others wait never start, though the cluster is idle (pods of
Kubernetes would start one by one). The replay does not break such a standoff: the jobs wait
for a change (an arrival or an end) and, if none comes, are given up when the trace ends,
with the reason they were last refused for.
"""

from __future__ import annotations

import heapq
import itertools
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from quotactor.core.resources import Resource
from quotactor.sim.fmt import resources_text
from quotactor.sim.inputs.cluster import ClusterSpec
from quotactor.sim.inputs.jobs import Job, Workload
from quotactor.sim.models.outcomes import OutcomeRecorder
from quotactor.sim.models.preemptions import PreemptionTally
from quotactor.sim.models.progress import Progress
from quotactor.sim.models.result import Performance, QuotaTrack, SimulationResult
from quotactor.sim.models.stats import summarise
from quotactor.sim.models.usage import UsageTimeline

__all__ = ["FULL_CLUSTER", "GroupFigures", "ModelOptions", "QuotaModel", "job_priority",
           "replay_model"]

FULL_CLUSTER = "full cluster"
"""What `try_start` answers when the cluster has no room for the job (whatever its quota
would say)."""


@dataclass(frozen=True, slots=True)
class GroupFigures:
    """One quota group at one moment: what it uses, what it may use now, its bounds."""

    used: Resource
    runtime: Resource
    min: Resource
    max: Resource
    borrowed: Resource = field(default_factory=Resource)
    """What it uses above its own quota (empty for models that do not report it)."""
    lent: Resource = field(default_factory=Resource)
    """What others use of its quota (empty for models that do not report it)."""
    cohort_quota: Resource = field(default_factory=Resource)
    """The quota of all the groups it may borrow from, itself included (empty when none)."""


class QuotaModel(Protocol):
    """What `replay_model` needs from a quota model (jobs are named by `job_id`)."""

    name: str

    def group_of(self, job: Job) -> str:
        """The quota group the job is charged to."""
        ...

    def submit(self, job: Job) -> str | None:
        """Register a pending job; returns why it can never run (then it is not kept)."""
        ...

    def try_start(self, job: Job, free: Resource) -> str | None:
        """Start the job if the cluster has room for it and its group admits it (None).

        The cluster has room when the job's total fits within `free` (what no running job
        holds) plus what starting it takes back from running jobs (they are `revoked` next).
        Without room the answer is `FULL_CLUSTER`, whatever the group would say; else what in
        the group holds the job back.
        """
        ...

    def end(self, job_id: str) -> None:
        """The job finished or was killed: forget it, releasing what it held."""
        ...

    def revoked(self) -> list[str]:
        """Running jobs that must give their room back now; each is already pending again."""
        ...

    def loosened(self) -> Collection[str] | None:
        """The groups in which a job refused before the last call may start now although the
        cluster's free room did not grow to its total: the group may admit more, or a start
        could take more back from running jobs. None: any group."""
        ...

    def figures(self) -> Mapping[str, GroupFigures]:
        """Every quota group that can hold jobs, by name."""
        ...


@dataclass(frozen=True, slots=True)
class ModelOptions:
    """The report label, the quota file it came from, progress, what happens to victims."""

    label: str = ""
    config_source: str = ""
    progress: bool | None = None
    kill_preempted: bool = False


def replay_model(model: QuotaModel, workload: Workload, cluster: ClusterSpec,
                 options: ModelOptions | None = None) -> SimulationResult:
    """Replay `workload` on `cluster` under `model`; returns the result."""
    return _ModelReplay(model, workload, cluster, options or ModelOptions()).run()


Line = tuple[str, int, Resource]
"""(group, priority, total): waiting jobs the model cannot tell apart."""


class _ModelReplay:
    def __init__(self, model: QuotaModel, workload: Workload, cluster: ClusterSpec,
                 options: ModelOptions) -> None:
        self.model = model
        self.workload = workload
        self.cluster = cluster
        self.capacity = cluster.capacity
        self.free = self.capacity
        """What no running job holds."""
        self.options = options
        self.label = options.label or model.name
        self.recorder = OutcomeRecorder()
        self.timeline = UsageTimeline()
        self.tally = PreemptionTally()
        self.jobs: dict[str, Job] = {}
        self.line: dict[str, Line] = {}
        self.started_at: dict[str, float] = {}
        self.end_seq: dict[str, int] = {}
        self.order: dict[str, int] = {}
        """Submission order, the tie-break among equal priorities (a restart keeps its place)."""
        self.submissions = itertools.count()
        self.lines: dict[Line, list[tuple[int, str]]] = {}
        """Each line's waiting jobs, a heap by submission order."""
        self.backlog = 0
        self.ready: set[Line] = set()
        """Lines to try in the next pass."""
        self.refusals: dict[Line, tuple[str, int]] = {}
        """Why each line's first was last refused, and a stamp of that refusal."""
        self.parked_in: dict[str, set[Line]] = {}
        """Refused lines not to try until something changed for them, by group."""
        self.wants_room: dict[str, list[tuple[int, int, Line]]] = {}
        """Lines refused for want of room, per resource name they lacked: (amount, stamp)."""
        self.held_by_quota: dict[str, list[tuple[int, int, Line]]] = {}
        """Lines their quota refused, per resource name they ask: (-amount, stamp), to be
        charged to the cluster once its free room no longer covers them."""
        self.stamps = itertools.count()
        self.ends: list[tuple[float, int, str]] = []
        self.seq = 0
        self.passes = 0
        self.decisions = 0
        self.allocations = 0
        self.pending: list[tuple[float, int]] = []
        self.tracks: dict[str, list[tuple[float, GroupFigures]]] = {}

    def run(self) -> SimulationResult:
        started = time.perf_counter()
        jobs = self.workload.jobs
        progress = Progress(len(jobs), self.label, enabled=self.options.progress)
        index = 0
        ended = 0
        now = jobs[0].submit
        try:
            while index < len(jobs) or self.ends:
                while self.ends and self.end_seq.get(self.ends[0][2]) != self.ends[0][1]:
                    heapq.heappop(self.ends)  # the end of a run that was revoked
                if index >= len(jobs) and not self.ends:
                    break
                next_arrival = jobs[index].submit if index < len(jobs) else float("inf")
                now = min(next_arrival, self.ends[0][0] if self.ends else float("inf"))
                while self.ends and self.ends[0][0] <= now:
                    _, seq, job_id = heapq.heappop(self.ends)
                    if self.end_seq.get(job_id) == seq:
                        self._finish(job_id, now)
                        ended += 1
                while index < len(jobs) and jobs[index].submit <= now:
                    ended += self._submit(jobs[index], now)
                    index += 1
                ended += self._settle(now)
                progress.update(ended, now - jobs[0].submit)
            ended += self._give_up(now)
        finally:
            progress.close()
        wall = time.perf_counter() - started
        performance = Performance(wall, self.passes, self.decisions, self.allocations, 0)
        return self._result(now, performance)

    # -- events ------------------------------------------------------------------------------

    def _submit(self, job: Job, now: float) -> int:
        group = self.model.group_of(job)
        self.recorder.submitted(job, job.groups[0] if job.groups else None)
        self.recorder.placed(job.job_id, group, job.groups[0] if job.groups else None)
        total = job.total
        if not total.fits_within_strict(self.capacity):
            self.recorder.rejected(job.job_id, now, f"needs {resources_text(total)}, more "
                                   f"than the whole cluster ({resources_text(self.capacity)})",
                                   "larger than the whole cluster")
            return 1
        never = self.model.submit(job)
        if never is not None:
            self.recorder.rejected(job.job_id, now, f"needs {resources_text(total)}: "
                                   f"{never}", never)
            return 1
        line = (group, job_priority(job), total)
        self.jobs[job.job_id] = job
        self.line[job.job_id] = line
        self.order[job.job_id] = next(self.submissions)
        self.recorder.lines_up(job.job_id, now, line)
        self._enqueue(job.job_id, now)
        return 0

    def _enqueue(self, job_id: str, now: float) -> None:
        """The job waits in its line: tried now if it leads it, else charged as its first."""
        line = self.line[job_id]
        queue = self.lines.setdefault(line, [])
        head = queue[0][1] if queue else None
        heapq.heappush(queue, (self.order[job_id], job_id))
        self.backlog += 1
        if head is None:
            self.ready.add(line)
        elif queue[0][1] == job_id:  # a restart ahead of the line's first
            self.recorder.waits_turn(head, now)
            self.refusals.pop(line, None)
            self._unpark(line)
        else:
            self.recorder.waits_turn(job_id, now)

    def _settle(self, now: float) -> int:
        """Revoke what must go, start what fits, and again while a pass leaves lines to try
        (jobs its starts pushed out, lines they loosened after their turn), at most eight
        passes; then charge the lines their quota holds to the cluster if it no longer has
        room for them."""
        ended = self._evict(self.model.revoked(), now)
        for _ in range(8):
            ended += self._pass(now)
            if not self.ready:
                break
        self._recharge(now)
        self._note(now)
        return ended

    def _evict(self, victims: list[str], now: float) -> int:
        killed = 0
        for job_id in victims:
            job = self.jobs[job_id]
            group, _, total = self.line[job_id]
            self.recorder.preempted(job_id, now)
            self.timeline.change(now, job.user, job.groups[0] if job.groups else None, group,
                                 -total, -1)
            self.free = self.free + total
            self.tally.victim(job.user, job.groups[0] if job.groups else None, group)
            self.tally.lost_run(total, now - self.started_at.pop(job_id))
            self.end_seq.pop(job_id, None)
            if self.options.kill_preempted:
                self.tally.killed += 1
                self._forget(job_id)
                self.recorder.gave_up(job_id, now, f"revoked from quota {group} and killed",
                                      f"revoked from quota {group} and killed")
                killed += 1
            else:
                self.tally.restarted += 1
                self._enqueue(job_id, now)
        return killed

    def _pass(self, now: float) -> int:
        """Try the first job of every line that could start, once, in priority then
        submission order across the backlog; each job that fits starts, and what it pushes
        out is evicted at once. Lines a start loosens are tried in their turn if it is still
        to come, else in the next pass. Returns how many victims were killed."""
        self.passes += 1
        killed = 0
        self.ready.update(self._loosen())
        self._room_grew()
        heads = [(-line[1], self.lines[line][0][0], line) for line in self.ready]
        self.ready.clear()
        heapq.heapify(heads)
        made = 0
        while heads:
            turn = heapq.heappop(heads)
            line = turn[2]
            queue = self.lines[line]
            job_id = queue[0][1]
            reason = self.model.try_start(self.jobs[job_id], self.free)
            if reason is not None:
                self._refuse(line, reason, now)
                if line not in self.ready:  # else tried again in the next pass
                    self.parked_in.setdefault(line[0], set()).add(line)
                continue
            heapq.heappop(queue)
            self.refusals.pop(line, None)
            self.backlog -= 1
            made += 1
            self._start(job_id, line, now)
            if queue:
                heapq.heappush(heads, (-line[1], queue[0][0], line))
            else:
                del self.lines[line]
                self.ready.discard(line)
            killed += self._evict(self.model.revoked(), now)
            for other in self._loosen():
                later = (-other[1], self.lines[other][0][0], other)
                if later[:2] > turn[:2]:
                    heapq.heappush(heads, later)
                else:
                    self.ready.add(other)
        self.allocations += made
        self.decisions += made + self.backlog
        return killed

    def _start(self, job_id: str, line: Line, now: float) -> None:
        job = self.jobs[job_id]
        total = line[2]
        self.recorder.started(job_id, now)
        self.started_at[job_id] = now
        self.free = self.free - total
        self.seq += 1
        self.end_seq[job_id] = self.seq
        heapq.heappush(self.ends, (now + job.duration, self.seq, job_id))
        self.timeline.change(now, job.user, job.groups[0] if job.groups else None,
                             line[0], total, 1)

    # -- refused lines -----------------------------------------------------------------------

    def _refuse(self, line: Line, reason: str, now: float) -> None:
        """The line's first is held by `reason` from now on: charge it, and index the line
        to be woken when the free room covers it (refused for want of room) or charged to
        the cluster once the free room no longer covers it (refused by its quota)."""
        self.recorder.waiting(self.lines[line][0][1], now,
                              "node" if reason == FULL_CLUSTER else "queue", reason)
        stamp = next(self.stamps)
        self.refusals[line] = (reason, stamp)
        total = line[2]
        if reason == FULL_CLUSTER:
            lacking = max(total.items(), key=lambda item: item[1] - self.free.get(item[0], 0))
            heapq.heappush(self.wants_room.setdefault(lacking[0], []),
                           (lacking[1], stamp, line))
        else:
            for name, amount in total.items():
                heapq.heappush(self.held_by_quota.setdefault(name, []), (-amount, stamp, line))

    def _unpark(self, line: Line) -> None:
        self.parked_in.get(line[0], set()).discard(line)
        self.ready.add(line)

    def _loosen(self) -> list[Line]:
        """Take out of the parked lines those of the groups the model loosened."""
        loosened = self.model.loosened()
        woken: list[Line] = []
        for group in list(self.parked_in) if loosened is None else loosened:
            woken.extend(self.parked_in.pop(group, ()))
        return woken

    def _room_grew(self) -> None:
        """Make ready the lines refused for want of room that the free room now covers."""
        for name, heap in self.wants_room.items():
            room = self.free.get(name, 0)
            while heap and heap[0][0] <= room:
                _, stamp, line = heapq.heappop(heap)
                if self.refusals.get(line, ("", -1))[1] == stamp:
                    self._unpark(line)

    def _recharge(self, now: float) -> None:
        """Lines their quota refused that the cluster's free room no longer covers wait for
        room from now on (the cluster holds them first)."""
        for name, heap in self.held_by_quota.items():
            room = self.free.get(name, 0)
            while heap and -heap[0][0] > room:
                _, stamp, line = heapq.heappop(heap)
                if self.refusals.get(line, ("", -1))[1] == stamp:
                    self._refuse(line, FULL_CLUSTER, now)

    # -- ends --------------------------------------------------------------------------------

    def _forget(self, job_id: str) -> None:
        self.model.end(job_id)
        del self.jobs[job_id], self.order[job_id], self.line[job_id]

    def _finish(self, job_id: str, now: float) -> None:
        job = self.jobs[job_id]
        group, _, total = self.line[job_id]
        del self.end_seq[job_id], self.started_at[job_id]
        self._forget(job_id)
        self.free = self.free + total
        self.timeline.change(now, job.user, job.groups[0] if job.groups else None, group,
                             -total, -1)
        self.recorder.finished(job_id, now)

    def _give_up(self, now: float) -> int:
        count = 0
        for line, queue in self.lines.items():
            # a line not refused yet was revoked at the last event, after the last pass
            reason = self.refusals.get(line, ("revoked at the last event", 0))[0]
            cause = ("still waiting for room in the cluster when the trace ended"
                     if reason == FULL_CLUSTER
                     else f"still held by quota {line[0]} when the trace ended")
            for _, job_id in sorted(queue):
                self._forget(job_id)
                self.recorder.gave_up(job_id, now, f"still waiting when the trace ended: "
                                      f"{reason}", cause)
                count += 1
        self.lines.clear()
        self.backlog = 0
        self._note(now)
        return count

    def _note(self, now: float) -> None:
        count = self.backlog
        if self.pending and self.pending[-1][0] == now:
            self.pending[-1] = (now, count)
        elif not self.pending or self.pending[-1][1] != count:
            self.pending.append((now, count))
        for name, figures in self.model.figures().items():
            points = self.tracks.setdefault(name, [])
            if points and points[-1][1] == figures:
                continue
            if points and points[-1][0] == now:
                points[-1] = (now, figures)
            else:
                points.append((now, figures))
    # -- results -----------------------------------------------------------------------------

    def _leftover(self) -> dict[str, Resource]:
        left: dict[str, Resource] = {}
        for name, points in self.tracks.items():
            used = points[-1][1].used
            if used:
                left[f"quota:{name}"] = used
        left.update(self.timeline.leftover())
        return left

    def _result(self, end: float, performance: Performance) -> SimulationResult:
        outcomes = self.recorder.outcomes()
        user_series = self.timeline.series("user")
        group_series = self.timeline.series("group")
        total = self.timeline.total()
        everybody, users, groups = summarise(outcomes, user_series, group_series, total)
        tracks = tuple(
            QuotaTrack(name, tuple(t for t, _ in points),
                       tuple(f.used for _, f in points), tuple(f.runtime for _, f in points),
                       points[-1][1].min, points[-1][1].max,
                       tuple(f.borrowed for _, f in points), tuple(f.lent for _, f in points),
                       points[-1][1].cohort_quota)
            for name, points in sorted(self.tracks.items()))
        return SimulationResult(
            label=self.label, config_source=self.options.config_source,
            workload=self.workload, cluster=self.cluster, outcomes=outcomes,
            everybody=everybody, users=users, groups=groups, user_series=user_series,
            group_series=group_series, queue_series=self.timeline.series("queue"),
            total_series=total, user_limits={}, group_limits={},
            start_time=self.workload.jobs[0].submit, end_time=end,
            leftover=self._leftover(), performance=performance,
            pending_series=(*self.pending, (end, 0)),
            preemptions=self.tally.stats({}), model=self.model.name, quota_tracks=tracks)


def job_priority(job: Job) -> int:
    """A job's priority from its `priority` tag (0 when absent or not a number)."""
    text = job.tags.get("priority", "0")
    try:
        return int(text)
    except ValueError:
        return 0

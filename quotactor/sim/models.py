"""Replaying a workload under a quota model other than the embedded YuniKorn scheduler.

A quota model answers four questions as virtual time passes: may this job start now (and if
not, what holds it back), which running jobs must give their room back (revoked or
preempted), what a job's end releases, and what each quota group's figures are (used,
runtime, min, max). `replay_model` drives any such model through the workload's events and
builds the same `SimulationResult` the YuniKorn replay does, so the summary, the what-if
analysis, the checks and the plots are shared.

Jobs wait per quota group in order of priority, then submission, and a group's head that
cannot start blocks the rest of its group (no backfill): what a gang-scheduled job queue in
front of a quota does, and it keeps a pass proportional to the number of groups rather than
to the backlog. A job whose total exceeds its group's max can never start and is rejected
at submission. A revoked job restarts from scratch (its work lost) or, with `kill_preempted`,
is killed, and is counted in `result.preemptions` as the YuniKorn replay's victims are.

A job starts whole or not at all, so jobs can block one another: under an elastic quota each
waiting job's request shrinks its siblings' runtimes, and three jobs each bigger than the
share its quota gets while the others wait never start, though the cluster is idle (pods of
Kubernetes would start one by one). The replay does not break such a standoff: the jobs wait
for a change (an arrival or an end) and, if none comes, are given up when the trace ends,
with the reason they were last refused for.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from quotactor.core.resources import Resource
from quotactor.sim.cluster import ClusterSpec
from quotactor.sim.fmt import resources_text
from quotactor.sim.jobs import Job, Workload
from quotactor.sim.outcomes import OutcomeRecorder
from quotactor.sim.preemptions import PreemptionTally
from quotactor.sim.progress import Progress
from quotactor.sim.result import Performance, QuotaTrack, SimulationResult
from quotactor.sim.stats import summarise
from quotactor.sim.usage import UsageTimeline

__all__ = ["FULL_CLUSTER", "GroupFigures", "ModelOptions", "QuotaModel", "job_priority",
           "replay_model"]

FULL_CLUSTER = "full cluster"
"""What `try_start` answers when the job's quota would admit it but the cluster has no room."""


@dataclass(frozen=True, slots=True)
class GroupFigures:
    """One quota group at one moment: what it uses, what it may use now, its bounds."""

    used: Resource
    runtime: Resource
    min: Resource
    max: Resource


class QuotaModel(Protocol):
    """What `replay_model` needs from a quota model (jobs are named by `job_id`)."""

    name: str

    def group_of(self, job: Job) -> str:
        """The quota group the job is charged to."""
        ...

    def submit(self, job: Job) -> str | None:
        """Register a pending job; returns why it can never run (then it is not kept)."""
        ...

    def try_start(self, job: Job) -> str | None:
        """Start the job if its group admits it now (None), else what holds it back."""
        ...

    def end(self, job_id: str) -> None:
        """The job finished or was killed: forget it, releasing what it held."""
        ...

    def revoked(self) -> list[str]:
        """Running jobs that must give their room back now; each is already pending again."""
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


class _ModelReplay:
    def __init__(self, model: QuotaModel, workload: Workload, cluster: ClusterSpec,
                 options: ModelOptions) -> None:
        self.model = model
        self.workload = workload
        self.cluster = cluster
        self.options = options
        self.label = options.label or model.name
        self.recorder = OutcomeRecorder()
        self.timeline = UsageTimeline()
        self.tally = PreemptionTally()
        self.jobs: dict[str, Job] = {}
        self.group: dict[str, str] = {}
        self.started_at: dict[str, float] = {}
        self.end_seq: dict[str, int] = {}
        self.waiting: dict[str, list[tuple[int, int, str]]] = {}
        self.order: dict[str, int] = {}
        """Submission order, the tie-break among equal priorities (a restart keeps its place)."""
        self.refused: dict[str, str] = {}
        """The last reason each waiting job was refused for."""
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
        capacity = self.cluster.capacity
        if not job.total.fits_within_strict(capacity):
            self.recorder.rejected(job.job_id, now, f"needs {resources_text(job.total)}, more "
                                   f"than the whole cluster ({resources_text(capacity)})",
                                   "larger than the whole cluster")
            return 1
        never = self.model.submit(job)
        if never is not None:
            self.recorder.rejected(job.job_id, now, f"needs {resources_text(job.total)}: "
                                   f"{never}", never)
            return 1
        self.jobs[job.job_id] = job
        self.group[job.job_id] = group
        self.order[job.job_id] = len(self.order)
        self._enqueue(job, group)
        return 0

    def _enqueue(self, job: Job, group: str) -> None:
        heapq.heappush(self.waiting.setdefault(group, []),
                       (-job_priority(job), self.order[job.job_id], job.job_id))

    def _settle(self, now: float) -> int:
        """Revoke what must go, start what fits, and again while starts preempt others (a
        start in a tree model can push borrowers out)."""
        ended = self._evict(self.model.revoked(), now)
        for _ in range(8):
            self._pass(now)
            victims = self.model.revoked()
            if not victims:
                break
            ended += self._evict(victims, now)
        self._note(now)
        return ended

    def _evict(self, victims: list[str], now: float) -> int:
        killed = 0
        for job_id in victims:
            job = self.jobs[job_id]
            group = self.group[job_id]
            self.recorder.preempted(job_id, now)
            self.timeline.change(now, job.user, job.groups[0] if job.groups else None, group,
                                 -job.total, -1)
            self.tally.victim(job.user, job.groups[0] if job.groups else None, group)
            self.tally.lost_run(job.total, now - self.started_at.pop(job_id))
            self.end_seq.pop(job_id, None)
            if self.options.kill_preempted:
                self.tally.killed += 1
                self._forget(job_id)
                self.recorder.gave_up(job_id, now, f"revoked from quota {group} and killed",
                                      f"revoked from quota {group} and killed")
                killed += 1
            else:
                self.tally.restarted += 1
                self._enqueue(job, group)
        return killed

    def _pass(self, now: float) -> None:
        self.passes += 1
        for group, heap in self.waiting.items():
            while heap:
                job_id = heap[0][2]
                job = self.jobs[job_id]
                self.decisions += 1
                reason = self.model.try_start(job)
                if reason is not None:
                    self.refused[job_id] = reason
                    self.recorder.waiting(job_id, now,
                                          "node" if reason == FULL_CLUSTER else "queue", reason)
                    break
                heapq.heappop(heap)
                self.refused.pop(job_id, None)
                self.allocations += 1
                self.recorder.started(job_id, now)
                self.started_at[job_id] = now
                self.seq += 1
                self.end_seq[job_id] = self.seq
                heapq.heappush(self.ends, (now + job.duration, self.seq, job_id))
                self.timeline.change(now, job.user, job.groups[0] if job.groups else None,
                                     group, job.total, 1)

    def _forget(self, job_id: str) -> None:
        self.model.end(job_id)
        del self.jobs[job_id], self.group[job_id], self.order[job_id]
        self.refused.pop(job_id, None)

    def _finish(self, job_id: str, now: float) -> None:
        job = self.jobs[job_id]
        group = self.group[job_id]
        del self.end_seq[job_id], self.started_at[job_id]
        self._forget(job_id)
        self.timeline.change(now, job.user, job.groups[0] if job.groups else None, group,
                             -job.total, -1)
        self.recorder.finished(job_id, now)

    def _give_up(self, now: float) -> int:
        count = 0
        for group, heap in self.waiting.items():
            head = min(heap)[2] if heap else ""
            for _, _, job_id in sorted(heap):
                reason = self.refused.get(job_id) or f"behind {head} in quota group {group}"
                self._forget(job_id)
                self.recorder.gave_up(job_id, now, f"still waiting when the trace ended: "
                                      f"{reason}", f"still held by quota {group} when the "
                                      "trace ended")
                count += 1
            heap.clear()
        self._note(now)
        return count

    def _note(self, now: float) -> None:
        count = sum(len(h) for h in self.waiting.values())
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
                       points[-1][1].min, points[-1][1].max)
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

"""What happened to each job during a replay, recorded as it happens in virtual time.

The replay tells the recorder about submissions, waits, starts, ends and rejections; the
recorder turns them into one frozen `JobOutcome` per job. Time a job spends waiting is charged
to the obstacle the scheduler named for it (a user, group or queue limit, or no node with
room) from the moment the obstacle was reported until the next report or the start, so the
totals answer "how long did limits hold this job back" rather than "how long did it wait".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType

from quotactor.sim.jobs import Job

__all__ = ["HELD_KINDS", "JobOutcome", "JobState", "OutcomeRecorder"]

HELD_KINDS = ("user", "group", "queue", "node")
"""The obstacles waiting time is charged to (the scheduler's wait kinds)."""


class JobState(StrEnum):
    COMPLETED = "completed"
    REJECTED = "rejected"
    NEVER_STARTED = "never-started"
    """Still waiting when nothing was left to happen: it could never have run."""


@dataclass(frozen=True, slots=True)
class JobOutcome:
    """One job's fate; `wait` is start minus submit (None when it never started)."""

    job_id: str
    user: str
    group: str | None
    queue: str
    state: JobState
    submit: float
    start: float | None
    end: float | None
    held: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    reason: str = ""
    held_by: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    """Seconds held back per obstacle named in full (`user u4's applications limit at
    root.a`, `full nodes`): what the summary ranks limits by."""
    cause: str = ""
    """For a job that did not complete: its reason without the job's own figures, so that
    jobs turned away for the same reason share it and the summary can count them."""

    @property
    def wait(self) -> float | None:
        return None if self.start is None else self.start - self.submit


class _Open:
    """A job between submission and its end."""

    __slots__ = ("group", "held", "held_by", "job", "kind", "owner", "queue", "since", "start")

    def __init__(self, job: Job, group: str | None) -> None:
        self.job = job
        self.group = group
        self.queue = job.queue or ""
        self.start: float | None = None
        self.kind: str | None = None
        self.owner: str | None = None
        self.since = job.submit
        self.held = dict.fromkeys(HELD_KINDS, 0.0)
        self.held_by: dict[str, float] = {}

    def charge(self, now: float) -> None:
        if self.kind is not None:
            self.held[self.kind] += now - self.since
        if self.owner is not None:
            self.held_by[self.owner] = self.held_by.get(self.owner, 0.0) + now - self.since
        self.since = now


class OutcomeRecorder:
    """Collects every job's outcome; `outcomes()` returns them in submit order."""

    def __init__(self) -> None:
        self._open: dict[str, _Open] = {}
        self._done: dict[str, JobOutcome] = {}
        self._order: list[str] = []

    def submitted(self, job: Job, group: str | None) -> None:
        self._open[job.job_id] = _Open(job, group)
        self._order.append(job.job_id)

    def placed(self, job_id: str, queue: str, group: str | None) -> None:
        entry = self._open[job_id]
        entry.queue, entry.group = queue, group

    def waiting(self, job_id: str, now: float, kind: str | None,
                owner: str | None = None) -> None:
        """The obstacle holding the job back from `now` on (None: none reported); `owner`
        names it in full (which user's, group's or queue's limit)."""
        entry = self._open[job_id]
        owner = owner if owner is not None else kind
        if entry.start is not None or (kind, owner) == (entry.kind, entry.owner):
            return
        entry.charge(now)
        entry.kind, entry.owner = kind, owner

    def started(self, job_id: str, now: float) -> None:
        entry = self._open[job_id]
        if entry.start is None:
            entry.charge(now)
            entry.kind = entry.owner = None
            entry.start = now

    def finished(self, job_id: str, now: float) -> None:
        self._close(job_id, JobState.COMPLETED, now, "")

    def rejected(self, job_id: str, now: float, reason: str, cause: str = "") -> None:
        self._close(job_id, JobState.REJECTED, now, reason, cause or reason)

    def gave_up(self, job_id: str, now: float, reason: str, cause: str = "") -> None:
        self._close(job_id, JobState.NEVER_STARTED, now, reason, cause or reason)

    def _close(self, job_id: str, state: JobState, now: float, reason: str,
               cause: str = "") -> None:
        entry = self._open.pop(job_id)
        entry.charge(now)
        held = MappingProxyType({k: v for k, v in entry.held.items() if v})
        held_by = MappingProxyType({k: v for k, v in entry.held_by.items() if v})
        start = entry.start if state is JobState.COMPLETED else None
        self._done[job_id] = JobOutcome(entry.job.job_id, entry.job.user, entry.group,
                                        entry.queue, state, entry.job.submit, start,
                                        now if state is JobState.COMPLETED else None, held,
                                        reason, held_by, cause)

    def outcomes(self) -> tuple[JobOutcome, ...]:
        """Every closed job, in submission order (open ones are not included)."""
        return tuple(self._done[j] for j in self._order if j in self._done)

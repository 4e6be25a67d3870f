"""What happened to each job during a replay, recorded as it happens in virtual time.

The replay tells the recorder about submissions, waits, starts, ends and rejections; the
recorder turns them into one frozen `JobOutcome` per job. Time a job spends waiting is charged
to the obstacle the scheduler named for it (a user, group or queue limit, or no node with
room) from the moment the obstacle was reported until the next report or the start, so the
totals answer "how long did limits hold this job back" rather than "how long did it wait".

A user's alike jobs (same queue, same asks) take turns: only the first is tried, the others
wait behind it. Their time is charged to whatever holds the first back, as it changes (a
ledger per line of alike jobs, `_Turns`), so a backlog behind a user's `maxApplications`
counts as held by that limit whether one job or a thousand wait for it.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
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


Cause = tuple[str, str]
"""(kind, owner) of an obstacle."""


class _Turns:
    """What held the first of a line of alike jobs back, summed over time (the others wait
    behind it and are charged alike, by the difference of two readings)."""

    __slots__ = ("cause", "first", "since", "spent")

    def __init__(self, now: float) -> None:
        self.first: str | None = None
        self.cause: Cause | None = None
        self.since = now
        self.spent: dict[Cause, float] = {}

    def follow(self, now: float, first: str | None, cause: Cause | None) -> None:
        """From `now` on, `first` leads the line, held back by `cause`."""
        self._settle(now)
        self.first, self.cause = first, cause

    def read(self, now: float) -> dict[Cause, float]:
        self._settle(now)
        return dict(self.spent)

    def _settle(self, now: float) -> None:
        if self.cause is not None:
            self.spent[self.cause] = self.spent.get(self.cause, 0.0) + now - self.since
        self.since = now


class _Open:
    """A job between submission and its end."""

    __slots__ = ("behind", "group", "held", "held_by", "job", "kind", "line", "owner", "queue",
                 "seen", "since", "start")

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
        self.line: _Turns | None = None
        self.behind: _Turns | None = None
        """The line whose first this job waits behind, and its reading when it began to."""
        self.seen: dict[Cause, float] = {}

    def charge(self, now: float) -> None:
        if self.kind is not None:
            self.held[self.kind] += now - self.since
        if self.owner is not None:
            self.held_by[self.owner] = self.held_by.get(self.owner, 0.0) + now - self.since
        self.since = now
        if self.behind is not None:
            spent = self.behind.read(now)
            for (kind, owner), seconds in spent.items():
                gained = seconds - self.seen.get((kind, owner), 0.0)
                if gained:
                    self.held[kind] += gained
                    self.held_by[owner] = self.held_by.get(owner, 0.0) + gained
            self.seen = spent

    def leads(self) -> bool:
        return self.line is not None and self.line.first == self.job.job_id


class OutcomeRecorder:
    """Collects every job's outcome; `outcomes()` returns them in submit order."""

    def __init__(self) -> None:
        self._open: dict[str, _Open] = {}
        self._done: dict[str, JobOutcome] = {}
        self._order: list[str] = []
        self._lines: dict[Hashable, _Turns] = {}

    def submitted(self, job: Job, group: str | None) -> None:
        self._open[job.job_id] = _Open(job, group)
        self._order.append(job.job_id)

    def placed(self, job_id: str, queue: str, group: str | None) -> None:
        entry = self._open[job_id]
        entry.queue, entry.group = queue, group

    def lines_up(self, job_id: str, now: float, line: Hashable) -> None:
        """The job is one of `line`'s alike jobs (its user's, in its queue, asking the same):
        whichever of them leads the line tells what holds them all back."""
        turns = self._lines.get(line)
        if turns is None:
            turns = self._lines[line] = _Turns(now)
        self._open[job_id].line = turns

    def waiting(self, job_id: str, now: float, kind: str | None,
                owner: str | None = None) -> None:
        """The obstacle holding the job back from `now` on (None: none reported); `owner`
        names it in full (which user's, group's or queue's limit). The job leads its line
        from now on: only the first of alike jobs is told an obstacle of its own."""
        entry = self._open[job_id]
        if entry.start is not None:
            return
        owner = owner if owner is not None else kind
        if entry.line is not None:
            entry.line.follow(now, job_id, None if kind is None or owner is None
                              else (kind, owner))
        if entry.behind is None and (kind, owner) == (entry.kind, entry.owner):
            return
        entry.charge(now)
        entry.behind = None
        entry.kind, entry.owner = kind, owner

    def waits_turn(self, job_id: str, now: float) -> None:
        """The job waits behind the first of its line (`lines_up`), held by what holds it."""
        entry = self._open[job_id]
        line = entry.line
        if entry.start is not None or line is None or entry.behind is line:
            return
        entry.charge(now)
        if entry.leads():
            line.follow(now, None, None)
        entry.kind = entry.owner = None
        entry.behind = line
        entry.seen = line.read(now)

    def leaves_line(self, job_id: str, now: float) -> None:
        """The job started in part (its first allocation, not its last): it no longer takes
        turns with its alike jobs, so its reasons no longer stand for theirs."""
        entry = self._open[job_id]
        entry.charge(now)
        _leave_line(entry, now)
        entry.line = None

    def started(self, job_id: str, now: float) -> None:
        entry = self._open[job_id]
        if entry.start is None:
            entry.charge(now)
            _leave_line(entry, now)
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
        _leave_line(entry, now)
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


def _leave_line(entry: _Open, now: float) -> None:
    """`entry` started or ended: if it led its line, nobody does until the next reports."""
    if entry.line is not None and entry.leads():
        entry.line.follow(now, None, None)
    entry.behind = None

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

A job a limit holds is charged to the limit only while the nodes have room for it, and to the
nodes otherwise (`blame`). Alike jobs share one log of when that room came and went
(`RoomLog`): a job charged by it is settled from the log when it is next read, so a change of
room costs one entry in the log, not a charge per job it concerns.

A running job may lose its run (preempted or revoked, `preempted`): it starts over from
scratch, its run so far is lost, and the time it then waits is charged like any other wait.
Each outcome keeps every run, so a reader sees the job's first start, the start of the run
that completed, its restarts, the time it spent not running and the work its lost runs cost.
"""

from __future__ import annotations

from array import array
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType

from quotactor.sim.inputs.jobs import Job

__all__ = ["HELD_KINDS", "Interval", "JobOutcome", "JobState", "OutcomeRecorder", "RoomLog"]

HELD_KINDS = ("user", "group", "queue", "node")
"""The obstacles waiting time is charged to (the scheduler's wait kinds)."""


class JobState(StrEnum):
    COMPLETED = "completed"
    REJECTED = "rejected"
    NEVER_STARTED = "never-started"
    """Still waiting when nothing was left to happen: it could never have run."""


Interval = tuple[float, float]
"""(from, to) in virtual seconds."""


def _no_intervals() -> tuple[Interval, ...]:
    return ()


_NOTHING: Mapping[str, float] = MappingProxyType({})
"""An empty figure mapping (read-only, so every outcome without such figures shares it)."""


def _frozen(figures: dict[str, float]) -> Mapping[str, float]:
    """`figures` read-only; the shared empty mapping when there are none."""
    return MappingProxyType(figures) if figures else _NOTHING


@dataclass(frozen=True, slots=True)
class JobOutcome:
    """One job's fate.

    `start` and `end` are those of the run that completed (None unless the job completed),
    so `end - start` is the job's duration; `wait` is `start - submit`, lost runs included.
    `runs` holds every run in order: for a completed job the last one is the run that
    completed and the others were lost; for a job that did not complete all of them were.
    """

    job_id: str
    user: str
    group: str | None
    queue: str
    state: JobState
    submit: float
    start: float | None
    end: float | None
    held: Mapping[str, float] = field(default_factory=lambda: _NOTHING)
    reason: str = ""
    held_by: Mapping[str, float] = field(default_factory=lambda: _NOTHING)
    """Seconds held back per obstacle named in full (`user u4's applications limit at
    root.a`, `full nodes`): what the summary ranks limits by."""
    cause: str = ""
    """For a job that did not complete: its reason without the job's own figures, so that
    jobs turned away for the same reason share it and the summary can count them."""
    runs: tuple[Interval, ...] = field(default_factory=_no_intervals)
    """Every (start, end) the job ran, in order."""
    work_lost: Mapping[str, float] = field(default_factory=lambda: _NOTHING)
    """Per resource, the job's total times the seconds its lost runs ran: quantity-seconds
    in base units (millicore-seconds for vcore, byte-seconds for memory)."""
    partly_placed: tuple[Interval, ...] = field(default_factory=_no_intervals)
    """When the job held some of its tasks without running (placed ask by ask): from its
    first allocation to its start or its end. It held at most its total then, and maybe
    nothing after a preemption released what it held."""

    @property
    def wait(self) -> float | None:
        """Seconds from submission to the start of the run that completed (None when the job
        did not complete)."""
        return None if self.start is None else self.start - self.submit

    @property
    def first_start(self) -> float | None:
        """When the job first ran (None if it never ran, lost runs included)."""
        return self.runs[0][0] if self.runs else None

    @property
    def restarts(self) -> int:
        """How many times the job ran again after losing a run."""
        return max(0, len(self.runs) - 1)

    @property
    def lost_seconds(self) -> float:
        """Seconds the job ran in runs it lost."""
        lost = self.runs if self.state is not JobState.COMPLETED else self.runs[:-1]
        return sum(end - start for start, end in lost)

    @property
    def total_wait(self) -> float | None:
        """Seconds between submission and the final end the job was not running (None when it
        did not complete)."""
        if self.end is None:
            return None
        return self.end - self.submit - sum(end - start for start, end in self.runs)


Cause = tuple[str, str]
"""(kind, owner) of an obstacle."""


class RoomLog:
    """Whether the nodes had room for a set of alike jobs, over time: at the start, and every
    moment that changed since (ascending). While there is no room, a job charged by the log
    is held by `full` instead of its own limit."""

    __slots__ = ("first", "flips", "full")

    def __init__(self, room: bool, full: Cause) -> None:
        self.first = room
        self.flips = array("d")
        self.full = full

    @property
    def room(self) -> bool:
        return self.first != bool(len(self.flips) & 1)

    def set(self, now: float, room: bool) -> None:
        """From `now` on, the nodes have room (or not)."""
        if room != self.room:
            self.flips.append(now)

    def pieces(self, mark: int, since: float, now: float,
               cause: Cause) -> list[tuple[Cause, float]]:
        """The time from `since` (when the log had `mark` flips) to `now`, cut where the room
        changed, each piece with what held the job then (`cause` while there was room)."""
        flips = self.flips
        room = self.first != bool(mark & 1)
        if mark == len(flips):  # no change since: one piece
            return [(cause if room else self.full, now - since)]
        pieces: list[tuple[Cause, float]] = []
        for index in range(mark, len(flips)):
            moment = flips[index]
            pieces.append((cause if room else self.full, moment - since))
            since, room = moment, not room
        pieces.append((cause if room else self.full, now - since))
        return pieces


class _Turns:
    """What held the first of a line of alike jobs back, summed over time (the others wait
    behind it and are charged alike, by the difference of two readings)."""

    __slots__ = ("cause", "first", "mark", "room", "since", "spent")

    def __init__(self, now: float) -> None:
        self.first: str | None = None
        self.cause: Cause | None = None
        self.room: RoomLog | None = None
        """The log that decides between `cause` and its `full` (None: `cause` throughout)."""
        self.mark = 0
        """How many flips `room` had at `since`."""
        self.since = now
        self.spent: dict[Cause, float] = {}

    def follow(self, now: float, first: str | None, cause: Cause | None,
               room: RoomLog | None = None) -> None:
        """From `now` on, `first` leads the line, held back by `cause` (by `room`'s `full`
        while the nodes have no room, when `room` is given)."""
        self._settle(now)
        self.first, self.cause, self.room = first, cause, room
        if room is not None:
            self.mark = len(room.flips)

    def leads_by(self, first: str, room: RoomLog) -> bool:
        """Whether `first` leads the line, held by `room`."""
        return self.first == first and self.room is room

    def read(self, now: float) -> dict[Cause, float]:
        self._settle(now)
        return dict(self.spent)

    def _settle(self, now: float) -> None:
        spent = self.spent
        if self.room is not None and self.cause is not None:
            for cause, seconds in self.room.pieces(self.mark, self.since, now, self.cause):
                spent[cause] = spent.get(cause, 0.0) + seconds
            self.mark = len(self.room.flips)
        elif self.cause is not None:
            spent[self.cause] = spent.get(self.cause, 0.0) + now - self.since
        self.since = now


class _Open:
    """A job between submission and its end."""

    __slots__ = ("behind", "group", "held", "held_by", "job", "kind", "line", "lost", "mark",
                 "owner", "partial", "placing", "queue", "room", "runs", "seen", "since",
                 "start")

    def __init__(self, job: Job, group: str | None) -> None:
        self.job = job
        self.group = group
        self.queue = job.queue or ""
        self.start: float | None = None
        self.kind: str | None = None
        self.owner: str | None = None
        self.room: RoomLog | None = None
        """While set, the job is held by (`kind`, `owner`) only while the log says the nodes
        have room, and by its `full` otherwise."""
        self.mark = 0
        """How many flips `room` had at `since`."""
        self.since = job.submit
        self.held = dict.fromkeys(HELD_KINDS, 0.0)
        self.held_by: dict[str, float] = {}
        self.line: _Turns | None = None
        self.behind: _Turns | None = None
        """The line whose first this job waits behind, and its reading when it began to."""
        self.seen: dict[Cause, float] = {}
        self.runs: tuple[Interval, ...] = ()
        self.lost = 0.0
        """Seconds run in lost runs."""
        self.placing: float | None = None
        """Since when the job holds some of its tasks without running."""
        self.partial: tuple[Interval, ...] = ()

    def charge(self, now: float) -> None:
        if self.room is not None and self.kind is not None and self.owner is not None:
            for (kind, owner), seconds in self.room.pieces(self.mark, self.since, now,
                                                           (self.kind, self.owner)):
                self.held[kind] += seconds
                self.held_by[owner] = self.held_by.get(owner, 0.0) + seconds
            self.mark = len(self.room.flips)
        else:
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

    def hold(self, kind: str | None, owner: str | None, room: RoomLog | None = None) -> None:
        """From the last `charge` on, (`kind`, `owner`) holds the job (see `room`)."""
        self.kind, self.owner, self.room = kind, owner, room
        if room is not None:
            self.mark = len(room.flips)


Figures = tuple[tuple[str, float], ...]
Closed = tuple[str, str, str | None, str, str, float, float | None, float | None, Figures, str,
               Figures, str, tuple[Interval, ...], Figures, tuple[Interval, ...]]
"""A closed job: `JobOutcome`'s fields in order, its state as its value and its mappings as
(name, figure) pairs, so that it holds only strings, numbers and tuples of them."""


def _outcome(closed: Closed) -> JobOutcome:
    (job_id, user, group, queue, state, submit, start, end, held, reason, held_by, cause, runs,
     lost, partial) = closed
    return JobOutcome(job_id, user, group, queue, JobState(state), submit, start, end,
                      _frozen(dict(held)), reason, _frozen(dict(held_by)), cause, runs,
                      _frozen(dict(lost)), partial)


class OutcomeRecorder:
    """Collects every job's outcome; `outcomes()` returns them in submit order.

    A closed job is kept as a `Closed` tuple until `outcomes()` makes it a `JobOutcome`: the
    garbage collector stops tracking such tuples, so a long replay's finished jobs are not
    walked by every full collection while the replay runs."""

    def __init__(self) -> None:
        self._open: dict[str, _Open] = {}
        self._done: dict[str, Closed] = {}
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
                owner: str | None = None, room: RoomLog | None = None) -> None:
        """The obstacle holding the job back from `now` on (None: none reported); `owner`
        names it in full (which user's, group's or queue's limit). With `room`, it holds the
        job only while the log says the nodes have room, and the log's `full` holds it
        otherwise, as the log changes. The job leads its line from now on: only the first of
        alike jobs is told an obstacle of its own."""
        entry = self._open[job_id]
        if entry.start is not None:
            return
        owner = owner if owner is not None else kind
        if entry.line is not None:
            entry.line.follow(now, job_id, None if kind is None or owner is None
                              else (kind, owner), room)
        if entry.behind is None and (kind, owner, room) == (entry.kind, entry.owner,
                                                            entry.room):
            return
        entry.charge(now)
        entry.behind = None
        entry.hold(kind, owner, room)

    def fix(self, job_id: str, now: float) -> None:
        """A job held by a `RoomLog` is held from `now` on by what holds it now, whatever
        the log says next (the log no longer concerns it)."""
        entry = self._open.get(job_id)
        if entry is None or entry.room is None or entry.kind is None or entry.owner is None:
            return
        room = entry.room
        cause = (entry.kind, entry.owner) if room.room else room.full
        entry.charge(now)
        entry.hold(*cause)
        line = entry.line
        if line is not None and line.leads_by(job_id, room):
            line.follow(now, job_id, cause)

    def waits_turn(self, job_id: str, now: float) -> None:
        """The job waits behind the first of its line (`lines_up`), held by what holds it."""
        entry = self._open[job_id]
        line = entry.line
        if entry.start is not None or line is None or entry.behind is line:
            return
        entry.charge(now)
        if entry.leads():
            line.follow(now, None, None)
        entry.hold(None, None)
        entry.behind = line
        entry.seen = line.read(now)

    def leaves_line(self, job_id: str, now: float) -> None:
        """The job started in part (its first allocation, not its last): it no longer takes
        turns with its alike jobs, so its reasons no longer stand for theirs."""
        entry = self._open[job_id]
        entry.charge(now)
        _leave_line(entry, now)
        entry.line = None
        if entry.placing is None and entry.start is None:
            entry.placing = now

    def started(self, job_id: str, now: float) -> None:
        entry = self._open[job_id]
        if entry.start is None:
            entry.charge(now)
            _leave_line(entry, now)
            entry.hold(None, None)
            entry.start = now
            _stop_placing(entry, now)

    def preempted(self, job_id: str, now: float) -> None:
        """The running job lost its run (preempted or revoked): the run is lost, and from now
        on the job waits again (or is ended next, if it is killed)."""
        entry = self._open[job_id]
        if entry.start is None:
            return
        entry.runs += ((entry.start, now),)
        entry.lost += now - entry.start
        entry.start = None
        entry.since = now

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
        _stop_placing(entry, now)
        held = tuple((k, v) for k, v in entry.held.items() if v)
        held_by = tuple((k, v) for k, v in entry.held_by.items() if v)
        start = entry.start if state is JobState.COMPLETED else None
        if entry.start is not None:
            entry.runs += ((entry.start, now),)
            if start is None:  # ended while running without completing: the run is lost
                entry.lost += now - entry.start
        lost = tuple((name, quantity * entry.lost)
                     for name, quantity in entry.job.total.items()) if entry.lost else ()
        self._done[job_id] = (entry.job.job_id, entry.job.user, entry.group, entry.queue,
                              state.value, entry.job.submit, start,
                              now if state is JobState.COMPLETED else None, held, reason,
                              held_by, cause, entry.runs, lost, entry.partial)

    def outcomes(self) -> tuple[JobOutcome, ...]:
        """Every closed job, in submission order (open ones are not included)."""
        done = self._done
        return tuple(_outcome(done[j]) for j in self._order if j in done)


def _leave_line(entry: _Open, now: float) -> None:
    """`entry` started or ended: if it led its line, nobody does until the next reports."""
    if entry.line is not None and entry.leads():
        entry.line.follow(now, None, None)
    entry.behind = None


def _stop_placing(entry: _Open, now: float) -> None:
    """`entry` started or ended: it no longer holds part of its tasks without running."""
    if entry.placing is not None:
        if now > entry.placing:
            entry.partial += ((entry.placing, now),)
        entry.placing = None

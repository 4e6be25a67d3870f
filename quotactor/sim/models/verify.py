"""Checking a replay's result after the fact against the invariants every model must keep.

`verify` reads only the result (its usage series, quota tracks, limits and per-job runs), so
it checks any quota model the same way and cannot be fooled by the model's own books:

- **capacity**: the running total never exceeds the cluster's capacity, per resource;
- **quota**: no quota group (elastic, quota tree) uses more than its max;
- **limit**: no user or group uses more than a limit on its queue path allows (resources and
  running applications), and no queue more than its maximum (summed over its leaves);
- **job**: no job runs before its submission, runs overlap or outlast its duration, and a
  completed job's final run lasts its duration;
- **books**: nothing is still counted anywhere once every job ended;
- **usage**: every usage series (cluster, user, group, queue) is the sum of what its live
  jobs hold: at least the totals of its running jobs, and at most those plus the totals of
  its jobs placed in part (a job placed ask by ask holds some of its tasks before it runs).

A breach is reported once, at the moment it begins (the next report of the same thing comes
only after it ended), with the jobs running then. Violations come sorted by time.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from quotactor.core.resources import Resource, ResourceLike
from quotactor.sim.fmt import resources_text
from quotactor.sim.models.limits import LimitLine
from quotactor.sim.models.outcomes import Interval, JobOutcome, JobState
from quotactor.sim.models.result import SimulationResult
from quotactor.sim.models.usage import Series

__all__ = ["INVARIANTS", "Verification", "Violation", "check_result", "verify"]

INVARIANTS = ("capacity", "quota", "limit", "job", "books", "usage")
"""The invariants `verify` checks, by the name a `Violation` carries."""

_SHOWN_JOBS = 3
_EMPTY = Resource()


@dataclass(frozen=True, slots=True)
class Violation:
    """One breach of `invariant` (one of `INVARIANTS`) that began at `time`, with the jobs
    involved: those running then (of the user, group, queue or quota group concerned)."""

    time: float
    invariant: str
    what: str
    jobs: tuple[str, ...] = ()

    def __str__(self) -> str:
        text = f"at {self.time:g} s: {self.what}"
        if self.jobs:
            shown = ", ".join(self.jobs[:_SHOWN_JOBS])
            more = len(self.jobs) - _SHOWN_JOBS
            text += f" (job{'s' if len(self.jobs) > 1 else ''} {shown}"
            text += f" and {more} more)" if more > 0 else ")"
        return text


@dataclass(frozen=True, slots=True)
class Verification:
    """What `check_result` found: the violations (sorted by time), how many comparisons it
    made, and at how many distinct moments."""

    violations: tuple[Violation, ...]
    checks: int
    moments: int

    @property
    def first(self) -> Violation | None:
        """The earliest violation (None when every invariant held)."""
        return self.violations[0] if self.violations else None

    def summary(self) -> str:
        """One line: the first violation, or what was verified."""
        if self.first is not None:
            count = len(self.violations)
            return (f"invariant {self.first.invariant} broken {self.first}"
                    + (f" ({count - 1} more violation{'s' if count > 2 else ''})"
                       if count > 1 else ""))
        return (f"verified: {len(INVARIANTS)} invariants held in {self.checks:,} checks at "
                f"{self.moments:,} moments")


def verify(result: SimulationResult) -> list[Violation]:
    """Every breach of the invariants in `result`, sorted by time (empty when all held)."""
    return list(check_result(result).violations)


def check_result(result: SimulationResult) -> Verification:
    """Check `result` against every invariant; see the module's docstring for what each
    means."""
    return _Checker(result).run()


Amount = ResourceLike
"""A resource amount: a `Resource`, or a plain dict where sums are built."""


class _Steps:
    """A step function built from intervals: what the jobs live in them hold, over time."""

    __slots__ = ("counts", "spans", "times", "values")

    def __init__(self, spans: Sequence[tuple[Interval, Resource, str]]) -> None:
        self.spans = [s for s in spans if s[0][0] < s[0][1]]
        deltas: dict[float, tuple[dict[str, int], list[int]]] = {}
        for (start, end), total, _ in self.spans:
            for when, sign in ((start, 1), (end, -1)):
                step, count = deltas.setdefault(when, ({}, [0]))
                for name, quantity in total.items():
                    step[name] = step.get(name, 0) + sign * quantity
                count[0] += sign
        self.times = sorted(deltas)
        self.values: list[Amount] = []
        self.counts: list[int] = []
        value: dict[str, int] = {}
        running = 0
        for when in self.times:
            step, count = deltas[when]
            value = dict(value)
            for name, quantity in step.items():
                value[name] = value.get(name, 0) + quantity
                if not value[name]:
                    del value[name]
            running += count[0]
            self.values.append(value)
            self.counts.append(running)

    def at(self, when: float) -> tuple[Amount, int]:
        """The sum held and the number of intervals open at `when`, changes at `when` done."""
        index = bisect_right(self.times, when) - 1
        return (self.values[index], self.counts[index]) if index >= 0 else (_EMPTY, 0)

    def jobs_at(self, when: float) -> tuple[str, ...]:
        return tuple(sorted(job for (start, end), _, job in self.spans if start <= when < end))


def _series_at(series: Series | None, when: float) -> tuple[Resource, int]:
    if series is None:
        return _EMPTY, 0
    index = bisect_right(series.times, when) - 1
    return (series.values[index], series.running[index]) if index >= 0 else (_EMPTY, 0)


def _under(queue: str, path: str) -> bool:
    return queue == path or queue.startswith(path + ".")


def _over(value: Amount, limit: Amount, strict: bool) -> dict[str, int]:
    """The part of `limit` that `value` exceeds (absent names: unlimited unless `strict`)."""
    return {n: limit.get(n, 0) for n, q in value.items()
            if (n in limit or strict) and q > limit.get(n, 0)}


def _within(value: Amount, bound: Amount) -> bool:
    """No quantity of `value` above `bound`'s (absent names of `bound` count as 0)."""
    return all(q <= bound.get(n, 0) for n, q in value.items())


def _plus(a: Amount, b: Amount) -> dict[str, int]:
    out = dict(a)
    for name, quantity in b.items():
        out[name] = out.get(name, 0) + quantity
    return out


def _owner(o: JobOutcome, kind: str) -> str | None:
    """The user, group or queue (quota group) a job is charged to, by kind."""
    return o.user if kind == "user" else o.group if kind == "group" else o.queue


class _Checker:
    def __init__(self, result: SimulationResult) -> None:
        self.result = result
        self.totals = {job.job_id: job.total for job in result.workload.jobs}
        self.found: list[Violation] = []
        self.checks = 0
        self.moments: set[float] = set()
        self.open: set[tuple[str, ...]] = set()
        """The breaches under way, by subject: reported when they begin only."""
        self.all_runs = self._steps(result.outcomes, "runs")

    def run(self) -> Verification:
        self._capacity()
        self._quotas()
        self._limits()
        self._jobs()
        self._books()
        self._usage()
        order = {name: i for i, name in enumerate(INVARIANTS)}
        found = sorted(self.found, key=lambda v: (v.time, order[v.invariant], v.what))
        return Verification(tuple(found), self.checks, len(self.moments))

    # -- bookkeeping -------------------------------------------------------------------------

    def _steps(self, outcomes: Iterable[JobOutcome],
               which: Literal["runs", "partial"]) -> _Steps:
        """What `outcomes` hold over their runs, or over their partial placements."""
        return _Steps([(span, self.totals.get(o.job_id, _EMPTY), o.job_id)
                       for o in outcomes
                       for span in (o.runs if which == "runs" else o.partly_placed)])

    def _owned(self, kind: str, held_only: bool = False) -> dict[str | None, list[JobOutcome]]:
        """The outcomes by user, group or queue; with `held_only`, of jobs that held
        anything."""
        owned: dict[str | None, list[JobOutcome]] = defaultdict(list)
        for o in self.result.outcomes:
            if not held_only or o.runs or o.partly_placed:
                owned[_owner(o, kind)].append(o)
        return owned

    def _judge(self, subject: tuple[str, ...], when: float, broken: str | None,
               running: _Steps | None = None, jobs: tuple[str, ...] = ()) -> None:
        """One check of `subject` at `when`: `broken` says what is wrong (None: it held).
        A violation names `jobs`, or the jobs of `running` that run at `when`."""
        self.checks += 1
        self.moments.add(when)
        if broken is None:
            self.open.discard(subject)
        elif subject not in self.open:
            self.open.add(subject)
            named = running.jobs_at(when) if running is not None else jobs
            self.found.append(Violation(when, subject[0], broken, named))

    # -- the invariants ----------------------------------------------------------------------

    def _capacity(self) -> None:
        capacity = self.result.cluster.capacity
        total = self.result.total_series
        for when, value in zip(total.times, total.values, strict=True):
            over = _over(value, capacity, strict=True)
            self._judge(("capacity",), when,
                        f"running usage {resources_text(value)} exceeds the cluster's "
                        f"{resources_text(over)}" if over else None, self.all_runs)

    def _quotas(self) -> None:
        owned = self._owned("queue")
        for track in self.result.quota_tracks:
            runs = self._steps(owned.get(track.name, ()), "runs")
            named = runs if runs.spans else self.all_runs
            for when, used in zip(track.times, track.used, strict=True):
                over = _over(used, track.max, strict=False)
                self._judge(("quota", track.name), when,
                            f"quota group {track.name} uses {resources_text(used)}, over its "
                            f"max of {resources_text(over)}" if over else None, named)

    def _limits(self) -> None:
        result = self.result
        for kind, limits, series in (("user", result.user_limits, result.user_series),
                                     ("group", result.group_limits, result.group_series)):
            owned = self._owned(kind, held_only=True)
            for name, lines in sorted(limits.items()):
                for line in lines:
                    self._limit(kind, name, line, series.get(name), owned.get(name, []))
        for path, cap in sorted(result.queue_max.items()):
            leaves = [s for leaf, s in sorted(result.queue_series.items()) if _under(leaf, path)]
            if not leaves:
                continue
            runs = self._steps((o for o in result.outcomes if _under(o.queue, path)), "runs")
            for when in sorted({t for s in leaves for t in s.times}):
                used: dict[str, int] = {}
                for leaf in leaves:
                    used = _plus(used, _series_at(leaf, when)[0])
                over = _over(used, cap, strict=False)
                self._judge(("limit", "queue", path), when,
                            f"queue {path} uses {resources_text(used)}, over its maximum of "
                            f"{resources_text(over)}" if over else None, runs)

    def _limit(self, kind: str, name: str, line: LimitLine, series: Series | None,
               jobs: list[JobOutcome]) -> None:
        """One limit of a user or group: its series where all its `jobs` (those that held
        anything) are under the limit's queue, else what its running jobs there hold."""
        scoped = [o for o in jobs if _under(o.queue, line.path)]
        runs = self._steps(scoped, "runs")
        points: Iterable[tuple[float, Amount, int]]
        if len(scoped) == len(jobs) and series is not None:
            points = zip(series.times, series.values, series.running, strict=True)
        else:
            points = ((t, *runs.at(t)) for t in runs.times)
        subject = ("limit", kind, name, line.path)
        for when, used, running in points:
            over = _over(used, line.resources, strict=False)
            broken = None
            if over:
                broken = (f"{kind} {name} uses {resources_text(used)} at {line.path}, over "
                          f"its limit of {resources_text(over)}")
            elif line.applications and running > line.applications:
                broken = (f"{kind} {name} runs {running} applications at {line.path}, over "
                          f"its limit of {line.applications}")
            self._judge(subject, when, broken, runs)

    def _jobs(self) -> None:
        durations = {job.job_id: job.duration for job in self.result.workload.jobs}
        for o in self.result.outcomes:
            duration = durations.get(o.job_id, 0.0)
            previous_end = o.submit
            for index, (start, end) in enumerate(o.runs):
                broken = None
                if start < o.submit:
                    broken = f"job {o.job_id} started before its submission at {o.submit:g} s"
                elif start < previous_end:
                    broken = f"job {o.job_id} started again before its previous run ended"
                elif end - start > duration + _slack(end):
                    broken = (f"job {o.job_id} ran {end - start:g} s in one run, longer than "
                              f"its duration of {duration:g} s")
                previous_end = end
                self._judge(("job", o.job_id, str(index)), start, broken, jobs=(o.job_id,))
            if o.state is JobState.COMPLETED:
                final = o.runs[-1] if o.runs else None
                broken = None
                if o.start is None or o.end is None or final != (o.start, o.end):
                    broken = f"completed job {o.job_id} has no final run from its start to its end"
                elif abs(o.end - o.start - duration) > _slack(o.end):
                    broken = (f"completed job {o.job_id} ran {o.end - o.start:g} s, its "
                              f"duration is {duration:g} s")
                self._judge(("job", o.job_id, "final"), o.end if o.end is not None else o.submit,
                            broken, jobs=(o.job_id,))

    def _books(self) -> None:
        left = self.result.leftover
        first = min(left, default=None)
        self._judge(("books",), self.result.end_time,
                    None if first is None else
                    f"still counted after every job ended: {first} holds "
                    f"{resources_text(left[first])}"
                    + (f" ({len(left) - 1} more)" if len(left) > 1 else ""))

    def _usage(self) -> None:
        result = self.result
        self._live("cluster", "the cluster", result.total_series, result.outcomes)
        for kind, series in (("user", result.user_series), ("group", result.group_series),
                             ("queue", result.queue_series)):
            owned = self._owned(kind, held_only=True)
            for name in sorted(set(series) | {n for n in owned if n is not None}):
                self._live(kind, f"{kind} {name}", series.get(name), owned.get(name, []))

    def _live(self, kind: str, who: str, series: Series | None,
              jobs: Sequence[JobOutcome]) -> None:
        """`series` against the jobs live in it: their runs, and their partial placements."""
        runs = self._steps(jobs, "runs")
        partial = self._steps(jobs, "partial")
        times = sorted({*(series.times if series is not None else ()), *runs.times,
                        *partial.times})
        for when in times:
            value, running = _series_at(series, when)
            low, low_count = runs.at(when)
            extra, extra_count = partial.at(when)
            most = _plus(low, extra)
            broken = None
            if (not _within(low, value) or running < low_count
                    or any(q < 0 for q in value.values())):
                broken = (f"{who} counts {resources_text(value)} in {running} jobs while "
                          f"{low_count} running jobs hold {resources_text(low)}")
            elif not _within(value, most) or running > low_count + extra_count:
                broken = (f"{who} counts {resources_text(value)} in {running} jobs, more than "
                          f"its {low_count} running and {extra_count} partly placed jobs hold "
                          f"({resources_text(most)})")
            self._judge(("usage", kind, who), when, broken, runs)


def _slack(when: float) -> float:
    """Rounding allowed when comparing a difference of two times near `when`."""
    return 1e-9 * max(1.0, abs(when))

"""Gathering parsed jobs and skipped lines into a `Workload`, the same way for every format."""

from __future__ import annotations

import dataclasses
import gzip
import io
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType

from quotactor.logs import get_logger
from quotactor.sim.inputs.jobs import Job, LineProblem, TaskGroup, Workload, WorkloadError

__all__ = ["MAX_KEPT_PROBLEMS", "MAX_LINE", "SharedParts", "WorkloadCollector", "long_line",
           "open_text"]

MAX_KEPT_PROBLEMS = 20
"""Problems kept for the report; the rest are only counted (and logged)."""
MAX_LINE = 1 << 20
"""Characters in one line of a workload file; a longer line is a bad line, never read whole."""
_SKIP = 1 << 16

log = get_logger()


class SharedParts:
    """Gives jobs with equal task groups or equal tags one shared copy of them: a trace of
    many jobs then holds each distinct value once, which keeps its memory, and the objects
    the garbage collector walks during a replay, to about one per job."""

    def __init__(self) -> None:
        self._task_groups: dict[tuple[TaskGroup, ...], tuple[TaskGroup, ...]] = {}
        self._tags: dict[tuple[tuple[str, str], ...], Mapping[str, str]] = {}

    def job(self, job: Job) -> Job:
        """`job`, made of the copies seen before where it has equal parts."""
        task_groups = self._task_groups.setdefault(job.task_groups, job.task_groups)
        tags = self._tags.setdefault(tuple(sorted(job.tags.items())), job.tags)
        if task_groups is job.task_groups and tags is job.tags:
            return job
        return dataclasses.replace(job, task_groups=task_groups, tags=tags)


class WorkloadCollector:
    """Accepts jobs and bad lines in file order; `finish` sorts and freezes them.

    Jobs are ordered by submit time and, for equal times, by their order in the file, so the
    replay is deterministic whatever the file's own order. Job ids must be unique: a duplicate
    is a bad line, not a silent overwrite. Jobs share their equal parts (`SharedParts`).
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self._jobs: list[Job] = []
        self._ids: set[str] = set()
        self._problems: list[LineProblem] = []
        self._bad = 0
        self._shared = SharedParts()

    def add(self, job: Job) -> None:
        if job.job_id in self._ids:
            self.problem(job.line, f"duplicate job id {job.job_id!r}")
            return
        self._ids.add(job.job_id)
        self._jobs.append(self._shared.job(job))

    def problem(self, line: int, reason: str) -> None:
        self._bad += 1
        if len(self._problems) < MAX_KEPT_PROBLEMS:
            self._problems.append(LineProblem(line, reason))
        log.debug("workload.bad_line", source=self.source, line=line, reason=reason)

    def finish(self, header: Mapping[str, str] | None = None) -> Workload:
        """The workload; `WorkloadError` when not one job was usable."""
        jobs = sorted(self._jobs, key=lambda job: (job.submit, job.line))
        if self._bad:
            log.info("workload.bad_lines", source=self.source, count=self._bad,
                        first=str(self._problems[0]))
        return Workload(self.source, tuple(jobs), self._bad, tuple(self._problems),
                        MappingProxyType(dict(header or {})))


def long_line(line: str) -> str | None:
    """Why a line `open_text` gave is not read (it was longer than `MAX_LINE`), or None."""
    return f"longer than {MAX_LINE} characters" if len(line) > MAX_LINE else None


def open_text(path: Path) -> Iterator[str]:
    """The lines of a text file, gunzipped when it is gzip data (whatever its name says).

    A line longer than `MAX_LINE` characters comes cut to `MAX_LINE + 1` of them (see
    `long_line`): the rest is read past in pieces, never held, so one huge line costs no more
    memory than a line of the bound."""
    try:
        with path.open("rb") as raw:
            magic = raw.read(2)
            raw.seek(0)
            stream = gzip.GzipFile(fileobj=raw) if magic == b"\x1f\x8b" else raw
            with io.TextIOWrapper(stream, encoding="utf-8", errors="replace") as text:
                while line := text.readline(MAX_LINE + 1):
                    if len(line) > MAX_LINE and not line.endswith("\n"):
                        while (rest := text.readline(_SKIP)) and not rest.endswith("\n"):
                            pass
                    yield line
    except (OSError, EOFError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise WorkloadError(f"cannot read {path}: {reason}") from exc

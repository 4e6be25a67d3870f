"""Gathering parsed jobs and skipped lines into a `Workload`, the same way for every format."""

from __future__ import annotations

import gzip
import io
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType

from quotactor.logs import get_logger
from quotactor.sim.inputs.jobs import Job, LineProblem, Workload, WorkloadError

__all__ = ["MAX_KEPT_PROBLEMS", "WorkloadCollector", "open_text"]

MAX_KEPT_PROBLEMS = 20
"""Problems kept for the report; the rest are only counted (and logged)."""

log = get_logger()


class WorkloadCollector:
    """Accepts jobs and bad lines in file order; `finish` sorts and freezes them.

    Jobs are ordered by submit time and, for equal times, by their order in the file, so the
    replay is deterministic whatever the file's own order. Job ids must be unique: a duplicate
    is a bad line, not a silent overwrite.
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self._jobs: list[Job] = []
        self._ids: set[str] = set()
        self._problems: list[LineProblem] = []
        self._bad = 0

    def add(self, job: Job) -> None:
        if job.job_id in self._ids:
            self.problem(job.line, f"duplicate job id {job.job_id!r}")
            return
        self._ids.add(job.job_id)
        self._jobs.append(job)

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


def open_text(path: Path) -> Iterator[str]:
    """The lines of a text file, gunzipped when it is gzip data (whatever its name says)."""
    try:
        with path.open("rb") as raw:
            magic = raw.read(2)
            raw.seek(0)
            stream = gzip.GzipFile(fileobj=raw) if magic == b"\x1f\x8b" else raw
            with io.TextIOWrapper(stream, encoding="utf-8", errors="replace") as text:
                yield from text
    except (OSError, EOFError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise WorkloadError(f"cannot read {path}: {reason}") from exc

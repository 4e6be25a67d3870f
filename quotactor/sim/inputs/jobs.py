"""Jobs as the replay sees them, whatever file or generator they came from.

Every input format is read into the same frozen values, so the replay, the reports and the
tests never care where a workload came from. A job is one application: its tasks are grouped
(as a gang's task groups are), each task asking for the same resources and all tasks running
for the job's duration, which is how a rigid parallel job from a supercomputer log behaves.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from quotactor.core.resources import Resource

__all__ = ["Job", "LineProblem", "TaskGroup", "Workload", "WorkloadError"]


_NO_TAGS: Mapping[str, str] = MappingProxyType({})
"""The tags of a job that has none (read-only, so all such jobs share it)."""


class WorkloadError(ValueError):
    """A workload that cannot be used at all: unreadable, or without a single usable job."""


@dataclass(frozen=True, slots=True)
class TaskGroup:
    """`count` tasks that each ask for `resources` (per task, in base units)."""

    name: str
    count: int
    resources: Resource

    @property
    def total(self) -> Resource:
        return self.resources.scaled(self.count)


@dataclass(frozen=True, slots=True)
class Job:
    """One application to submit at `submit` (seconds) that runs `duration` seconds once started.

    `queue` is a full queue path (`root.a`), or None to let the placement rules decide; `tags`
    are handed to placement rules (the `tag` rule) and kept in reports.
    """

    job_id: str
    user: str
    groups: tuple[str, ...]
    queue: str | None
    submit: float
    duration: float
    task_groups: tuple[TaskGroup, ...]
    tags: Mapping[str, str] = field(default_factory=lambda: _NO_TAGS)
    line: int = 0

    def __post_init__(self) -> None:
        if not isinstance(self.tags, MappingProxyType):
            object.__setattr__(self, "tags",
                               MappingProxyType(dict(self.tags)) if self.tags else _NO_TAGS)

    @property
    def total(self) -> Resource:
        """Everything the job holds while it runs."""
        total = Resource()
        for group in self.task_groups:
            total = total + group.total
        return total

    @property
    def tasks(self) -> int:
        return sum(group.count for group in self.task_groups)


@dataclass(frozen=True, slots=True)
class LineProblem:
    """A line of the input that was skipped, and why (1-based line numbers, as editors show)."""

    line: int
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}"


@dataclass(frozen=True, slots=True)
class Workload:
    """The usable jobs of one source in submit order, and what was skipped on the way.

    `bad_lines` counts every skipped line; `problems` keeps the first few for the report (a
    broken file could otherwise fill memory with messages).
    """

    source: str
    jobs: tuple[Job, ...]
    bad_lines: int = 0
    problems: tuple[LineProblem, ...] = ()
    header: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        if not self.jobs:
            raise WorkloadError(f"{self.source}: no usable job"
                                + (f" ({self.bad_lines} bad lines, first: {self.problems[0]})"
                                   if self.problems else ""))

    @property
    def users(self) -> tuple[str, ...]:
        return tuple(sorted({job.user for job in self.jobs}))

    @property
    def groups(self) -> tuple[str, ...]:
        return tuple(sorted({g for job in self.jobs for g in job.groups}))

    @property
    def span(self) -> float:
        """Seconds from the first submission to the last one."""
        return self.jobs[-1].submit - self.jobs[0].submit

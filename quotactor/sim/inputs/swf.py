"""The Standard Workload Format (SWF) of the Parallel Workloads Archive.

Each job is one line of 18 whitespace-separated numbers (-1 where unknown); header lines start
with `;` and hold `Key: value` pairs. The fields, in order: job number, submit time, wait time,
run time, allocated processors, average CPU time, used memory, requested processors, requested
time, requested memory, status, user id, group id, executable, queue number, partition number,
preceding job, think time. Memory is in KB per processor.

The replay needs who submitted what, when, and for how long: the user, the group, the submit
time, the run time and the processors (allocated, else requested). The wait time is ignored on
purpose, since waiting is what the replay computes. Queue numbers map to names through the
header's `Queue: <n> <name>` lines when it has them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from os import PathLike
from pathlib import Path

from quotactor.core.resources import Resource
from quotactor.sim.inputs.collect import WorkloadCollector, long_line, open_text
from quotactor.sim.inputs.jobs import Job, TaskGroup, Workload

__all__ = ["SWF_FIELDS", "parse_swf", "read_swf"]

SWF_FIELDS = 18
_VCORE_MILLIS = 1000
_QUEUE_LINE = re.compile(r"^\s*(\d+)\s+(\S+)")
_HEADER_LINE = re.compile(r"^ ?([A-Za-z][A-Za-z0-9]*):\s*(.*?)\s*$")
"""`; Key: value`; indented lines continue a note and are not keys."""


def read_swf(
    path: str | PathLike[str],
    *,
    group_names: Mapping[int, str] | None = None,
    with_memory: bool = False,
) -> Workload:
    """Read an SWF file (gzipped or not); see `parse_swf` for the options."""
    source = Path(path)
    return parse_swf(open_text(source), source=str(source), group_names=group_names,
                     with_memory=with_memory)


def parse_swf(
    lines: Iterable[str],
    *,
    source: str = "<swf>",
    group_names: Mapping[int, str] | None = None,
    with_memory: bool = False,
) -> Workload:
    """Jobs from SWF lines: user `u<id>`, group `g<id>` (or `group_names[id]`), one task per
    processor asking for one vcore, plus its memory when `with_memory` and the log has it.

    A line that is not 18 integers, or lacks a submit time, a run time, processors or a valid
    user id, is skipped and reported with its line number. User id -1 (unknown) becomes user
    `unknown`; group id -1 means no group.
    """
    names = dict(group_names or {})
    collector = WorkloadCollector(source)
    header: dict[str, str] = {}
    queues: dict[int, str] = {}
    for number, text in enumerate(lines, start=1):
        problem = long_line(text)
        if problem is not None:
            collector.problem(number, problem)
            continue
        stripped = text.strip()
        if not stripped:
            continue
        if stripped.startswith(";"):
            _header_line(stripped[1:], header, queues)
            continue
        fields = stripped.split()
        if len(fields) != SWF_FIELDS:
            collector.problem(number, f"expected {SWF_FIELDS} fields, found {len(fields)}")
            continue
        try:
            values = [int(float(f)) if "." in f else int(f) for f in fields]
        except (ValueError, OverflowError):
            collector.problem(number, "fields must be numbers")
            continue
        problem = _check(values)
        if problem:
            collector.problem(number, problem)
            continue
        collector.add(_job(values, number, names, queues, with_memory))
    return collector.finish(header)


def _header_line(body: str, header: dict[str, str], queues: dict[int, str]) -> None:
    match = _HEADER_LINE.match(body)
    if match is None:
        return
    key, value = match.groups()
    if key == "Queue":
        match = _QUEUE_LINE.match(value)
        if match:
            queues[int(match.group(1))] = match.group(2)
        return
    header.setdefault(key, value)


def _check(v: list[int]) -> str:
    submit, run, allocated, requested, user = v[1], v[3], v[4], v[7], v[11]
    if submit < 0:
        return "no submit time"
    if run < 0:
        return "no run time"
    if allocated <= 0 and requested <= 0:
        return "no processor count"
    if user < -1:
        return f"invalid user id {user}"
    return ""


def _job(v: list[int], line: int, group_names: Mapping[int, str], queues: Mapping[int, str],
         with_memory: bool) -> Job:
    processors = v[4] if v[4] > 0 else v[7]
    per_task = {"vcore": _VCORE_MILLIS}
    memory_kb = v[9] if v[9] > 0 else v[6]
    if with_memory and memory_kb > 0:
        per_task["memory"] = memory_kb * 1024
    user = f"u{v[11]}" if v[11] >= 0 else "unknown"
    group = v[12]
    groups = (group_names.get(group, f"g{group}"),) if group >= 0 else ()
    queue_number = v[14]
    tags = {"swf.status": str(v[10])}
    if queue_number >= 0:
        tags["swf.queue"] = queues.get(queue_number, f"q{queue_number}")
    if v[13] >= 0:
        tags["swf.executable"] = str(v[13])
    return Job(
        job_id=f"job-{v[0]}",
        user=user,
        groups=groups,
        queue=None,
        submit=float(v[1]),
        duration=float(v[3]),
        task_groups=(TaskGroup("tasks", processors, Resource(per_task)),),
        tags=tags,
        line=line,
    )

"""The simple job formats: CSV with a header row, and JSON Lines (one object per line).

Both carry the same fields, so a spreadsheet export and a script's output replay alike:

- `user` (required); `groups` (CSV: separated by `;`, `|` or spaces; also `group`);
- `queue`: a full queue path such as `root.batch`, or empty to let placement rules decide;
- `tags`: CSV `key=value;key=value`, JSON an object (for the `tag` placement rule);
- `submit` and `duration` in seconds (also `submit_time_s` / `run_time_s`, so the archive's
  CSV exports read as they are);
- `tasks` (also `count`, `processors`; default 1) tasks each asking for `resources`
  (CSV `vcore=1;memory=2Gi`, JSON an object; YuniKorn quantities; default one vcore);
- `job_id` (also `id`; default `job-<line>`);
- JSON only: `taskGroups`, a list of `{"name", "count", "resources"}`, instead of the two above.

Every input is bounded: a line holds at most `MAX_LINE` characters, a name or text field
`MAX_FIELD`, a list or mapping (groups, tags, task groups, resources) `MAX_ITEMS` entries, a
job `MAX_TASKS` tasks, and `submit` and `duration` at most `MAX_SECONDS`; beyond, the line is a
bad line naming the field.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from os import PathLike
from pathlib import Path
from typing import Any

from quotactor.core.errors import InvalidRequest
from quotactor.core.identity import GROUP_NAME, USER_NAME
from quotactor.core.queue_path import parse_queue_path
from quotactor.core.resources import QuantityError, Resource, parse_quantity
from quotactor.sim.inputs.collect import MAX_LINE, WorkloadCollector, long_line, open_text
from quotactor.sim.inputs.jobs import Job, TaskGroup, Workload

__all__ = ["MAX_FIELD", "MAX_ITEMS", "MAX_LINE", "MAX_SECONDS", "MAX_TASKS", "JobLineError",
           "job_from_record", "parse_csv", "parse_jsonl", "read_csv", "read_jsonl"]

MAX_FIELD = 1024
"""Characters in a name or text field (user, group, queue, job id, tag key or value)."""
MAX_ITEMS = 256
"""Entries in a list or mapping field (groups, tags, task groups, resources)."""
MAX_TASKS = 1_000_000
"""Tasks in one job (or one task group)."""
MAX_SECONDS = 1e10
"""The largest `submit` or `duration` (about 317 years): past it the replay's clock and its
figures would no longer be finite numbers."""

_ALIASES = {
    "group": "groups",
    "submit_time": "submit", "submit_time_s": "submit",
    "run_time": "duration", "run_time_s": "duration",
    "count": "tasks", "processors": "tasks",
    "id": "job_id",
    "task_groups": "taskGroups", "taskgroups": "taskGroups",
}
_SPLIT = re.compile(r"[;|,\s]+")
_DEFAULT_TASK = Resource({"vcore": 1000})


class JobLineError(ValueError):
    """Why one record is not a usable job."""


def read_csv(path: str | PathLike[str]) -> Workload:
    source = Path(path)
    return parse_csv(open_text(source), source=str(source))


def read_jsonl(path: str | PathLike[str]) -> Workload:
    source = Path(path)
    return parse_jsonl(open_text(source), source=str(source))


def parse_csv(lines: Iterable[str], *, source: str = "<csv>") -> Workload:
    """Jobs from CSV text whose first row names the columns (extra columns are ignored)."""
    collector = WorkloadCollector(source)
    reader = csv.DictReader(_bounded(lines, collector))
    if reader.fieldnames is None or "user" not in {_key(n) for n in reader.fieldnames}:
        collector.problem(1, "the header row must name a `user` column")
        return collector.finish()
    for row in reader:
        number = reader.line_num
        if None in row:
            collector.problem(number, "more fields than the header names")
            continue
        if all(not (v or "").strip() for v in row.values()):
            continue
        try:
            collector.add(job_from_record(_canonical(row), number))
        except JobLineError as exc:
            collector.problem(number, str(exc))
    return collector.finish()


def parse_jsonl(lines: Iterable[str], *, source: str = "<jsonl>") -> Workload:
    """Jobs from JSON Lines; blank lines and lines starting with `#` are skipped silently."""
    collector = WorkloadCollector(source)
    for number, text in enumerate(lines, start=1):
        problem = long_line(text)
        if problem is not None:
            collector.problem(number, problem)
            continue
        stripped = text.strip()
        if not stripped or stripped.startswith("#"):
            continue
        try:
            record = json.loads(stripped)
        except json.JSONDecodeError as exc:
            collector.problem(number, f"not JSON: {exc.msg}")
            continue
        except RecursionError:
            collector.problem(number, "nested too deeply to be a job")
            continue
        if not isinstance(record, dict):
            collector.problem(number, "a job must be a JSON object")
            continue
        try:
            collector.add(job_from_record(_canonical(record), number))
        except JobLineError as exc:
            collector.problem(number, str(exc))
    return collector.finish()


def _bounded(lines: Iterable[str], collector: WorkloadCollector) -> Iterator[str]:
    """`lines`, each too long one a bad line (passed on empty, which the CSV reader skips)."""
    for number, line in enumerate(lines, start=1):
        problem = long_line(line)
        if problem is None:
            yield line
        else:
            collector.problem(number, problem)
            yield "\n"


def job_from_record(record: Mapping[str, Any], line: int) -> Job:
    """One job from a record with canonical keys; `JobLineError` says what is wrong."""
    user = _text(record.get("user"))
    if not user or not USER_NAME.match(user):
        raise JobLineError(f"invalid or missing user {user!r}")
    groups = _groups(record.get("groups"))
    queue = _text(record.get("queue")) or None
    if queue is not None:
        try:
            parse_queue_path(queue)
        except InvalidRequest as exc:
            raise JobLineError(str(exc)) from None
    submit = _seconds(record.get("submit"), "submit")
    duration = _seconds(record.get("duration"), "duration")
    if record.get("taskGroups") not in (None, "", []):
        task_groups = _task_groups(record["taskGroups"])
    else:
        task_groups = (TaskGroup("tasks", _count(record.get("tasks"), "tasks"),
                                 _resources(record.get("resources"))),)
    job_id = _text(record.get("job_id")) or f"job-{line}"
    return Job(job_id, user, groups, queue, submit, duration, task_groups,
               _tags(record.get("tags")), line)


def _key(name: str) -> str:
    folded = name.strip().lower()
    return _ALIASES.get(folded, folded)


def _canonical(record: Mapping[Any, Any]) -> dict[str, Any]:
    """Keys folded to their canonical names; the first non-empty value of an alias wins."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        if not isinstance(key, str):
            continue
        name = _key(key)
        if out.get(name) in (None, ""):
            out[name] = value
    return out


def _text(value: Any) -> str:
    if value is None:
        return ""
    if not isinstance(value, str | int) or isinstance(value, bool):
        raise JobLineError(f"expected text, got {_shown(value)}")
    text = str(value).strip()
    if len(text) > MAX_FIELD:
        raise JobLineError(f"a text field holds at most {MAX_FIELD} characters, got "
                           f"{_shown(text)}")
    return text


def _shown(value: Any) -> str:
    """`value` for a message: its repr, cut to a length a message can hold."""
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:60]}... ({len(text)} characters)"


def _few(items: Any, name: str) -> None:
    if len(items) > MAX_ITEMS:
        raise JobLineError(f"{name} holds at most {MAX_ITEMS} entries, got {len(items)}")


def _groups(value: Any) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    names = value if isinstance(value, list) else _SPLIT.split(_text(value))
    _few(names, "groups")
    out = tuple(dict.fromkeys(_text(n) for n in names if _text(n)))
    for name in out:
        if not GROUP_NAME.match(name):
            raise JobLineError(f"invalid group name {name!r}")
    return out


def _seconds(value: Any, name: str) -> float:
    if value is None or value == "":
        raise JobLineError(f"missing {name}")
    if isinstance(value, bool):
        raise JobLineError(f"{name} must be a number of seconds, got {value!r}")
    try:
        seconds = float(value)
    except (TypeError, ValueError, OverflowError):
        raise JobLineError(f"{name} must be a number of seconds, got {_shown(value)}"
                           ) from None
    if not 0 <= seconds <= MAX_SECONDS:  # NaN fails both
        raise JobLineError(f"{name} must be between 0 and {MAX_SECONDS:.0e} seconds, got "
                           f"{_shown(value)}")
    return seconds


def _count(value: Any, name: str) -> int:
    if value is None or value == "":
        return 1
    try:
        count = int(str(value).strip()) if not isinstance(value, int) else value
    except ValueError:
        raise JobLineError(f"{name} must be a whole number, got {_shown(value)}") from None
    if isinstance(count, bool) or not 1 <= count <= MAX_TASKS:
        raise JobLineError(f"{name} must be between 1 and {MAX_TASKS}, got {_shown(value)}")
    return count


def _resources(value: Any) -> Resource:
    if value is None or value == "":
        return _DEFAULT_TASK
    if isinstance(value, str):
        pairs: dict[str, Any] = {}
        for item in _SPLIT.split(value.strip()):
            name, sep, quantity = item.partition("=")
            if not sep or not name:
                raise JobLineError(f"resources must be name=quantity pairs, got {_shown(value)}")
            pairs[name] = quantity
        value = pairs
    if not isinstance(value, dict):
        raise JobLineError(f"resources must be a mapping, got {_shown(value)}")
    _few(value, "resources")
    try:
        res = Resource({str(n): parse_quantity(str(n), q) for n, q in value.items()})
    except QuantityError as exc:
        raise JobLineError(str(exc)) from None
    if res.is_empty():
        raise JobLineError("a task must ask for some resource")
    return res


def _task_groups(value: Any) -> tuple[TaskGroup, ...]:
    if not isinstance(value, list) or not value:
        raise JobLineError("taskGroups must be a non-empty list")
    _few(value, "taskGroups")
    groups: list[TaskGroup] = []
    for item in value:
        if not isinstance(item, dict):
            raise JobLineError("each task group must be an object")
        name = _text(item.get("name")) or f"group-{len(groups) + 1}"
        if any(g.name == name for g in groups):
            raise JobLineError(f"task group {name!r} is named twice")
        count = _count(item.get("count", item.get("minMember")), f"task group {name} count")
        resources = _resources(item.get("resources", item.get("minResource")))
        groups.append(TaskGroup(name, count, resources))
    return tuple(groups)


def _tags(value: Any) -> dict[str, str]:
    if value is None or value == "":
        return {}
    if isinstance(value, str):
        tags: dict[str, str] = {}
        _few(re.split(r"[;|]", value), "tags")
        for item in re.split(r"[;|]", value):
            if not item.strip():
                continue
            key, sep, text = item.partition("=")
            if not sep or not key.strip():
                raise JobLineError(f"tags must be key=value pairs, got {_shown(value)}")
            tags[key.strip()] = text.strip()
        return tags
    if isinstance(value, dict):
        _few(value, "tags")
        return {_text(str(k)): _text(str(v)) for k, v in value.items()}
    raise JobLineError(f"tags must be key=value pairs or an object, got {_shown(value)}")

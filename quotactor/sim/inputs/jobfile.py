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
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterable, Mapping
from os import PathLike
from pathlib import Path
from typing import Any

from quotactor.core.errors import InvalidRequest
from quotactor.core.identity import GROUP_NAME, USER_NAME
from quotactor.core.queue_path import parse_queue_path
from quotactor.core.resources import QuantityError, Resource, parse_quantity
from quotactor.sim.inputs.collect import WorkloadCollector, open_text
from quotactor.sim.inputs.jobs import Job, TaskGroup, Workload

__all__ = ["JobLineError", "job_from_record", "parse_csv", "parse_jsonl", "read_csv",
           "read_jsonl"]

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
    reader = csv.DictReader(iter(lines))
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
    if not isinstance(value, str | int):
        raise JobLineError(f"expected text, got {value!r}")
    return str(value).strip()


def _groups(value: Any) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    names = value if isinstance(value, list) else _SPLIT.split(_text(value))
    out = tuple(dict.fromkeys(_text(n) for n in names if _text(n)))
    for name in out:
        if not GROUP_NAME.match(name):
            raise JobLineError(f"invalid group name {name!r}")
    return out


def _seconds(value: Any, name: str) -> float:
    if value is None or value == "":
        raise JobLineError(f"missing {name}")
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        raise JobLineError(f"{name} must be a number of seconds, got {value!r}") from None
    if seconds != seconds or seconds in (float("inf"), float("-inf")) or seconds < 0:
        raise JobLineError(f"{name} must be a non-negative number of seconds, got {value!r}")
    return seconds


def _count(value: Any, name: str) -> int:
    if value is None or value == "":
        return 1
    try:
        count = int(str(value).strip()) if not isinstance(value, int) else value
    except ValueError:
        raise JobLineError(f"{name} must be a whole number, got {value!r}") from None
    if isinstance(count, bool) or count < 1:
        raise JobLineError(f"{name} must be at least 1, got {value!r}")
    return count


def _resources(value: Any) -> Resource:
    if value is None or value == "":
        return _DEFAULT_TASK
    if isinstance(value, str):
        pairs: dict[str, Any] = {}
        for item in _SPLIT.split(value.strip()):
            name, sep, quantity = item.partition("=")
            if not sep or not name:
                raise JobLineError(f"resources must be name=quantity pairs, got {value!r}")
            pairs[name] = quantity
        value = pairs
    if not isinstance(value, dict):
        raise JobLineError(f"resources must be a mapping, got {value!r}")
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
        for item in re.split(r"[;|]", value):
            if not item.strip():
                continue
            key, sep, text = item.partition("=")
            if not sep or not key.strip():
                raise JobLineError(f"tags must be key=value pairs, got {value!r}")
            tags[key.strip()] = text.strip()
        return tags
    if isinstance(value, dict):
        return {str(k): str(v) for k, v in value.items()}
    raise JobLineError(f"tags must be key=value pairs or an object, got {value!r}")

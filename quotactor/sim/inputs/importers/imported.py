"""What every importer produces, and how it is written for `quotactor simulate` to replay.

An import is a workload (jobs validated by the same code that reads the workload files, so
whatever is written replays), optionally the nodes it ran on, and a queue config to replay
under. `write_imported` writes them as `workload.csv` (or `.jsonl` when jobs have several task
shapes), `cluster.yaml` and `queues.yaml` in one folder, each file whole or not at all.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import yaml

from quotactor.config import ConfigError, load_config
from quotactor.core.resources import Resource, ResourceLike
from quotactor.sim.inputs.collect import WorkloadCollector
from quotactor.sim.inputs.jobfile import JobLineError, job_from_record
from quotactor.sim.inputs.jobs import Job, Workload, WorkloadError

__all__ = [
    "FetchError", "Imported", "NodeClass", "SourceError", "Written", "build_workload",
    "node_classes", "queues_config", "read_limited", "write_imported",
]

MAX_SECONDS = 10**11
"""Times and durations beyond this many seconds (about 3,000 years) are absurd, not data."""


class SourceError(WorkloadError):
    """A source that cannot be imported at all: unreadable, too large, or not in the format.
    The message is one line naming the file or URL and what is wrong."""


class FetchError(SourceError):
    """A server that could not be reached, or did not answer as YuniKorn's REST API does."""


@dataclass(frozen=True, slots=True)
class NodeClass:
    """`count` identical nodes of one shape, written as one entry of the cluster file."""

    name: str
    count: int
    capacity: Resource


@dataclass(frozen=True, slots=True)
class Imported:
    """One import: the jobs, the nodes (empty when the source names none), a queue config,
    and what was left out and why (`skipped`: reason -> count; `notes`: facts to print)."""

    source: str
    workload: Workload
    config: str
    config_origin: str
    nodes: tuple[NodeClass, ...] = ()
    skipped: Mapping[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    fmt: Literal["csv", "jsonl"] = "csv"
    nodes_source: str = ""

    def summary(self) -> str:
        """`12 jobs (3 users, 2 queues); skipped: 2 never started, 1 bad` on one line."""
        jobs = self.workload.jobs
        queues = {job.queue for job in jobs if job.queue}
        text = (f"{_count(len(jobs), 'job')} ({_count(len(self.workload.users), 'user')}, "
                f"{_count(len(queues), 'queue')} named)")
        left_out = [f"{n} {reason}" for reason, n in self.skipped.items() if n]
        if self.workload.bad_lines:
            left_out.append(f"{self.workload.bad_lines} bad")
        return text + ("; skipped: " + ", ".join(left_out) if left_out else "")

    def unplaceable(self) -> int:
        """How many jobs have a task that fits on no node (the replay never starts them)."""
        if not self.nodes:
            return 0
        shapes: dict[Resource, bool] = {}
        misfits = 0
        for job in self.workload.jobs:
            for group in job.task_groups:
                fits = shapes.get(group.resources)
                if fits is None:
                    fits = any(group.resources.fits_within(n.capacity) for n in self.nodes)
                    shapes[group.resources] = fits
                if not fits:
                    misfits += 1
                    break
        return misfits


@dataclass(frozen=True, slots=True)
class Written:
    """Where `write_imported` put the files (`cluster` None when there were no nodes)."""

    workload: Path
    config: Path
    cluster: Path | None


def build_workload(source: str, records: Sequence[tuple[int, str, dict[str, Any]]],
                   problems: Iterable[tuple[int, str]] = (), *, rebase: bool = True
                   ) -> tuple[Workload, float]:
    """Validated jobs from `(line, label, record)` triples (records as `job_from_record`
    takes them, `submit` in seconds) and the problems already found; with `rebase`, submit
    times count from the earliest one. Returns the workload and that origin (0 without).

    A record the workload reader would refuse is a bad line, its reason prefixed by `label`;
    `WorkloadError` when not one job is left.
    """
    collector = WorkloadCollector(source)
    for line, reason in problems:
        collector.problem(line, reason)
    submits = [float(r["submit"]) for _, _, r in records]
    origin = min(submits) if rebase and submits else 0.0
    for line, label, record in records:
        shifted = {**record, "submit": _seconds_text(float(record["submit"]) - origin)}
        try:
            collector.add(job_from_record(shifted, line))
        except JobLineError as exc:
            collector.problem(line, f"{label}: {exc}")
    return collector.finish(), origin


def origin_note(origin: float) -> str:
    """`time 0 is 2024-05-01T10:00:00Z` for an origin in seconds since the epoch."""
    when = datetime.fromtimestamp(origin, UTC).isoformat(timespec="seconds")
    return f"time 0 is {when.replace('+00:00', 'Z')}"


def resources_text(resources: ResourceLike) -> dict[str, str]:
    """YuniKorn quantity strings that read back exactly: `vcore` in cores or millicores
    (`12`, `1500m`), `memory` with the largest exact binary suffix (`16Gi`, `1536Mi`),
    anything else as a plain number."""
    return {name: _quantity_text(name, q) for name, q in sorted(resources.items())}


def _quantity_text(name: str, quantity: int) -> str:
    if name == "vcore":
        return str(quantity // 1000) if quantity % 1000 == 0 else f"{quantity}m"
    if name == "memory" and quantity:
        for suffix, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if quantity % size == 0:
                return f"{quantity // size}{suffix}"
    return str(quantity)


def node_classes(nodes: Iterable[tuple[str, Resource]]) -> tuple[NodeClass, ...]:
    """Nodes `(hint, capacity)` grouped by hint and capacity, in first-seen order.

    A class is named after its hint (an instance type or GPU model; `node` when empty); where
    one hint comes in several shapes, as much of its shape as tells them apart is added
    (`p100-64c`, `p100-8c-60gi-1gpu`), and a number where that is still not unique.
    """
    counts: Counter[tuple[str, Resource]] = Counter()
    for hint, capacity in nodes:
        counts[(_slug(hint) or "node", capacity)] += 1
    shapes: dict[str, list[list[str]]] = {}
    for hint, capacity in counts:
        shapes.setdefault(hint, []).append(_shape(capacity))
    taken: set[str] = set()
    classes: list[NodeClass] = []
    for (hint, capacity), count in counts.items():
        name = _distinct(hint, _shape(capacity), shapes[hint])
        unique, suffix = name, 2
        while unique in taken:
            unique, suffix = f"{name}-{suffix}", suffix + 1
        taken.add(unique)
        classes.append(NodeClass(unique, count, capacity))
    return tuple(classes)


def queues_config(partition: str, queue_paths: Iterable[str], rules: Sequence[Mapping[str, Any]],
                  why: str) -> str:
    """A YuniKorn config with every queue in `queue_paths` (full paths) and no limits, placing
    jobs by `rules`; `why` is its first comment line. Validated before it is returned."""
    tree: dict[str, Any] = {}
    for path in sorted(set(queue_paths)):
        node = tree
        for name in path.split(".")[1:]:
            node = node.setdefault(name, {})
    root: dict[str, Any] = {"name": "root", "submitacl": "*"}
    if tree:
        root["queues"] = _queue_list(tree)
    document = {"partitions": [{"name": partition, "placementrules": [dict(r) for r in rules],
                                "queues": [root]}]}
    text = (f"# {why}\n# Add the limits to try (see `quotactor simulate --help`).\n"
            + yaml.safe_dump(document, sort_keys=False, default_flow_style=False))
    try:
        load_config(text)
    except ConfigError as exc:
        raise SourceError(f"the queues found do not make a valid config: {exc}") from None
    return text


def read_limited(path: Path, limit: int, what: str) -> bytes:
    """The bytes of `path` (gunzipped when gzip data), refused beyond `limit` bytes."""
    import gzip

    try:
        size = path.stat().st_size
        if size > limit:
            raise SourceError(f"{path}: {size} bytes; an import reads {what} of at most "
                              f"{limit} bytes")
        with path.open("rb") as raw:
            data = raw.read(limit + 1)
        if data[:2] == b"\x1f\x8b":
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as unzipped:
                data = unzipped.read(limit + 1)
    except (OSError, EOFError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise SourceError(f"cannot read {path}: {reason}") from None
    if len(data) > limit:
        raise SourceError(f"{path}: more than {limit} bytes once unzipped; an import reads "
                          f"{what} of at most {limit} bytes")
    return data


def write_imported(imported: Imported, out: Path) -> Written:
    """Write the workload, the queue config and (when there are nodes) the cluster file into
    `out` (created if need be); each file is replaced whole or left as it was. A CSV import
    has one task shape per job (`ValueError` otherwise: write it as JSONL)."""
    out.mkdir(parents=True, exist_ok=True)
    workload = out / f"workload.{imported.fmt}"
    jobs = imported.workload.jobs
    _replace(workload, _csv(jobs) if imported.fmt == "csv" else _jsonl(jobs))
    config = out / "queues.yaml"
    _replace(config, imported.config)
    cluster = None
    if imported.nodes:
        cluster = out / "cluster.yaml"
        _replace(cluster, _cluster_yaml(imported))
    return Written(workload, config, cluster)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _seconds_text(seconds: float) -> str:
    text = f"{seconds:.3f}".rstrip("0").rstrip(".")
    return text if text not in ("", "-0") else "0"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40]


def _distinct(hint: str, shape: list[str], siblings: list[list[str]]) -> str:
    """`hint` with the shortest start of `shape` that no other shape of that hint shares."""
    if len(siblings) == 1:
        return hint
    for length in range(1, len(shape) + 1):
        if sum(1 for other in siblings if other[:length] == shape[:length]) == 1:
            return "-".join([hint, *shape[:length]])
    return "-".join([hint, *shape])


def _shape(capacity: Resource) -> list[str]:
    """`["96c", "384gi", "8gpu"]`: cores, GiB, then the rest by the last part of their name
    (a `-milli` resource counted in units of 1000)."""
    parts: list[str] = []
    for name, quantity in sorted(capacity.items(), key=lambda item: (item[0] != "vcore",
                                                                     item[0] != "memory",
                                                                     item[0])):
        if name == "vcore":
            parts.append(f"{quantity / 1000:g}c")
        elif name == "memory":
            parts.append(f"{quantity / 2**30:g}gi")
        else:
            short = _slug(name.rpartition("/")[2])
            if short.endswith("-milli") and quantity % 1000 == 0:
                short, quantity = short.removesuffix("-milli"), quantity // 1000
            parts.append(f"{quantity}{short}")
    return parts


def _queue_list(tree: Mapping[str, Any]) -> list[dict[str, Any]]:
    queues: list[dict[str, Any]] = []
    for name, children in tree.items():
        entry: dict[str, Any] = {"name": name}
        if children:
            entry["queues"] = _queue_list(children)
        queues.append(entry)
    return queues


def _csv(jobs: Sequence[Job]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(("job_id", "user", "groups", "queue", "submit", "duration", "tasks",
                     "resources", "tags"))
    for job in jobs:
        if len(job.task_groups) != 1:
            raise ValueError(f"job {job.job_id} has several task shapes; write it as JSONL")
        (group,) = job.task_groups
        writer.writerow((
            job.job_id, job.user, ";".join(job.groups), job.queue or "",
            _seconds_text(job.submit), _seconds_text(job.duration), group.count,
            ";".join(f"{n}={q}" for n, q in resources_text(group.resources).items()),
            ";".join(f"{k}={v}" for k, v in sorted(job.tags.items()))))
    return buffer.getvalue()


def _jsonl(jobs: Sequence[Job]) -> str:
    lines: list[str] = []
    for job in jobs:
        record: dict[str, Any] = {"job_id": job.job_id, "user": job.user}
        if job.groups:
            record["groups"] = list(job.groups)
        if job.queue:
            record["queue"] = job.queue
        record["submit"] = float(_seconds_text(job.submit))
        record["duration"] = float(_seconds_text(job.duration))
        if len(job.task_groups) == 1:
            record["tasks"] = job.task_groups[0].count
            record["resources"] = resources_text(job.task_groups[0].resources)
        else:
            record["taskGroups"] = [{"name": g.name, "count": g.count,
                                     "resources": resources_text(g.resources)}
                                    for g in job.task_groups]
        if job.tags:
            record["tags"] = dict(sorted(job.tags.items()))
        lines.append(json.dumps(record, separators=(",", ":")))
    return "\n".join(lines) + "\n"


def _cluster_yaml(imported: Imported) -> str:
    total = sum(n.count for n in imported.nodes)
    document = {"nodes": [{"name": n.name, "count": n.count,
                           "resources": resources_text(n.capacity)} for n in imported.nodes]}
    classes = len(imported.nodes)
    return (f"# The nodes of {imported.nodes_source or imported.source}: "
            f"{_count(total, 'node')} in {classes} class{'es' if classes != 1 else ''}, "
            f"written by `quotactor import`.\n"
            + yaml.safe_dump(document, sort_keys=False, default_flow_style=None, width=100))


def _replace(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)

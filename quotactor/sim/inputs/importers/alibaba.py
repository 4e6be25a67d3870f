"""Import Alibaba's GPU cluster trace (`cluster-trace-gpu-v2023`, the "openb" pod and node
lists of Weng et al., "Beware of Fragmentation", USENIX ATC 2023).

Pods (`name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,
deletion_time,scheduled_time`): each scheduled pod is a job of one task, submitted at
`creation_time` and running `deletion_time - scheduled_time` seconds (the trace's own times,
kept as they are). The trace names no users: every job runs as user `openb`, in group `<qos>`
and queue `root.<qos>` (`ls`, `be`, `burstable`, `guaranteed`), so limits can be tried per QoS
class. A pod never scheduled is left out and counted, as is one with no deletion time.
`gpu_spec` (a GPU model constraint) is not modelled: the replay places by resources only.

GPUs, by `gpu`:
- `milli` (default): `alibabacloud.com/gpu-milli`, 1000 to a GPU, as the trace's own
  simulator counts them: a pod asks `num_gpu * gpu_milli` (a shared GPU's fraction, or 1000
  per whole GPU) and a node offers `1000 * gpu`. A fraction is not tied to one device, so two
  pods of 600 may share a node's two GPUs that no real placement would split;
- `whole`: `nvidia.com/gpu`, whole devices: a pod sharing a GPU asks for one whole GPU (its
  `num_gpu`), which is what it would hold without GPU sharing.

Nodes (`sn,cpu_milli,memory_mib,gpu,model`) become the cluster, one class per GPU model and
shape (`cpu` for nodes without GPUs).
"""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Iterator, Mapping
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Literal

from quotactor.core.resources import Resource
from quotactor.sim.inputs.collect import open_text
from quotactor.sim.inputs.importers.imported import (
    MAX_SECONDS,
    Imported,
    NodeClass,
    SourceError,
    build_workload,
    node_classes,
    queues_config,
    resources_text,
)
from quotactor.sim.inputs.jobs import WorkloadError

__all__ = ["GPU_MILLI", "MAX_FILE_BYTES", "MAX_ROWS", "TRACE_USER", "GpuUnits",
           "import_alibaba_gpu", "read_alibaba_nodes"]

GpuUnits = Literal["milli", "whole"]
GPU_MILLI = "alibabacloud.com/gpu-milli"
GPU_WHOLE = "nvidia.com/gpu"
TRACE_USER = "openb"
MAX_FILE_BYTES = 1024 * 2**20
"""The largest trace file read (on disk)."""
MAX_ROWS = 2_000_000
"""The most rows one trace file may hold."""
POD_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "creation_time",
               "deletion_time", "scheduled_time")
NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu")
_MAX_MILLICORES = 10**9
_MAX_MIB = 2**40
_MAX_GPUS = 10**4
_MIB = 2**20


class _RowError(ValueError):
    """Why one row is not usable."""


def import_alibaba_gpu(pods: Path, nodes: Path, *, gpu: GpuUnits = "milli",
                       max_bytes: int = MAX_FILE_BYTES, max_rows: int = MAX_ROWS) -> Imported:
    """The trace's pods as a workload and its nodes as the cluster (see the module docstring).

    Raises `SourceError` (one line) for a file that is unreadable, too large (`max_bytes` on
    disk, `max_rows`), without the columns named above, with a bad node row, or without a
    single pod that ran.
    """
    classes = read_alibaba_nodes(nodes, gpu=gpu, max_bytes=max_bytes, max_rows=max_rows)
    skipped: Counter[str] = Counter()
    records: list[tuple[int, str, dict[str, Any]]] = []
    problems: list[tuple[int, str]] = []
    for line, row in _rows(pods, POD_COLUMNS, max_bytes, max_rows):
        label = f"pod {row.get('name') or '?'}"
        try:
            record = _pod(row, gpu)
        except _RowError as exc:
            problems.append((line, f"{label}: {exc}"))
            continue
        if isinstance(record, str):
            skipped[record] += 1
        else:
            records.append((line, label, record))
    if not records and not problems:
        left = ", ".join(f"{n} {why}" for why, n in skipped.items()) or "no rows"
        raise SourceError(f"{pods}: no pod ran ({left})")
    workload, _ = build_workload(str(pods), records, problems, rebase=False)
    queues = {job.queue for job in workload.jobs if job.queue}
    config = queues_config("default", queues, [{"name": "provided", "create": True}],
                           f"One queue per QoS class of {pods.name}.")
    units = "1000 per GPU" if gpu == "milli" else "whole GPUs"
    return Imported(source=str(pods), workload=workload, config=config,
                    config_origin="one queue per QoS class, without limits", nodes=classes,
                    skipped=dict(skipped), notes=(f"GPUs as {_gpu_name(gpu)} ({units})",),
                    fmt="csv", nodes_source=str(nodes))


def read_alibaba_nodes(path: Path, *, gpu: GpuUnits = "milli", max_bytes: int = MAX_FILE_BYTES,
                       max_rows: int = MAX_ROWS) -> tuple[NodeClass, ...]:
    """The node list as node classes; `SourceError` names the first bad row and field."""
    found: list[tuple[str, Resource]] = []
    for line, row in _rows(path, NODE_COLUMNS, max_bytes, max_rows):
        try:
            gpus = _whole(row, "gpu", _MAX_GPUS)
            values = {"vcore": _whole(row, "cpu_milli", _MAX_MILLICORES),
                      "memory": _whole(row, "memory_mib", _MAX_MIB) * _MIB,
                      _gpu_name(gpu): gpus * 1000 if gpu == "milli" else gpus}
        except _RowError as exc:
            raise SourceError(f"{path}: line {line}: node {row.get('sn') or '?'}: {exc}"
                              ) from None
        capacity = Resource(values)
        if capacity.is_empty():
            raise SourceError(f"{path}: line {line}: node {row.get('sn') or '?'} offers "
                              f"nothing")
        model = (row.get("model") or "").strip()
        found.append((model if model and model.lower() != "nan" else
                      ("gpu" if gpus else "cpu"), capacity))
    if not found:
        raise SourceError(f"{path}: lists no node")
    return node_classes(found)


def _rows(path: Path, required: tuple[str, ...], max_bytes: int, max_rows: int
          ) -> Iterator[tuple[int, dict[str, str]]]:
    """`(line, row)` of a CSV file with a header naming at least `required`."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise SourceError(f"cannot read {path}: {exc.strerror or exc}") from None
    if size > max_bytes:
        raise SourceError(f"{path}: {size} bytes; an import reads trace files of at most "
                          f"{max_bytes} bytes")
    try:
        reader = csv.DictReader(open_text(path))
        header = [name.strip() for name in reader.fieldnames or []]
        missing = [name for name in required if name not in header]
        if missing:
            raise SourceError(f"{path}: the header lacks the column"
                              f"{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
                              f"(it names {', '.join(header[:12]) or 'nothing'})")
        reader.fieldnames = header
        for count, row in enumerate(reader, start=1):
            if count > max_rows:
                raise SourceError(f"{path}: more than {max_rows} rows; an import reads at "
                                  f"most {max_rows}")
            yield reader.line_num, {k: (v or "").strip() for k, v in row.items()
                                    if isinstance(k, str) and isinstance(v, str)}
    except csv.Error as exc:
        raise SourceError(f"{path}: not CSV: {exc}") from None
    except SourceError:
        raise
    except WorkloadError as exc:  # open_text: the file could not be read
        raise SourceError(str(exc)) from None


def _pod(row: Mapping[str, str], gpu: GpuUnits) -> dict[str, Any] | str:
    """The job record of one pod row, or why it is left out (a reason to count)."""
    if not row.get("name"):
        raise _RowError("missing name")
    created = _time(row, "creation_time")
    if not row.get("scheduled_time"):
        return "never scheduled"
    scheduled = _time(row, "scheduled_time")
    if not row.get("deletion_time"):
        return "with no deletion time"
    deleted = _time(row, "deletion_time")
    if deleted < scheduled:
        raise _RowError(f"deletion_time {deleted:g} is before scheduled_time {scheduled:g}")
    gpus = _whole(row, "num_gpu", _MAX_GPUS)
    share = _whole(row, "gpu_milli", 1000) if row.get("gpu_milli") else 1000
    if gpus and not share:
        raise _RowError("gpu_milli is 0 for a pod asking for GPUs")
    resources = {"vcore": _whole(row, "cpu_milli", _MAX_MILLICORES),
                 "memory": _whole(row, "memory_mib", _MAX_MIB) * _MIB,
                 _gpu_name(gpu): gpus * share if gpu == "milli" else gpus}
    qos = row.get("qos") or ""
    group = qos.lower() or "default"
    return {"job_id": row["name"], "user": TRACE_USER, "groups": [group],
            "queue": f"root.{group}", "submit": min(created, scheduled),
            "duration": f"{deleted - scheduled:.3f}", "tasks": 1,
            "resources": resources_text(Resource(resources)),
            "tags": {"qos": qos} if qos else None}


def _gpu_name(gpu: GpuUnits) -> str:
    return GPU_MILLI if gpu == "milli" else GPU_WHOLE


def _number(row: Mapping[str, str], column: str) -> Decimal:
    text = row.get(column, "")
    if not text:
        raise _RowError(f"missing {column}")
    try:
        value = Decimal(text[:40])
    except InvalidOperation:
        raise _RowError(f"{column} must be a number, got {text[:40]!r}") from None
    if not value.is_finite() or value < 0:
        raise _RowError(f"{column} must be a non-negative number, got {text[:40]!r}")
    return value


def _whole(row: Mapping[str, str], column: str, limit: int) -> int:
    value = _number(row, column)
    if value > limit:
        raise _RowError(f"{column} {row[column][:40]} is more than the {limit} an import "
                        f"takes as real")
    if value != value.to_integral_value():
        raise _RowError(f"{column} must be a whole number, got {row[column][:40]!r}")
    return int(value)


def _time(row: Mapping[str, str], column: str) -> float:
    value = _number(row, column)
    if value > MAX_SECONDS:
        raise _RowError(f"{column} {row[column][:40]} is absurdly far ahead")
    return float(value)

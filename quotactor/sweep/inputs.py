"""The inputs a sweep replays on: its workloads and its cluster, as the sweep file names them.

Workloads are read once per sweep, in the process that runs it (the executors ship them to
their workers); a file workload's identity includes its contents, so results of an edited trace
are never reused.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from quotactor.sim.inputs.cluster import ClusterError, ClusterSpec, load_cluster, uniform_cluster
from quotactor.sim.inputs.jobs import Workload, WorkloadError
from quotactor.sweep.errors import SweepError, check_keys

__all__ = ["BUILTIN_NASA", "ClusterDef", "WorkloadSpec", "check_workloads", "parse_cluster",
           "parse_workloads"]

BUILTIN_NASA = "builtin:nasa-ipsc"


@dataclass(frozen=True, slots=True)
class WorkloadSpec:
    """A workload as the sweep file names it; `load` reads it (once per sweep)."""

    name: str
    source: str
    jobs: int | None = None
    swf_groups: tuple[tuple[int, str], ...] = ()
    format: str | None = None
    with_memory: bool = False

    def load(self) -> Workload:
        if self.source == BUILTIN_NASA:
            from quotactor.sim.inputs.demo import demo_workload

            return demo_workload(self.jobs)
        from quotactor.sim.inputs.workload import load_workload

        workload = load_workload(self.source, fmt=self.format,  # type: ignore[arg-type]
                                 group_names=dict(self.swf_groups) or None,
                                 with_memory=self.with_memory)
        if self.jobs is None:
            return workload
        return Workload(workload.source, workload.jobs[: self.jobs], workload.bad_lines,
                        workload.problems, workload.header)

    def key(self) -> str:
        """What the workload's results depend on: the spec and, for a file, its contents (an
        edited trace under the same name must not reuse old results)."""
        digest = ""
        path = Path(self.source)
        if self.source != BUILTIN_NASA and path.is_file():
            sha = hashlib.sha256()
            with path.open("rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    sha.update(block)
            digest = sha.hexdigest()
        return json.dumps([self.source, digest, self.jobs, self.swf_groups, self.format,
                           self.with_memory])


@dataclass(frozen=True, slots=True)
class ClusterDef:
    """`nodes` identical nodes of `resources`, or the nodes of a cluster file."""

    nodes: int = 1
    resources: tuple[tuple[str, str], ...] = ()
    file: str = ""

    def build(self) -> ClusterSpec:
        if self.file:
            return load_cluster(self.file)
        return uniform_cluster(self.nodes, dict(self.resources))


def parse_workloads(value: Any, folder: Path) -> tuple[WorkloadSpec, ...]:
    if not isinstance(value, list) or not value:
        raise SweepError("workloads: expected a non-empty list (paths, builtin:nasa-ipsc, or "
                         "synthetic:...)")
    out: list[WorkloadSpec] = []
    for index, entry in enumerate(value):
        where = f"workloads[{index}]"
        if isinstance(entry, str):
            entry = {"source": entry}
        if not isinstance(entry, dict) or not isinstance(entry.get("source"), str):
            raise SweepError(f"{where}: expected a source, or {{source: ..., ...}}")
        check_keys(entry, {"name", "source", "jobs", "swf_groups", "format", "with_memory"}, where)
        source: str = entry["source"]
        if source != BUILTIN_NASA and not _synthetic(source):
            source = str(folder / source)
        jobs = entry.get("jobs")
        if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int)
                                 or jobs < 1):
            raise SweepError(f"{where}: jobs must be a positive integer")
        groups = entry.get("swf_groups", {})
        if not isinstance(groups, dict) or not all(
                isinstance(k, int) and isinstance(v, str) for k, v in groups.items()):
            raise SweepError(f"{where}: swf_groups maps SWF group ids to names, "
                             "e.g. {1: normal, 2: system}")
        fmt = entry.get("format")
        if fmt not in (None, "swf", "csv", "jsonl"):
            raise SweepError(f"{where}: format is swf, csv or jsonl")
        name = str(entry.get("name") or _default_name(entry["source"]))
        if any(w.name == name for w in out):
            raise SweepError(f"{where}: another workload is already called {name!r}; "
                             "give each a `name`")
        out.append(WorkloadSpec(name, source, jobs, tuple(sorted(groups.items())), fmt,
                                bool(entry.get("with_memory", False))))
    return tuple(out)


def _default_name(source: str) -> str:
    if source == BUILTIN_NASA:
        return "nasa-ipsc"
    if _synthetic(source):
        return source
    name = Path(source).name
    for suffix in (".gz", ".swf", ".csv", ".jsonl", ".ndjson", ".json"):
        name = name.removesuffix(suffix)
    return name


def _synthetic(source: str) -> bool:
    return source == "synthetic" or source.startswith("synthetic:")


def parse_cluster(value: Any, folder: Path) -> ClusterDef:
    if not isinstance(value, dict):
        raise SweepError("cluster: expected {nodes: N, resources: {vcore: ...}} or "
                         "{file: cluster.yaml}")
    check_keys(value, {"nodes", "resources", "file"}, "cluster")
    if "file" in value:
        if set(value) != {"file"}:
            raise SweepError("cluster: give either file or nodes and resources")
        cluster = ClusterDef(file=str(folder / str(value["file"])))
    else:
        resources = value.get("resources")
        nodes = value.get("nodes", 1)
        if not isinstance(resources, dict):
            raise SweepError("cluster: resources must be a mapping such as {vcore: \"128\"}")
        if isinstance(nodes, bool) or not isinstance(nodes, int):
            raise SweepError("cluster: nodes must be an integer")
        cluster = ClusterDef(nodes, tuple(sorted((str(k), str(v))
                                                 for k, v in resources.items())))
    try:
        cluster.build()
    except ClusterError as exc:
        raise SweepError(f"cluster: {exc}") from None
    return cluster


def check_workloads(workloads: Sequence[WorkloadSpec],
                    names: Collection[str]) -> dict[str, Workload]:
    """Read the workloads called `names` once each (a `SweepError` naming one that cannot be
    used); a rerun with every point done reads none."""
    loaded: dict[str, Workload] = {}
    for workload in workloads:
        if workload.name not in names:
            continue
        try:
            loaded[workload.name] = workload.load()
        except WorkloadError as exc:
            raise SweepError(f"workload {workload.name!r}: {exc}") from None
    return loaded

"""The bundled demo: the NASA Ames iPSC/860 log of 1993 on its 128 processors, under example
limits, read from package data so it works from an installed package on any machine.

The machine is modelled as one node of 128 vcores: every job of the log is one ask for as
many vcores as it used processors, so a job starts whole or not at all, as the rigid parallel
jobs of the log did (the iPSC/860 gave each job a sub-cube of its own). Modelling 128
one-vcore nodes instead would let a job hold part of the machine while it waits for the rest.
"""

from __future__ import annotations

import gzip
from importlib.resources import files
from pathlib import Path

from quotactor.sim.inputs.cluster import ClusterSpec, uniform_cluster
from quotactor.sim.inputs.jobs import Workload
from quotactor.sim.inputs.swf import parse_swf

__all__ = ["DEMO_CONFIG", "DEMO_CONFIGS", "DEMO_GROUPS", "DEMO_TRACE", "copy_demo_inputs",
           "demo_cluster", "demo_config_text", "demo_workload", "tight_config_text"]

DEMO_TRACE = "NASA-iPSC-1993-3.1-cln.swf.gz"
DEMO_CONFIG = "nasa-ipsc-queues.yaml"
DEMO_CONFIGS = {"yunikorn": DEMO_CONFIG, "elastic": "nasa-ipsc-elastic.yaml",
                "quotatree": "nasa-ipsc-tree.json", "kueue": "nasa-ipsc-kueue.yaml"}
"""The example quota file of each model: YuniKorn limits, Koordinator ElasticQuotas, an MCAD
quota tree, Kueue ClusterQueues."""
DEMO_GROUPS = {1: "normal", 2: "system"}
"""The log's header: group 1 is normal users, group 2 system personnel."""


def _data(name: str) -> bytes:
    return (files("quotactor.sim") / "data" / name).read_bytes()


def demo_workload(jobs: int | None = None) -> Workload:
    """The bundled trace (its first `jobs` jobs when given)."""
    text = gzip.decompress(_data(DEMO_TRACE)).decode("utf-8")
    lines = text.splitlines()
    if jobs is not None:
        lines = _first_jobs(lines, jobs)
    return parse_swf(lines, source=DEMO_TRACE, group_names=DEMO_GROUPS)


def _first_jobs(lines: list[str], jobs: int) -> list[str]:
    kept: list[str] = []
    count = 0
    for line in lines:
        if line.lstrip().startswith(";") or not line.strip():
            kept.append(line)
        elif count < jobs:
            kept.append(line)
            count += 1
    return kept


def demo_config_text(model: str = "yunikorn") -> str:
    """The example quota file of `model` (one of `DEMO_CONFIGS`)."""
    return _data(DEMO_CONFIGS[model]).decode("utf-8")


def tight_config_text() -> str:
    """A tight config for the same trace (`nasa-ipsc-tight.yaml`): the README's own-config
    example, the replay bench's worst case and a full-trace regression test."""
    return _data("nasa-ipsc-tight.yaml").decode("utf-8")


def demo_cluster() -> ClusterSpec:
    """The iPSC/860's 128 processors as one node."""
    return uniform_cluster(1, {"vcore": "128"}, prefix="ipsc860")


def copy_demo_inputs(directory: Path, model: str = "yunikorn") -> tuple[Path, Path]:
    """Put the trace and the model's example config next to the results, for reruns with
    changes."""
    directory.mkdir(parents=True, exist_ok=True)
    trace = directory / DEMO_TRACE
    config = directory / DEMO_CONFIGS[model]
    trace.write_bytes(_data(DEMO_TRACE))
    config.write_bytes(_data(DEMO_CONFIGS[model]))
    return trace, config

"""The points of a sweep: every combination of parameter values (or a seeded sample) on every
workload, each with its config rendered and checked by the same validator the replay uses (the
YuniKorn config validator, or the elastic or quota-tree model's own loader).

A point's `index` is its place in the full grid (workloads first, then the parameters in the
order the file lists them, the last varying fastest), so a sample names the same points on
every machine. Its `key` is a digest of everything its result depends on (the rendered config,
the workload, the cluster, the replay options, the figures' version): a rerun finds the results
it already has by key, and a changed sweep never reuses a stale one.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from typing import Any

import yaml

from quotactor.config import ConfigError, load_config
from quotactor.core.resources import ResourceLike
from quotactor.elastic import QuotaError
from quotactor.kueue import KueueError
from quotactor.quotatree import QuotaTreeError
from quotactor.sim.model_runs import build_model
from quotactor.sweep.binding import Scalar, apply_bindings
from quotactor.sweep.headline import FIGURES_VERSION
from quotactor.sweep.spec import SweepSpec
from quotactor.sweep.transport import pack_cluster

__all__ = ["Grid", "InvalidPoint", "Point", "expand"]


@dataclass(frozen=True, slots=True)
class Point:
    """One replay to run: `values` are the parameters in the sweep file's order."""

    index: int
    workload: str
    values: tuple[tuple[str, Scalar], ...]
    config_text: str
    key: str


@dataclass(frozen=True, slots=True)
class InvalidPoint:
    """A combination the config validator rejects: listed in the results, never replayed."""

    index: int
    workload: str
    values: tuple[tuple[str, Scalar], ...]
    reason: str


@dataclass(frozen=True, slots=True)
class Grid:
    points: tuple[Point, ...]
    invalid: tuple[InvalidPoint, ...]


def expand(spec: SweepSpec) -> Grid:
    """The points of `spec` in index order, the invalid combinations apart."""
    sizes = [len(spec.workloads), *(len(p.values) for p in spec.parameters)]
    total = spec.grid_size
    if spec.sample is not None and spec.sample.count < total:
        indices = sorted(random.Random(spec.sample.seed).sample(range(total),
                                                                spec.sample.count))
    else:
        indices = list(range(total))
    base = spec.base_document()
    bindings = [p.binding for p in spec.parameters]
    rendered: dict[tuple[int, ...], tuple[str, str]] = {}
    points: list[Point] = []
    invalid: list[InvalidPoint] = []
    nodes = spec.cluster.build()
    cluster = repr(pack_cluster(nodes))  # the nodes, even from a file
    workload_keys = {w.name: w.key() for w in spec.workloads}
    for index in indices:
        digits = _digits(index, sizes)
        workload = spec.workloads[digits[0]]
        choice = tuple(digits[1:])
        values = tuple((p.name, p.values[d]) for p, d in zip(spec.parameters, choice,
                                                              strict=True))
        if choice not in rendered:
            document = apply_bindings(base, bindings, dict(values))
            text = render(document, spec.model)
            rendered[choice] = (text, _problem(text, spec.model, spec.partition,
                                               nodes.capacity))
        text, problem = rendered[choice]
        if problem:
            invalid.append(InvalidPoint(index, workload.name, values, problem))
            continue
        identity = json.dumps([FIGURES_VERSION, spec.model, text, workload_keys[workload.name],
                               cluster, spec.packing, spec.partition,
                               *_victims(spec)])
        key = hashlib.sha256(identity.encode("utf-8")).hexdigest()[:20]
        points.append(Point(index, workload.name, values, text, key))
    return Grid(tuple(points), tuple(invalid))


def _digits(index: int, sizes: list[int]) -> list[int]:
    """`index` in the mixed radix of `sizes`, most significant first."""
    digits = [0] * len(sizes)
    for position in range(len(sizes) - 1, -1, -1):
        index, digits[position] = divmod(index, sizes[position])
    return digits


def render(document: Any, model: str) -> str:
    """A point's config as the text its model's loader reads."""
    if model in ("elastic", "kueue"):
        return yaml.safe_dump_all(document, sort_keys=False)
    if model == "quotatree":
        return json.dumps(document, indent=1)
    return yaml.safe_dump(document, sort_keys=False)


def _problem(text: str, model: str, partition: str, total: ResourceLike) -> str:
    """Why the model's validator rejects `text` (empty when it accepts it)."""
    if model != "yunikorn":
        try:
            build_model(model, text, total)
        except (QuotaError, QuotaTreeError, KueueError, yaml.YAMLError, ValueError) as exc:
            return " ".join(str(exc).split())
        return ""
    try:
        config = load_config(text)
    except ConfigError as exc:
        extra = len(exc.errors) - 1
        where = f"{exc.location}: " if exc.location else ""  # lines would be the rendered text's
        return f"{where}{exc.reason}" + (f" (and {extra} more)" if extra else "")
    names = [p.name for p in config.partitions]
    if not names:
        return "the configuration has no partition"
    if partition and partition not in names:
        return f"no partition {partition!r} (it has {', '.join(names)})"
    return ""


def _victims(spec: SweepSpec) -> list[object]:
    """What happens to preempted jobs, in a point's identity only when it is not the default
    (so the results cached before these options existed keep their keys)."""
    if not spec.kill_preempted and not spec.preemption_grace:
        return []
    return [spec.kill_preempted, spec.preemption_grace]

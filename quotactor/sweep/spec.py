"""The sweep file: a base config, workloads, a cluster, and the parameters to vary.

```yaml
model: yunikorn                  # the quota model: yunikorn, elastic, quotatree or kueue
config: queues.yaml              # the base config: a path (relative to this file), or inline;
                                 # elastic: ElasticQuota YAML documents ([1].spec.max.cpu),
                                 # quotatree: QuotaTree JSON (spec.nodes.a.quota.cpu),
                                 # kueue: Kueue YAML documents ([1].spec.resourceGroups...)
workloads:
  - builtin:nasa-ipsc            # the bundled NASA iPSC/860 trace
  - {source: traces/q3.swf.gz, swf_groups: {1: normal, 2: system}, jobs: 5000}
  - synthetic:jobs=500,users=8,seed=3
cluster: {nodes: 1, resources: {vcore: "128"}}     # or {file: cluster.yaml}
replay: {packing: dense, partition: default,       # optional; kill_preempted: count a
         kill_preempted: false, preemption_grace: 0} # preempted job as killed (any model)
parameters:
  user_vcore:
    path: partitions[0].queues[0].queues[0].limits[0].maxresources.vcore
    values: [32, 64, 128]
  queue_apps:
    path: partitions[0].queues[0].queues[0].maxapplications
    range: {from: 5, to: 9, step: 2}               # 5, 7, 9
  system_apps:
    template: system_apps                          # ${system_apps} in the config
    values: [1, 2, null]                           # null: the key is left out
sample: {count: 20, seed: 7}                       # optional: a seeded sample of the grid
```
Everything is checked when the file is read, so a sweep that starts runs to its end: every
error names the key, workload or parameter at fault.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from quotactor.sweep.binding import (
    Binding,
    Scalar,
    check_binding,
    parse_path,
    template_names,
)
from quotactor.sweep.errors import SweepError, check_keys
from quotactor.sweep.inputs import (
    BUILTIN_NASA,
    ClusterDef,
    WorkloadSpec,
    parse_cluster,
    parse_workloads,
)

__all__ = ["MODELS", "Parameter", "Sample", "SweepSpec", "load_sweep", "parse_sweep"]

MODELS = ("yunikorn", "elastic", "quotatree", "kueue")
MAX_POINTS = 100_000
MAX_RANGE = 10_000


@dataclass(frozen=True, slots=True)
class Parameter:
    """One dimension of the grid: its values, in the order the sweep file gives them."""

    name: str
    binding: Binding
    values: tuple[Scalar, ...]


@dataclass(frozen=True, slots=True)
class Sample:
    count: int
    seed: int


@dataclass(frozen=True, slots=True)
class SweepSpec:
    """A checked sweep file. `base` is the base config as canonical JSON (a frozen value)."""

    source: str
    model: str
    base: str
    workloads: tuple[WorkloadSpec, ...]
    cluster: ClusterDef
    parameters: tuple[Parameter, ...]
    sample: Sample | None = None
    packing: str = "dense"
    partition: str = ""
    kill_preempted: bool = False
    preemption_grace: float = 0.0

    @property
    def grid_size(self) -> int:
        return math.prod(len(p.values) for p in self.parameters) * len(self.workloads)

    def base_document(self) -> Any:
        return json.loads(self.base)


def load_sweep(path: Path) -> SweepSpec:
    """Read and check a sweep file; relative paths in it are relative to its folder."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise SweepError(f"cannot read {path}: {reason}") from None
    return parse_sweep(text, str(path), path.parent)


def parse_sweep(text: str, source: str = "<sweep>", folder: Path = Path(".")) -> SweepSpec:
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise SweepError(f"{source}: not valid YAML: {exc}") from None
    if not isinstance(document, dict):
        raise SweepError(f"{source}: a sweep file is a mapping (config, workloads, cluster, "
                         "parameters)")
    check_keys(document, {"model", "config", "workloads", "cluster", "replay", "parameters",
                      "sample"}, "the sweep file")
    model = _model(document.get("model", "yunikorn"))
    base = _base(document.get("config"), folder, model)
    parameters = _parameters(document.get("parameters"), base)
    spec = SweepSpec(
        source=source,
        model=model,
        base=json.dumps(base, sort_keys=True),
        workloads=parse_workloads(document.get("workloads"), folder),
        cluster=parse_cluster(document.get("cluster"), folder),
        parameters=parameters,
        sample=_sample(document.get("sample")),
        **_replay(document.get("replay"), model),
    )
    if spec.sample is None and spec.grid_size > MAX_POINTS:
        raise SweepError(f"the grid has {spec.grid_size} points (at most {MAX_POINTS}); "
                         "narrow it or add `sample: {count: N, seed: S}`")
    return spec


def _model(value: Any) -> str:
    if value not in MODELS:
        raise SweepError(f"model: {value!r} is not a quota model (one of {', '.join(MODELS)})")
    return str(value)


def _base(value: Any, folder: Path, model: str) -> Any:
    """The base config as a document: a YuniKorn queue config (a mapping), the list of
    ElasticQuota YAML documents, or the parsed QuotaTree JSON (an object, or a list: a forest)."""
    if value is None:
        raise SweepError("config: missing (a path to the model's quota file, or it inline)")
    if value == BUILTIN_NASA:
        from quotactor.sim.inputs.demo import demo_config_text

        return _parse_base(demo_config_text(model), "the bundled NASA config", model)
    if isinstance(value, str):
        path = folder / value
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise SweepError(f"config: cannot read {path}: {reason}") from None
        return _parse_base(text, str(path), model)
    return _check_base(value, model)


def _parse_base(text: str, where: str, model: str) -> Any:
    try:
        if model in ("elastic", "kueue"):
            value: Any = [d for d in yaml.safe_load_all(text) if d is not None]
        elif model == "quotatree":
            value = json.loads(text)
        else:
            value = yaml.safe_load(text)
    except (yaml.YAMLError, ValueError) as exc:
        kind = "JSON" if model == "quotatree" else "YAML"
        raise SweepError(f"config: {where}: not valid {kind}: {exc}") from None
    return _check_base(value, model)


def _check_base(value: Any, model: str) -> Any:
    if model == "elastic":
        if not isinstance(value, list) or not value \
                or not all(isinstance(d, dict) for d in value):
            raise SweepError("config: expected ElasticQuota objects (YAML documents, or a "
                             "list of them inline)")
    elif model == "kueue":
        if not isinstance(value, list) or not value \
                or not all(isinstance(d, dict) for d in value):
            raise SweepError("config: expected Kueue objects (YAML documents, or a list of "
                             "them inline)")
    elif model == "quotatree":
        trees = value if isinstance(value, list) else [value]
        if not trees or not all(isinstance(t, dict) and isinstance(t.get("spec"), dict)
                                for t in trees):
            raise SweepError("config: expected a QuotaTree JSON object, or a list of them")
    elif not isinstance(value, dict) or not isinstance(value.get("partitions"), list):
        raise SweepError("config: expected a queue config with a `partitions` list")
    return value


def _scalar(value: Any, where: str) -> Scalar:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise SweepError(f"{where}: {value!r} is not a single value (a string, number, "
                     "true/false or null)")


def _parameters(value: Any, base: Any) -> tuple[Parameter, ...]:
    if not isinstance(value, dict) or not value:
        raise SweepError("parameters: expected a mapping of parameter names to "
                         "{path or template, values or range}")
    out: list[Parameter] = []
    paths: dict[tuple[str | int, ...], str] = {}
    for name, entry in value.items():
        where = f"parameter {name!r}"
        if not isinstance(name, str) or not name.isidentifier():
            raise SweepError(f"{where}: a name is letters, digits and _ (it becomes a column)")
        if not isinstance(entry, dict):
            raise SweepError(f"{where}: expected {{path: ..., values: [...]}}")
        check_keys(entry, {"path", "template", "values", "range"}, where)
        if ("path" in entry) == ("template" in entry):
            raise SweepError(f"{where}: give exactly one of `path` and `template`")
        if ("values" in entry) == ("range" in entry):
            raise SweepError(f"{where}: give exactly one of `values` and `range`")
        if "path" in entry:
            if not isinstance(entry["path"], str):
                raise SweepError(f"{where}: path must be text such as "
                                 "partitions[0].queues[0].maxapplications")
            binding = Binding(name, path=parse_path(entry["path"], name))
            if binding.path in paths:
                raise SweepError(f"{where}: path {entry['path']} is already bound by "
                                 f"{paths[binding.path]!r}")
            paths[binding.path] = name
        else:
            template = entry["template"]
            if not isinstance(template, str) or not template.isidentifier():
                raise SweepError(f"{where}: template must be a name used as ${{name}} "
                                 "in the config")
            binding = Binding(name, template=template)
        values = _values(entry, where)
        check_binding(base, binding, values)
        out.append(Parameter(name, binding, values))
    used = template_names(base)
    bound = {p.binding.template for p in out if p.binding.template}
    for parameter in out:
        if parameter.binding.template and parameter.binding.template not in used:
            raise SweepError(f"parameter {parameter.name!r}: the config never uses "
                             f"${{{parameter.binding.template}}}")
    unbound = sorted(used - bound)
    if unbound:
        raise SweepError(f"config: ${{{unbound[0]}}} is bound by no parameter")
    return tuple(out)


def _values(entry: Mapping[str, Any], where: str) -> tuple[Scalar, ...]:
    if "values" in entry:
        raw = entry["values"]
        if not isinstance(raw, list) or not raw:
            raise SweepError(f"{where}: values must be a non-empty list")
        values = tuple(_scalar(v, f"{where}: values[{i}]") for i, v in enumerate(raw))
    else:
        values = _range(entry["range"], where)
    seen: set[str] = set()
    for value in values:
        key = json.dumps(value)
        if key in seen:
            raise SweepError(f"{where}: value {value!r} is listed twice")
        seen.add(key)
    return values


def _range(value: Any, where: str) -> tuple[Scalar, ...]:
    if not isinstance(value, dict):
        raise SweepError(f"{where}: range is {{from: A, to: B, step: C}}")
    check_keys(value, {"from", "to", "step"}, f"{where}: range")
    numbers: dict[str, float] = {}
    for key in ("from", "to", "step"):
        number = value.get(key, 1 if key == "step" else None)
        if isinstance(number, bool) or not isinstance(number, int | float) \
                or not math.isfinite(number):
            raise SweepError(f"{where}: range {key} must be a number, got {number!r}")
        numbers[key] = number
    start, stop, step = numbers["from"], numbers["to"], numbers["step"]
    if step <= 0:
        raise SweepError(f"{where}: range step must be positive, got {step!r}")
    if stop < start:
        raise SweepError(f"{where}: range to ({stop!r}) is below from ({start!r})")
    count = math.floor((stop - start) / step + 1e-9) + 1
    if count > MAX_RANGE:
        raise SweepError(f"{where}: range gives {count} values (at most {MAX_RANGE})")
    integral = all(isinstance(v, int) for v in (start, stop, step))
    return tuple(int(start + i * step) if integral else round(start + i * step, 9)
                 for i in range(count))


def _sample(value: Any) -> Sample | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise SweepError("sample: expected {count: N, seed: S}")
    check_keys(value, {"count", "seed"}, "sample")
    count, seed = value.get("count"), value.get("seed", 0)
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise SweepError("sample: count must be a positive integer")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise SweepError("sample: seed must be an integer")
    return Sample(count, seed)


def _replay(value: Any, model: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise SweepError("replay: expected {packing: dense|none, partition: NAME, "
                         "kill_preempted: BOOL, preemption_grace: SECONDS}")
    check_keys(value, {"packing", "partition", "kill_preempted", "preemption_grace"}, "replay")
    scheduler_only = [k for k in value if k != "kill_preempted"]
    if model != "yunikorn" and scheduler_only:
        raise SweepError(f"replay: {', '.join(scheduler_only)} is for the yunikorn model (the "
                         f"{model} replay has no partitions, fits jobs into the cluster's "
                         "total, not node by node, and revokes at once)")
    packing = value.get("packing", "dense")
    if packing not in ("dense", "none"):
        raise SweepError("replay: packing is dense or none")
    kill = value.get("kill_preempted", False)
    if not isinstance(kill, bool):
        raise SweepError("replay: kill_preempted is true or false")
    grace = value.get("preemption_grace", 0)
    if isinstance(grace, bool) or not isinstance(grace, (int, float)) \
            or not 0 <= grace < math.inf:
        raise SweepError("replay: preemption_grace is a number of seconds, 0 or more")
    return {"packing": packing, "partition": str(value.get("partition", "")),
            "kill_preempted": kill, "preemption_grace": float(grace)}

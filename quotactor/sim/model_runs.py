"""Quota files for the models other than YuniKorn, read into runs `simulate` and `demo` replay.

`--model yunikorn` (the default) replays through the embedded scheduler under a queue config;
`--model elastic` under Koordinator ElasticQuota objects (YAML); `--model quotatree` under
MCAD quota trees (a QuotaTree JSON object, or a list of them for a forest); `--model kueue`
under Kueue objects (YAML). Each file is read and checked before any replay starts, so a bad
second file does not waste the first replay.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from quotactor.core.resources import ResourceLike
from quotactor.elastic import QuotaError
from quotactor.kueue import KueueError
from quotactor.quotatree import QuotaTreeError
from quotactor.sim.inputs.cluster import ClusterSpec
from quotactor.sim.inputs.jobs import Workload
from quotactor.sim.models.models import ModelOptions, QuotaModel, replay_model
from quotactor.sim.models.result import SimulationResult
from quotactor.sim.session import InputError

__all__ = ["MODELS", "ModelRun", "build_model", "load_model_runs"]

MODELS = ("yunikorn", "elastic", "quotatree", "kueue")
"""The quota models `--model` accepts; the first is the default."""


@dataclass(frozen=True, slots=True)
class ModelRun:
    """A quota file of a non-YuniKorn model, ready to replay (once) with its label."""

    label: str
    source: str
    model: QuotaModel

    def replay(self, workload: Workload, cluster: ClusterSpec, kill_preempted: bool = False,
               progress: bool | None = None) -> SimulationResult:
        return replay_model(self.model, workload, cluster, ModelOptions(
            label=self.label, config_source=self.source, progress=progress,
            kill_preempted=kill_preempted))


def build_model(kind: str, text: str, total: ResourceLike) -> QuotaModel:
    """The model `kind` from a quota file's text, on a cluster of `total`."""
    if kind == "elastic":
        from quotactor.sim.models.elastic_model import load_elastic_model

        return load_elastic_model(text, total)
    if kind == "quotatree":
        from quotactor.sim.models.quotatree_model import load_quotatree_model

        return load_quotatree_model(text)
    if kind == "kueue":
        from quotactor.sim.models.kueue_model import load_kueue_model

        return load_kueue_model(text, total)
    raise ValueError(f"unknown quota model {kind!r} (choose from {', '.join(MODELS)})")


def load_model_runs(kind: str, paths: list[Path], cluster: ClusterSpec) -> list[ModelRun]:
    """Each file as a run of `kind` (`InputError` naming the file if one is unusable)."""
    runs: list[ModelRun] = []
    for index, path in enumerate(paths):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}"
                             ) from None
        try:
            model = build_model(kind, text, cluster.capacity)
        except (QuotaError, QuotaTreeError, KueueError, yaml.YAMLError, ValueError) as exc:
            raise InputError(f"{path}: {' '.join(str(exc).split())}") from None
        label = path.stem
        if any(r.label == label for r in runs):
            label = f"{label}-{index + 1}"
        runs.append(ModelRun(label, str(path), model))
    return runs

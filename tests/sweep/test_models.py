"""Sweeping the elastic and quota-tree models: the base config is the model's own file, each
point is checked by the model's own loader and replayed by `replay_model`."""

from __future__ import annotations

from pathlib import Path

import pytest

from quotactor.sim.model_runs import build_model
from quotactor.sim.models.models import ModelOptions, replay_model
from quotactor.sweep import SweepError, expand, load_sweep, parse_sweep, run_sweep
from quotactor.sweep.headline import headline
from quotactor.sweep.inputs import check_workloads

pytestmark = pytest.mark.timeout(120)

WORKLOAD = """\
workloads:
  - name: tiny
    source: synthetic:jobs=30,users=4,groups=2,seed=5,max_tasks=8,interarrival=10,duration=600
cluster: {nodes: 2, resources: {vcore: "16"}}
"""

ELASTIC = """\
apiVersion: scheduling.sigs.k8s.io/v1alpha1
kind: ElasticQuota
metadata: {name: group-a}
spec: {min: {cpu: 16}, max: {cpu: 32}}
---
apiVersion: scheduling.sigs.k8s.io/v1alpha1
kind: ElasticQuota
metadata: {name: group-b}
spec: {min: {cpu: 16}, max: {cpu: 32}}
"""

TREE = """\
{"kind": "QuotaTree", "metadata": {"name": "t"},
 "spec": {"resourceNames": ["cpu"], "nodes": {
   "root": {"parent": "nil", "hard": "true", "quota": {"cpu": "32"}},
   "group-a": {"parent": "root", "hard": "false", "quota": {"cpu": "16"}},
   "group-b": {"parent": "root", "hard": "false", "quota": {"cpu": "16"}}}}}
"""


def _sweep(tmp_path: Path, model: str, config: str, parameters: str) -> Path:
    name = "quotas.yaml" if model == "elastic" else "tree.json"
    (tmp_path / name).write_text(config, encoding="utf-8")
    path = tmp_path / "sweep.yaml"
    path.write_text(f"model: {model}\nconfig: {name}\n{WORKLOAD}parameters:\n{parameters}",
                    encoding="utf-8")
    return path


def _direct(path: Path, model: str, text: str) -> dict[str, object]:
    """The headline figures of a direct replay of `text`, outside the sweep."""
    spec = load_sweep(path)
    workload = check_workloads(spec.workloads, {"tiny"})["tiny"]
    cluster = spec.cluster.build()
    result = replay_model(build_model(model, text, cluster.capacity), workload, cluster,
                          ModelOptions(progress=False))
    return dict(headline(result, model))


def _figures(row: dict[str, object], names: tuple[str, ...]) -> dict[str, object]:
    return {k: v for k, v in row.items() if k not in ("point", "workload", *names)}


def test_an_elastic_sweep_gives_the_rows_of_direct_replays(tmp_path: Path) -> None:
    path = _sweep(tmp_path, "elastic", ELASTIC,
                  "  b_max:\n    path: '[1].spec.max.cpu'\n    values: [16, 32]\n")
    outcome = run_sweep(load_sweep(path), tmp_path / "out", workers=1, progress=_Sink())
    assert outcome.ran == 2 and outcome.failed == () and outcome.invalid == ()
    assert "preemptions" in outcome.rows[0]
    for row, cpu in zip(outcome.rows, (16, 32), strict=True):
        assert row["b_max"] == cpu
        text = ELASTIC.rsplit("spec:", 1)[0] + f"spec: {{min: {{cpu: 16}}, max: {{cpu: {cpu}}}}}\n"
        assert _figures(row, ("b_max",)) == _direct(path, "elastic", text)
    assert outcome.rows[0]["mean_wait"] != outcome.rows[1]["mean_wait"]
    assert all(row["preemptions"] for row in outcome.rows)  # borrowed room revoked


def test_a_quotatree_sweep_gives_the_rows_of_direct_replays(tmp_path: Path) -> None:
    path = _sweep(tmp_path, "quotatree", TREE,
                  "  a_quota:\n    path: spec.nodes.group-a.quota.cpu\n    values: [4, 16]\n")
    outcome = run_sweep(load_sweep(path), tmp_path / "out", workers=1, progress=_Sink())
    assert outcome.ran == 2 and outcome.failed == () and outcome.invalid == ()
    assert outcome.rows[0]["mean_wait"] != outcome.rows[1]["mean_wait"]
    assert all(row["preemptions"] for row in outcome.rows)  # borrowers preempted
    for row, cpu in zip(outcome.rows, (4, 16), strict=True):
        assert row["a_quota"] == cpu
        text = TREE.replace('"group-a": {"parent": "root", "hard": "false", "quota": '
                            '{"cpu": "16"}}',
                            f'"group-a": {{"parent": "root", "hard": "false", "quota": '
                            f'{{"cpu": "{cpu}"}}}}')
        assert _figures(row, ("a_quota",)) == _direct(path, "quotatree", text)


def test_a_min_above_max_is_listed_and_skipped(tmp_path: Path) -> None:
    path = _sweep(tmp_path, "elastic", ELASTIC,
                  "  a_min:\n    path: '[0].spec.min.cpu'\n    values: [8, 64]\n")
    grid = expand(load_sweep(path))
    assert [p.values for p in grid.points] == [(("a_min", 8),)]
    assert [p.values for p in grid.invalid] == [(("a_min", 64),)]
    assert "min" in grid.invalid[0].reason
    outcome = run_sweep(load_sweep(path), tmp_path / "out", workers=1, progress=_Sink())
    assert outcome.ran == 1 and [r["a_min"] for r in outcome.invalid] == [64]


def test_an_invalid_tree_quota_is_listed_and_skipped(tmp_path: Path) -> None:
    path = _sweep(tmp_path, "quotatree", TREE,
                  "  a_quota:\n    path: spec.nodes.group-a.quota.cpu\n    values: [8, -1]\n")
    grid = expand(load_sweep(path))
    assert [p.values for p in grid.points] == [(("a_quota", 8),)]
    assert [p.values for p in grid.invalid] == [(("a_quota", -1),)]


@pytest.mark.slow
def test_the_process_pool_gives_the_rows_of_one_process(tmp_path: Path) -> None:
    path = _sweep(tmp_path, "elastic", ELASTIC,
                  "  b_max:\n    path: '[1].spec.max.cpu'\n    values: [16, 24, 32]\n")
    serial = run_sweep(load_sweep(path), tmp_path / "one", workers=1, progress=_Sink())
    pooled = run_sweep(load_sweep(path), tmp_path / "pool", workers=2, progress=_Sink())
    assert serial.ran == pooled.ran == 3
    assert pooled.rows == serial.rows


def test_the_base_config_must_be_the_models_file(tmp_path: Path) -> None:
    with pytest.raises(SweepError, match="expected ElasticQuota objects"):
        parse_sweep(f"model: elastic\nconfig: {{partitions: []}}\n{WORKLOAD}"
                    "parameters: {x: {path: a, values: [1]}}\n")
    with pytest.raises(SweepError, match="not valid JSON"):
        load_sweep(_sweep(tmp_path, "quotatree", "{not json", "  x: {path: a, values: [1]}\n"))
    with pytest.raises(SweepError, match=r"parameter 'x': path \[2\]\.spec\.max\.cpu: "
                       r"\[2\]: no item 2"):
        load_sweep(_sweep(tmp_path, "elastic", ELASTIC,
                          "  x: {path: '[2].spec.max.cpu', values: [1]}\n"))


def test_replay_options_are_the_yunikorn_models(tmp_path: Path) -> None:
    path = _sweep(tmp_path, "elastic", ELASTIC,
                  "  b_max: {path: '[1].spec.max.cpu', values: [16]}\nreplay: {packing: none}\n")
    with pytest.raises(SweepError, match="replay: packing is for the yunikorn model"):
        load_sweep(path)


@pytest.mark.slow
def test_ray_gives_the_rows_of_one_process(local_ray: None, tmp_path: Path) -> None:
    path = _sweep(tmp_path, "quotatree", TREE,
                  "  a_quota:\n    path: spec.nodes.group-a.quota.cpu\n    values: [4, 16]\n")
    serial = run_sweep(load_sweep(path), tmp_path / "one", workers=1, progress=_Sink())
    on_ray = run_sweep(load_sweep(path), tmp_path / "ray", executor="ray", progress=_Sink())
    assert on_ray.ran == 2 and on_ray.rows == serial.rows


@pytest.mark.slow
def test_the_bundled_nasa_files_are_the_base_of_builtin_configs() -> None:
    for model, path in (("elastic", "[0].spec.max.cpu"),
                        ("quotatree", "spec.nodes.normal.quota.cpu")):
        spec = parse_sweep(f"model: {model}\nconfig: builtin:nasa-ipsc\n{WORKLOAD}"
                           f"parameters: {{x: {{path: '{path}', values: [96, 128]}}}}\n")
        assert len(expand(spec).points) == 2


class _Sink:
    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass

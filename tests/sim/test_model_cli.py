"""`simulate --model` and `demo --model` end to end, for the models beside YuniKorn."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.sim.test_cli import quotactor

ELASTIC = """\
apiVersion: scheduling.sigs.k8s.io/v1alpha1
kind: ElasticQuota
metadata: {name: train}
spec: {min: {cpu: 4}, max: {cpu: 8}}
---
apiVersion: scheduling.sigs.k8s.io/v1alpha1
kind: ElasticQuota
metadata:
  name: serve
  annotations: {quota.scheduling.koordinator.sh/namespaces: '["web"]'}
spec: {min: {cpu: 4}, max: {cpu: 4}}
"""
JOBS = [
    {"id": "t1", "user": "ann", "submit": 0, "duration": 100, "resources": {"vcore": "8"},
     "tags": {"namespace": "train"}},
    {"id": "w1", "user": "bob", "submit": 10, "duration": 30, "resources": {"vcore": "4"},
     "tags": {"namespace": "web"}},
    {"id": "huge", "user": "bob", "submit": 20, "duration": 30, "resources": {"vcore": "6"},
     "tags": {"namespace": "web"}},
    {"id": "t2", "user": "ann", "submit": 30, "duration": 10, "resources": {"vcore": "2"},
     "tags": {"quota": "train", "priority": "5"}},
]


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[Path, Path]:
    quotas = tmp_path / "quotas.yaml"
    quotas.write_text(ELASTIC)
    jobs = tmp_path / "jobs.jsonl"
    jobs.write_text("".join(json.dumps(j) + "\n" for j in JOBS))
    return quotas, jobs


@pytest.mark.slow
def test_simulate_elastic_on_a_small_trace(tmp_path: Path, inputs: tuple[Path, Path],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    quotas, jobs = inputs
    out = tmp_path / "out"
    code = quotactor("simulate", "--model", "elastic", "--config", str(quotas), "--workload",
                     str(jobs), "--nodes", "1", "--node-vcore", "8", "--out", str(out),
                     "--check", "never == 0")
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "exceeds quota serve's max: 4 vcore" in printed
    assert "QUOTA GROUP" in printed and "REVOKED" in printed
    report = json.loads((out / "report.json").read_text())
    assert report["model"] == "elastic" and report["leftoverUsage"] == {}
    assert report["preemptions"]["victims"] == 1
    assert report["preemptions"]["byQueue"] == {"train": 1}
    groups = {g["name"]: g for g in report["quotaGroups"]}
    assert groups["train"]["peakUsed"] == {"vcore": 8000}
    assert groups["serve"]["max"] == {"vcore": 4000}
    assert (out / "quota-groups.png").stat().st_size > 10_000


def test_simulate_elastic_compares_two_quota_files(
        tmp_path: Path, inputs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    quotas, jobs = inputs
    roomy = tmp_path / "roomy.yaml"
    roomy.write_text(ELASTIC.replace("max: {cpu: 4}}", "max: {cpu: 8}}"))
    code = quotactor("simulate", "--model", "elastic", "--config", str(quotas), "--compare",
                     str(roomy), "--workload", str(jobs), "--nodes", "1", "--node-vcore", "8",
                     "--out", str(tmp_path / "out"), "--no-plots")
    assert code == 0
    assert "== B: roomy ==" in capsys.readouterr().out


def test_a_bad_quota_file_is_one_line_and_exit_2(
        tmp_path: Path, inputs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    _, jobs = inputs
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: ElasticQuota\nmetadata: {name: x}\nspec: {min: {cpu: 9}, "
                   "max: {cpu: 2}}\n")
    code = quotactor("simulate", "--model", "elastic", "--config", str(bad), "--workload",
                     str(jobs), "--nodes", "1", "--node-vcore", "8")
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"quotactor simulate: {bad}:") and err.count("\n") == 1


@pytest.mark.slow
def test_demo_elastic_on_a_truncated_trace(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "demo"
    assert quotactor("demo", "--model", "elastic", "--jobs", "600", "--out", str(out)) == 0
    printed = capsys.readouterr().out
    assert "nasa-ipsc-elastic.yaml (elastic model" in printed
    assert "--model elastic --config" in printed
    report = json.loads((out / "report.json").read_text())
    assert report["model"] == "elastic"
    assert report["workload"]["jobs"] == 600 and report["leftoverUsage"] == {}
    assert {g["name"] for g in report["quotaGroups"]} == {"normal", "ops"}
    assert (out / "nasa-ipsc-elastic.yaml").exists()
    assert (out / "quota-groups.png").exists()


TREE = {"kind": "QuotaTree", "metadata": {"name": "lab"}, "spec": {
    "resourceNames": ["cpu"], "nodes": {
        "lab": {"parent": "nil", "hard": "true", "quota": {"cpu": "8"}},
        "train": {"parent": "lab", "hard": "false", "quota": {"cpu": "4"}},
        "web": {"parent": "lab", "hard": "true", "quota": {"cpu": "4"}}}}}


@pytest.mark.slow
def test_simulate_quotatree_on_a_small_trace(tmp_path: Path, inputs: tuple[Path, Path],
                                             capsys: pytest.CaptureFixture[str]) -> None:
    _, jobs = inputs
    quotas = tmp_path / "tree.json"
    quotas.write_text(json.dumps(TREE))
    out = tmp_path / "out"
    code = quotactor("simulate", "--model", "quotatree", "--config", str(quotas),
                     "--workload", str(jobs), "--nodes", "1", "--node-vcore", "8", "--out",
                     str(out))
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "exceeds node web's quota (4 cpu) in tree lab" in printed
    report = json.loads((out / "report.json").read_text())
    assert report["model"] == "quotatree" and report["leftoverUsage"] == {}
    assert report["preemptions"]["byQueue"] == {"train": 1}
    assert {g["name"] for g in report["quotaGroups"]} == {"lab", "train", "web"}
    assert (out / "quota-groups.png").stat().st_size > 10_000


@pytest.mark.slow
def test_demo_quotatree_on_a_truncated_trace(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "demo"
    assert quotactor("demo", "--model", "quotatree", "--jobs", "600", "--out", str(out)) == 0
    printed = capsys.readouterr().out
    assert "nasa-ipsc-tree.json (quotatree model" in printed
    report = json.loads((out / "report.json").read_text())
    assert report["model"] == "quotatree"
    assert report["workload"]["jobs"] == 600 and report["leftoverUsage"] == {}
    assert {g["name"] for g in report["quotaGroups"]} == {"ipsc", "normal", "system"}
    assert (out / "nasa-ipsc-tree.json").exists()


@pytest.mark.parametrize("extra", [["--target", "http://127.0.0.1:9"], ["--serve"]])
def test_target_and_serve_are_yunikorns_only(tmp_path: Path, inputs: tuple[Path, Path],
                                             extra: list[str],
                                             capsys: pytest.CaptureFixture[str]) -> None:
    quotas, jobs = inputs
    code = quotactor("simulate", "--model", "elastic", "--config", str(quotas), "--workload",
                     str(jobs), "--nodes", "1", "--node-vcore", "8", *extra)
    assert code == 2
    assert "needs the yunikorn model, not elastic" in capsys.readouterr().err


@pytest.mark.parametrize("extra", [["--kill-preempted"], ["--preemption-grace", "30"]])
def test_target_refuses_the_replays_own_preemption_options(
        tmp_path: Path, extra: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    jobs = tmp_path / "jobs.jsonl"
    jobs.write_text('{"job_id": "a", "user": "u", "submit": 0, "duration": 10, "tasks": 1}\n')
    code = quotactor("simulate", "--target", "http://127.0.0.1:9", "--workload", str(jobs),
                     *extra)
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not with --target" in err


TWO_BIG = [
    {"id": "first", "user": "ann", "submit": 0, "duration": 100, "tasks": 98,
     "resources": {"vcore": "1"}},
    {"id": "filler", "user": "ann", "submit": 1, "duration": 100, "tasks": 2,
     "resources": {"vcore": "1"}},
    {"id": "second", "user": "bob", "submit": 2, "duration": 100, "tasks": 98,
     "resources": {"vcore": "1"}},
]
BIG_TREE = {"kind": "QuotaTree", "metadata": {"name": "big"}, "spec": {
    "resourceNames": ["cpu"], "nodes": {
        "big": {"parent": "nil", "hard": "true", "quota": {"cpu": "400"}},
        "default": {"parent": "big", "hard": "false", "quota": {"cpu": "0"}}}}}


@pytest.mark.parametrize("model, config", [("elastic", ELASTIC),
                                           ("quotatree", json.dumps(BIG_TREE))])
def test_two_98_processor_jobs_never_run_together_on_100_processors(
        tmp_path: Path, model: str, config: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    quotas = tmp_path / "quotas"
    quotas.write_text(config)
    jobs = tmp_path / "jobs.jsonl"
    jobs.write_text("".join(json.dumps(j) + "\n" for j in TWO_BIG))
    out = tmp_path / "out"
    code = quotactor("simulate", "--model", model, "--config", str(quotas), "--workload",
                     str(jobs), "--nodes", "100", "--node-vcore", "1", "--out", str(out),
                     "--no-plots")
    assert code == 0, capsys.readouterr().out
    report = json.loads((out / "report.json").read_text())
    vcore = next(r for r in report["resources"] if r["name"] == "vcore")
    assert vcore["peakUsed"] == 100_000
    rows = (out / "jobs.csv").read_text().splitlines()
    second = next(row for row in rows if row.startswith("second,")).split(",")
    assert second[rows[0].split(",").index("final_start")] == "100"

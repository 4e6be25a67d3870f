"""Kueue manifests (YAML as Kueue reads it) and the `quotactor kueue` command."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from quotactor.kueue import KueueError, KueueManager, load_manifests
from quotactor.kueue import cli as kueue_cli
from quotactor.kueue.loader import MAX_BYTES

EXAMPLES = Path(kueue_cli.__file__).parent / "examples"

MANIFESTS = """\
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cluster-queue}
spec:
  namespaceSelector: {}
  cohort: all
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: 9, borrowingLimit: "1"}
      - {name: memory, nominalQuota: 36Gi, lendingLimit: 4Gi}
      - {name: nvidia.com/gpu, nominalQuota: 0}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: other}
spec:
  cohortName: all
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: 500m}
      - {name: memory, nominalQuota: 1Gi}
      - {name: nvidia.com/gpu, nominalQuota: 2}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: default, name: user-queue}
spec: {clusterQueue: cluster-queue}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: high}
value: 100
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: sample, namespace: default, creationTimestamp: "2024-05-01T10:00:00Z"}
spec:
  queueName: user-queue
  priorityClassName: high
  podSets:
  - name: main
    count: 3
    template:
      spec:
        initContainers:
        - resources: {requests: {cpu: "2"}}
        containers:
        - resources: {requests: {cpu: "1", memory: 200Mi}}
        - resources: {limits: {cpu: 500m}}
        overhead: {memory: 10Mi}
"""


def test_manifests_read_as_kueue_reads_them() -> None:
    found = load_manifests(MANIFESTS)
    assert [f.name for f in found.flavors] == ["default-flavor"]
    cq, other = found.cluster_queues
    quotas = {q.name: q for q in cq.resource_groups[0].flavors[0].resources}
    assert (quotas["cpu"].nominal, quotas["cpu"].borrowing_limit) == (9000, 1000)
    assert (quotas["memory"].nominal, quotas["memory"].lending_limit) == (36 * 2**30, 4 * 2**30)
    assert cq.cohort == other.cohort == "all"
    assert other.resource_groups[0].flavors[0].resources[0].nominal == 500
    assert found.local_queues[0].cluster_queue == "cluster-queue"
    assert found.priority_classes[0].value == 100
    (workload,) = found.workloads
    assert workload.priority_class == "high"
    assert workload.created == pytest.approx(1714557600.0)
    pod_set = workload.pod_sets[0]
    assert pod_set.count == 3
    # containers add up (1 + 0.5 cpu), an init container raises it (2), overhead is added
    assert dict(pod_set.requests) == {"cpu": 2000, "memory": 210 * 2**20}


def test_loaded_objects_admit_a_workload() -> None:
    found = load_manifests(MANIFESTS)
    m = KueueManager()
    m.apply(*found.objects())
    m.submit(found.workloads[0])
    assert m.admit_pending().admitted == ("default/sample",)
    assert m.workload("default/sample").priority == 100


def test_missing_namespace_selector_selects_nothing() -> None:
    """Kueue reads a ClusterQueue without `namespaceSelector` as selecting no namespace."""
    text = MANIFESTS.replace("  namespaceSelector: {}\n  cohort: all\n", "  cohort: all\n")
    found = load_manifests(text)
    m = KueueManager()
    m.apply(*found.objects())
    m.submit(found.workloads[0])
    m.admit_pending()
    assert m.inadmissible() == ["default/sample"]


@pytest.mark.parametrize(("text", "message"), [
    ("a: [", "invalid YAML"),
    ("- 1\n", "item 1: expected a mapping"),
    ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n", "apiVersion 'v1' of 'Pod'"),
    ("apiVersion: kueue.x-k8s.io/v1beta1\nkind: AdmissionCheck\nmetadata: {name: a}\n",
     "unsupported kind 'AdmissionCheck'"),
    ("apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {}\n",
     "metadata.name: Required value"),
    ("apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: c}\nspec:\n"
     "  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n    - name: f\n"
     "      resources:\n      - {name: cpu, nominalQuota: lots}\n",
     "ClusterQueue c: spec.resourceGroups[0].flavors[0].resources[0].nominalQuota"),
    ("apiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\nmetadata: {name: p}\n"
     "value: high\n", "WorkloadPriorityClass p: value: expected an integer"),
    ("apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\nmetadata: {name: w}\n"
     "spec: {queueName: q, podSets: {}}\n", "spec.podSets: expected a list"),
])
def test_bad_manifests_name_the_document_and_field(text: str, message: str) -> None:
    with pytest.raises(KueueError) as info:
        load_manifests("---\n" + text)
    assert message in str(info.value)
    assert str(info.value).startswith("document 1:") or "invalid YAML" in str(info.value)


def test_input_size_is_bounded() -> None:
    with pytest.raises(KueueError, match="larger than"):
        load_manifests("#" * (MAX_BYTES + 1))


def test_lists_of_objects_are_read() -> None:
    text = ("apiVersion: v1\nkind: List\nitems:\n- apiVersion: kueue.x-k8s.io/v1beta1\n"
            "  kind: ResourceFlavor\n  metadata: {name: a}\n- apiVersion: kueue.x-k8s.io/v1beta1\n"
            "  kind: ResourceFlavor\n  metadata: {name: b}\n")
    assert [f.name for f in load_manifests(text).flavors] == ["a", "b"]


def run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    kueue_cli.add_parser(parser.add_subparsers())
    args = parser.parse_args(["kueue", *argv])
    code: int = args.func(args)
    return code


def test_cli_table_on_the_shipped_example(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(str(EXAMPLES / "cluster.yaml"), "--workloads",
                   str(EXAMPLES / "workloads.yaml")) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split()[:4] == ["CLUSTERQUEUE", "COHORT", "FLAVOR", "RESOURCE"]
    assert "team-a/serve-1  Admitted" in out
    assert "COHORT    PARENT" in out


def test_cli_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(str(EXAMPLES / "cluster.yaml"), "--workloads",
                   str(EXAMPLES / "workloads.yaml"), "--json") == 0
    doc = json.loads(capsys.readouterr().out)
    assert {q["name"] for q in doc["clusterQueues"]} == {"team-a", "team-b"}
    assert doc["cohorts"][0]["name"] == "research"
    states = {w["workload"]: w["state"] for w in doc["workloads"]}
    assert states["team-a/serve-1"] == "Admitted"
    team_a = next(q for q in doc["clusterQueues"] if q["name"] == "team-a")
    assert team_a["resources"][0] == {
        "flavor": "on-demand", "resource": "cpu", "nominalQuota": "40", "borrowingLimit": "20",
        "lendingLimit": "30", "used": team_a["resources"][0]["used"], "borrowed": "0",
        "lent": "0"}


@pytest.mark.parametrize(("content", "message"), [
    (None, "cannot read"),
    ("apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: Bad}\n",
     "ClusterQueue Bad: metadata.name"),
    (b"\xff\xfe", "not UTF-8"),
])
def test_cli_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                 content: str | bytes | None, message: str) -> None:
    path = tmp_path / "in.yaml"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    assert run_cli(str(path)) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("quotactor kueue: ") and message in lines[0]


def test_cli_is_wired_into_quotactor(capsys: pytest.CaptureFixture[str]) -> None:
    from quotactor.cli import main
    assert main(["kueue", str(EXAMPLES / "cluster.yaml")]) == 0
    assert "team-b" in capsys.readouterr().out


CONFIGURATION = """\
apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
fairSharing:
  enable: true
  preemptionStrategies: [LessThanInitialShare]
"""


def test_kueues_configuration_turns_fair_sharing_on() -> None:
    found = load_manifests(CONFIGURATION)
    assert (found.fair_sharing, found.fair_sharing_strategies) == (
        True, ("LessThanInitialShare",))
    assert load_manifests(MANIFESTS).fair_sharing is False
    with pytest.raises(KueueError, match="preemptionStrategies"):
        load_manifests(CONFIGURATION.replace("LessThanInitialShare", "Whatever"))
    with pytest.raises(KueueError, match=r"fairSharing\.enable"):
        load_manifests(CONFIGURATION.replace("enable: true", "enable: maybe"))


def test_cli_reads_fair_sharing_from_the_files(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(CONFIGURATION)
    assert run_cli(str(EXAMPLES / "cluster.yaml"), str(config), "--workloads",
                   str(EXAMPLES / "workloads.yaml"), "--json") == 0
    fair = json.loads(capsys.readouterr().out)
    assert run_cli(str(EXAMPLES / "cluster.yaml"), "--workloads",
                   str(EXAMPLES / "workloads.yaml"), "--json") == 0
    classical = json.loads(capsys.readouterr().out)
    assert fair["workloads"] != classical["workloads"]  # the tournament orders heads otherwise

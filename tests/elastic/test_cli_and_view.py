"""The `elastic` subcommand (called through its handler) and the REST view."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from quotactor.elastic import (
    DEFAULT_QUOTA,
    ROOT_QUOTA,
    ElasticQuotaManager,
    QuotaError,
    QuotaSpec,
    cli,
    load_pod_requests,
)

GI = 2**30

QUOTAS = """\
kind: ElasticQuota
metadata:
  name: team-b
  labels: {quota.scheduling.koordinator.sh/parent: dept}
spec: {min: {cpu: 2}, max: {cpu: 10, memory: 8Gi}}
---
kind: ElasticQuota
metadata:
  name: dept
  labels: {quota.scheduling.koordinator.sh/is-parent: "true"}
spec: {min: {cpu: 4}, max: {cpu: 10, memory: 8Gi}}
---
kind: ElasticQuota
metadata:
  name: team-a
  labels: {quota.scheduling.koordinator.sh/parent: dept}
spec: {min: {cpu: 2}, max: {cpu: 10, memory: 8Gi}}
"""

PODS = """\
- {id: a1, quota: team-a, request: {cpu: 6, memory: 2Gi}, priority: 5, assigned: true}
- {id: b1, quota: team-b, request: {cpu: 500m}}
- {id: stray, request: {cpu: 1}, assigned: true}
"""


def run(tmp_path: Path, *argv: str, quotas: str = QUOTAS, pods: str | None = PODS) -> int:
    (tmp_path / "quotas.yaml").write_text(quotas)
    (tmp_path / "pods.yaml").write_text(pods or "")
    parser = argparse.ArgumentParser(prog="quotactor")
    cli.add_parser(parser.add_subparsers(dest="command", required=True))
    extra = ["--requests", str(tmp_path / "pods.yaml")] if pods is not None else []
    args = parser.parse_args(["elastic", str(tmp_path / "quotas.yaml"), *extra, *argv])
    code: int = args.func(args)
    return code


def test_the_table_shows_min_max_request_runtime_and_used_per_quota(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(tmp_path, "--total", "cpu=8,memory=16Gi") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "cluster total: cpu 8, memory 16Gi"
    assert lines[1].split() == ["QUOTA", "RESOURCE", "MIN", "MAX", "REQUEST", "RUNTIME", "USED"]
    rows = [line.split() for line in lines[2:]]
    assert rows[0] == [ROOT_QUOTA, "cpu", "-", "-", "7500m", "7", "7"]
    assert ["dept", "cpu", "4", "10", "6500m", "6500m", "6"] in rows
    assert ["team-a", "cpu", "2", "10", "6", "6", "6"] in rows
    assert ["memory", "0", "8Gi", "2Gi", "2Gi", "2Gi"] in rows
    assert ["team-b", "cpu", "2", "10", "500m", "500m", "0"] in rows
    assert [DEFAULT_QUOTA, "cpu", "-", "-", "1", "-", "1"] in rows


def test_json_output_is_the_rest_view(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert run(tmp_path, "--total", "cpu=8", "--json") == 0
    view = json.loads(capsys.readouterr().out)
    assert view["total"] == {"cpu": 8000} and view["available"] == {"cpu": 7000}
    dept = next(c for c in view["tree"]["children"] if c["name"] == "dept")
    assert [c["name"] for c in dept["children"]] == ["team-a", "team-b"]
    assert dept["children"][0]["runtime"] == {"cpu": 6000}, "no memory in the cluster: 0"


def test_without_scaling_mins_are_kept(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert run(tmp_path, "--total", "cpu=1", "--no-min-scale", "--json", pods=None) == 0
    dept = json.loads(capsys.readouterr().out)["tree"]["children"][0]
    assert dept["effectiveMin"] == {"cpu": 4000}


@pytest.mark.parametrize(("argv", "quotas", "pods", "message"), [
    (["--total", "cpu=lots"], QUOTAS, None, "invalid quantity"),
    (["--total", "cpu"], QUOTAS, None, "expected NAME=QUANTITY"),
    (["--total", "cpu=1"], "kind: Pod\n", None, "quotas.yaml: document 1"),
    (["--total", "cpu=1"], QUOTAS.replace("min: {cpu: 4}", "min: {cpu: 3}"), None,
     "quotas.yaml: the children's min of quota dept"),
    (["--total", "cpu=1"], QUOTAS, "- {id: x, quota: dept}\n", "pods.yaml: quota dept is a"),
    (["--total", "cpu=1"], QUOTAS, "- {id: x, size: 1}\n", "pods.yaml: pod 1: unknown field"),
])
def test_bad_input_is_reported_on_stderr_with_exit_code_1(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], quotas: str,
        pods: str | None, message: str) -> None:
    assert run(tmp_path, *argv, quotas=quotas, pods=pods) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and message in captured.err


def test_the_engine_managed_objects_of_a_cluster_export_are_skipped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    export = QUOTAS + """\
---
kind: ElasticQuota
metadata:
  name: koordinator-root-quota
  labels: {quota.scheduling.koordinator.sh/is-parent: "true"}
spec: {max: {cpu: "1844674407370955161"}}
---
kind: ElasticQuota
metadata: {name: koordinator-system-quota}
spec: {max: {cpu: "1844674407370955161"}}
---
kind: ElasticQuota
metadata: {name: koordinator-default-quota}
spec: {max: {cpu: "2"}}
"""
    assert run(tmp_path, "--total", "cpu=8", quotas=export) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert [DEFAULT_QUOTA, "cpu", "0", "2", "1", "2", "1"] in rows


def test_a_missing_file_is_reported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="quotactor")
    cli.add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["elastic", str(tmp_path / "nope.yaml"), "--total", "cpu=1"])
    assert args.func(args) == 1
    assert "cannot read" in capsys.readouterr().err


@pytest.mark.parametrize(("text", "message"), [
    ("{a: 1}", "YAML list"),
    ("- 3", "must be a mapping"),
    ("- {quota: a}", "id must be"),
    ("- {id: a, priority: high}", "priority"),
    ("- {id: a, assigned: maybe}", "assigned must be"),
])
def test_bad_requests_files_are_refused(text: str, message: str) -> None:
    with pytest.raises(QuotaError, match=message):
        load_pod_requests(text)


def test_the_view_is_json_able_and_nests_the_whole_tree() -> None:
    eq = ElasticQuotaManager(total={"cpu": 10})
    eq.upsert(QuotaSpec("dept", is_parent=True, min={"cpu": 2}, max={"cpu": 10}))
    eq.upsert(QuotaSpec("team", parent="dept", min={"cpu": 2}, max={"cpu": 10},
                        shared_weight={"cpu": 0}))
    eq.add_pod("p", "team", {"cpu": 3})
    view = json.loads(json.dumps(eq.view()))
    team = view["tree"]["children"][0]["children"][0]
    assert team == {
        "name": "team", "parent": "dept", "isParent": False, "allowLentResource": True,
        "min": {"cpu": 2}, "max": {"cpu": 10}, "sharedWeight": {"cpu": 10},
        "effectiveMin": {"cpu": 2}, "request": {"cpu": 3}, "limitedRequest": {"cpu": 3},
        "runtime": {"cpu": 3}, "used": {}, "nonPreemptibleUsed": {}, "pods": 1,
        "children": [],
    }
    assert [c["name"] for c in view["tree"]["children"]] == [
        "dept", "koordinator-default-quota", "koordinator-system-quota"]

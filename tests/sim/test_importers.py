"""`quotactor import`: YuniKorn's REST API, kubectl pod lists and Alibaba's GPU trace become
files that `quotactor simulate` replays, with every input bounded and every refusal one line."""

from __future__ import annotations

import csv
import gzip
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from quotactor.cli import main
from quotactor.client import Client
from quotactor.core.resources import QuantityError, Resource
from quotactor.rest import RestServer, serve
from quotactor.scheduler import Scheduler, SchedulerOptions
from quotactor.scheduler.booking.clock import VirtualClock
from quotactor.sim.inputs.cluster import load_cluster
from quotactor.sim.inputs.importers import (
    FetchError,
    Imported,
    SourceError,
    import_alibaba_gpu,
    import_pods,
    import_yunikorn,
)
from quotactor.sim.inputs.importers.quantity import k8s_quantity
from quotactor.sim.inputs.jobs import Workload
from quotactor.sim.inputs.workload import load_workload

DATA = Path(__file__).resolve().parents[1] / "data" / "importers"
PODS = DATA / "pods.json"
NODES = DATA / "nodes.json"
ALI_PODS = DATA / "alibaba-gpu-pods.csv"
ALI_NODES = DATA / "alibaba-gpu-nodes.csv"
GI = 2**30
MI = 2**20
GPU_MILLI = "alibabacloud.com/gpu-milli"


def jobs_by_id(imported: Imported) -> dict[str, Any]:
    return {job.job_id: job for job in imported.workload.jobs}


def essence(workload: Workload) -> list[tuple[Any, ...]]:
    """What a job means, without the line it was read from."""
    return [(j.job_id, j.user, j.groups, j.queue, j.submit, j.duration, j.task_groups,
             dict(j.tags)) for j in workload.jobs]


def replay(out: Path, workload: str, *extra: str) -> list[dict[str, str]]:
    """`quotactor simulate` on imported files; the rows of its jobs.csv."""
    code = main(["simulate", "--workload", str(out / workload), "--config",
                 str(out / "queues.yaml"), "--out", str(out / "replay"), "--no-plots", *extra])
    assert code == 0
    with (out / "replay" / "jobs.csv").open() as handle:
        return list(csv.DictReader(handle))


def one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


# -- Kubernetes quantities ---------------------------------------------------------------------

@pytest.mark.parametrize(("name", "text", "expected"), [
    ("vcore", "500m", 500), ("vcore", "0.25", 250), ("vcore", "2", 2000), ("vcore", 3, 3000),
    ("vcore", "1u", 1), ("vcore", "1.0005", 1001), ("memory", "1.5Gi", 3 * GI // 2),
    ("memory", "1G", 10**9), ("memory", "100m", 1), ("memory", "1e3", 1000),
    ("memory", "128974848", 128974848), ("memory", 0.5, 1), ("nvidia.com/gpu", "2", 2),
    ("nvidia.com/gpu", " 1 ", 1),
])
def test_kubernetes_quantities_become_yunikorn_units_rounded_up(name: str, text: object,
                                                                 expected: int) -> None:
    assert k8s_quantity(name, text) == expected


@pytest.mark.parametrize("text", ["-1", "1Zi", "", "lots", "9" * 65, "1e999", "99999999999Ei",
                                  True, None, float("nan"), float("inf"), -2])
def test_bad_or_absurd_quantities_are_refused(text: object) -> None:
    with pytest.raises(QuantityError):
        k8s_quantity("memory", text)


@given(st.integers(0, 2**30), st.sampled_from([("Ki", 2**10), ("Mi", 2**20), ("Gi", 2**30),
                                               ("k", 10**3), ("M", 10**6), ("", 1)]))
def test_whole_quantities_are_exact(number: int, suffix: tuple[str, int]) -> None:
    assert k8s_quantity("memory", f"{number}{suffix[0]}") == number * suffix[1]


@given(st.integers(0, 10**9), st.integers(0, 999))
def test_fractional_cores_round_up_to_the_millicore(whole: int, thousandths: int) -> None:
    assert k8s_quantity("vcore", f"{whole}.{thousandths:03d}") == whole * 1000 + thousandths
    assert k8s_quantity("vcore", f"{whole}.{thousandths:03d}1") == whole * 1000 + thousandths + 1


# -- kubectl get pods -o json ------------------------------------------------------------------

def test_pods_become_jobs_with_their_requests_identity_and_times() -> None:
    imported = import_pods(PODS, nodes=NODES)
    jobs = jobs_by_id(imported)
    assert set(jobs) == {"ml/train-a", "ml/train-b", "web/batch-1", "data/etl-7-driver"}
    assert imported.skipped == {"asking for nothing": 1, "never started": 1,
                                "still running": 1, "finished with no end time": 1}
    a = jobs["ml/train-a"]
    assert (a.user, a.groups, a.queue) == ("alice", ("research", "gpu-users"), "root.ml")
    # containers 1.5 + 0.5 cores, but the init container asks 4; the GPU from the limit only
    assert a.task_groups[0].resources == Resource(
        {"vcore": 4000, "memory": 5 * GI // 2, "nvidia.com/gpu": 1})
    assert (a.submit, a.duration, a.tasks) == (0.0, 3600.0, 1)  # start 10:00:30, end 11:00:30
    b = jobs["ml/train-b"]
    assert (b.user, b.queue, b.submit, b.duration) == ("bob", "root.ml", 300.0, 1800.0)
    assert b.total == Resource({"vcore": 2000, "memory": 4 * GI, "nvidia.com/gpu": 2})
    web = jobs["web/batch-1"]
    assert (web.user, web.groups, web.queue) == ("web", (), None)  # the namespace; placement
    assert web.tags == {"namespace": "web"}
    assert web.total == Resource({"vcore": 250, "memory": 123 * MI})  # no ephemeral-storage
    etl = jobs["data/etl-7-driver"]
    assert etl.total == Resource({"vcore": 1100, "memory": 10**9, "example.com/fpga": 1})
    assert etl.tags == {"namespace": "data", "applicationId": "spark-etl-7"}
    assert imported.notes == ("time 0 is 2024-05-06T10:00:00Z",)
    gpu, cpu = imported.nodes
    assert (gpu.name, gpu.count, cpu.name, cpu.count) == ("g5-2xlarge", 2, "m5-large", 1)
    assert gpu.capacity == Resource({"vcore": 7910, "memory": 31792716 * 1024,
                                     "nvidia.com/gpu": 2})
    assert imported.unplaceable() == 0


def test_a_label_can_name_the_user_and_running_pods_can_end_now() -> None:
    now = 1714998600.0  # 2024-05-06T12:30:00Z
    imported = import_pods(PODS, user_label="team", include_running=True, now=now)
    jobs = jobs_by_id(imported)
    assert jobs["ml/train-a"].user == "vision" and jobs["web/batch-1"].user == "payments"
    assert jobs["data/etl-7-driver"].user == "data"  # no such label: the namespace
    assert jobs["web/batch-2"].duration == 1800.0
    assert "still running" not in imported.skipped and imported.nodes == ()


def test_pods_import_on_the_command_line_replays(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["import", "pods", str(PODS), "--nodes", str(NODES), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert ("4 jobs (4 users, 1 queue named); skipped: 1 still running, 1 never started, "
            "1 finished with no end time, 1 asking for nothing") in printed
    assert f"--cluster {out / 'cluster.yaml'}" in printed
    assert essence(load_workload(str(out / "workload.csv"))) == essence(import_pods(PODS).workload)
    assert sum(n.node_id.startswith("g5-2xlarge") for n in load_cluster(
        out / "cluster.yaml").nodes) == 2
    rows = replay(out, "workload.csv", "--cluster", str(out / "cluster.yaml"))
    assert {(r["job_id"], r["user"], r["queue"], r["state"]) for r in rows} == {
        ("ml/train-a", "alice", "root.ml", "completed"),
        ("ml/train-b", "bob", "root.ml", "completed"),
        ("web/batch-1", "web", "root.web", "completed"),  # placed by the namespace tag
        ("data/etl-7-driver", "data", "root.data", "completed")}


@pytest.mark.parametrize(("content", "message"), [
    ("{not json", "not JSON"),
    ('{"kind": "List", "items": {}}', "an object with an `items` list"),
    ('[1, 2]', "an object with an `items` list"),
    ('{"items": [{"kind": "Service"}]}', "item 1 is not a Pod"),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('{"items": []}', "no pod ran to its end (the list is empty)"),
    ("\udcff", "not UTF-8"),
])
def test_an_unusable_pod_file_is_one_line_and_exit_2(tmp_path: Path, content: str, message: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "pods.json"
    path.write_bytes(content.encode("utf-8", "surrogateescape"))
    out = tmp_path / "out"
    assert main(["import", "pods", str(path), "--out", str(out)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert line.startswith("quotactor import pods: ") and message in line, line
    assert not out.exists()


def test_a_missing_pod_file_is_one_line(tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", "pods", str(tmp_path / "nope.json")]) == 2
    assert "No such file" in one_error_line(capsys.readouterr().err)


def test_a_gzipped_pod_list_reads_the_same_and_is_bounded_unzipped(tmp_path: Path) -> None:
    zipped = tmp_path / "pods.json.gz"
    zipped.write_bytes(gzip.compress(PODS.read_bytes()))
    assert essence(import_pods(zipped).workload) == essence(import_pods(PODS).workload)
    bomb = tmp_path / "bomb.json.gz"
    bomb.write_bytes(gzip.compress(b" " * 100_000 + b"{}"))
    with pytest.raises(SourceError, match="more than 50000 bytes once unzipped"):
        import_pods(bomb, max_bytes=50_000)


def test_pod_files_are_bounded_in_bytes_and_items() -> None:
    with pytest.raises(SourceError, match="reads pod lists of at most 1000 bytes"):
        import_pods(PODS, max_bytes=1000)
    with pytest.raises(SourceError, match="8 items; an import reads at most 3"):
        import_pods(PODS, max_pods=3)


def _pod(name: str, **changes: Any) -> dict[str, Any]:
    pod: dict[str, Any] = {
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ns", "creationTimestamp": "2024-01-01T00:00:00Z"},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
        "status": {"phase": "Succeeded", "startTime": "2024-01-01T00:00:10Z",
                   "containerStatuses": [{"state": {"terminated": {
                       "finishedAt": "2024-01-01T00:01:10Z"}}}]}}
    for path, value in changes.items():
        node = pod
        *parents, last = path.split("__")
        for key in parents:
            node = node[key]
        if value is None:
            node.pop(last, None)
        else:
            node[last] = value
    return pod


def test_absurd_or_missing_pod_fields_are_bad_items_naming_the_pod(tmp_path: Path) -> None:
    pods = [
        _pod("good"),
        _pod("huge", spec__containers=[{"name": "c", "resources": {"requests": {"cpu": "1e999"}}}]),
        _pod("negative", spec__containers=[{"name": "c", "resources": {
            "requests": {"memory": "-1Gi"}}}]),
        _pod("far", metadata__creationTimestamp="9999-12-31T00:00:00Z"),
        _pod("naive", metadata__creationTimestamp="2024-01-01T00:00:00"),
        _pod("backwards", status__startTime="2024-01-01T00:05:00Z"),
        _pod("who", metadata__annotations={"yunikorn.apache.org/user.info": "{oops"}),
        _pod("unborn", metadata__creationTimestamp=None),
        _pod("", metadata__name=None),
        _pod("bad-user", metadata__labels={"yunikorn.apache.org/username": "a b"}),
    ]
    path = tmp_path / "pods.json"
    path.write_text(json.dumps({"kind": "List", "items": pods}))
    imported = import_pods(path)
    assert [job.job_id for job in imported.workload.jobs] == ["ns/good"]
    assert imported.workload.bad_lines == 9
    reasons = [str(p) for p in imported.workload.problems]
    expected = ["line 2: pod ns/huge: containers c: quantity '1e999' for vcore is beyond int64",
                "line 3: pod ns/negative: containers c: invalid quantity '-1Gi' for memory",
                "line 4: pod ns/far: metadata.creationTimestamp '9999-12-31T00:00:00Z' is "
                "before 1970 or absurdly far ahead",
                "line 5: pod ns/naive: metadata.creationTimestamp must state its time zone",
                "line 6: pod ns/backwards: ends (",
                "line 7: pod ns/who: annotation yunikorn.apache.org/user.info is not JSON",
                "line 8: pod ns/unborn: metadata.creationTimestamp must be an RFC 3339 time",
                "line 9: pod #9: missing metadata.name",
                "line 10: pod ns/bad-user: invalid or missing user 'a b'"]
    assert len(reasons) == len(expected)
    for reason, start in zip(reasons, expected, strict=True):
        assert reason.startswith(start), reason


def test_an_unreadable_node_list_fails_the_pod_import(tmp_path: Path) -> None:
    nodes = tmp_path / "nodes.json"
    nodes.write_text(json.dumps({"items": [{"kind": "Node", "metadata": {"name": "n1"},
                                            "status": {"allocatable": {"cpu": "lots"}}}]}))
    with pytest.raises(SourceError, match="node n1: allocatable: invalid quantity 'lots'"):
        import_pods(PODS, nodes=nodes)


# -- Alibaba cluster-trace-gpu-v2023 -----------------------------------------------------------

def test_the_alibaba_gpu_trace_becomes_jobs_and_node_classes() -> None:
    imported = import_alibaba_gpu(ALI_PODS, ALI_NODES)
    jobs = jobs_by_id(imported)
    assert len(jobs) == 18 and imported.skipped == {"never scheduled": 2}
    shared = jobs["test-pod-0001"]
    assert (shared.user, shared.groups, shared.queue) == ("openb", ("ls",), "root.ls")
    assert shared.total == Resource({"vcore": 4000, "memory": 15 * GI, GPU_MILLI: 500})
    assert (shared.submit, shared.duration, shared.tags) == (600.0, 85800.0, {"qos": "LS"})
    assert jobs["test-pod-0002"].duration == 7200 - 1260  # deletion - scheduled
    assert jobs["test-pod-0003"].total[GPU_MILLI] == 2000
    assert jobs["test-pod-0004"].queue == "root.burstable"
    assert GPU_MILLI not in jobs["test-pod-0009"].total
    classes = {c.name: (c.count, c.capacity) for c in imported.nodes}
    assert classes == {
        "g2": (2, Resource({"vcore": 96000, "memory": 384 * GI, GPU_MILLI: 8000})),
        "t4": (2, Resource({"vcore": 104000, "memory": 512 * GI, GPU_MILLI: 2000})),
        "v100m16": (1, Resource({"vcore": 32000, "memory": 128 * GI, GPU_MILLI: 4000})),
        "cpu": (1, Resource({"vcore": 32000, "memory": 256 * GI})),
    }
    assert imported.unplaceable() == 0


def test_whole_gpus_count_a_shared_gpu_as_one() -> None:
    imported = import_alibaba_gpu(ALI_PODS, ALI_NODES, gpu="whole")
    jobs = jobs_by_id(imported)
    assert jobs["test-pod-0001"].total["nvidia.com/gpu"] == 1
    assert jobs["test-pod-0004"].total["nvidia.com/gpu"] == 8
    assert imported.nodes[0].capacity["nvidia.com/gpu"] == 8


@pytest.mark.parametrize("gpu", ["milli", "whole"])
def test_an_imported_gpu_trace_replays(tmp_path: Path, gpu: str,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["import", "alibaba-gpu", str(ALI_PODS), str(ALI_NODES), "--gpu", gpu,
                 "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "18 jobs (1 user, 4 queues named); skipped: 2 never scheduled" in printed
    assert "cluster:  " in printed and "(6 nodes in 4 classes)" in printed
    rows = replay(out, "workload.csv", "--cluster", str(out / "cluster.yaml"))
    assert len(rows) == 18 and {r["state"] for r in rows} == {"completed"}
    assert {r["queue"] for r in rows} == {"root.ls", "root.be", "root.burstable",
                                          "root.guaranteed"}
    report = json.loads((out / "replay" / "report.json").read_text())
    gpus = "nvidia.com/gpu" if gpu == "whole" else GPU_MILLI
    assert report["cluster"]["capacity"][gpus] == (24 if gpu == "whole" else 24000)


def test_alibaba_files_without_the_columns_are_one_line_and_exit_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pods = tmp_path / "pods.csv"
    pods.write_text("name,cpu_milli,memory_mib,num_gpu,creation_time,deletion_time\nx,1,1,0,0,1\n")
    assert main(["import", "alibaba-gpu", str(pods), str(ALI_NODES),
                 "--out", str(tmp_path / "out")]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "the header lacks the column scheduled_time" in line
    assert not (tmp_path / "out").exists()


def test_absurd_or_missing_alibaba_values_are_bad_rows(tmp_path: Path) -> None:
    header = ALI_PODS.read_text().splitlines()[0]
    rows = ["good,1000,1024,1,500,,LS,Succeeded,0,100,10",
            "many-cores,1e30,1024,0,0,,LS,Succeeded,0,100,10",
            "negative,1000,-5,0,0,,LS,Succeeded,0,100,10",
            "over-share,1000,1024,1,5000,,LS,Succeeded,0,100,10",
            "no-share,1000,1024,1,0,,LS,Succeeded,0,100,10",
            "backwards,1000,1024,0,0,,LS,Succeeded,0,5,10",
            "far,1000,1024,0,0,,LS,Succeeded,1e20,1e20,1e20",
            "words,some,1024,0,0,,LS,Succeeded,0,100,10",
            "half-gpu,1000,1024,1.5,1000,,LS,Succeeded,0,100,10",
            ",1000,1024,0,0,,LS,Succeeded,0,100,10",
            "nothing,0,0,0,0,,LS,Succeeded,0,100,10"]
    pods = tmp_path / "pods.csv"
    pods.write_text("\n".join([header, *rows]) + "\n")
    imported = import_alibaba_gpu(pods, ALI_NODES)
    assert [job.job_id for job in imported.workload.jobs] == ["good"]
    reasons = [str(p) for p in imported.workload.problems]
    assert reasons == [
        "line 3: pod many-cores: cpu_milli 1e30 is more than the 1000000000 an import takes "
        "as real",
        "line 4: pod negative: memory_mib must be a non-negative number, got '-5'",
        "line 5: pod over-share: gpu_milli 5000 is more than the 1000 an import takes as real",
        "line 6: pod no-share: gpu_milli is 0 for a pod asking for GPUs",
        "line 7: pod backwards: deletion_time 5 is before scheduled_time 10",
        "line 8: pod far: creation_time 1e20 is absurdly far ahead",
        "line 9: pod words: cpu_milli must be a number, got 'some'",
        "line 10: pod half-gpu: num_gpu must be a whole number, got '1.5'",
        "line 11: pod ?: missing name",
        "line 12: pod nothing: a task must ask for some resource",
    ]


def test_a_bad_alibaba_node_row_fails_the_import_naming_it(tmp_path: Path) -> None:
    nodes = tmp_path / "nodes.csv"
    nodes.write_text("sn,cpu_milli,memory_mib,gpu,model\nn0,1000,1024,1,T4\nn1,1000,lots,1,T4\n")
    with pytest.raises(SourceError, match=r"nodes.csv: line 3: node n1: memory_mib must be a "
                                          r"number, got 'lots'"):
        import_alibaba_gpu(ALI_PODS, nodes)


def test_alibaba_files_are_bounded_in_bytes_and_rows() -> None:
    with pytest.raises(SourceError, match="at most 100 bytes"):
        import_alibaba_gpu(ALI_PODS, ALI_NODES, max_bytes=100)
    with pytest.raises(SourceError, match="more than 10 rows; an import reads at most 10"):
        import_alibaba_gpu(ALI_PODS, ALI_NODES, max_rows=10)


# -- a running YuniKorn (here: quotactor serve) ------------------------------------------------

CONFIG = """\
partitions:
  - name: default
    placementrules: [{name: provided, create: true}]
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: a
          - name: b
            resources: {max: {vcore: 6000}}
"""
SHIM = "shim-token"
START = 1_700_000_000.0
GPU_TASK = {"vcore": 1000, "nvidia.com/gpu": 1}


@pytest.fixture
def history() -> Iterator[RestServer]:
    """A served scheduler that ran four applications to their end (one a gang), one still
    running and one that never started (virtual time from START)."""
    clock = VirtualClock(START)
    options = SchedulerOptions(shim_confirms_releases=True)  # as `quotactor serve` runs
    with Scheduler.start(CONFIG, clock=clock, options=options) as scheduler:
        server = serve(scheduler, shim_token=SHIM)
        try:
            with Client(server.url, shim_token=SHIM) as shim:
                for node in ("n1", "n2"):
                    shim.add_node(node, {"vcore": 4000, "memory": 8 * GI, "nvidia.com/gpu": 2})
                shim.add_application("app-1", "sue", groups=["dev"], queue="root.a")
                shim.ask("app-1", "k1", GPU_TASK)
                shim.ask("app-1", "k2", GPU_TASK)
                shim.add_application("app-4", "carol", groups=["ops"], queue="root.b")
                shim.ask("app-4", "k1", {"vcore": 500})
                shim.add_application("app-5", "carol", queue="root.b")
                shim.ask("app-5", "k1", {"vcore": 99000})
                clock.advance(10)
                shim.add_application("app-2", "bob", queue="root.b")
                shim.ask("app-2", "k1", {"vcore": 2000, "memory": GI})
                shim.add_application("app-3", "bob", queue="root.a")
                for key in ("k1", "k2", "k3"):
                    shim.ask("app-3", key, {"vcore": 500})
                shim.add_application("gang", "sue", queue="root.a",
                                     task_groups=[("workers", 2, {"vcore": 700})])
                scheduler.schedule()  # the gang's two placeholders
                for key in ("w0", "w1"):
                    shim.ask("gang", key, {"vcore": 600}, task_group="workers")
                scheduler.schedule()  # each real worker replaces a placeholder, once confirmed
                for asked in shim.decisions().released():
                    shim.release("gang", asked["allocationKey"],
                                 termination="PLACEHOLDER_REPLACED")
                clock.advance(20)
                shim.release("app-3", "k1")  # app-3 held 3 tasks at its peak
                clock.advance(30)
                for app, key in (("app-2", "k1"), ("app-3", "k2"), ("app-3", "k3"),
                                 ("gang", "w0"), ("gang", "w1")):
                    shim.release(app, key)
                clock.advance(50)
                shim.release("app-1", "k1")
                shim.release("app-1", "k2")
                clock.advance(60)
                scheduler.schedule()
            yield server
        finally:
            server.stop()


def test_a_yunikorn_history_becomes_jobs_tasks_and_nodes(history: RestServer) -> None:
    imported = import_yunikorn(history.url)
    jobs = jobs_by_id(imported)
    assert set(jobs) == {"app-1", "app-2", "app-3", "gang"}
    assert imported.skipped == {"still running": 1, "never started": 1}
    one, two, three = jobs["app-1"], jobs["app-2"], jobs["app-3"]
    assert (one.user, one.groups, one.queue) == ("sue", ("dev",), "root.a")
    assert (one.submit, one.duration, one.tasks) == (0.0, 100.0, 2)
    assert one.task_groups[0].resources == Resource(GPU_TASK)
    assert (two.user, two.queue, two.submit, two.duration) == ("bob", "root.b", 10.0, 50.0)
    assert two.total == Resource({"vcore": 2000, "memory": GI})
    assert (three.tasks, three.duration) == (3, 50.0)
    gang = jobs["gang"]  # its workers, never its placeholders
    assert (gang.tasks, gang.total, gang.duration) == (2, Resource({"vcore": 1200}), 50.0)
    assert imported.config_origin == "the server's config" and imported.config == CONFIG
    (node,) = imported.nodes
    assert node.count == 2 and node.capacity == Resource({"vcore": 4000, "memory": 8 * GI,
                                                          "nvidia.com/gpu": 2})
    running = import_yunikorn(history.url, include_running=True, now=START + 1000)
    assert jobs_by_id(running)["app-4"].duration == 990.0  # started at +10


def test_a_yunikorn_import_round_trips_through_the_replay(
        history: RestServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["import", "yunikorn", history.url, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "4 jobs (2 users, 2 queues named); skipped: 1 still running, 1 never started" in printed
    assert "queues:   " in printed and "(the server's config)" in printed
    rows = replay(out, "workload.jsonl", "--cluster", str(out / "cluster.yaml"))
    assert {(r["job_id"], r["user"], r["queue"], r["state"]) for r in rows} == {
        ("app-1", "sue", "root.a", "completed"), ("app-2", "bob", "root.b", "completed"),
        ("app-3", "bob", "root.a", "completed"), ("gang", "sue", "root.a", "completed")}
    # the two nodes hold them all at once: nothing waits, each ends a duration after submit
    ends = {r["job_id"]: (float(r["submit"]), float(r["end"])) for r in rows}
    assert ends == {"app-1": (0.0, 100.0), "app-2": (10.0, 60.0), "app-3": (10.0, 60.0),
                    "gang": (10.0, 60.0)}


def test_an_unreachable_server_is_one_line_and_exit_1(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    out = tmp_path / "out"
    assert main(["import", "yunikorn", f"http://127.0.0.1:{port}", "--timeout", "5",
                 "--out", str(out)]) == 1
    line = one_error_line(capsys.readouterr().err)
    assert line.startswith(f"quotactor import yunikorn: cannot read http://127.0.0.1:{port}"
                           f"/ws/v1/partitions: ")
    assert not out.exists()


def test_a_url_that_is_not_http_is_refused() -> None:
    with pytest.raises(FetchError, match="is not an http"):
        import_yunikorn("file:///etc/passwd")


# Canned answers of a YuniKorn without event records or config: `routes` maps a path to JSON
# (or an httpx.Response) and anything else is a 404.
def canned(routes: dict[str, Any]) -> httpx.MockTransport:
    def answer(request: httpx.Request) -> httpx.Response:
        found = routes.get(request.url.path)
        if found is None:
            return httpx.Response(404, json={"status_code": 404, "message": "not found",
                                             "description": "no route"})
        if isinstance(found, httpx.Response):
            return found
        return httpx.Response(200, json=found)
    return httpx.MockTransport(answer)


def completed_app(app_id: str, **changes: Any) -> dict[str, Any]:
    ns = 10**9
    app = {"applicationID": app_id, "user": "dana", "groups": ["data"], "queueName": "root.etl",
           "submissionTime": 100 * ns, "finishedTime": 400 * ns, "applicationState": "Completed",
           "maxUsedResource": {"vcore": 3000, "memory": 3 * GI, "pods": 3},
           "allocations": [], "requests": [],
           "stateLog": [{"time": 100 * ns, "applicationState": "Accepted"},
                        {"time": 120 * ns, "applicationState": "Running"},
                        {"time": 370 * ns, "applicationState": "Completing"},
                        {"time": 400 * ns, "applicationState": "Completed"}]}
    app.update(changes)
    return app


def yunikorn_routes(apps: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "/ws/v1/partitions": [{"name": "default"}],
        "/ws/v1/partition/default/nodes": [
            {"nodeID": "w1", "attributes": {"si/instance-type": "m5.4xlarge"},
             "capacity": {"vcore": 16000, "memory": 64 * GI, "pods": 110, "hugepages-2Mi": 0}}],
        "/ws/v1/partition/default/applications/active": [],
        "/ws/v1/partition/default/applications/completed": apps,
        "/ws/v1/partition/default/queues": {
            "queuename": "root", "children": [{"queuename": "root.etl", "children": []},
                                              {"queuename": "root.adhoc", "children": []}]},
    }


def test_without_event_records_a_completed_app_is_sized_by_its_peak_usage() -> None:
    imported = import_yunikorn("http://yk:9080", transport=canned(yunikorn_routes([
        completed_app("three-pods"),
        completed_app("uneven", maxUsedResource={"vcore": 3001, "pods": 2}),
        completed_app("unsized", maxUsedResource={"pods": 2}),
        completed_app("clockless", submissionTime=-5)])))
    jobs = jobs_by_id(imported)
    assert jobs["three-pods"].task_groups[0].count == 3
    assert jobs["three-pods"].task_groups[0].resources == Resource({"vcore": 1000,
                                                                    "memory": GI})
    assert (jobs["three-pods"].submit, jobs["three-pods"].duration) == (0.0, 250.0)
    assert jobs["uneven"].tasks == 1 and jobs["uneven"].total == Resource({"vcore": 3001})
    assert [str(p) for p in imported.workload.problems] == [
        "line 3: application unsized: no resources known for its tasks",
        "line 4: application clockless: submissionTime must be nanoseconds since the epoch, "
        "got -5"]
    assert imported.config_origin == "the queues seen, without limits"
    assert "- name: adhoc" in imported.config and "- name: etl" in imported.config
    assert any("no event records" in note for note in imported.notes)
    (node,) = imported.nodes
    assert (node.name, node.capacity) == ("m5-4xlarge", Resource({"vcore": 16000,
                                                                  "memory": 64 * GI}))


@pytest.mark.parametrize(("answer", "message"), [
    (httpx.Response(200, content=b"<html>"), "/ws/v1/partitions: the answer is not JSON"),
    (httpx.Response(500, json={"message": "boom"}), "/ws/v1/partitions: HTTP 500: boom"),
    (httpx.Response(200, json={"name": "default"}), "expected a JSON list of objects"),
    (httpx.Response(200, headers={"content-length": str(2**40)}, content=b"[]"),
     "is 1099511627776 bytes, more than the"),
])
def test_a_server_answering_badly_is_a_one_line_fetch_error(answer: httpx.Response,
                                                           message: str) -> None:
    with pytest.raises(FetchError, match=message.replace("(", r"\(")):
        import_yunikorn("http://yk:9080/", transport=canned({"/ws/v1/partitions": answer}))


def test_an_unknown_partition_or_an_empty_one_is_a_source_error() -> None:
    routes = yunikorn_routes([])
    with pytest.raises(SourceError, match=r"no partition 'gpu' \(it has default\)"):
        import_yunikorn("http://yk:9080", partition="gpu", transport=canned(routes))
    with pytest.raises(SourceError, match="has no application that ran to the end "
                                          r"\(no applications\)"):
        import_yunikorn("http://yk:9080", transport=canned(routes))


def test_the_yunikorn_web_fixture_imports(tmp_path: Path) -> None:
    """YuniKorn's own mock REST data (its web UI's json-server database)."""
    db = json.loads((DATA.parent / "yunikorn-rest" / "yunikorn-web-json-db.json").read_text())
    routes: dict[str, Any] = {
        "/ws/v1/partitions": db["partitions"], "/ws/v1/partition/default/nodes": db["nodes"],
        "/ws/v1/partition/default/applications/active": db["apps"],
        "/ws/v1/partition/default/queues": db["queues"]}
    imported = import_yunikorn("http://yk:9080", include_running=True,
                               now=1683692900.0, transport=canned(routes))
    jobs = jobs_by_id(imported)
    assert jobs["application-sleep-0005"].total == Resource(
        {"vcore": 10, "memory": 50_000_000, "nvidia.com/gpu": 5})
    assert jobs["application-sleep-0002"].tasks == 3
    assert all(job.user == "nobody" for job in jobs.values())
    assert imported.skipped.get("never started") == 1  # application-sleep-0006, Accepted


def test_a_failing_write_is_one_line_and_exit_1(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["import", "pods", str(PODS), "--out", str(blocker / "out")]) == 1
    assert "cannot write to" in one_error_line(capsys.readouterr().err)


"""Workload parsers: good input, bad lines reported by number, and unusable files refused."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from quotactor.core.resources import Resource
from quotactor.sim.inputs.cluster import ClusterError, load_cluster, uniform_cluster
from quotactor.sim.inputs.jobfile import parse_csv, parse_jsonl
from quotactor.sim.inputs.jobs import WorkloadError
from quotactor.sim.inputs.swf import parse_swf, read_swf
from quotactor.sim.inputs.synthetic import generate, parse_synthetic
from quotactor.sim.inputs.workload import detect_format, load_workload, parse_group_names
from quotactor.sim.models.packing import plan_asks

SWF_HEADER = """\
; Version: 2.2
; Computer: Test Machine
; Acknowledge: Somebody Helpful
;              a continuation line: not a key
; Queue:  0  interactive
; Queue:  1  batch
"""
GOOD = "    1   10  -1  100  4  -1 -1 -1 -1 -1 1  3 1  7 1 -1 -1 -1\n"
SECOND = "    2    5  -1   50  -1 -1 -1  8 -1 256 1  4 2 -1 -1 -1 -1 -1\n"


def test_swf_reads_jobs_header_and_queue_names() -> None:
    workload = parse_swf((SWF_HEADER + GOOD + SECOND).splitlines(), source="t.swf",
                         group_names={1: "normal"})
    assert [j.job_id for j in workload.jobs] == ["job-2", "job-1"]  # sorted by submit time
    late, early = workload.jobs[1], workload.jobs[0]
    assert late.user == "u3" and late.groups == ("normal",)
    assert late.submit == 10.0 and late.duration == 100.0
    assert late.total == Resource({"vcore": 4000})
    assert late.tags["swf.queue"] == "batch" and late.tags["swf.executable"] == "7"
    assert early.groups == ("g2",)
    assert early.tasks == 8  # requested processors when none were allocated
    assert workload.header["Acknowledge"] == "Somebody Helpful"
    assert "a continuation line" not in str(dict(workload.header))
    assert workload.bad_lines == 0


def test_jobs_alike_share_their_task_groups_and_tags() -> None:
    # a long trace holds each distinct task list and tag set once: less memory, and fewer
    # objects for the garbage collector to walk while the replay runs
    third = GOOD.replace("    1   10", "    3   12", 1)
    jobs = parse_swf([GOOD, SECOND, third]).jobs
    one, three = jobs[1], jobs[2]
    assert (one.job_id, three.job_id) == ("job-1", "job-3")
    assert one.task_groups is three.task_groups and one.tags is three.tags
    assert jobs[0].task_groups is not one.task_groups and jobs[0].tags is not one.tags
    assert one == parse_swf([GOOD]).jobs[0]  # sharing changes no value
    untagged = parse_jsonl(['{"user": "a", "submit": 0, "duration": 1}\n',
                            '{"user": "b", "submit": 1, "duration": 1}\n']).jobs
    assert untagged[0].tags is untagged[1].tags and dict(untagged[0].tags) == {}


def test_swf_memory_only_when_asked() -> None:
    with_memory = parse_swf([SECOND], with_memory=True).jobs[0]
    assert with_memory.task_groups[0].resources == Resource({"vcore": 1000,
                                                             "memory": 256 * 1024})
    assert "memory" not in parse_swf([SECOND]).jobs[0].total


def test_swf_bad_lines_are_counted_with_line_numbers() -> None:
    text = (SWF_HEADER + GOOD
            + "1 2 3\n"                                                       # line 8
            + "    3   x  -1  100  4  -1 -1 -1 -1 -1 1  3 1  7 1 -1 -1 -1\n"  # line 9
            + "    4   1  -1   -1  4  -1 -1 -1 -1 -1 1  3 1  7 1 -1 -1 -1\n"  # line 10
            + "    5   1  -1   10 -1  -1 -1 -1 -1 -1 1  3 1  7 1 -1 -1 -1\n"  # line 11
            + "    1   1  -1   10  1  -1 -1 -1 -1 -1 1  3 1  7 1 -1 -1 -1\n")  # 12: dup
    workload = parse_swf(text.splitlines())
    assert len(workload.jobs) == 1
    assert workload.bad_lines == 5
    assert [(p.line, p.reason) for p in workload.problems] == [
        (8, "expected 18 fields, found 3"),
        (9, "fields must be numbers"),
        (10, "no run time"),
        (11, "no processor count"),
        (12, "duplicate job id 'job-1'"),
    ]


def test_swf_without_usable_job_is_an_error() -> None:
    with pytest.raises(WorkloadError, match=r"no usable job.*line 2"):
        parse_swf([SWF_HEADER.splitlines()[0], "garbage"], source="x.swf")


def test_swf_gzip_file_and_format_detection(tmp_path: Path) -> None:
    path = tmp_path / "trace.swf.gz"
    path.write_bytes(gzip.compress((SWF_HEADER + GOOD).encode()))
    assert detect_format(path) == "swf"
    assert len(read_swf(path).jobs) == 1
    odd = tmp_path / "download.bin"
    odd.write_bytes(gzip.compress((SWF_HEADER + GOOD).encode()))
    assert detect_format(odd) == "swf"
    assert len(load_workload(str(odd)).jobs) == 1


@pytest.mark.slow
def test_bundled_trace_reads_completely() -> None:
    from importlib.resources import files

    trace = files("quotactor.sim") / "data" / "NASA-iPSC-1993-3.1-cln.swf.gz"
    workload = read_swf(Path(str(trace)), group_names={1: "normal", 2: "system"})
    assert len(workload.jobs) == 18239 and workload.bad_lines == 0
    assert len(workload.users) == 69 and workload.groups == ("normal", "system")
    assert workload.header["Acknowledge"] == "Bill Nitzberg"


CSV = """\
job_id,user,groups,queue,submit,duration,tasks,resources,tags
a,sue,dev;ops,root.batch,10,60,2,vcore=500m;memory=1Gi,team=x
b,bob,,,0,5,,,
c,,dev,,1,1,1,,
d,sue,dev,root..x,1,1,1,,
e,sue,dev,,-3,1,1,,
f,sue,dev,,1,1,0,,
g,sue,dev,,1,1,1,vcore=lots,
h,sue,dev,,1,1,1,,,extra
"""


def test_csv_good_and_bad_rows() -> None:
    workload = parse_csv(CSV.splitlines(keepends=True), source="jobs.csv")
    assert [j.job_id for j in workload.jobs] == ["b", "a"]
    a = workload.jobs[1]
    assert a.groups == ("dev", "ops") and a.queue == "root.batch"
    assert a.total == Resource({"vcore": 1000, "memory": 2 * 2**30})
    assert dict(a.tags) == {"team": "x"}
    b = workload.jobs[0]
    assert b.queue is None and b.groups == () and b.total == Resource({"vcore": 1000})
    lines = {p.line: p.reason for p in workload.problems}
    assert sorted(lines) == [4, 5, 6, 7, 8, 9]
    assert "user" in lines[4]
    assert "queue" in lines[5]
    assert "submit" in lines[6]
    assert "tasks" in lines[7]
    assert "vcore" in lines[8]
    assert "more fields" in lines[9]


def test_csv_reads_the_archive_csv_columns() -> None:
    text = ("job_id,user,group,queue,processors,submit_time_s,start_time_s,end_time_s,"
            "run_time_s\n1,u1,normal,,128,0,0,1451,1451\n")
    job = parse_csv(text.splitlines(keepends=True)).jobs[0]
    assert (job.user, job.groups, job.tasks, job.duration) == ("u1", ("normal",), 128, 1451.0)


def test_csv_without_user_column_is_an_error() -> None:
    with pytest.raises(WorkloadError, match="line 1"):
        parse_csv(["name,submit\n", "x,1\n"])


def test_jsonl_task_groups_and_bad_lines() -> None:
    lines = [
        '{"user": "sue", "groups": ["dev"], "queue": "root.a", "submit": 3, "duration": 9,'
        ' "taskGroups": [{"name": "driver", "count": 1, "resources": {"vcore": "2"}},'
        ' {"name": "workers", "count": 4, "resources": {"vcore": "1", "memory": "1Gi"}}]}',
        "",
        "# a comment",
        "{not json",
        "[1, 2]",
        '{"user": "sue", "submit": 1}',
        '{"user": "bob", "submit": 1, "duration": 1, "taskGroups": [{"name": "x", "count": 1,'
        ' "resources": {"vcore": "1"}}, {"name": "x", "count": 1, "resources": {"vcore": "1"}}]}',
    ]
    workload = parse_jsonl(lines)
    (job,) = workload.jobs
    assert [g.name for g in job.task_groups] == ["driver", "workers"]
    assert job.total == Resource({"vcore": 6000, "memory": 4 * 2**30})
    assert [p.line for p in workload.problems] == [4, 5, 6, 7]
    assert "missing duration" in workload.problems[2].reason
    assert "named twice" in workload.problems[3].reason


def test_load_workload_errors() -> None:
    with pytest.raises(WorkloadError, match=r"cannot read .*: No such file or directory"):
        load_workload("/nonexistent/trace.swf")
    with pytest.raises(WorkloadError, match="unknown synthetic option"):
        load_workload("synthetic:bogus=1")
    assert parse_group_names("1=normal, 2=system") == {1: "normal", 2: "system"}
    with pytest.raises(WorkloadError):
        parse_group_names("one=normal")


def test_synthetic_is_deterministic_per_seed() -> None:
    spec = parse_synthetic("synthetic:jobs=200,users=7,groups=2,seed=5,queues=root.a;root.b")
    first, again = generate(spec), generate(spec)
    assert first == again
    other = generate(parse_synthetic("synthetic:jobs=200,users=7,groups=2,seed=6"))
    assert other.jobs != first.jobs
    assert len(first.jobs) == 200 and len(first.users) <= 7
    assert {j.queue for j in first.jobs} <= {"root.a", "root.b"}
    assert all(j.tasks in (1, 2, 4, 8, 16, 32, 64) for j in first.jobs)
    # jobs of one size share their task groups, as a parsed trace's do
    assert len({id(j.task_groups) for j in first.jobs}) == len({j.tasks for j in first.jobs})


def test_cluster_from_flags_and_yaml(tmp_path: Path) -> None:
    flags = uniform_cluster(128, {"vcore": "1"})
    assert len(flags.nodes) == 128 and flags.capacity == Resource({"vcore": 128000})
    assert flags.nodes[0].node_id == "node-001"
    spec = tmp_path / "cluster.yaml"
    spec.write_text("nodes:\n  - name: big\n    resources: {vcore: '16', memory: 64Gi}\n"
                    "  - name: small\n    count: 2\n    resources: {vcore: 500m}\n")
    cluster = load_cluster(spec)
    assert [n.node_id for n in cluster.nodes] == ["big", "small-001", "small-002"]
    assert cluster.capacity == Resource({"vcore": 17000, "memory": 64 * 2**30})
    spec.write_text("nodes:\n  - name: x\n    resources: {vcore: lots}\n")
    with pytest.raises(ClusterError, match=r"nodes\[0\]"):
        load_cluster(spec)
    spec.write_text("nodes: [")
    with pytest.raises(ClusterError, match="YAML"):
        load_cluster(spec)


def test_dense_packing_fills_nodes() -> None:
    job = parse_csv(["user,submit,duration,tasks\n", "sue,0,1,40\n"]).jobs[0]
    dense = plan_asks(job, Resource({"vcore": 16000}))
    assert [p.resource["vcore"] for p in dense] == [16000, 16000, 8000]
    assert len({p.key for p in dense}) == 3
    assert len(plan_asks(job, Resource({"vcore": 16000}), "none")) == 40

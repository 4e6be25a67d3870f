"""`verify`: every model's result keeps the invariants, and a broken one is named."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from quotactor.core.resources import Resource
from quotactor.scheduler import Scheduler, VirtualClock
from quotactor.sim import cli
from quotactor.sim.inputs.cluster import ClusterSpec, uniform_cluster
from quotactor.sim.inputs.jobfile import parse_jsonl
from quotactor.sim.inputs.jobs import Job, TaskGroup, Workload
from quotactor.sim.models.elastic_model import load_elastic_model
from quotactor.sim.models.limits import LimitLine
from quotactor.sim.models.models import ModelOptions, replay_model
from quotactor.sim.models.outcomes import JobState
from quotactor.sim.models.packing import Packing
from quotactor.sim.models.quotatree_model import load_quotatree_model
from quotactor.sim.models.replay import PLACEMENTS, Placement, ReplayOptions, replay
from quotactor.sim.models.result import QuotaTrack, SimulationResult
from quotactor.sim.models.usage import Series
from quotactor.sim.models.verify import INVARIANTS, Violation, check_result, verify

sys.path.insert(0, str(Path(__file__).parent))
from test_cli import quotactor

CONFIG = """\
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: a
            resources: {max: {vcore: "6"}}
            limits:
              - limit: each user
                users: ["*"]
                maxapplications: 2
                maxresources: {vcore: "4"}
          - name: b
"""
JOBS = parse_jsonl([
    '{"job_id": "j1", "user": "sue", "groups": ["lab"], "queue": "root.a", "submit": 0,'
    ' "duration": 10, "tasks": 2}',
    '{"job_id": "j2", "user": "sue", "groups": ["lab"], "queue": "root.a", "submit": 1,'
    ' "duration": 10, "tasks": 2}',
    '{"job_id": "j3", "user": "bob", "groups": ["ops"], "queue": "root.b", "submit": 2,'
    ' "duration": 5, "tasks": 2}',
])
CLUSTER = uniform_cluster(2, {"vcore": "4"})
V = 1000
"""One vcore in base units."""


def base() -> SimulationResult:
    with Scheduler.start(CONFIG, clock=VirtualClock(0)) as scheduler:
        return replay(scheduler, JOBS, CLUSTER, ReplayOptions(progress=False))


def test_a_replay_that_keeps_every_invariant_verifies() -> None:
    result = base()
    assert result.queue_max == {"root.a": Resource({"vcore": 6 * V})}
    assert result.user_limits["sue"]
    verification = check_result(result)
    assert verification.violations == () and verification.first is None
    assert verification.checks > 20 and verification.moments >= 4
    assert verification.summary().startswith(f"verified: {len(INVARIANTS)} invariants held")


def test_usage_over_the_cluster_is_named_with_the_jobs_running_then() -> None:
    result = base()
    total = result.total_series
    doubled = replace(total, values=tuple(v.scaled(2) for v in total.values))
    found = verify(replace(result, total_series=doubled))
    capacity = [v for v in found if v.invariant == "capacity"]
    # j1 and j2 (4 vcore) at 1 s: 8 counted is within the 8 of the cluster; j3 joins at 2 s
    assert capacity[0].time == 2 and capacity[0].jobs == ("j1", "j2", "j3")
    assert "running usage 12 vcore exceeds the cluster's 8 vcore" in capacity[0].what
    assert str(capacity[0]).startswith("at 2 s: running usage 12 vcore")
    assert str(capacity[0]).endswith("(jobs j1, j2, j3)")
    # the doubled total is no longer what the running jobs hold either
    assert {v.invariant for v in found} == {"capacity", "usage"}
    assert [v.time for v in found] == sorted(v.time for v in found)


def test_a_breach_is_reported_once_while_it_lasts() -> None:
    result = base()
    total = result.total_series
    over = Resource({"vcore": 9 * V})
    flat = replace(total, values=tuple(over for _ in total.values))
    capacity = [v for v in verify(replace(result, total_series=flat))
                if v.invariant == "capacity"]
    assert len(capacity) == 1 and capacity[0].time == total.times[0]


def test_a_quota_group_over_its_max_is_named() -> None:
    result = base()
    track = QuotaTrack("team", (0.0, 5.0, 9.0), (Resource({"vcore": 2 * V}),
                                                 Resource({"vcore": 5 * V}), Resource()),
                       (Resource(),) * 3, Resource({"vcore": V}), Resource({"vcore": 4 * V}))
    (found,) = verify(replace(result, quota_tracks=(track,)))
    assert (found.time, found.invariant) == (5.0, "quota")
    assert found.what == "quota group team uses 5 vcore, over its max of 4 vcore"


def test_user_group_and_queue_limits_are_checked() -> None:
    result = base()
    tight = {"sue": (LimitLine("root.a", {"vcore": 2 * V}),)}
    (found,) = verify(replace(result, user_limits=tight))
    assert (found.invariant, found.time) == ("limit", 1)
    assert found.what == "user sue uses 4 vcore at root.a, over its limit of 2 vcore"
    assert found.jobs == ("j1", "j2")

    one_app = {"ops": (LimitLine("root", applications=1),),
               "lab": (LimitLine("root", applications=1),)}
    (found,) = verify(replace(result, group_limits=one_app))
    assert found.what == "group lab runs 2 applications at root, over its limit of 1"

    assert verify(replace(result, queue_max={"root": Resource({"vcore": 6 * V})})) == []
    (found,) = verify(replace(result, queue_max={"root": Resource({"vcore": 5 * V})}))
    assert (found.time, found.jobs) == (2, ("j1", "j2", "j3"))
    assert found.what == "queue root uses 6 vcore, over its maximum of 5 vcore"


def test_a_limit_on_one_queue_counts_only_the_jobs_under_it() -> None:
    result = base()
    moved = tuple(o if o.job_id != "j3" else replace(o, user="sue") for o in result.outcomes)
    mixed = replace(result, outcomes=moved, user_series={"sue": result.total_series})
    # sue runs 6 vcore in all (j3 in root.b), but only 4 under root.a
    at_a = {"sue": (LimitLine("root.a", {"vcore": 4 * V}),)}
    assert [v for v in verify(replace(mixed, user_limits=at_a)) if v.invariant == "limit"] == []
    at_root = {"sue": (LimitLine("root", {"vcore": 4 * V}),)}
    (found,) = [v for v in verify(replace(mixed, user_limits=at_root))
                if v.invariant == "limit"]
    assert found.what == "user sue uses 6 vcore at root, over its limit of 4 vcore"


def test_jobs_that_start_early_or_run_too_long_are_named() -> None:
    result = base()
    early = [replace(o, runs=((-1.0, 9.0),), start=-1.0, end=9.0) if o.job_id == "j1" else o
             for o in result.outcomes]
    found = [v for v in verify(replace(result, outcomes=tuple(early))) if v.invariant == "job"]
    assert found == [Violation(-1.0, "job", "job j1 started before its submission at 0 s",
                               ("j1",))]

    long = [replace(o, runs=((0.0, 30.0),), end=30.0) if o.job_id == "j1" else o
            for o in result.outcomes]
    found = [v for v in verify(replace(result, outcomes=tuple(long))) if v.invariant == "job"]
    assert [v.what for v in found] == [
        "job j1 ran 30 s in one run, longer than its duration of 10 s",
        "completed job j1 ran 30 s, its duration is 10 s"]

    lost_final = [replace(o, runs=()) if o.job_id == "j3" else o for o in result.outcomes]
    found = [v for v in verify(replace(result, outcomes=tuple(lost_final)))
             if v.invariant == "job"]
    assert [v.what for v in found] == [
        "completed job j3 has no final run from its start to its end"]


def test_usage_left_at_the_end_is_named() -> None:
    result = base()
    (found,) = verify(replace(result, leftover={"user:sue": Resource({"vcore": V})}))
    assert (found.invariant, found.time) == ("books", result.end_time)
    assert found.what == "still counted after every job ended: user:sue holds 1 vcore"


def test_usage_must_be_what_the_live_jobs_hold() -> None:
    result = base()
    forgotten = [replace(o, runs=(), start=None, end=None, state=JobState.NEVER_STARTED)
                 if o.job_id == "j3" else o for o in result.outcomes]
    found = verify(replace(result, outcomes=tuple(forgotten)))
    usage = [v for v in found if v.invariant == "usage"]
    assert {v.what.split(" counts")[0] for v in usage} == {"the cluster", "user bob",
                                                           "group ops", "queue root.b"}
    assert {v.time for v in usage} == {2}
    cluster = next(v for v in usage if v.what.startswith("the cluster"))
    assert cluster.what == ("the cluster counts 6 vcore in 3 jobs, more than its 2 running "
                            "and 0 partly placed jobs hold (4 vcore)")
    assert cluster.jobs == ("j1", "j2")

    series = result.user_series["bob"]
    negative = replace(series, values=tuple(-v for v in series.values))
    found = verify(replace(result, user_series={**result.user_series, "bob": negative}))
    assert [v.what.split(" counts")[0] for v in found] == ["user bob"]


def test_partly_placed_jobs_may_hold_part_of_their_total() -> None:
    result = base()
    # j3 held 1 of its 2 vcore from 1 s while it waited for the rest: it was placed in part
    early = Series("user", "bob", (1.0, *result.user_series["bob"].times),
                   (Resource({"vcore": V}), *result.user_series["bob"].values),
                   (1, *result.user_series["bob"].running))
    holding = [replace(o, partly_placed=((1.0, 2.0),)) if o.job_id == "j3" else o
               for o in result.outcomes]
    users = {**result.user_series, "bob": early}
    assert [v for v in verify(replace(result, user_series=users, outcomes=tuple(holding)))
            if v.invariant == "usage"] == []
    # without the partial placement the same series is more than bob's jobs held
    found = verify(replace(result, user_series=users))
    assert [(v.time, v.what.split(" counts")[0]) for v in found] == [(1.0, "user bob")]


# -- the command line ----------------------------------------------------------------------


def simulate(tmp_path: Path, *flags: str) -> int:
    """`simulate` of 40 small jobs in root.a and root.b on 2 nodes of 4 vcore."""
    (tmp_path / "queues.yaml").write_text(CONFIG)
    (tmp_path / "jobs.jsonl").write_text("\n".join(
        json.dumps({"job_id": f"j{i}", "user": f"u{i % 3}", "queue": f"root.{'ab'[i % 2]}",
                    "submit": i, "duration": 10 + i % 7, "tasks": 1 + i % 3})
        for i in range(40)))
    return quotactor("simulate", "--config", str(tmp_path / "queues.yaml"), "--workload",
                     str(tmp_path / "jobs.jsonl"), "--nodes", "2", "--node-vcore", "4",
                     "--no-plots", "--out", str(tmp_path / "out"), *flags)


def test_simulate_and_demo_verify_their_runs(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert simulate(tmp_path, "--verify") == 0
    assert "queues: verified: 6 invariants held in " in capsys.readouterr().out
    assert quotactor("demo", "--jobs", "200", "--model", "elastic", "--no-plots", "--out",
                     str(tmp_path / "d"), "--verify") == 0
    assert "nasa-ipsc-elastic: verified: 6 invariants" in capsys.readouterr().out


def test_a_broken_invariant_exits_3_naming_the_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    real = cli.run_config

    def overbooked(*args: Any, **kwargs: Any) -> SimulationResult:
        """The replay as if it ran on one node of 2 vcore: it ran more than that."""
        return replace(real(*args, **kwargs), cluster=uniform_cluster(1, {"vcore": "2"}))

    monkeypatch.setattr(cli, "run_config", overbooked)
    assert simulate(tmp_path) == 0  # without --verify nothing is checked
    capsys.readouterr()
    assert simulate(tmp_path, "--verify") == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert err[0].startswith("quotactor simulate: queues: invariant capacity broken at ")
    assert "exceeds the cluster's 2 vcore (job" in err[0]


# -- every model, random workloads ---------------------------------------------------------

_jobs = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 1), st.integers(1, 8),
                           st.integers(1, 2), st.integers(1, 60), st.integers(0, 120),
                           st.integers(0, 2)), min_size=1, max_size=10)
"""Per job: user, group (and queue or quota), tasks, cores per task, duration, submit,
priority."""


def _workload(specs: list[tuple[int, ...]]) -> Workload:
    ordered = sorted(specs, key=lambda s: s[5])
    return Workload("random", tuple(
        Job(f"j{i}", f"u{user}", (f"g{group}",), f"root.q{group}", float(submit),
            float(duration), (TaskGroup("main", tasks, Resource({"vcore": cores * V})),),
            {"namespace": f"q{group}", "priority": str(priority)}, line=i)
        for i, (user, group, tasks, cores, duration, submit, priority) in enumerate(ordered)))


PACKINGS: tuple[Packing, ...] = ("dense", "none")


def _cluster(nodes: int, cores: int) -> ClusterSpec:
    return uniform_cluster(nodes, {"vcore": str(cores)})


def _yunikorn_config(draw: st.DrawFn) -> str:
    most = draw(st.integers(2, 16))
    limits: list[dict[str, Any]] = [
        {"limit": "each user", "users": ["*"],
         "maxresources": {"vcore": str(draw(st.integers(2, most)))},
         "maxapplications": draw(st.integers(1, 4))}]
    if draw(st.booleans()):
        limits.append({"limit": "group g0", "groups": ["g0"],
                       "maxresources": {"vcore": str(draw(st.integers(2, most)))}})
    q0: dict[str, Any] = {"name": "q0", "limits": limits}
    q1: dict[str, Any] = {"name": "q1"}
    if most < 16:
        q0["resources"] = {"max": {"vcore": str(most)}}
    if draw(st.booleans()):
        q1["resources"] = {"guaranteed": {"vcore": str(draw(st.integers(1, 6)))}}
    return yaml.safe_dump({"partitions": [{"name": "default", "queues": [
        {"name": "root", "submitacl": "*", "properties": {"preemption.delay": "5s"},
         "queues": [q0, q1]}]}]})


ELASTIC_DEFAULT = """\
apiVersion: scheduling.sigs.k8s.io/v1alpha1
kind: ElasticQuota
metadata: {name: q1}
spec: {min: {cpu: 1}, max: {cpu: 4}}
"""
"""No quota for q0: its jobs go to the default quota, whose max is unlimited."""
TREE_3 = json.dumps({"kind": "QuotaTree", "metadata": {"name": "t"}, "spec": {
    "resourceNames": ["cpu"], "nodes": {
        "root": {"parent": "nil", "hard": "true", "quota": {"cpu": "3"}},
        "q0": {"parent": "root", "hard": "false", "quota": {"cpu": "1"}}}}})
"""A tree that admits 3 vcore, for a cluster of 2."""


def _elastic_quotas(draw: st.DrawFn) -> str:
    docs = []
    for name in ("q0", "q1"):
        low = draw(st.integers(0, 8))
        docs.append(yaml.safe_dump({
            "apiVersion": "scheduling.sigs.k8s.io/v1alpha1", "kind": "ElasticQuota",
            "metadata": {"name": name},
            "spec": {"min": {"cpu": low}, "max": {"cpu": low + draw(st.integers(0, 16))}}}))
    return "---\n".join(docs)


def _quota_tree(draw: st.DrawFn) -> str:
    return json.dumps({"kind": "QuotaTree", "metadata": {"name": "t"}, "spec": {
        "resourceNames": ["cpu"], "nodes": {
            "root": {"parent": "nil", "hard": "true",
                     "quota": {"cpu": str(draw(st.integers(2, 24)))}},
            **{leaf: {"parent": "root", "hard": str(draw(st.booleans())).lower(),
                      "quota": {"cpu": str(draw(st.integers(1, 12)))}}
               for leaf in ("q0", "q1")}}}})


Run = tuple[str, str, Workload, ClusterSpec, bool, Packing, Placement]
"""Model, quota file, workload, cluster, kill preempted jobs, packing, placement."""


@st.composite
def _runs(draw: st.DrawFn, model: str) -> Run:
    workload = _workload(draw(_jobs))
    cluster = _cluster(draw(st.integers(1, 3)), draw(st.integers(2, 8)))
    config = {"yunikorn": _yunikorn_config, "elastic": _elastic_quotas,
              "quotatree": _quota_tree}[model](draw)
    return (model, config, workload, cluster, draw(st.booleans()),
            draw(st.sampled_from(PACKINGS)), draw(st.sampled_from(PLACEMENTS)))


def _replay(model: str, config: str, workload: Workload, cluster: ClusterSpec, kill: bool,
            packing: Packing, placement: Placement) -> SimulationResult:
    if model == "yunikorn":
        with Scheduler.start(config, clock=VirtualClock(0)) as scheduler:
            return replay(scheduler, workload, cluster, ReplayOptions(
                progress=False, kill_preempted=kill, packing=packing, placement=placement))
    quota_model = (load_elastic_model(config, cluster.capacity) if model == "elastic"
                   else load_quotatree_model(config))
    return replay_model(quota_model, workload, cluster,
                        ModelOptions(progress=False, kill_preempted=kill))


_RANDOM = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_FULL = _workload([(0, 0, 1, 1, 1, 0, 0)] * 3)
"""Three jobs of 1 vcore at once: on 2 vcore the third must wait, whatever the quotas say."""


@pytest.mark.slow
@_RANDOM
@given(_runs("yunikorn"))
def test_the_yunikorn_replay_keeps_every_invariant_on_random_workloads(run: Run) -> None:
    assert [str(v) for v in verify(_replay(*run))] == []


@pytest.mark.slow
@_RANDOM
@given(_runs("elastic"))
@example(("elastic", ELASTIC_DEFAULT, _FULL, _cluster(1, 2), False, "dense", "whole"))
def test_the_elastic_replay_keeps_every_invariant_on_random_workloads(run: Run) -> None:
    assert [str(v) for v in verify(_replay(*run))] == []


@_RANDOM
@given(_runs("quotatree"))
@example(("quotatree", TREE_3, _FULL, _cluster(1, 2), False, "dense", "whole"))
def test_the_quota_tree_replay_keeps_every_invariant_on_random_workloads(run: Run) -> None:
    assert [str(v) for v in verify(_replay(*run))] == []

"""The quota tree (MCAD) model in the replay: admission, borrowing, preemption, balance."""

from __future__ import annotations

import json
from typing import Any

import pytest

from quotactor.core.resources import Resource
from quotactor.quotatree import QuotaTreeError
from quotactor.sim.inputs.cluster import uniform_cluster
from quotactor.sim.inputs.jobs import Job, TaskGroup, Workload
from quotactor.sim.models.models import ModelOptions, replay_model
from quotactor.sim.models.outcomes import JobState
from quotactor.sim.models.quotatree_model import load_quotatree_model
from quotactor.sim.models.result import SimulationResult

CLUSTER = uniform_cluster(1, {"vcore": "8"})


def tree(name: str = "t", a_hard: bool = False) -> dict[str, Any]:
    return {"kind": "QuotaTree", "metadata": {"name": name}, "spec": {
        "resourceNames": ["cpu"], "nodes": {
            "root": {"parent": "nil", "hard": "true", "quota": {"cpu": "8"}},
            "a": {"parent": "root", "hard": str(a_hard).lower(), "quota": {"cpu": "4"}},
            "b": {"parent": "root", "hard": "false", "quota": {"cpu": "4"}}}}}


def job(job_id: str, cores: int, submit: float, duration: float, leaf: str,
        priority: int = 0) -> Job:
    return Job(job_id, "u1", (leaf,), None, submit, duration,
               (TaskGroup("main", 1, Resource({"vcore": cores * 1000})),),
               {"priority": str(priority)}, line=int(submit * 10) + len(job_id))


def run(*jobs: Job, trees: Any = None, kill: bool = False) -> SimulationResult:
    model = load_quotatree_model(json.dumps(trees if trees is not None else tree()))
    return replay_model(model, Workload("test", tuple(sorted(jobs, key=lambda j: j.submit))),
                        CLUSTER, ModelOptions(progress=False, kill_preempted=kill))


def outcome(result: SimulationResult, job_id: str) -> tuple[JobState, float | None,
                                                             float | None]:
    found = next(o for o in result.outcomes if o.job_id == job_id)
    return found.state, found.start, found.end


def balanced(result: SimulationResult) -> None:
    assert result.leftover == {}
    for track in result.quota_tracks:
        assert track.used[-1] == Resource(), track.name


def test_a_job_over_its_hard_ceiling_is_refused() -> None:
    result = run(job("big", 5, 0, 10, "a"), job("fits", 4, 1, 10, "a"),
                 trees=tree(a_hard=True))
    assert outcome(result, "big")[0] is JobState.REJECTED
    assert result.outcomes[0].cause == "exceeds node a's quota (4 cpu) in tree t"
    assert outcome(result, "fits") == (JobState.COMPLETED, 1, 11)
    balanced(result)


def test_a_soft_leaf_borrows_while_its_sibling_is_idle() -> None:
    result = run(job("a1", 6, 0, 100, "a"))
    assert outcome(result, "a1") == (JobState.COMPLETED, 0, 100)
    track = next(t for t in result.quota_tracks if t.name == "a")
    assert max(u.get("vcore", 0) for u in track.used) == 6000
    assert (track.min, track.max) == (Resource({"vcore": 4000}), Resource({"vcore": 8000}))
    balanced(result)


def test_the_borrower_is_preempted_when_the_owner_comes_back_and_restarts() -> None:
    result = run(job("a1", 6, 0, 100, "a"), job("b1", 4, 10, 50, "b"))
    assert outcome(result, "b1") == (JobState.COMPLETED, 10, 60)
    assert outcome(result, "a1") == (JobState.COMPLETED, 60, 160)
    assert next(o for o in result.outcomes if o.job_id == "a1").first_start == 0
    assert result.preemptions.victims == result.preemptions.restarted == 1
    assert result.preemptions.by_queue == {"a": 1}
    balanced(result)


def test_a_preempted_job_is_killed_when_asked() -> None:
    result = run(job("a1", 6, 0, 100, "a"), job("b1", 4, 10, 50, "b"), kill=True)
    assert outcome(result, "a1")[0] is JobState.NEVER_STARTED
    assert result.preemptions.killed == 1
    balanced(result)


def test_within_quota_nobody_is_preempted_and_the_late_job_waits() -> None:
    result = run(job("a1", 4, 0, 100, "a"), job("b1", 4, 10, 50, "b"),
                 job("b2", 4, 20, 50, "b"))
    assert outcome(result, "b2") == (JobState.COMPLETED, 60, 110)
    # node b refuses b2 too, but the cluster is full: the cluster holds it
    assert next(o for o in result.outcomes if o.job_id == "b2").held == {"node": 40}
    assert result.preemptions.victims == 0
    balanced(result)


def test_a_forest_allocates_on_every_tree_or_none() -> None:
    small = tree("mem")
    small["spec"]["nodes"]["root"]["quota"] = {"cpu": "4"}
    small["spec"]["nodes"]["a"]["quota"] = {"cpu": "2"}
    small["spec"]["nodes"]["b"]["quota"] = {"cpu": "2"}
    result = run(job("a1", 4, 0, 10, "a"), job("a2", 4, 1, 10, "a"),
                 trees=[tree("t"), small])
    assert outcome(result, "a1") == (JobState.COMPLETED, 0, 10)
    assert outcome(result, "a2") == (JobState.COMPLETED, 10, 20)
    assert {t.name for t in result.quota_tracks} >= {"t/a", "mem/a"}
    balanced(result)


def test_a_bad_tree_is_an_error() -> None:
    broken = tree()
    broken["spec"]["nodes"]["a"]["quota"] = {"cpu": "-1"}
    with pytest.raises(QuotaTreeError):
        load_quotatree_model(json.dumps(broken))


def test_the_shipped_example_tree_replays() -> None:
    from importlib.resources import files

    text = (files("quotactor.quotatree") / "examples" / "ExampleTree.json").read_text()
    cluster = uniform_cluster(1, {"vcore": "10"})
    jobs = (job("k1", 3, 0, 100, "K"), job("l1", 2, 10, 50, "L", priority=1),
            job("n1", 10, 20, 10, "N"))
    result = replay_model(load_quotatree_model(text), Workload("t", jobs), cluster,
                          ModelOptions(progress=False))
    assert outcome(result, "k1") == (JobState.COMPLETED, 0, 100)
    assert outcome(result, "l1") == (JobState.COMPLETED, 10, 60)
    # N is soft up to the root A (10 cpu): it may take the whole tree once K and L are done
    assert outcome(result, "n1") == (JobState.COMPLETED, 100, 110)
    tracks = {t.name: t for t in result.quota_tracks}
    assert max(u.get("vcore", 0) for u in tracks["G"].used) == 5000
    assert tracks["K"].min == Resource({"vcore": 1000})
    balanced(result)

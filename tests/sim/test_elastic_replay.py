"""The elastic (Koordinator) model in the replay: admission, borrowing, revocation, balance."""

from __future__ import annotations

import pytest

from quotactor.core.resources import Resource
from quotactor.elastic import DEFAULT_QUOTA, QuotaError
from quotactor.sim.inputs.cluster import uniform_cluster
from quotactor.sim.inputs.jobs import Job, TaskGroup, Workload
from quotactor.sim.models.elastic_model import load_elastic_model
from quotactor.sim.models.models import ModelOptions, replay_model
from quotactor.sim.models.outcomes import JobState
from quotactor.sim.models.result import SimulationResult

QUOTAS = """\
apiVersion: scheduling.sigs.k8s.io/v1alpha1
kind: ElasticQuota
metadata: {name: a}
spec: {min: {cpu: 4}, max: {cpu: 6}}
---
apiVersion: scheduling.sigs.k8s.io/v1alpha1
kind: ElasticQuota
metadata:
  name: b
  annotations: {quota.scheduling.koordinator.sh/namespaces: '["team-b", "bee"]'}
spec: {min: {cpu: 4}, max: {cpu: 8}}
"""
CLUSTER = uniform_cluster(1, {"vcore": "8"})


def job(job_id: str, cores: int, submit: float, duration: float, namespace: str = "a",
        **tags: str) -> Job:
    return Job(job_id, "u1", (), None, submit, duration,
               (TaskGroup("main", 1, Resource({"vcore": cores * 1000})),),
               {"namespace": namespace, **tags}, line=int(submit * 10) + len(job_id))


def run(*jobs: Job, kill: bool = False) -> SimulationResult:
    model = load_elastic_model(QUOTAS, CLUSTER.capacity)
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


def test_jobs_map_to_quotas_as_koordinator_binds_pods() -> None:
    model = load_elastic_model(QUOTAS, CLUSTER.capacity)
    assert model.group_of(job("j", 1, 0, 1, namespace="a")) == "a"
    assert model.group_of(job("j", 1, 0, 1, namespace="team-b")) == "b"
    assert model.group_of(job("j", 1, 0, 1, namespace="elsewhere")) == DEFAULT_QUOTA
    assert model.group_of(job("j", 1, 0, 1, namespace="a", quota="b")) == "b"


def test_a_namespace_bound_to_two_quotas_is_an_error() -> None:
    twice = QUOTAS + "---" + QUOTAS.split("---")[1].replace("name: b", "name: c")
    with pytest.raises(QuotaError, match="bound to both"):
        load_elastic_model(twice, CLUSTER.capacity)


def test_a_job_over_its_quotas_max_is_refused() -> None:
    result = run(job("big", 7, 0, 10), job("fits", 6, 1, 10))
    state, _, _ = outcome(result, "big")
    assert state is JobState.REJECTED
    assert result.outcomes[0].cause == "exceeds quota a's max: 6 vcore"
    assert outcome(result, "fits") == (JobState.COMPLETED, 1, 11)
    balanced(result)


def test_a_quota_borrows_beyond_its_min_while_its_sibling_is_idle() -> None:
    result = run(job("a1", 6, 0, 100))
    assert outcome(result, "a1") == (JobState.COMPLETED, 0, 100)
    track = next(t for t in result.quota_tracks if t.name == "a")
    assert max(u.get("vcore", 0) for u in track.used) == 6000
    assert track.min == Resource({"vcore": 4000})
    assert result.preemptions.victims == 0
    balanced(result)


def test_the_borrower_is_revoked_when_the_lender_comes_back_and_restarts() -> None:
    result = run(job("a1", 6, 0, 100), job("b1", 4, 10, 50, namespace="team-b"))
    assert outcome(result, "b1") == (JobState.COMPLETED, 10, 60)
    state, start, end = outcome(result, "a1")
    assert (state, start, end) == (JobState.COMPLETED, 60, 160)
    assert next(o for o in result.outcomes if o.job_id == "a1").runs == ((0, 10), (60, 160))
    assert result.preemptions.victims == result.preemptions.restarted == 1
    assert result.preemptions.by_queue == {"a": 1}
    assert result.preemptions.work_lost_core_hours == pytest.approx(6 * 10 / 3600)
    track = next(t for t in result.quota_tracks if t.name == "a")
    assert min(r.get("vcore", 0) for r in track.runtime[1:-1]) == 4000
    balanced(result)


def test_a_revoked_job_is_killed_when_asked() -> None:
    result = run(job("a1", 6, 0, 100), job("b1", 4, 10, 50, namespace="team-b"), kill=True)
    state, _, _ = outcome(result, "a1")
    assert state is JobState.NEVER_STARTED
    assert result.preemptions.killed == 1
    balanced(result)


def test_within_its_min_a_job_waits_but_is_never_revoked() -> None:
    result = run(job("a1", 4, 0, 100), job("b1", 4, 10, 50, namespace="team-b"),
                 job("b2", 4, 20, 50, namespace="team-b"))
    assert outcome(result, "a1") == (JobState.COMPLETED, 0, 100)
    assert outcome(result, "b2") == (JobState.COMPLETED, 60, 110)
    # b's runtime refuses b2 too, but the cluster is full: the cluster holds it
    held = next(o for o in result.outcomes if o.job_id == "b2").held
    assert held == {"node": 40}
    assert result.preemptions.victims == 0
    balanced(result)


def test_jobs_of_no_quota_run_in_the_default_group_and_balance() -> None:
    result = run(job("loose", 2, 0, 10, namespace="nowhere"))
    assert outcome(result, "loose") == (JobState.COMPLETED, 0, 10)
    assert [t.name for t in result.quota_tracks] == ["a", "b", DEFAULT_QUOTA]
    balanced(result)


def test_waiting_jobs_of_a_quota_start_by_priority_then_submission() -> None:
    result = run(job("b0", 8, 0, 10, namespace="team-b"),
                 job("low", 4, 1, 10, namespace="team-b"),
                 job("next", 4, 2, 10, namespace="team-b"),
                 job("high", 8, 3, 10, namespace="team-b", priority="3"))
    assert outcome(result, "high") == (JobState.COMPLETED, 10, 20)
    assert outcome(result, "low") == (JobState.COMPLETED, 20, 30)
    assert outcome(result, "next") == (JobState.COMPLETED, 20, 30)
    balanced(result)


def example_run(*jobs: Job) -> SimulationResult:
    from importlib.resources import files

    text = (files("quotactor.elastic") / "examples" / "quotas.yaml").read_text()
    cluster = uniform_cluster(1, {"vcore": "120"})
    return replay_model(load_elastic_model(text, cluster.capacity), Workload("t", jobs),
                        cluster, ModelOptions(progress=False))


def test_the_shipped_example_quotas_replay_with_a_parent_between_siblings() -> None:
    result = example_run(job("v1", 60, 0, 100, namespace="vision"),
                         job("s1", 30, 10, 50, namespace="speech"))
    tracks = {t.name: t for t in result.quota_tracks}
    assert {"research", "speech", "vision", "batch", "serving"} <= set(tracks)
    assert max(u.get("vcore", 0) for u in tracks["research"].used) == 60_000
    assert tracks["research"].max == Resource({"vcore": 80_000})
    # speech's request takes back its share of research: vision's 60 no longer fit
    assert outcome(result, "s1") == (JobState.COMPLETED, 10, 60)
    assert outcome(result, "v1") == (JobState.COMPLETED, 60, 160)
    assert result.preemptions.by_queue == {"vision": 1}
    assert result.end_time == 160
    balanced(result)


def test_whole_jobs_bigger_than_their_shares_block_one_another_until_the_end() -> None:
    result = example_run(job("v1", 60, 0, 100, namespace="vision"),
                         job("s1", 30, 10, 50, namespace="speech"),
                         job("e1", 90, 20, 10, namespace="batch"))
    for job_id in ("v1", "s1", "e1"):
        assert outcome(result, job_id)[0] is JobState.NEVER_STARTED
    given_up = next(o for o in result.outcomes if o.job_id == "e1")
    assert given_up.reason == "still waiting when the trace ended: quota batch's runtime"
    assert result.end_time == 20
    assert result.preemptions.victims == 2
    balanced(result)


@pytest.mark.parametrize("nodes, vcore", [(100, "1"), (1, "100")])
def test_the_default_quota_is_bounded_by_the_cluster_when_it_is_exactly_full(
        nodes: int, vcore: str) -> None:
    cluster = uniform_cluster(nodes, {"vcore": vcore})
    jobs = (job("first", 98, 0, 100, namespace="nowhere"),
            job("filler", 2, 1, 100, namespace="nowhere"),
            job("second", 98, 2, 100, namespace="nowhere"))
    result = replay_model(load_elastic_model(QUOTAS, cluster.capacity),
                          Workload("t", jobs), cluster, ModelOptions(progress=False))
    assert outcome(result, "second") == (JobState.COMPLETED, 100, 200)
    assert max(t.get("vcore", 0) for t in result.total_series.values) == 100_000
    default = next(t for t in result.quota_tracks if t.name == DEFAULT_QUOTA)
    assert default.max == Resource({"vcore": 100_000})
    balanced(result)

"""How the elastic and quota-tree replays schedule: every job on its own when it fits, never
beyond the cluster, and a wait charged to the cluster whenever it has no room for the job."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quotactor.core.resources import Resource
from quotactor.sim.inputs.cluster import ClusterSpec, uniform_cluster
from quotactor.sim.inputs.jobs import Job, TaskGroup, Workload
from quotactor.sim.models.elastic_model import ElasticModel, load_elastic_model
from quotactor.sim.models.models import (
    FULL_CLUSTER,
    GroupFigures,
    ModelOptions,
    QuotaModel,
    replay_model,
)
from quotactor.sim.models.outcomes import JobOutcome, JobState
from quotactor.sim.models.quotatree_model import load_quotatree_model
from quotactor.sim.models.result import SimulationResult
from quotactor.sim.models.verify import verify

ELASTIC = """\
apiVersion: scheduling.sigs.k8s.io/v1alpha1
kind: ElasticQuota
metadata: {name: a}
spec: {min: {cpu: 2}, max: {cpu: 4}}
---
apiVersion: scheduling.sigs.k8s.io/v1alpha1
kind: ElasticQuota
metadata: {name: b}
spec: {min: {cpu: 6}, max: {cpu: 8}}
"""


def tree(root_cores: int = 8, a_hard: bool = True) -> str:
    return json.dumps({"kind": "QuotaTree", "metadata": {"name": "t"}, "spec": {
        "resourceNames": ["cpu"], "nodes": {
            "root": {"parent": "nil", "hard": "true", "quota": {"cpu": str(root_cores)}},
            "a": {"parent": "root", "hard": str(a_hard).lower(), "quota": {"cpu": "4"}},
            "b": {"parent": "root", "hard": "false", "quota": {"cpu": "4"}},
            "default": {"parent": "root", "hard": "false", "quota": {"cpu": "0"}}}}})


Builder = Callable[[ClusterSpec], QuotaModel]
MODELS: dict[str, Builder] = {
    "elastic": lambda cluster: load_elastic_model(ELASTIC, cluster.capacity),
    "quotatree": lambda cluster: load_quotatree_model(tree()),
}


def job(job_id: str, tasks: int, submit: float, duration: float, group: str = "nowhere",
        memory: int = 0, **tags: str) -> Job:
    """`tasks` one-core tasks (and `memory` bytes each) of `group` (namespace and group)."""
    per_task = Resource({"vcore": 1000, **({"memory": memory} if memory else {})})
    return Job(job_id, "u1", (group,), None, submit, duration,
               (TaskGroup("main", tasks, per_task),), {"namespace": group, **tags},
               line=len(job_id) + int(submit * 10))


def replay(model: QuotaModel, cluster: ClusterSpec, *jobs: Job) -> SimulationResult:
    """The replay's result, checked against every invariant `verify` knows."""
    workload = Workload("test", tuple(sorted(jobs, key=lambda j: j.submit)))
    result = replay_model(model, workload, cluster, ModelOptions(progress=False))
    assert verify(result) == []
    return result


def outcome(result: SimulationResult, job_id: str) -> JobOutcome:
    return next(o for o in result.outcomes if o.job_id == job_id)


def runs(result: SimulationResult, job_id: str) -> tuple[JobState, float | None,
                                                          float | None]:
    found = outcome(result, job_id)
    return found.state, found.start, found.end


def within_capacity(result: SimulationResult) -> None:
    """At every event the running total fits the cluster, on every resource."""
    capacity = result.cluster.capacity
    for when, total in zip(result.total_series.times, result.total_series.values,
                           strict=True):
        assert total.fits_within_strict(capacity), (when, total, capacity)


# -- bounded by the cluster ----------------------------------------------------------------


def test_a_quota_tree_larger_than_the_cluster_is_bounded_by_the_cluster() -> None:
    cluster = uniform_cluster(100, {"vcore": "1"})
    result = replay(load_quotatree_model(tree(root_cores=200)), cluster,
                    job("first", 98, 0, 100, "b"), job("second", 98, 1, 100, "b"))
    assert runs(result, "second") == (JobState.COMPLETED, 100, 200)
    assert outcome(result, "second").held == {"node": 99}
    within_capacity(result)


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_resources_the_quotas_do_not_name_are_bounded_by_the_cluster(kind: str) -> None:
    cluster = uniform_cluster(1, {"vcore": "8", "memory": "8"})
    result = replay(MODELS[kind](cluster), cluster,
                    job("m1", 1, 0, 10, "b", memory=6), job("m2", 1, 1, 10, "b", memory=6))
    assert runs(result, "m2") == (JobState.COMPLETED, 10, 20)
    within_capacity(result)


@st.composite
def workloads(draw: st.DrawFn, top_priority: int = 2) -> tuple[ClusterSpec, list[Job]]:
    nodes = draw(st.sampled_from([1, 2, 8]))
    cluster = uniform_cluster(nodes, {"vcore": str(8 // nodes)})
    count = draw(st.integers(1, 14))
    jobs = [job(f"j{i}", draw(st.integers(1, 8)), draw(st.integers(0, 40)),
                draw(st.integers(1, 30)), draw(st.sampled_from(["a", "b", "nowhere"])),
                priority=str(draw(st.integers(0, top_priority))))
            for i in range(count)]
    return cluster, jobs


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(MODELS))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drawn=workloads())
def test_no_event_of_any_replay_exceeds_the_cluster_or_a_quotas_max(
        kind: str, drawn: tuple[ClusterSpec, list[Job]]) -> None:
    cluster, jobs = drawn
    result = replay(MODELS[kind](cluster), cluster, *jobs)
    within_capacity(result)
    for track in result.quota_tracks:
        for used in track.used:
            assert used.fits_within(track.max), (track.name, used, track.max)
    assert result.leftover == {}
    for found in result.outcomes:
        for start, end in found.runs:
            assert start <= end


class EagerModel:
    """A model that says every group may admit more at every pass: the replay then tries
    every waiting line again each time, as a replay that remembers no refusal would (the
    Kueue replay's tests use it too)."""

    def __init__(self, inner: QuotaModel) -> None:
        self.inner = inner
        self.name = inner.name

    def group_of(self, job: Job) -> str:
        return self.inner.group_of(job)

    def submit(self, job: Job) -> str | None:
        return self.inner.submit(job)

    def try_start(self, job: Job, free: Resource) -> str | None:
        return self.inner.try_start(job, free)

    def end(self, job_id: str) -> None:
        self.inner.end(job_id)

    def revoked(self) -> list[str]:
        return self.inner.revoked()

    def loosened(self) -> None:
        self.inner.loosened()
        return None

    def figures(self) -> Mapping[str, GroupFigures]:
        return self.inner.figures()


def same_as_trying_everything(kind: str, cluster: ClusterSpec, jobs: list[Job]) -> None:
    lazy = replay(MODELS[kind](cluster), cluster, *jobs)
    eager = replay(EagerModel(MODELS[kind](cluster)), cluster, *jobs)
    assert [(o.job_id, o.state, o.runs, o.held) for o in lazy.outcomes] == [
        (o.job_id, o.state, o.runs, o.held) for o in eager.outcomes]


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drawn=workloads())
def test_remembered_elastic_refusals_start_what_trying_everything_would(
        drawn: tuple[ClusterSpec, list[Job]]) -> None:
    same_as_trying_everything("elastic", *drawn)


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drawn=workloads(top_priority=0))
def test_remembered_tree_refusals_start_what_trying_everything_would(
        drawn: tuple[ClusterSpec, list[Job]]) -> None:
    # with priorities, MCAD's trees can preempt back and forth at one instant (a borrower
    # of higher priority and a job within its quota), which the replay cuts after a few
    # passes: how many depends on the order of the tries
    same_as_trying_everything("quotatree", *drawn)


# -- one job at a time, in order, whatever waits before it -----------------------------------


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_small_jobs_start_past_a_big_one_its_quota_holds(kind: str) -> None:
    cluster = uniform_cluster(1, {"vcore": "8"})
    result = replay(MODELS[kind](cluster), cluster, job("running", 3, 0, 100, "a"),
                    job("big", 2, 1, 10, "a"), job("small", 1, 2, 10, "a"),
                    job("small2", 1, 3, 10, "a"))
    assert runs(result, "small")[1] == 2
    assert runs(result, "small2")[1] == 12
    assert runs(result, "big")[1] == 100
    within_capacity(result)


def test_small_jobs_start_past_a_big_one_the_cluster_holds() -> None:
    cluster = uniform_cluster(8, {"vcore": "1"})
    result = replay(MODELS["elastic"](cluster), cluster, job("running", 6, 0, 100),
                    job("big", 4, 1, 10), job("small", 2, 2, 10), job("small2", 2, 3, 10))
    assert runs(result, "small")[1] == 2
    assert runs(result, "small2")[1] == 12
    assert runs(result, "big")[1] == 100
    assert outcome(result, "big").held_by == {FULL_CLUSTER: 99}


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_alike_waiting_jobs_are_charged_like_the_first_and_start_in_order(kind: str) -> None:
    cluster = uniform_cluster(1, {"vcore": "8"})
    result = replay(MODELS[kind](cluster), cluster, job("running", 8, 0, 50),
                    *(job(f"w{i}", 4, 1 + i, 10) for i in range(4)))
    assert [runs(result, f"w{i}")[1] for i in range(4)] == [50, 50, 60, 60]
    assert [outcome(result, f"w{i}").held_by for i in range(4)] == [
        {FULL_CLUSTER: 49}, {FULL_CLUSTER: 48}, {FULL_CLUSTER: 57}, {FULL_CLUSTER: 56}]


# -- blame: the cluster first -------------------------------------------------------------


@pytest.mark.parametrize("kind, refusal", [("elastic", "quota a's runtime"),
                                           ("quotatree", "quota tree node a")])
def test_a_quota_holds_a_job_only_while_the_cluster_has_room_for_it(
        kind: str, refusal: str) -> None:
    cluster = uniform_cluster(1, {"vcore": "8"})
    result = replay(MODELS[kind](cluster), cluster, job("a1", 4, 0, 20, "a"),
                    job("a2", 2, 1, 10, "a"), job("b1", 4, 10, 30, "b"))
    assert runs(result, "a2") == (JobState.COMPLETED, 20, 30)
    held = outcome(result, "a2")
    # the quota alone from 1 to 10; from 10 the cluster is full too: the cluster holds it
    assert held.held == {"queue": 9, "node": 10}
    assert held.held_by == {refusal: 9, FULL_CLUSTER: 10}


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_a_job_both_the_cluster_and_its_quota_refuse_is_held_by_the_cluster(
        kind: str) -> None:
    cluster = uniform_cluster(1, {"vcore": "8"})
    result = replay(MODELS[kind](cluster), cluster, job("a1", 4, 0, 20, "a"),
                    job("b1", 4, 0, 20, "b"), job("a2", 2, 1, 10, "a"))
    assert runs(result, "a2") == (JobState.COMPLETED, 20, 30)
    assert outcome(result, "a2").held == {"node": 19}


def test_a_preempting_start_counts_what_it_takes_back_as_room() -> None:
    cluster = uniform_cluster(1, {"vcore": "8"})
    model = load_quotatree_model(tree(a_hard=False))
    result = replay(model, cluster, job("borrower", 8, 0, 100, "a"),
                    job("owner", 4, 10, 10, "b"))
    assert runs(result, "owner") == (JobState.COMPLETED, 10, 20)
    assert result.preemptions.victims == 1
    within_capacity(result)


def test_the_trees_own_quota_cannot_start_a_job_the_cluster_has_no_room_for() -> None:
    cluster = uniform_cluster(1, {"vcore": "8"})
    result = replay(load_quotatree_model(tree(root_cores=16, a_hard=False)), cluster,
                    job("a1", 8, 0, 100, "a"), job("b1", 4, 10, 10, "b"))
    # the tree (16 cpu) has room for b1 without preempting a1: the cluster has none
    assert runs(result, "b1") == (JobState.COMPLETED, 100, 110)
    assert outcome(result, "b1").held_by == {FULL_CLUSTER: 90}
    assert result.preemptions.victims == 0


# -- cost --------------------------------------------------------------------------------


class _Counting:
    """An elastic model that counts the jobs it was asked to start."""

    def __init__(self, inner: ElasticModel) -> None:
        self.inner = inner
        self.name = inner.name
        self.tries = 0

    def group_of(self, job: Job) -> str:
        return self.inner.group_of(job)

    def submit(self, job: Job) -> str | None:
        return self.inner.submit(job)

    def try_start(self, job: Job, free: Resource) -> str | None:
        self.tries += 1
        return self.inner.try_start(job, free)

    def end(self, job_id: str) -> None:
        self.inner.end(job_id)

    def revoked(self) -> list[str]:
        return self.inner.revoked()

    def loosened(self) -> Collection[str] | None:
        return self.inner.loosened()

    def figures(self) -> Mapping[str, GroupFigures]:
        return self.inner.figures()


def test_a_waiting_backlog_is_not_tried_again_at_every_event() -> None:
    cluster = uniform_cluster(1, {"vcore": "8"})
    backlog = [job(f"w{i}", 1 + i % 3, 1 + i, 5, "b") for i in range(300)]
    model = _Counting(load_elastic_model(ELASTIC, cluster.capacity))
    result = replay(model, cluster, job("hog", 8, 0, 1000, "b"), *backlog)
    assert all(o.state is JobState.COMPLETED for o in result.outcomes)
    # 300 arrivals while the cluster is full, then 300 ends: a few tries per event, not
    # one per waiting job (that would be ~50,000)
    assert model.tries < 4 * (len(backlog) + 1)

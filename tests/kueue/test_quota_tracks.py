"""The Kueue replay's per-ClusterQueue tracks (nominal, used, borrowed, lent, the cohort's
quota) and the plot drawn from them, `cluster-queues.png`."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings

from quotactor.core.resources import Resource
from quotactor.sim import (
    ClusterSpec,
    Job,
    ModelOptions,
    QuotaTrack,
    SimulationResult,
    Workload,
    replay_model,
    verify,
)
from quotactor.sim.inputs.demo import demo_cluster, demo_config_text, demo_workload
from quotactor.sim.model_runs import build_model
from quotactor.sim.models.kueue_model import load_kueue_model
from quotactor.sim.reports.plots import plot_all
from quotactor.sim.reports.quota_plot import CLUSTER_QUEUES_PNG
from tests.kueue.test_replay import CONFIG, job, replay, workloads

CORE = 1000


def cores(amount: Resource) -> int:
    """The vcore of `amount` in millicores (0 when absent)."""
    return int(amount.get("vcore", 0))


def assert_within_limits(result: SimulationResult, borrowing: dict[str, int],
                         lending: dict[str, int]) -> None:
    """At every point of every track: used <= nominal + borrowed, borrowed within the
    queue's borrowing limit, lent within its lending limit (else its nominal quota), and the
    cohort lending no more than its queues borrow."""
    tracks = {t.name: t for t in result.quota_tracks}
    for track in tracks.values():
        assert len(track.borrowed) == len(track.lent) == len(track.times)
        for used, borrowed, lent in zip(track.used, track.borrowed, track.lent, strict=True):
            assert cores(used) <= cores(track.min) + cores(borrowed)
            assert cores(borrowed) <= borrowing.get(track.name, cores(track.cohort_quota))
            assert cores(lent) <= lending.get(track.name, cores(track.min))
    times = sorted({t for track in tracks.values() for t in track.times})
    for when in times:
        at = [_at(track, when) for track in tracks.values()]
        assert sum(cores(lent) for _, lent in at) <= sum(cores(b) for b, _ in at)


def _at(track: QuotaTrack, when: float) -> tuple[Resource, Resource]:
    """(borrowed, lent) of `track` holding at `when`."""
    index = max((i for i, t in enumerate(track.times) if t <= when), default=None)
    if index is None:
        return Resource(), Resource()
    return track.borrowed[index], track.lent[index]


def test_a_borrower_and_its_lender_are_tracked_until_the_reclaim() -> None:
    result = replay([job("a1", "a", 0, 100, 8), job("b1", "b", 10, 10, 4)])
    tracks = {t.name: t for t in result.quota_tracks}
    a, b = tracks["team-a"], tracks["team-b"]
    assert a.min == b.min == Resource({"vcore": 4 * CORE})
    assert a.cohort_quota == b.cohort_quota == Resource({"vcore": 8 * CORE})
    assert _at(a, 0) == (Resource({"vcore": 4 * CORE}), Resource())
    assert _at(b, 0) == (Resource(), Resource({"vcore": 4 * CORE}))
    assert _at(a, 10) == _at(b, 10) == (Resource(), Resource())  # b1 reclaimed, a1 revoked
    assert_within_limits(result, {"team-a": 4 * CORE}, {})


def test_the_nasa_demo_borrows_and_lends_within_its_limits(tmp_path: Path) -> None:
    cluster = demo_cluster()
    model = build_model("kueue", demo_config_text("kueue"), cluster.capacity)
    result = replay_model(model, demo_workload(2000), cluster, ModelOptions(progress=False))
    assert verify(result) == []
    assert_within_limits(result, {"normal": 32 * CORE, "system": 32 * CORE},
                         {"normal": 32 * CORE})
    tracks = {t.name: t for t in result.quota_tracks}
    assert max(cores(b) for b in tracks["normal"].borrowed) > 0
    assert max(cores(lent) for lent in tracks["system"].lent) > 0
    assert tracks["normal"].cohort_quota == Resource({"vcore": 128 * CORE})
    paths = plot_all(result, tmp_path)
    assert tmp_path / CLUSTER_QUEUES_PNG in paths
    assert (tmp_path / CLUSTER_QUEUES_PNG).stat().st_size > 10_000


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drawn=workloads())
def test_tracks_stay_within_the_limits_on_any_workload(
        drawn: tuple[ClusterSpec, list[Job], str]) -> None:
    cluster, jobs, strategy = drawn
    model = load_kueue_model(CONFIG.replace("QUEUEING_A", strategy), cluster.capacity)
    result = replay_model(model, Workload("test", tuple(jobs)), cluster,
                          ModelOptions(progress=False))
    assert_within_limits(result, {"team-a": 4 * CORE}, {})

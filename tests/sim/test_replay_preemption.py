"""The replay as the shim for preemption: confirmed releases, restarts or kills, the counts."""

from __future__ import annotations

from quotactor.scheduler import Scheduler, VirtualClock
from quotactor.sim.inputs.cluster import uniform_cluster
from quotactor.sim.inputs.jobfile import parse_jsonl
from quotactor.sim.models.outcomes import JobState
from quotactor.sim.models.replay import ReplayOptions, replay
from quotactor.sim.models.result import SimulationResult

CONFIG = """\
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        properties: {preemption.delay: 10s}
        queues:
          - name: gold
            resources: {guaranteed: {vcore: "2"}}
          - name: silver
"""
WORKLOAD = parse_jsonl([
    '{"job_id": "long", "user": "sue", "groups": ["lab"], "queue": "root.silver", "submit": 0,'
    ' "duration": 100, "tasks": 4}',
    '{"job_id": "urgent", "user": "bob", "groups": ["ops"], "queue": "root.gold",'
    ' "submit": 20, "duration": 50, "tasks": 2}',
])


def run(**options: object) -> SimulationResult:
    with Scheduler.start(CONFIG, clock=VirtualClock(0)) as scheduler:
        return replay(scheduler, WORKLOAD, uniform_cluster(1, {"vcore": "4"}),
                      ReplayOptions(progress=False, packing="none", **options))  # type: ignore[arg-type]


def test_the_guaranteed_queue_gets_its_share_and_the_victim_restarts() -> None:
    result = run()
    out = {o.job_id: o for o in result.outcomes}
    assert out["urgent"].state is JobState.COMPLETED
    assert 30 <= out["urgent"].start <= 45  # after the 10 s delay, not after "long" ends
    assert out["long"].state is JobState.COMPLETED and out["long"].first_start == 0
    # it ran 30 s in vain, restarted from scratch, waited for "urgent" and ran in full
    assert out["long"].start == out["urgent"].end and out["long"].end == out["urgent"].end + 100
    assert out["long"].restarts == 1 and out["long"].lost_seconds == 30
    stats = result.preemptions
    assert stats.victims == 1 and stats.restarted == 1 and stats.killed == 0
    assert dict(stats.by_queue) == {"root.silver": 1}
    assert dict(stats.by_user) == {"sue": 1} and dict(stats.by_group) == {"lab": 1}
    assert abs(stats.work_lost_core_hours - 4 * 30 / 3600) < 1e-9
    # placed whole, "urgent" reserves only the node it preempted on, until the victim left
    assert stats.reservations == 1
    assert result.leftover == {}


def test_preempted_jobs_can_be_counted_as_killed() -> None:
    result = run(kill_preempted=True)
    out = {o.job_id: o for o in result.outcomes}
    assert out["long"].state is JobState.NEVER_STARTED
    assert "preempted" in out["long"].reason
    assert out["urgent"].start == 30
    assert result.preemptions.killed == 1
    assert result.leftover == {}


def test_the_shim_grace_delays_the_preemptor() -> None:
    quick = {o.job_id: o for o in run(kill_preempted=True).outcomes}
    slow = {o.job_id: o for o in run(kill_preempted=True, preemption_grace=7).outcomes}
    assert slow["urgent"].start == quick["urgent"].start + 7


def test_without_a_guarantee_nothing_is_preempted() -> None:
    with Scheduler.start(CONFIG.replace('resources: {guaranteed: {vcore: "2"}}', ""),
                         clock=VirtualClock(0)) as scheduler:
        result = replay(scheduler, WORKLOAD, uniform_cluster(1, {"vcore": "4"}),
                        ReplayOptions(progress=False, packing="none"))
    out = {o.job_id: o for o in result.outcomes}
    assert out["urgent"].start == 100
    assert result.preemptions.victims == 0

"""The backlog index decides exactly what the exhaustive reference decides.

`SchedulerOptions.exhaustive_retries` settles nothing and screens every pending application each
cycle (the cost grows with the backlog); the default mode settles applications that
the end of a cycle would pass over. Small random workloads with long backlogs under user,
group and queue limits, reservations and preemption are replayed both ways: every job must
start and end at the same moment, be held back by the same limits for the same time, and the
scheduler must not have asked the trackers markedly more often than the reference did (a
line of new applications behind a user's `maxApplications` is looked at one by one where the
reference wakes all of it, so the count is a cost that may differ by a few either way, not a
decision).
"""

from __future__ import annotations

from typing import Any

import pytest

from quotactor.scheduler import Scheduler, SchedulerOptions, VirtualClock
from quotactor.sim.inputs.cluster import uniform_cluster
from quotactor.sim.inputs.demo import demo_cluster, demo_workload, tight_config_text
from quotactor.sim.inputs.jobs import Workload
from quotactor.sim.inputs.synthetic import generate, parse_synthetic
from quotactor.sim.models.replay import ReplayOptions, replay
from quotactor.sim.models.result import SimulationResult

LIMITS = """\
partitions:
  - name: default
    placementrules:
      - name: provided
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: batch
            maxapplications: 8
            limits:
              - limit: each user
                users: ["*"]
                maxapplications: 2
                maxresources: {vcore: "24"}
              - limit: group b
                groups: [group-b]
                maxresources: {vcore: "20"}
          - name: small
            resources:
              max: {vcore: "16"}
"""

PREEMPTION = """\
partitions:
  - name: default
    placementrules:
      - name: provided
    queues:
      - name: root
        submitacl: "*"
        properties: {preemption.delay: 30s}
        queues:
          - name: gold
            resources: {guaranteed: {vcore: "24"}}
          - name: plain
            maxapplications: 5
            limits:
              - limit: each user
                users: ["*"]
                maxapplications: 1
"""


def _replay(config: str, workload: Workload, exhaustive: bool,
            nodes: int = 4) -> SimulationResult:
    cluster = uniform_cluster(nodes, {"vcore": "16"}) if nodes else demo_cluster()
    options = SchedulerOptions(exhaustive_retries=exhaustive)
    with Scheduler.start(config, clock=VirtualClock(workload.jobs[0].submit),
                         options=options) as scheduler:
        return replay(scheduler, workload, cluster, ReplayOptions(progress=False))


def _decisions(result: SimulationResult) -> dict[str, Any]:
    return {
        "jobs": [(o.job_id, o.state, o.start, o.end, dict(o.held), dict(o.held_by), o.cause)
                 for o in result.outcomes],
        "pending": result.pending_series,
        "cycles": result.performance.cycles,
        "preemptions": result.preemptions,
    }


def _assert_same(config: str, workload: Workload, nodes: int = 4) -> SimulationResult:
    indexed = _replay(config, workload, exhaustive=False, nodes=nodes)
    reference = _replay(config, workload, exhaustive=True, nodes=nodes)
    assert _decisions(indexed) == _decisions(reference)
    assert indexed.performance.tracker_calls <= 1.01 * reference.performance.tracker_calls
    return indexed


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_limits_and_a_long_backlog_decide_the_same(seed: int) -> None:
    workload = generate(parse_synthetic(
        f"synthetic:jobs=300,users=12,groups=3,seed={seed},interarrival=40,max_tasks=16,"
        "duration=600,queues=root.batch;root.small;root.batch"))
    result = _assert_same(LIMITS, workload)
    held = {cause for o in result.outcomes for cause in o.held_by}
    assert any("applications" in cause for cause in held)  # the index had work to do
    assert any(cause == "full nodes" for cause in held)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [4, 5])
def test_reservations_and_preemption_decide_the_same(seed: int) -> None:
    workload = generate(parse_synthetic(
        f"synthetic:jobs=250,users=10,groups=2,seed={seed},interarrival=30,max_tasks=16,"
        "duration=600,queues=root.gold;root.plain"))
    result = _assert_same(PREEMPTION, workload)
    assert result.preemptions.victims > 0  # preemption took part


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_the_nasa_trace_under_the_tight_config_decides_the_same() -> None:
    _assert_same(tight_config_text(), demo_workload(2000), nodes=0)

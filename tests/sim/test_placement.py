"""How parallel jobs are placed: whole (all tasks at once or none) or task by task.

With interchangeable processors, one node of N processors and N nodes of one processor are the
same machine: placed whole (and with node reservations off, which only one large node can
take), every job starts at the same moment on both shapes.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quotactor.core.resources import Resource
from quotactor.scheduler import Scheduler, SchedulerOptions, VirtualClock
from quotactor.sim.inputs.cluster import ClusterSpec, uniform_cluster
from quotactor.sim.inputs.demo import demo_workload
from quotactor.sim.inputs.jobs import Job, TaskGroup, Workload
from quotactor.sim.models.outcomes import JobState
from quotactor.sim.models.replay import Placement, ReplayOptions, replay
from quotactor.sim.models.result import SimulationResult

OPEN = """\
partitions:
  - name: default
    placementrules:
      - name: fixed
        value: root.all
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: all
"""

LIMITED = """\
partitions:
  - name: default
    placementrules:
      - name: fixed
        value: root.all
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: all
            maxapplications: 5
            resources:
              max: {vcore: "%d"}
            limits:
              - limit: each user
                users: ["*"]
                maxresources: {vcore: "%d"}
"""


def replay_on(workload: Workload, cluster: ClusterSpec, config: str = OPEN,
              placement: Placement = "whole") -> SimulationResult:
    options = SchedulerOptions(reservations=False)
    with Scheduler.start(config, clock=VirtualClock(workload.jobs[0].submit),
                         options=options) as scheduler:
        return replay(scheduler, workload, cluster,
                      ReplayOptions(progress=False, placement=placement, reservations=False))


def starts(result: SimulationResult) -> dict[str, tuple[JobState, float | None]]:
    return {o.job_id: (o.state, o.start) for o in result.outcomes}


def one_node(processors: int) -> ClusterSpec:
    return uniform_cluster(1, {"vcore": str(processors)})


def unit_nodes(processors: int) -> ClusterSpec:
    return uniform_cluster(processors, {"vcore": "1"})


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_node_shape_does_not_change_the_starts_of_a_real_trace() -> None:
    # The NASA log on half its machine: jobs queue for processors, so starts depend on how
    # the scheduler places parallel jobs.
    workload = demo_workload(800)
    big = replay_on(workload, one_node(32))
    small = replay_on(workload, unit_nodes(32))
    assert sum(1 for o in big.outcomes if o.wait) > 50  # a contended replay
    assert starts(big) == starts(small)
    assert big.everybody.mean_wait == small.everybody.mean_wait


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_placed_task_by_task_the_shapes_differ() -> None:
    # The check above can fail: placed ask by ask, unit nodes let jobs start in part.
    workload = demo_workload(800)
    whole = replay_on(workload, unit_nodes(32))
    tasks = replay_on(workload, unit_nodes(32), placement="tasks")
    assert starts(whole) != starts(tasks)


def _job(index: int, user: str, submit: float, duration: float, tasks: int) -> Job:
    return Job(f"job-{index}", user, ("g",), None, submit, duration,
               (TaskGroup("t", tasks, Resource({"vcore": 1000})),))


jobs_strategy = st.lists(
    st.tuples(st.sampled_from(["u1", "u2", "u3"]), st.integers(0, 50), st.integers(1, 40),
              st.integers(1, 8)),
    min_size=1, max_size=25)


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=jobs_strategy, processors=st.integers(4, 10), limits=st.booleans())
def test_any_workload_starts_alike_on_both_shapes(
        rows: list[tuple[str, int, int, int]], processors: int, limits: bool) -> None:
    rows = sorted(rows, key=lambda r: r[1])
    workload = Workload("generated", tuple(
        _job(i, user, submit, duration, tasks)
        for i, (user, submit, duration, tasks) in enumerate(rows)))
    config = LIMITED % (processors - 1, min(4, processors - 1)) if limits else OPEN
    big = replay_on(workload, one_node(processors), config)
    small = replay_on(workload, unit_nodes(processors), config)
    assert starts(big) == starts(small)
    for result in (big, small):
        for outcome in result.outcomes:
            assert outcome.start is None or outcome.start >= outcome.submit
        peak = max((r.get("vcore", 0) for r in result.total_series.values), default=0)
        assert peak <= processors * 1000

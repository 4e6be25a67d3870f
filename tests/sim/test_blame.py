"""Blame by counterfactual: a wait is charged to a limit only while lifting it would let the
job start (the nodes had room); otherwise to the cluster; two limits that each hold it are
named together."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quotactor.scheduler import Scheduler, VirtualClock
from quotactor.sim.inputs.cluster import uniform_cluster
from quotactor.sim.inputs.jobfile import parse_jsonl
from quotactor.sim.inputs.jobs import Workload
from quotactor.sim.models.outcomes import JobOutcome
from quotactor.sim.models.replay import ReplayOptions, replay

QUEUE = """\
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: q
%s
"""
QUEUE_MAX_4 = """\
            resources:
              max: {vcore: "4"}"""
USER_LIMIT_4 = """\
            limits:
              - limit: each user
                users: ["*"]
                maxresources: {vcore: "4"}"""


def workload(first_tasks: int = 4, second_user: str = "u1") -> Workload:
    return parse_jsonl([
        f'{{"job_id": "first", "user": "u1", "queue": "root.q", "submit": 0, "duration": 100,'
        f' "tasks": {first_tasks}}}',
        f'{{"job_id": "second", "user": "{second_user}", "queue": "root.q", "submit": 10,'
        f' "duration": 10, "tasks": 2}}',
    ])


def second(config_body: str, nodes: int, jobs: Workload | None = None) -> JobOutcome:
    config = QUEUE % config_body if config_body else QUEUE % ""
    with Scheduler.start(config, clock=VirtualClock(0)) as scheduler:
        result = replay(scheduler, jobs or workload(), uniform_cluster(nodes, {"vcore": "1"}),
                        ReplayOptions(progress=False))
    out = {o.job_id: o for o in result.outcomes}
    assert out["first"].start == 0
    return out["second"]


def test_a_queue_max_equal_to_the_cluster_is_not_blamed_for_a_full_machine() -> None:
    # The scheduler checks the queue's maximum first, but lifting it would not have started
    # the job: the four nodes were full.
    job = second(QUEUE_MAX_4, nodes=4)
    assert job.start == 100
    assert job.held.get("node", 0) == 90 and job.held.get("queue", 0) == 0
    assert dict(job.held_by) == {"full nodes": 90}


def test_a_wait_for_full_nodes_is_charged_to_the_cluster() -> None:
    job = second("", nodes=4)
    assert job.held.get("node", 0) == 90 and sum(job.held.values()) == 90


def test_a_limit_is_blamed_while_the_nodes_have_room() -> None:
    job = second(QUEUE_MAX_4, nodes=8)
    assert job.start == 100
    assert job.held.get("queue", 0) == 90 and job.held.get("node", 0) == 0
    assert dict(job.held_by) == {"queue root.q's resources limit": 90}


def test_two_limits_that_each_hold_the_job_are_named_together() -> None:
    job = second(QUEUE_MAX_4 + "\n" + USER_LIMIT_4, nodes=8)
    assert job.start == 100
    assert job.held.get("node", 0) == 0 and sum(job.held.values()) == 90
    (owner, seconds), = job.held_by.items()
    assert seconds == 90
    assert set(owner.split(" + ")) == {"queue root.q's resources limit",
                                       "user u1's resources limit at root.q"}


def test_only_the_limit_that_holds_is_named() -> None:
    # Another user's job: u2's own limit has room, only the queue's maximum holds it.
    job = second(QUEUE_MAX_4 + "\n" + USER_LIMIT_4, nodes=8, jobs=workload(second_user="u2"))
    assert dict(job.held_by) == {"queue root.q's resources limit": 90}


def test_blame_moves_to_the_cluster_when_the_room_goes() -> None:
    # Held by its queue while two nodes are free, then by the cluster once another queue's
    # job fills them; the job starts when the first job ends.
    jobs = parse_jsonl([
        '{"job_id": "first", "user": "u1", "queue": "root.q", "submit": 0, "duration": 100,'
        ' "tasks": 4}',
        '{"job_id": "second", "user": "u1", "queue": "root.q", "submit": 10, "duration": 10,'
        ' "tasks": 2}',
        '{"job_id": "other", "user": "u3", "queue": "root.r", "submit": 40, "duration": 200,'
        ' "tasks": 2}',
    ])
    config = QUEUE % QUEUE_MAX_4 + "          - name: r\n"
    with Scheduler.start(config, clock=VirtualClock(0)) as scheduler:
        result = replay(scheduler, jobs, uniform_cluster(6, {"vcore": "1"}),
                        ReplayOptions(progress=False))
    job = {o.job_id: o for o in result.outcomes}["second"]
    assert job.start == 100
    assert job.held.get("queue", 0) == 30 and job.held.get("node", 0) == 60


_JOB = st.tuples(st.integers(0, 3), st.sampled_from(["root.q", "root.r"]), st.integers(0, 40),
                 st.integers(1, 60), st.integers(1, 4), st.sampled_from([1, 2, 3]))
"""(user, queue, submit, duration, tasks, vcores per task)."""


def _held(jobs: list[tuple[int, str, int, int, int, int]], nodes: int) -> list[Any]:
    workload = parse_jsonl([
        f'{{"job_id": "j{i}", "user": "u{user}", "queue": "{queue}", "submit": {submit},'
        f' "duration": {duration}, "tasks": {tasks}, "resources": {{"vcore": {vcores}}}}}'
        for i, (user, queue, submit, duration, tasks, vcores) in enumerate(jobs)])
    config = QUEUE % (QUEUE_MAX_4 + "\n" + USER_LIMIT_4.replace('"4"', '"3"')) \
        + "          - name: r\n"
    with Scheduler.start(config, clock=VirtualClock(0)) as scheduler:
        result = replay(scheduler, workload, uniform_cluster(nodes, {"vcore": "3"}),
                        ReplayOptions(progress=False))
    return [(o.job_id, o.start, dict(o.held), dict(o.held_by)) for o in result.outcomes]


@settings(max_examples=40, deadline=None)
@given(st.lists(_JOB, min_size=1, max_size=14), st.integers(1, 3))
def test_blame_asks_the_room_again_only_when_it_may_have_changed(
        jobs: list[tuple[int, str, int, int, int, int]], nodes: int) -> None:
    # the blame skips re-asking its bands' room while the nodes' room state is unchanged;
    # asking every time (no state ever equal) must charge every job alike
    kept = _held(jobs, nodes)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Scheduler, "room_state", lambda self, **_: object())
        assert _held(jobs, nodes) == kept


def test_usage_is_read_only_for_limits_on_resources_the_job_asks() -> None:
    # the counterfactual names the resource limits that alone would hold a job; a limit on
    # the number of applications never does, so the user's usage need not be read for it
    from quotactor import UserGroupManager

    reads: list[str] = []
    original = UserGroupManager.user_usage

    def spy(self: UserGroupManager, name: str) -> Any:
        reads.append(name)
        return original(self, name)

    count_only = USER_LIMIT_4.replace('maxresources: {vcore: "4"}', "maxapplications: 5")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(UserGroupManager, "user_usage", spy)
        held = second(QUEUE_MAX_4 + "\n" + count_only, 6)
        assert held.held_by == {"queue root.q's resources limit": 90.0}
        assert reads == []
        held = second(QUEUE_MAX_4 + "\n" + USER_LIMIT_4, 6)
        assert reads
    assert held.held_by == {"queue root.q's resources limit + user u1's resources limit at "
                            "root.q": 90.0}

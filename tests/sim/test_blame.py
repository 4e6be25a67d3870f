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


LIMITS_3 = QUEUE_MAX_4 + "\n" + USER_LIMIT_4.replace('"4"', '"3"')
"""root.q's maximum of 4 vcore and each user's of 3 there."""


def _held(jobs: list[tuple[int, str, int, int, int, int]], nodes: int,
          limits: str = LIMITS_3) -> list[Any]:
    """(job, start, held, held_by) of each job replayed on `nodes` of 3 vcore, with `limits`
    on root.q (and none on root.r)."""
    workload = parse_jsonl([
        f'{{"job_id": "j{i}", "user": "u{user}", "queue": "{queue}", "submit": {submit},'
        f' "duration": {duration}, "tasks": {tasks}, "resources": {{"vcore": {vcores}}}}}'
        for i, (user, queue, submit, duration, tasks, vcores) in enumerate(jobs)])
    config = QUEUE % limits + "          - name: r\n"
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


COUNT_LIMITS = """\
            maxapplications: 2
            limits:
              - limit: each user
                users: ["*"]
                maxapplications: 1"""


@settings(max_examples=60, deadline=None)
@given(st.lists(_JOB, min_size=1, max_size=16), st.integers(1, 3))
def test_jobs_charged_from_the_room_log_are_charged_as_one_by_one(
        jobs: list[tuple[int, str, int, int, int, int]], nodes: int) -> None:
    # only application counts limit these jobs, so no resources limit can ever be named
    # with theirs: they are charged from their size set's room log when next read, not at
    # each change of room. Charging every job one by one at each change must agree.
    from quotactor.sim.models.blame import Counterfactual

    from_log = _held(jobs, nodes, COUNT_LIMITS)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Counterfactual, "_plain", lambda self, *_: False)
        assert _held(jobs, nodes, COUNT_LIMITS) == from_log


def test_a_job_charged_from_the_room_log_follows_the_room_as_it_comes_and_goes() -> None:
    # u1's and u6's first jobs fill two of the three nodes, and each user's count. Their
    # second jobs wait for it while other users' jobs in root.r fill the last node (20-40,
    # 60-80): their
    # waits are split between the count (room) and the cluster (no room) at each change,
    # from whenever they began to wait (u6's, after the first change), and so is the wait
    # of u1's alike job behind u1's second
    jobs = [(1, "root.q", 0, 100, 1, 3), (1, "root.q", 5, 10, 1, 1), (1, "root.q", 6, 10, 1, 1),
            (2, "root.r", 20, 20, 3, 1), (3, "root.r", 60, 20, 3, 1),
            (6, "root.q", 0, 100, 1, 3), (6, "root.q", 30, 10, 1, 1)]
    flips: list[float] = []
    from quotactor.sim.models.outcomes import RoomLog

    original = RoomLog.set

    def spy(self: RoomLog, now: float, room: bool) -> None:
        if room != self.room:
            flips.append(now)
        original(self, now, room)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(RoomLog, "set", spy)
        held = {job: (start, by) for job, start, _, by in _held(jobs, 3, COUNT_LIMITS)}
    assert flips == [20, 40, 60, 80]
    full = "full nodes"
    u1, u6 = (f"user {user}'s applications limit at root.q" for user in ("u1", "u6"))
    assert held["j1"] == (100, {u1: 55.0, full: 40.0})
    assert held["j2"] == (110, {u1: 64.0, full: 40.0})
    assert held["j6"] == (100, {u6: 40.0, full: 30.0})

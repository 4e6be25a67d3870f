"""The replay: determinism, accounting that balances, and every way a job can end."""

from __future__ import annotations

from typing import Any

import pytest

from quotactor.core.resources import Resource
from quotactor.scheduler import Scheduler, VirtualClock
from quotactor.scheduler.booking.turns import Turns
from quotactor.sim.inputs.cluster import ClusterSpec, uniform_cluster
from quotactor.sim.inputs.demo import demo_cluster, demo_workload, tight_config_text
from quotactor.sim.inputs.jobfile import parse_jsonl
from quotactor.sim.inputs.jobs import Job, TaskGroup, Workload
from quotactor.sim.inputs.synthetic import generate, parse_synthetic
from quotactor.sim.models.outcomes import JobState, OutcomeRecorder
from quotactor.sim.models.packing import Packing
from quotactor.sim.models.replay import Placement, ReplayOptions, replay
from quotactor.sim.models.result import SimulationResult
from quotactor.sim.reports.report import build_report

LIMITS = """\
partitions:
  - name: default
    placementrules:
      - name: provided
      - name: fixed
        value: root.work
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: work
            maxapplications: 6
            limits:
              - limit: each user
                users: ["*"]
                maxapplications: 2
                maxresources: {vcore: "48"}
              - limit: group a
                groups: [group-a]
                maxresources: {vcore: "40"}
          - name: small
            resources:
              max: {vcore: "8"}
"""


def run(workload: Workload, cluster: ClusterSpec, config: str = LIMITS,
        packing: Packing = "dense", placement: Placement = "whole"
        ) -> tuple[SimulationResult, dict[str, Any]]:
    """Replay, then read the scheduler's own books before it stops."""
    with Scheduler.start(config, clock=VirtualClock(workload.jobs[0].submit)) as scheduler:
        result = replay(scheduler, workload, cluster,
                        ReplayOptions(progress=False, packing=packing, placement=placement))
        ugm = scheduler.ugm("default")
        books = {
            "queues": {q.path: (q.allocated, q.running_applications)
                       for q in scheduler.queues()},
            "users": [u["queues"] for u in ugm.users_usage()],
            "groups": [g["queues"] for g in ugm.groups_usage()],
            "active": scheduler.applications(state="active"),
        }
    return result, books


def synthetic(text: str) -> Workload:
    return generate(parse_synthetic(text))


def deterministic(report: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in report.items() if k != "performance"}


def assert_balanced(result: SimulationResult, books: dict[str, Any]) -> None:
    assert len(result.outcomes) == len(result.workload.jobs)
    assert result.leftover == {}
    assert books["active"] == []
    for allocated, running in books["queues"].values():
        assert not allocated and not running
    for root in [*books["users"], *books["groups"]]:
        assert not root.get("resourceUsage") and not root.get("runningApplications")
    for series in [*result.user_series.values(), *result.group_series.values(),
                   *result.queue_series.values(), result.total_series]:
        assert not series.values[-1] and series.running[-1] == 0


@pytest.mark.slow
def test_same_seed_same_report() -> None:
    workload_text = "synthetic:jobs=300,users=8,groups=2,seed=11,interarrival=30,max_tasks=32"
    cluster = uniform_cluster(4, {"vcore": "16"})
    first, _ = run(synthetic(workload_text), cluster)
    second, _ = run(synthetic(workload_text), cluster)
    assert deterministic(build_report(first)) == deterministic(build_report(second))
    assert first.outcomes == second.outcomes
    other, _ = run(synthetic(workload_text.replace("seed=11", "seed=12")), cluster)
    assert other.outcomes != first.outcomes


@pytest.mark.slow
def test_every_job_ends_and_the_books_balance() -> None:
    workload = synthetic("synthetic:jobs=400,users=10,groups=3,seed=3,interarrival=20,"
                         "max_tasks=64,duration=1200")
    result, books = run(workload, uniform_cluster(8, {"vcore": "16"}))
    assert_balanced(result, books)
    everybody = result.everybody
    assert everybody.jobs == 400
    assert everybody.completed + everybody.rejected + everybody.never_started == 400
    assert everybody.held["user"] > 0 and everybody.held["group"] > 0
    assert result.everybody.peak["vcore"] <= 128000
    group_a = next(g for g in result.groups if g.name == "group-a")
    assert group_a.peak["vcore"] <= 40000
    for user in result.users:
        assert user.peak["vcore"] <= 48000 and user.peak_running <= 2


def test_one_ask_per_task_also_balances() -> None:
    workload = synthetic("synthetic:jobs=120,users=5,groups=2,seed=5,interarrival=60,"
                         "max_tasks=16")
    result, books = run(workload, uniform_cluster(16, {"vcore": "2"}), packing="none")
    assert_balanced(result, books)


def jobs(*lines: str) -> Workload:
    return parse_jsonl(list(lines))


def test_rejected_too_big_and_never_started_jobs_end_too() -> None:
    workload = jobs(
        '{"job_id": "fits", "user": "sue", "queue": "root.work", "submit": 0, "duration": 10,'
        ' "tasks": 4}',
        '{"job_id": "no-queue", "user": "sue", "queue": "root.nowhere", "submit": 1,'
        ' "duration": 10}',
        '{"job_id": "huge", "user": "sue", "queue": "root.work", "submit": 2, "duration": 10,'
        ' "tasks": 999}',
        '{"job_id": "over-user-limit", "user": "bob", "queue": "root.work", "submit": 3,'
        ' "duration": 10, "tasks": 60}',
        '{"job_id": "over-queue-max", "user": "ann", "queue": "root.small", "submit": 4,'
        ' "duration": 10, "tasks": 9}',
    )
    only_provided = LIMITS.replace("      - name: fixed\n        value: root.work\n", "")
    result, books = run(workload, uniform_cluster(1, {"vcore": "64"}), config=only_provided)
    states = {o.job_id: o for o in result.outcomes}
    assert states["fits"].state is JobState.COMPLETED and states["fits"].wait == 0
    assert states["no-queue"].state is JobState.REJECTED
    assert "placement" in states["no-queue"].reason
    assert states["huge"].state is JobState.REJECTED
    assert "whole cluster" in states["huge"].reason
    assert states["over-user-limit"].state is JobState.NEVER_STARTED
    assert "user" in states["over-user-limit"].reason
    assert states["over-queue-max"].state is JobState.NEVER_STARTED
    assert "queue" in states["over-queue-max"].reason
    assert_balanced(result, books)


def test_a_job_over_a_limit_on_its_own_ends_at_once_with_its_cause() -> None:
    # bob's 60 vcore exceed the 48 every user may hold; ann's 9 exceed root.small's max of 8;
    # sue's second job only waits for her first to end, so it must not be given up.
    workload = jobs(
        '{"job_id": "sue-1", "user": "sue", "queue": "root.work", "submit": 0,'
        ' "duration": 500, "tasks": 40}',
        '{"job_id": "sue-2", "user": "sue", "queue": "root.work", "submit": 1,'
        ' "duration": 10, "tasks": 40}',
        '{"job_id": "bob-big", "user": "bob", "queue": "root.work", "submit": 3,'
        ' "duration": 10, "tasks": 60}',
        '{"job_id": "ann-big", "user": "ann", "queue": "root.small", "submit": 4,'
        ' "duration": 10, "tasks": 9}',
    )
    only_provided = LIMITS.replace("      - name: fixed\n        value: root.work\n", "")
    result, books = run(workload, uniform_cluster(1, {"vcore": "128"}), config=only_provided)
    out = {o.job_id: o for o in result.outcomes}
    assert out["sue-2"].state is JobState.COMPLETED and out["sue-2"].start == 500
    bob, ann = out["bob-big"], out["ann-big"]
    assert bob.state is JobState.NEVER_STARTED and ann.state is JobState.NEVER_STARTED
    assert bob.cause == "exceeds user bob's limit: 48 vcore at root.work"
    assert bob.reason == "needs 60 vcore: " + bob.cause
    assert ann.cause == "exceeds queue root.small's maximum: 8 vcore"
    assert not bob.held and not ann.held
    assert_balanced(result, books)


def test_waits_are_charged_to_the_limit_that_held_the_job() -> None:
    workload = jobs(
        '{"job_id": "a", "user": "sue", "submit": 0, "duration": 100, "tasks": 40}',
        '{"job_id": "b", "user": "sue", "submit": 10, "duration": 50, "tasks": 40}',
        '{"job_id": "c", "user": "bob", "submit": 20, "duration": 50, "tasks": 48}',
    )
    result, books = run(workload, uniform_cluster(1, {"vcore": "80"}))
    out = {o.job_id: o for o in result.outcomes}
    assert (out["a"].start, out["a"].end) == (0, 100)
    # c fits no node at 20 and reserves the node at 22 (the reservation delay): when a ends
    # it goes first, and b waits for the node behind it. Sue's user limit holds b from 10,
    # but it is charged to that limit only while lifting it would have let b start: until
    # c's reservation took the room at 22; from then on, to the nodes.
    assert out["c"].start == 100 and dict(out["c"].held) == {"node": 80.0}
    assert out["b"].start == 150 and dict(out["b"].held) == {"user": 12.0, "node": 128.0}
    assert result.preemptions.reservations == 2
    assert_balanced(result, books)


DEADLOCK_LINES = [f'{{"job_id": "{name}", "user": "{user}", "queue": "root.q", "submit": {at},'
             f' "duration": 10, "tasks": {tasks}}}'
             for name, user, at, tasks in (("first", "sue", 0, 2), ("second", "bob", 0, 2),
                                           ("big-1", "ann", 10, 3), ("big-2", "joe", 10, 3),
                                           ("later", "kim", 100, 1))]
FAIR_QUEUE = """\
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: q
            properties: {application.sort.policy: fair}
"""


def test_deadlocked_partial_jobs_are_killed_so_the_rest_runs() -> None:
    # Placed task by task, fair ordering gives two 3-task jobs two of the four nodes each:
    # neither can ever start. (They arrive as the nodes free up: had they waited, their
    # reservations would have held three nodes for the older one.)
    result, books = run(jobs(*DEADLOCK_LINES), uniform_cluster(4, {"vcore": "1"}),
                        config=FAIR_QUEUE, packing="none", placement="tasks")
    out = {o.job_id: o for o in result.outcomes}
    assert out["first"].state is JobState.COMPLETED
    assert out["second"].state is JobState.COMPLETED
    assert out["later"].state is JobState.COMPLETED and out["later"].wait == 0
    assert out["big-1"].state is JobState.NEVER_STARTED
    assert out["big-1"].reason.startswith("deadlock")
    assert "wasted" in out["big-1"].reason
    assert_balanced(result, books)
    assert result.everybody.peak == Resource({"vcore": 4000})


def test_parallel_jobs_placed_whole_never_deadlock() -> None:
    # The same jobs placed whole: neither 3-task job holds a node before all three are free,
    # so they run one after the other, and nothing is ever partly placed.
    result, books = run(jobs(*DEADLOCK_LINES), uniform_cluster(4, {"vcore": "1"}),
                        config=FAIR_QUEUE, packing="none")
    out = {o.job_id: o for o in result.outcomes}
    assert all(o.state is JobState.COMPLETED for o in out.values())
    big = sorted((out["big-1"], out["big-2"]), key=lambda o: o.start or 0)
    assert big[0].start == 10 and big[1].start == big[0].end
    assert out["later"].start == 100
    assert_balanced(result, books)




@pytest.mark.slow
@pytest.mark.timeout(240)
def test_no_job_is_left_waiting_on_a_limit_nothing_holds_any_more() -> None:
    """The whole NASA trace under tight limits: every job that can ever run does. (A waiting
    ask once re-blocked on its user's counter while its group's limit held it was never woken
    again: two jobs were still waiting when the trace ended.)"""
    workload = demo_workload()
    result, books = run(workload, demo_cluster(), config=tight_config_text())
    never = {o.cause for o in result.outcomes if o.state is JobState.NEVER_STARTED}
    assert never == {"exceeds user u4's limit: 32 vcore at root.ipsc",
                     "exceeds group normal's limit: 96 vcore at root.ipsc"}
    assert result.everybody.completed == 17_290
    assert_balanced(result, books)


def test_alike_jobs_behind_the_first_are_charged_to_what_holds_it(monkeypatch) -> None:
    """A user's jobs asking the same take turns (only the first is tried); the replay charges
    each waiting one to what holds the first back, as it changes, so every job records the
    same held time by cause as when each is tried (turns switched off)."""
    workload = jobs(
        '{"job_id": "big", "user": "bob", "submit": 0, "duration": 150, "tasks": 40}',
        *(f'{{"job_id": "s{i}", "user": "sue", "submit": 1, "duration": 100, "tasks": 40}}'
          for i in range(5)),
    )
    cluster = uniform_cluster(1, {"vcore": "80"})
    with_turns, books = run(workload, cluster)
    assert_balanced(with_turns, books)
    with monkeypatch.context() as m:
        m.setattr(Turns, "ahead_of", lambda self, app: None)
        without, _ = run(workload, cluster)
    held = {o.job_id: (o.start, dict(o.held), dict(o.held_by)) for o in with_turns.outcomes}
    assert held == {o.job_id: (o.start, dict(o.held), dict(o.held_by))
                    for o in without.outcomes}
    # s0 and bob's job fill the node; s1 leads sue's line, held by sue's limit of 48 vcore
    # while the node is full (charged to the node: lifting the limit would not start it);
    # once bob's job ends at 150 the node has room, and the limit alone holds the rest of
    # sue's line; s3 waits behind s1 and then s2, and is charged alike
    assert held["s1"][:2] == (101.0, {"node": 100.0})
    assert held["s3"][:2] == (301.0, {"node": 149.0, "user": 151.0})


def test_a_job_started_in_part_no_longer_speaks_for_its_line() -> None:
    """The recorder charges a job waiting its turn by what the first of its line reports;
    once that first holds part of what it asked for, it takes no turns any more (the next
    job's turn has come), so its own waits are not charged to the job behind it."""
    recorder = OutcomeRecorder()
    task = (TaskGroup("tasks", 2, Resource({"vcore": 1000})),)
    for job_id in ("a", "b"):
        recorder.submitted(Job(job_id, "sue", (), "root.work", 0.0, 10.0, task), None)
        recorder.lines_up(job_id, 0.0, "sue's line")
    recorder.waiting("a", 0.0, "node", "full nodes")
    recorder.waits_turn("b", 0.0)
    recorder.leaves_line("a", 5.0)
    recorder.waiting("a", 5.0, "user", "user sue's resources limit")
    recorder.waiting("b", 8.0, "queue", "queue root.work's applications limit")
    recorder.started("b", 12.0)
    recorder.finished("b", 22.0)
    held = {o.job_id: dict(o.held) for o in recorder.outcomes()}
    assert held["b"] == {"node": 5.0, "queue": 4.0}

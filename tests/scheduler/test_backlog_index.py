"""The end of a cycle looks only at the backlog that can change, not at all of it.

After the walk, each cycle screens the pending applications for reservation, preemption and
reasons gone stale. An application whose every ask waits for an applications limit (or a
user or group limit whose counter has not moved) has nothing to offer that step; it is
settled when parked and screened again only once woken; with every node reserved and no
preemption possible, only those a user or group limit holds are looked at. The reference mode
(`SchedulerOptions.exhaustive_retries`) screens everything, as before, and must decide the
same.
"""

from __future__ import annotations

import pytest

from quotactor import UserGroup
from quotactor.scheduler import Ask, SchedulerOptions
from quotactor.scheduler.booking.backlog import Backlog

CONFIG = """
partitions:
  - name: default
    placementrules:
      - name: provided
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: work
            limits:
              - limit: one each
                users: ["*"]
                maxapplications: 1
"""

SUE = UserGroup("sue", ("dev",))
ONE = {"vcore": 1000}


def _screened(monkeypatch) -> list[int]:
    """How many applications each call of `Backlog.screened` hands the end of a cycle."""
    sizes: list[int] = []
    original = Backlog.screened

    def spy(self, leaf):
        found = original(self, leaf)
        sizes.append(len(found))
        return found

    monkeypatch.setattr(Backlog, "screened", spy)
    return sizes


def _release_another_user(start_scheduler, monkeypatch, backlog: int,
                          exhaustive: bool = False) -> list[int]:
    s = start_scheduler(CONFIG, options=SchedulerOptions(exhaustive_retries=exhaustive))
    s.add_node("n1", {"vcore": 64000})
    s.submit("bob-0", UserGroup("bob"), queue="root.work", asks=[Ask("k", ONE)])
    for i in range(backlog):  # each of its own size: alike jobs of one user take turns
        s.submit(f"sue-{i}", SUE, queue="root.work", asks=[Ask("k", {"vcore": 1000 + i})])
    s.schedule()
    s.schedule()
    sizes = _screened(monkeypatch)
    s.remove_application("bob-0")
    s.submit("bob-1", UserGroup("bob"), queue="root.work", asks=[Ask("k", ONE)])
    made = s.schedule()
    assert [a.application_id for a in made] == ["bob-1"]
    wait = s.why_pending(f"sue-{backlog - 1}")
    assert wait is not None and (wait.kind, wait.limit) == ("user", "applications")
    return sizes


@pytest.mark.parametrize("backlog", [20, 400])
def test_a_backlog_held_by_a_user_limit_is_not_screened_after_others_release(
        start_scheduler, monkeypatch, backlog: int) -> None:
    sizes = _release_another_user(start_scheduler, monkeypatch, backlog)
    assert sum(sizes) <= 1  # at most bob-1, whatever sue's backlog


def test_the_reference_mode_screens_the_whole_backlog(start_scheduler, monkeypatch) -> None:
    sizes = _release_another_user(start_scheduler, monkeypatch, 400, exhaustive=True)
    assert sum(sizes) == 400 - 1  # sue-0 runs; every other application of sue is looked at


def test_a_woken_application_is_screened_again(start_scheduler, monkeypatch) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 64000})
    for i in range(5):
        s.submit(f"sue-{i}", SUE, queue="root.work", asks=[Ask("k", ONE)])
    s.schedule()
    s.schedule()
    sizes = _screened(monkeypatch)
    s.remove_application("sue-0")
    made = s.schedule()
    assert [a.application_id for a in made] == ["sue-1"]
    # woken by sue's release: tried (sue-2 refused, the rest reuse that refusal) and settled
    s.schedule()
    assert sizes[-1] == 0
    assert s.why_pending("sue-4").kind == "user"


def test_applications_that_ran_are_not_kept_for_screening(start_scheduler) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 64000})
    backlog = s._partition("default").backlog
    for i in range(300):
        s.submit(f"u{i}-job", UserGroup(f"u{i}"), queue="root.work", asks=[Ask("k", ONE)])
        s.schedule()  # placed at once: the leaf has nothing pending after the walk
        s.remove_application(f"u{i}-job")
    s.schedule()
    assert backlog.screened_count() == 0


CAPPED = """
partitions:
  - name: default
    placementrules:
      - name: provided
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: small
            resources:
              max: {{vcore: "2"}}{guarantee}
          - name: big
"""


def _capped_backlog(start_scheduler, monkeypatch, backlog: int, guarantee: str = "") -> list[int]:
    """A queue at its maximum with `backlog` jobs waiting; then another queue's job ends."""
    s = start_scheduler(CAPPED.format(guarantee=guarantee))
    s.add_node("n1", {"vcore": 64000})
    s.submit("holder", SUE, queue="root.small", asks=[Ask("k", {"vcore": 2000})])
    s.submit("other", UserGroup("bob"), queue="root.big", asks=[Ask("k", ONE)])
    s.schedule()
    for i in range(backlog):
        s.submit(f"w{i}", UserGroup(f"u{i}"), queue="root.small", asks=[Ask("k", ONE)])
    s.schedule()
    s.schedule()
    sizes = _screened(monkeypatch)
    s.remove_application("other")
    s.schedule()
    wait = s.why_pending(f"w{backlog - 1}")
    assert (wait.kind, wait.limit) == ("queue", "resources")
    return sizes


@pytest.mark.parametrize("backlog", [20, 400])
def test_a_backlog_held_by_a_queue_maximum_is_not_screened(start_scheduler, monkeypatch,
                                                           backlog: int) -> None:
    """Nothing at the end of a cycle can lift a queue's maximum where no preemption can help
    (no reservation is made above it): those jobs are settled until the queue releases."""
    assert sum(_capped_backlog(start_scheduler, monkeypatch, backlog)) == 0


def test_under_a_guarantee_a_queue_maximum_backlog_is_screened(start_scheduler,
                                                              monkeypatch) -> None:
    """Where preemption may act, the end of a cycle still offers them to it."""
    guarantee = '\n              guaranteed: {vcore: "1"}'
    assert sum(_capped_backlog(start_scheduler, monkeypatch, 20, guarantee)) == 20


ROOM = CONFIG.split("            limits:")[0]  # the same queue, without limits


def _handed(monkeypatch) -> list[int]:
    """How many applications the end of each cycle looks at (`screened` where it may offer
    something, `limit_held` where it may not)."""
    sizes: list[int] = []
    for name in ("screened", "limit_held"):
        original = getattr(Backlog, name)

        def spy(self, leaf, original=original):
            found = original(self, leaf)
            sizes.append(len(found))
            return found

        monkeypatch.setattr(Backlog, name, spy)
    return sizes


@pytest.mark.parametrize("exhaustive", [False, True], ids=["indexed", "reference"])
def test_with_every_node_reserved_no_job_waiting_for_room_is_looked_at(
        start_scheduler, clock, monkeypatch, exhaustive: bool) -> None:
    """Once every node is reserved and nothing may preempt, the end of a cycle can offer
    nothing to a job waiting for room, so a full cluster's backlog costs nothing per cycle
    (the reference mode still looks at every pending job)."""
    s = start_scheduler(ROOM, options=SchedulerOptions(exhaustive_retries=exhaustive))
    s.add_node("n1", {"vcore": 4000})
    s.submit("holder", UserGroup("bob"), queue="root.work", asks=[Ask("h", {"vcore": 3000})])
    for i in range(200):
        s.submit(f"big-{i}", UserGroup(f"u{i}"), queue="root.work",
                 asks=[Ask("k", {"vcore": 4000})])
    s.schedule()
    clock.advance(5)
    s.schedule()
    assert s.application_view("big-0")["reservations"] == ["n1|k"]
    sizes = _handed(monkeypatch)
    for i in range(50):  # new jobs keep coming: a cycle each, and the node stays reserved
        s.submit(f"small-{i}", UserGroup("amy"), queue="root.work",
                 asks=[Ask("s", {"vcore": 1000 + i})])  # not alike: each waits for room
        clock.advance(1)
        assert s.schedule() == []
    if exhaustive:
        assert min(sizes) >= 200
    else:
        assert sum(sizes) == 0, "jobs waiting for room were looked at with nothing to offer"
    assert s.why_pending("big-199").kind == "node"
    assert s.why_pending("small-49").kind == "node"


def test_removed_applications_leave_the_limit_held_index(start_scheduler) -> None:
    """Jobs a user's resource limit holds, removed while they wait, are dropped from the
    index by the backlog's sweep even when no cycle ever had to look them up."""
    s = start_scheduler(ROOM + """\
            limits:
              - limit: small users
                users: ["*"]
                maxresources: {vcore: 1}
""")
    s.add_node("n1", {"vcore": 64000})
    backlog = s._partition("default").backlog
    for i in range(3000):
        s.submit(f"u{i}-job", UserGroup(f"u{i}"), queue="root.work",
                 asks=[Ask("k", {"vcore": 2000})])
        s.schedule()
        assert s.why_pending(f"u{i}-job").kind == "user"
        s.remove_application(f"u{i}-job")
    assert backlog.limit_held_count() <= 2048, "removed jobs stayed in the index"


@pytest.mark.parametrize("exhaustive", [False, True], ids=["indexed", "reference"])
def test_jobs_placed_whole_waiting_for_room_are_not_looked_at(
        start_scheduler, clock, monkeypatch, exhaustive: bool) -> None:
    """A job placed whole reserves no node, so with nothing that may preempt the end of a
    cycle has nothing to offer it while it waits for room: on a machine of unit nodes its
    backlog costs nothing per cycle (the reference mode still looks at every pending job)."""
    from quotactor.scheduler.objects.application import ALL_OR_NOTHING

    whole = {ALL_OR_NOTHING: "true"}
    s = start_scheduler(ROOM, options=SchedulerOptions(exhaustive_retries=exhaustive))
    for i in range(8):
        s.add_node(f"n{i}", ONE)
    s.submit("holder", UserGroup("bob"), queue="root.work", tags=whole,
             asks=[Ask(f"h{i}", ONE) for i in range(8)])
    for i in range(200):
        s.submit(f"wide-{i}", UserGroup(f"u{i}"), queue="root.work", tags=whole,
                 asks=[Ask(f"k{t}", ONE) for t in range(2 + i % 3)])
    assert len(s.schedule()) == 8
    clock.advance(5)
    s.schedule()
    sizes = _handed(monkeypatch)
    for i in range(50):  # new jobs keep coming: a cycle each, and the nodes stay full
        s.submit(f"late-{i}", UserGroup(f"v{i}"), queue="root.work", tags=whole,
                 asks=[Ask("a", ONE), Ask("b", ONE)])
        clock.advance(1)
        assert s.schedule() == []
    if exhaustive:
        assert min(sizes) >= 200
    else:
        assert sum(sizes) == 0, "jobs placed whole waiting for room were looked at"
    assert s.why_pending("wide-199").kind == "node"
    assert s.why_pending("late-49").kind == "node"
    s.remove_application("holder")
    made = s.schedule()
    # 2 + 3 tasks; wide-2's 4 do not fit the 3 nodes left, wide-3's 2 do
    assert {a.application_id for a in made} == {"wide-0", "wide-1", "wide-3"}


def test_a_release_wakes_only_the_jobs_placed_whole_it_makes_room_for(
        start_scheduler, looked_at) -> None:
    """Jobs placed whole whose tasks all ask one size wait on a counter per task count: a
    release that frees three nodes looks at the jobs of two and three tasks, not at the
    wider ones."""
    from quotactor.scheduler.objects.application import ALL_OR_NOTHING

    whole = {ALL_OR_NOTHING: "true"}
    s = start_scheduler(ROOM)
    for i in range(8):
        s.add_node(f"n{i}", ONE)
    s.submit("three", UserGroup("bob"), queue="root.work", tags=whole,
             asks=[Ask(f"h{i}", ONE) for i in range(3)])
    s.submit("five", UserGroup("bob"), queue="root.work", tags=whole,
             asks=[Ask(f"h{i}", ONE) for i in range(5)])
    tasks = {f"wide-{i}": 2 + i % 6 for i in range(120)}
    for app_id, count in tasks.items():
        s.submit(app_id, UserGroup(f"u-{app_id}"), queue="root.work", tags=whole,
                 asks=[Ask(f"k{t}", ONE) for t in range(count)])
    assert {a.application_id for a in s.schedule()} == {"three", "five"}
    s.schedule()
    looked_at.clear()
    s.remove_application("three")
    assert {a.application_id for a in s.schedule()} == {"wide-0"}  # two tasks, first
    assert looked_at and {tasks[app_id] for app_id in looked_at} <= {2, 3}
    assert s.why_pending("wide-5").kind == "node"

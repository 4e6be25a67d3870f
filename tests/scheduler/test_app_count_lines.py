"""New applications behind an application count wait in a line, and a release opens it by one.

A new application is asked about its user's and group's `maxApplications` before anything else
(YuniKorn's `CanRunApp`), so it is held by that count whatever its size and whatever the nodes
hold. Those held for the same count, in the same leaf, wait in a line in the leaf's order; a
release wakes the head, and the next one only once the head has moved on (started, or held by
something else). The reference mode (`SchedulerOptions.exhaustive_retries`) wakes everything
and must decide exactly the same: which application starts, and every recorded reason (with
reservations, which try their asks before the walk, taking part).
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from quotactor import UserGroup
from quotactor.scheduler import Ask, SchedulerOptions, VirtualClock

TWO_EACH = """
partitions:
  - name: default
    placementrules:
      - name: provided
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: work
            maxapplications: {queue_apps}
            limits:
              - limit: two each
                users: ["*"]
                maxapplications: 2
              - limit: dev group
                groups: [dev]
                maxapplications: 3
          - name: other
"""

SUE = UserGroup("sue", ("dev",))
ONE = {"vcore": 1000}


def _own(i: int) -> dict[str, int]:
    """A size of its own for job `i` (a core and `i` millicores): jobs of one user asking
    the same take turns instead (`tests/scheduler/test_alike.py`), so no line would form."""
    return {"vcore": 1000 + i}


@pytest.mark.parametrize("backlog", [20, 400])
def test_a_release_looks_at_the_head_of_the_line_only(start_scheduler, looked_at,
                                                      backlog: int) -> None:
    s = start_scheduler(TWO_EACH.format(queue_apps=1000))
    s.add_node("n1", {"vcore": 64000})
    for i in range(backlog):
        s.submit(f"a{i}", SUE, queue="root.work", asks=[Ask("k", _own(i))])
    s.schedule()
    looked_at.clear()
    calls = s.ugm_calls
    s.remove_application("a0")
    assert [a.application_id for a in s.schedule()] == ["a2"]
    assert set(looked_at) == {"a2", "a3"}, "a4 and after wait behind a3, refused alike"
    assert s.ugm_calls - calls == 4  # a0 leaves; a2 may start and starts; a3 may not
    assert s.why_pending(f"a{backlog - 1}").limit == "applications"


@pytest.mark.parametrize("users", [20, 300])
def test_a_queues_count_keeps_one_line_for_every_user(start_scheduler, looked_at,
                                                      users: int) -> None:
    """A full queue's `maxapplications` holds every user's new applications alike: a release
    looks at the head of one line, not at the first application of each waiting user."""
    s = start_scheduler(TWO_EACH.format(queue_apps=3))
    s.add_node("n1", {"vcore": 64000})
    for i in range(users):
        s.submit(f"a{i}", UserGroup(f"u{i}"), queue="root.work", asks=[Ask("k", ONE)])
    s.schedule()
    looked_at.clear()
    s.remove_application("a0")
    assert [a.application_id for a in s.schedule()] == ["a3"]
    assert set(looked_at) == {"a3", "a4"}, "a5 and after wait behind a4, refused alike"
    wait = s.why_pending(f"a{users - 1}")
    assert (wait.kind, wait.limit) == ("queue", "applications")


def test_the_count_comes_before_the_nodes(start_scheduler) -> None:
    """A job too big for any node, behind its user's count, is held by the count: it does
    not reserve a node it could not use (YuniKorn does not look at it either)."""
    s = start_scheduler(TWO_EACH.format(queue_apps=1000))
    s.add_node("n1", {"vcore": 4000})
    s.submit("a0", SUE, queue="root.work", asks=[Ask("k", ONE)])
    s.submit("a1", SUE, queue="root.work", asks=[Ask("k", ONE)])
    s.schedule()
    s.submit("huge", SUE, queue="root.work", asks=[Ask("k", {"vcore": 64000})])
    s.schedule()
    wait = s.why_pending("huge")
    assert (wait.kind, wait.name, wait.limit) == ("user", "sue", "applications")
    s.remove_application("a0")
    s.schedule()
    assert s.why_pending("huge").kind == "node", "its count has room now: nodes hold it"


def test_a_head_that_goes_away_lets_the_next_in(start_scheduler) -> None:
    s = start_scheduler(TWO_EACH.format(queue_apps=1000))
    s.add_node("n1", {"vcore": 64000})
    for i in range(6):
        s.submit(f"a{i}", SUE, queue="root.work", asks=[Ask("k", _own(i))])
    s.schedule()
    s.remove_application("a0")
    s.remove_application("a2")  # the head woken by a0's end leaves before the next cycle
    assert [a.application_id for a in s.schedule()] == ["a3"]
    assert s.why_pending("a4").limit == "applications"


def test_a_head_held_by_something_else_lets_the_next_in(start_scheduler) -> None:
    """The head now waits for the queue's `maxapplications`, not its user's: so do all
    behind it, each recording the new reason (as when all of them are woken)."""
    s = start_scheduler(TWO_EACH.format(queue_apps=3))
    s.add_node("n1", {"vcore": 64000})
    for i in range(5):
        s.submit(f"a{i}", SUE, queue="root.work", asks=[Ask("k", _own(i))])
    s.submit("b0", UserGroup("bob"), queue="root.work", asks=[Ask("k", ONE)])
    s.schedule()  # a0, a1 and b0 run: the queue is full, sue is at her count
    s.remove_application("a0")
    s.submit("b1", UserGroup("bob"), queue="root.work", asks=[Ask("k", ONE, priority=5)])
    s.schedule()  # b1 comes first (priority) and takes the queue's last slot
    assert {a.application_id for a in s.applications() if a.running} == {"a1", "b0", "b1"}
    for app_id in ("a3", "a4"):
        wait = s.why_pending(app_id)
        assert wait.kind == "queue" and wait.limit == "applications", app_id


def _bigs_ahead(start_scheduler, exhaustive: bool, count: int) -> tuple[Any, list[str]]:
    """A full queue (r0, r1 and r2 run, leaving 2 of 10 cores) whose line holds `count` jobs
    too big for the room (8 cores each) ahead of two small ones, s1 and s2."""
    s = start_scheduler(TWO_EACH.format(queue_apps=3),
                        options=SchedulerOptions(exhaustive_retries=exhaustive))
    s.add_node("n1", {"vcore": 10000})
    s.submit("r0", UserGroup("u0"), queue="root.work", asks=[Ask("k", {"vcore": 6000})])
    for app_id in ("r1", "r2"):
        s.submit(app_id, UserGroup(app_id), queue="root.work", asks=[Ask("k", ONE)])
    s.schedule()  # the queue's three slots are taken
    bigs = [f"big{i}" for i in range(count)]
    for app_id in bigs:
        s.submit(app_id, UserGroup(app_id), queue="root.work", asks=[Ask("k", {"vcore": 8000})])
    for app_id in ("s1", "s2"):
        s.submit(app_id, UserGroup(app_id), queue="root.work", asks=[Ask("k", ONE)])
    return s, bigs


def _slot_by_slot(start_scheduler, exhaustive: bool) -> list[object]:
    """Slots free one at a time ahead of three big jobs (`_bigs_ahead`). Records what each
    cycle starts, every reason, and how many events each big job has logged."""
    s, bigs = _bigs_ahead(start_scheduler, exhaustive, 3)
    record: list[object] = []
    # a slot and a core each: the big jobs meet full nodes, then one that fits starts;
    # the last slot is one no one left can use
    for ending in (None, "r1", "s1", "s2"):
        if ending is not None:
            s.remove_application(ending)
        record.append(sorted(a.application_id for a in s.schedule()))
        record.append([(app_id, str(s.why_pending(app_id))) for app_id in bigs])
        record.append([len(s.events(app_id)) for app_id in bigs])
    return record


def test_a_head_the_room_cannot_hold_is_passed_over_as_an_attempt_would(
        start_scheduler) -> None:
    """Once a job has met full nodes, a later slot that frees passes it over untried while no
    room for it came since: the next in line takes the slot and the job waits for the count
    again, as after an attempt, but without logging a reason and its way back each time (the
    reference mode, which attempts it, logs them). When no one takes the slot, the job waits
    for room, as the attempt would have left it."""
    indexed = _slot_by_slot(start_scheduler, exhaustive=False)
    reference = _slot_by_slot(start_scheduler, exhaustive=True)
    started = indexed[0::3]
    assert started == [[], ["s1"], ["s2"], []]
    assert indexed[0::3] == reference[0::3] and indexed[1::3] == reference[1::3]
    assert all("applications" in reason for _, reason in indexed[4])
    assert all("no schedulable node" in reason for _, reason in indexed[10])
    logged, logged_reference = indexed[2::3], reference[2::3]
    # they first met full nodes when they came (and the queue's count, asked first, held them)
    assert logged[0] == logged_reference[0]
    assert logged[1] == logged[2] == logged[0], "passed over: nothing logged"
    assert logged_reference[1] == [n + 2 for n in logged_reference[0]], "attempted: two"
    assert logged_reference[2] == [n + 2 for n in logged_reference[1]]
    assert logged[3] == [n + 1 for n in logged[2]], "no one took the slot: room holds them"
    assert logged_reference[3] == [n + 1 for n in logged_reference[2]]


@pytest.mark.parametrize("exhaustive", [False, True])
def test_a_freed_slot_skips_the_jobs_the_room_cannot_hold(start_scheduler, attempted,
                                                          exhaustive: bool) -> None:
    """Forty jobs too big for the room wait ahead of a small one in a full queue's line.
    When a slot frees, the first big job is passed over and the line skips the others
    untouched: only the small one is attempted after it, and starts. The reference mode
    attempts all of them and decides the same."""
    s, bigs = _bigs_ahead(start_scheduler, exhaustive, 40)
    s.schedule()
    attempted.clear()
    s.remove_application("r1")
    assert [a.application_id for a in s.schedule()] == ["s1"]
    assert attempted == ([*bigs, "s1"] if exhaustive else ["big0", "s1"])
    for app_id in [*bigs, "s2"]:
        wait = s.why_pending(app_id)
        assert (wait.kind, wait.limit) == ("queue", "applications"), app_id


def _random_ops(seed: int, steps: int,
                sizes: tuple[int, ...] = (1000, 2000, 8000, 30000)) -> list[tuple[str, ...]]:
    rng = random.Random(seed)
    users = ["sue", "bob", "kim", "ann"]
    ops: list[tuple[str, ...]] = []
    for step in range(steps):
        roll = rng.random()
        if roll < 0.55:
            queue = rng.choice(["root.work", "root.work", "root.other"])
            size = str(rng.choice(sizes))
            ops.append(("submit", f"j{step}", rng.choice(users), queue, size))
        elif roll < 0.75:
            ops.append(("end-running", str(rng.random())))
        elif roll < 0.85:
            ops.append(("remove-pending", str(rng.random())))
        else:
            ops.append(("schedule",))
        if rng.random() < 0.5:
            ops.append(("schedule",))
        ops.append(("advance", str(rng.choice([0.0, 1.0, 3.0]))))  # reservations after 2 s
    return ops


def _play(start_scheduler, ops: list[tuple[str, ...]], exhaustive: bool,
          config: str = TWO_EACH.format(queue_apps=6)) -> list[object]:
    """Run `ops`; record every allocation made and, after each cycle, every pending
    application's reason."""
    clock = VirtualClock(0.0)
    s = start_scheduler(config, clock=clock,
                        options=SchedulerOptions(exhaustive_retries=exhaustive))
    s.add_node("n1", {"vcore": 32000})
    s.add_node("n2", {"vcore": 16000})
    groups = {"sue": ("dev",), "bob": ("dev",), "kim": ("ops",), "ann": ()}
    record: list[object] = []
    for op in ops:
        if op[0] == "submit":
            _, app_id, user, queue, size = op
            s.submit(app_id, UserGroup(user, groups[user]), queue=queue,
                     asks=[Ask("k", {"vcore": int(size)})])
        elif op[0] == "advance":
            clock.advance(float(op[1]))
        elif op[0] in ("end-running", "remove-pending"):
            running = op[0] == "end-running"
            apps = [a.application_id for a in s.applications()
                    if a.running == running and (running or a.pending)]
            if apps:
                s.remove_application(apps[int(float(op[1]) * len(apps))])
        else:
            made = s.schedule()
            record.append(sorted(a.application_id for a in made))
            record.append(sorted((a.application_id, str(s.why_pending(a.application_id)))
                                 for a in s.applications()
                                 if s.why_pending(a.application_id) is not None))
    return record


@pytest.mark.parametrize("seed", range(10))
def test_lines_decide_as_waking_everything(start_scheduler, seed: int) -> None:
    ops = _random_ops(seed, 200)
    indexed = _play(start_scheduler, ops, exhaustive=False)
    reference = _play(start_scheduler, ops, exhaustive=True)
    assert indexed == reference
    assert any("applications" in str(step) for step in reference), "the lines had work"
    assert any("reserved" in str(step) for step in reference), "so did reservations"


UNDER_A_MAXIMUM = TWO_EACH.format(queue_apps=6).replace(
    "            maxapplications: 6\n",
    "            maxapplications: 6\n            resources:\n              max: {vcore: \"12\"}\n")


@pytest.mark.parametrize("seed", range(10))
def test_lines_behind_a_queue_maximum_decide_as_waking_everything(start_scheduler,
                                                                   seed: int) -> None:
    # new applications that a queue's maximum holds wait in the line of the room for their
    # size; when its head is held again, those behind it whose user's or group's count
    # filled meanwhile are woken (held by the count), the others stay, unasked when nothing
    # that could hold them moved
    ops = _random_ops(seed, 200, sizes=(1000, 2000, 3000, 5000, 7000))
    indexed = _play(start_scheduler, ops, exhaustive=False, config=UNDER_A_MAXIMUM)
    reference = _play(start_scheduler, ops, exhaustive=True, config=UNDER_A_MAXIMUM)
    assert indexed == reference
    assert any("(resources)" in str(step) for step in reference), "the maximum held jobs"


GROUP_COUNT = """
partitions:
  - name: default
    placementrules:
      - name: provided
    queues:
      - name: root
        submitacl: '*'
        limits:
          - limit: two each
            users: ["*"]
            maxapplications: 2
        queues:
          - name: work
            limits:
              - limit: dev group
                groups: [dev]
                maxapplications: 2
          - name: other
"""


def test_a_group_count_line_is_one_users(start_scheduler) -> None:
    """Behind a group's count, applications of different users are not alike: a user's own
    count is asked first, and it may have filled (elsewhere) since. So each user has a line,
    and a move of the group's counter wakes the head of each."""
    ann, bob = UserGroup("ann", ("dev",)), UserGroup("bob", ("dev",))
    for exhaustive in (False, True):
        s = start_scheduler(GROUP_COUNT, options=SchedulerOptions(exhaustive_retries=exhaustive))
        s.add_node("n1", {"vcore": 64000})
        s.submit("s0", SUE, queue="root.work", asks=[Ask("k1", ONE), Ask("k2", ONE)])
        s.submit("b0", bob, queue="root.work", asks=[Ask("k", ONE)])
        s.schedule()  # dev runs two applications in root.work: full
        s.submit("a1", ann, queue="root.work", asks=[Ask("k", ONE)])
        s.submit("b1", bob, queue="root.work", asks=[Ask("k", ONE)])
        s.schedule()
        assert s.why_pending("a1").name == s.why_pending("b1").name == "dev"
        s.submit("b2", bob, queue="root.other", asks=[Ask("k", ONE)])
        s.schedule()  # bob now runs two: his own count is full
        s.release("s0", "k1")  # dev's counter moves, but s0 still runs: dev stays full
        s.schedule()
        assert s.why_pending("a1").name == "dev"
        wait = s.why_pending("b1")
        assert (wait.kind, wait.name) == ("user", "bob"), exhaustive


@pytest.mark.parametrize("exhaustive", [False, True])
def test_a_job_behind_a_queue_maximum_whose_user_count_filled_is_held_by_it(
        start_scheduler, exhaustive: bool) -> None:
    """sue's s3 waits for root.work's maximum behind kim's k1, alike in size. bob's job ends;
    sue's s2, which waited for the maximum in another size's line, starts and fills sue's
    count. k1 is held by the maximum again: s3, behind it, is now held by sue's count first,
    as an attempt would find (the reference mode attempts it)."""
    s = start_scheduler(UNDER_A_MAXIMUM, options=SchedulerOptions(exhaustive_retries=exhaustive))
    s.add_node("n1", {"vcore": 32000})
    sue, kim, bob = UserGroup("sue"), UserGroup("kim"), UserGroup("bob")
    s.submit("s1", sue, queue="root.work", asks=[Ask("k", ONE)])
    s.submit("b1", bob, queue="root.work", asks=[Ask("k", {"vcore": 9000})])
    assert {a.application_id for a in s.schedule()} == {"s1", "b1"}  # 10 of 12 cores
    s.submit("s2", sue, queue="root.work", asks=[Ask("k", {"vcore": 3000})])
    s.submit("k1", kim, queue="root.work", asks=[Ask("k", {"vcore": 9000})])
    s.submit("s3", sue, queue="root.work", asks=[Ask("k", {"vcore": 9000})])
    assert s.schedule() == []
    for app_id in ("s2", "k1", "s3"):
        wait = s.why_pending(app_id)
        assert (wait.kind, wait.limit) == ("queue", "resources"), app_id
    s.remove_application("b1")
    assert [a.application_id for a in s.schedule()] == ["s2"]
    wait = s.why_pending("k1")
    assert (wait.kind, wait.limit) == ("queue", "resources")
    wait = s.why_pending("s3")
    assert (wait.kind, wait.name, wait.limit) == ("user", "sue", "applications")

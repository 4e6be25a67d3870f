"""What a cycle asks the user group manager after a release: proportional to what changed.

A user at the limit on running applications with a long backlog used to cost one refused
increase per pending application after each of the user's releases; then the first refusal in
a cycle held back the user's other new applications in that leaf with the same reason; now
they wait in a line and a release looks at the head of it only.
"""

from __future__ import annotations

import pytest

from quotactor import UserGroup
from quotactor.scheduler import Ask
from quotactor.scheduler.booking.accounting import Accounting

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
              - limit: two each
                users: ["*"]
                maxapplications: 2
"""

SUE = UserGroup("sue", ("dev",))
ONE = {"vcore": 1000}


def _counting(scheduler) -> dict[str, int]:
    """Count increases asked of the default partition's user group manager."""
    ugm = scheduler.ugm()
    counts = {"decide_increase": 0, "app_refusal": 0}

    def spy(name: str):
        original = getattr(ugm, name)

        def counted(*args, **kwargs):
            counts[name] += 1
            return original(*args, **kwargs)
        return counted

    for name in counts:
        setattr(ugm, name, spy(name))
    return counts


def test_a_release_costs_one_refusal_per_user_not_one_per_pending_app(
        start_scheduler, looked_at) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 64000})
    for i in range(40):  # each of its own size: alike jobs of one user take turns
        s.submit(f"a{i}", SUE, queue="root.work", asks=[Ask("k", {"vcore": 1000 + i})])
    s.schedule()
    counts = _counting(s)
    seen = looked_at
    seen.clear()
    s.remove_application("a0")
    made = s.schedule()
    assert [a.application_id for a in made] == ["a2"]
    # a2 may start (a read) and starts (an increase); a3 may not (a read); a4..a39, behind
    # a3 in sue's line, are not looked at
    assert counts == {"app_refusal": 2, "decide_increase": 1}
    assert set(seen) == {"a2", "a3"}
    for i in range(3, 40):
        wait = s.why_pending(f"a{i}")
        assert wait is not None and (wait.kind, wait.name, wait.limit) == (
            "user", "sue", "applications")


def test_another_user_in_the_same_leaf_is_still_asked_about(start_scheduler) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 64000})
    for i in range(3):
        s.submit(f"sue-{i}", SUE, queue="root.work", asks=[Ask("k", ONE)])
    s.submit("bob-0", UserGroup("bob", ("dev",)), queue="root.work", asks=[Ask("k", ONE)])
    made = s.schedule()
    assert sorted(a.application_id for a in made) == ["bob-0", "sue-0", "sue-1"]
    assert s.why_pending("sue-2").kind == "user"


PLAIN = """
partitions:
  - name: default
    placementrules:
      - name: provided
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: work
"""



def test_a_small_release_does_not_wake_jobs_too_big_for_the_room_it_frees(
        start_scheduler, looked_at) -> None:
    s = start_scheduler(PLAIN)
    s.add_node("n1", {"vcore": 64000})
    s.submit("holder", SUE, queue="root.work", asks=[Ask("k", {"vcore": 60000})])
    s.submit("tiny", SUE, queue="root.work", asks=[Ask("k", ONE)])
    s.schedule()
    s.submit("four", UserGroup("kim"), queue="root.work", asks=[Ask("k", {"vcore": 4000})])
    for i in range(30):
        s.submit(f"big-{i}", UserGroup(f"u{i}"), queue="root.work",
                 asks=[Ask("k", {"vcore": 64000})])
    s.schedule()
    assert s.why_pending("four").kind == "node"
    seen = looked_at
    seen.clear()
    s.remove_application("tiny")
    made = s.schedule()
    assert [a.application_id for a in made] == ["four"]
    assert seen == ["four"]  # the 30 jobs of 64 vcore are not looked at
    assert s.why_pending("big-7").kind == "node"
    seen.clear()
    s.remove_application("holder")
    s.remove_application("four")
    made = s.schedule()
    assert [a.application_id for a in made] == ["big-0"]
    assert sorted(set(seen)) == sorted(f"big-{i}" for i in range(30))


def test_wait_changes_name_only_the_applications_whose_reason_changed(start_scheduler) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 64000})
    assert s.take_wait_changes() == {}  # starts the recording
    for i in range(5):  # each of its own size: alike jobs of one user take turns
        s.submit(f"a{i}", SUE, queue="root.work", asks=[Ask("k", {"vcore": 1000 + i})])
    s.schedule()
    first = s.take_wait_changes()
    assert sorted(first) == ["a2", "a3", "a4"]
    assert all(w is not None and w.limit == "applications" for w in first.values())
    s.schedule()
    assert s.take_wait_changes() == {}
    s.remove_application("a0")
    s.schedule()
    assert s.take_wait_changes() == {"a2": None}


def test_a_reason_that_changed_back_is_no_change(start_scheduler, clock) -> None:
    """A freed slot in a full queue: the big job behind it meets full nodes, a small one
    takes the slot, and the big one is held by the count again by the cycle's end (asked
    before it is offered a reservation). Its reason changed twice and is what was reported:
    a reader is not told of it."""
    s = start_scheduler(PLAIN.replace("          - name: work\n",
                                      "          - name: work\n"
                                      "            maxapplications: 2\n"))
    s.add_node("n1", {"vcore": 4000})
    for app_id, vcore in (("r1", 2000), ("r2", 1000), ("big", 3000), ("small", 1000)):
        s.submit(app_id, SUE, queue="root.work", asks=[Ask("k", {"vcore": vcore})])
    assert s.take_wait_changes() == {}  # starts the recording
    s.schedule()
    clock.advance(5)  # past the delay before a reservation is offered
    s.schedule()
    assert {k: w.limit for k, w in s.take_wait_changes().items()} == {
        "big": "applications", "small": "applications"}
    s.remove_application("r2")
    clock.advance(5)
    assert [a.application_id for a in s.schedule()] == ["small"]
    assert s.why_pending("big").limit == "applications"
    reasons = [e.message for e in s.events("big") if e.kind == "waiting"]
    assert "no schedulable node" in reasons[-2] and "maxapplications" in reasons[-1]
    assert s.take_wait_changes() == {"small": None}


def test_an_application_ending_in_a_full_queue_costs_one_attempt(
        start_scheduler, attempted) -> None:
    s = start_scheduler(PLAIN.replace("          - name: work\n",
                                      "          - name: work\n            maxapplications: 2\n"))
    s.add_node("n1", {"vcore": 64000})
    for i in range(30):
        s.submit(f"a{i}", UserGroup(f"u{i}"), queue="root.work", asks=[Ask("k", ONE)])
    s.schedule()
    s.schedule()
    attempted.clear()
    s.remove_application("a0")
    made = s.schedule()
    assert [a.application_id for a in made] == ["a2"]
    assert attempted == ["a2"]  # a3..a29 still wait for the queue: not attempted again
    wait = s.why_pending("a29")
    assert (wait.kind, wait.name, wait.limit) == ("queue", "root.work", "applications")


def test_removed_applications_do_not_stay_parked(start_scheduler) -> None:
    s = start_scheduler(PLAIN)
    s.add_node("n1", {"vcore": 1000})
    s.submit("holder", SUE, queue="root.work", asks=[Ask("k", ONE)])
    s.schedule()
    backlog = s._partition("default").backlog
    for round_ in range(3):
        for i in range(1500):
            s.submit(f"w{round_}-{i}", UserGroup(f"u{i}"), queue="root.work",
                     asks=[Ask("k", ONE)])
        s.schedule()  # tried once: no node room
        s.schedule()  # parked on the node counter, which never moves while holder runs
        for i in range(1500):
            s.remove_application(f"w{round_}-{i}")
    s.submit("last", SUE, queue="root.work", asks=[Ask("k", ONE)])
    s.schedule()
    s.schedule()
    assert backlog.parked_count() <= 1500 + 1


def test_nobody_reading_wait_changes_keeps_none(start_scheduler) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 64000})
    for i in range(5):
        s.submit(f"a{i}", SUE, queue="root.work", asks=[Ask("k", ONE)])
    s.schedule()
    assert s._partition("default").accounting.changed_waits == {}


def test_a_small_release_under_a_queue_maximum_does_not_wake_jobs_too_big_for_it(
        start_scheduler, monkeypatch) -> None:
    """Jobs held by a queue's maximum wait for room of their size under it, as jobs held by
    the nodes do: a release of one vcore wakes the one-vcore jobs, not those of eight; and
    those of one size wait in a line, so a release that makes room for one wakes the first,
    then the next once the first has started (held again, the rest wait with it)."""
    s = start_scheduler(PLAIN.replace("          - name: work\n",
                                      "          - name: work\n"
                                      "            resources: {max: {vcore: \"10\"}}\n"))
    s.add_node("n1", {"vcore": 64000})
    s.submit("holder", SUE, queue="root.work", asks=[Ask("k", {"vcore": 9000})])
    s.submit("tiny", SUE, queue="root.work", asks=[Ask("k", ONE)])
    s.schedule()
    for i in range(30):
        s.submit(f"eight-{i}", UserGroup(f"u{i}"), queue="root.work",
                 asks=[Ask("k", {"vcore": 8000})])
    s.submit("one", UserGroup("kim"), queue="root.work", asks=[Ask("k", ONE)])
    s.schedule()
    assert (s.why_pending("one").kind, s.why_pending("eight-3").kind) == ("queue", "queue")
    from quotactor.scheduler.partition.cycle import Cycle

    woken: list[str] = []
    original = Cycle._blockers

    def spy(self, app):
        woken.append(app.application_id)
        return original(self, app)

    monkeypatch.setattr(Cycle, "_blockers", spy)
    s.remove_application("tiny")
    assert [a.application_id for a in s.schedule()] == ["one"]
    assert set(woken) == {"one"}  # the 30 jobs of 8 vcore are not even woken
    woken.clear()
    s.remove_application("holder")
    assert [a.application_id for a in s.schedule()] == ["eight-0"]
    assert sorted(set(woken)) == ["eight-0", "eight-1"]
    for i in (1, 29):
        assert s.why_pending(f"eight-{i}").kind == "queue"


def test_without_any_application_count_nobody_asks_for_one(start_scheduler) -> None:
    s = start_scheduler(PLAIN)
    s.add_node("n1", {"vcore": 64000})
    counts = _counting(s)
    for i in range(5):
        s.submit(f"a{i}", SUE, queue="root.work", asks=[Ask("k", ONE)])
    assert len(s.schedule()) == 5
    assert counts == {"app_refusal": 0, "decide_increase": 5}
    s.update_config(CONFIG)  # two applications each: now each new one is asked about
    s.submit("late", SUE, queue="root.work", asks=[Ask("k", ONE)])
    s.schedule()
    assert counts["app_refusal"] == 1 and s.why_pending("late").limit == "applications"


def _asked(monkeypatch) -> list[str]:
    """The new applications whose counts a cycle asks about (remembered or read)."""
    asked: list[str] = []
    original = Accounting.count_wait

    def spy(self, app):
        asked.append(app.application_id)
        return original(self, app)

    monkeypatch.setattr(Accounting, "count_wait", spy)
    return asked


def test_the_end_of_a_cycle_asks_counts_only_of_what_it_offers(start_scheduler, clock,
                                                                monkeypatch) -> None:
    """The end of a cycle asks a new application's counts only before it offers it a
    reservation or preemption: a backlog that fits no node and is not offered anything (too
    fresh to reserve, then every node reserved) costs no question per cycle."""
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 4000})
    s.submit("first", SUE, queue="root.work", asks=[Ask("f", {"vcore": 4000})])
    for i in range(30):
        s.submit(f"w{i}", UserGroup(f"u{i}"), queue="root.work",
                 asks=[Ask("k", {"vcore": 4000})])
    s.schedule()
    asked = _asked(monkeypatch)
    clock.advance(1)  # nothing moved, and too early to reserve
    s.schedule()
    assert asked == []
    clock.advance(2)  # the first in the walk's order is asked, then reserves the only node
    s.schedule()
    assert asked == ["w0"]
    assert s.application_view("w0")["reservations"] == ["n1|k"]
    clock.advance(1)
    s.schedule()  # every node reserved, nothing may preempt: nothing else is offered
    assert asked == ["w0"]


GROUP_COUNT = CONFIG + """\
              - limit: three for dev
                groups: [dev]
                maxapplications: 3
"""


def _waiting_for_room(s, app_id: str, user: UserGroup) -> None:
    s.submit(app_id, user, queue="root.work", asks=[Ask("k", {"vcore": 4000})])


def test_an_admission_is_read_once_until_a_count_it_read_rises(start_scheduler) -> None:
    """A new application tried in full at every release (jobs of its size ahead of it
    take each room first, then its queue can place nothing) has its user's count, which
    admits it, read once: not again until that user starts an application or the limits
    change. Without the memory, each release cost two reads (the one who starts, and it)."""
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 5000})
    s.submit("holder", UserGroup("bob"), queue="root.work", asks=[Ask("h", {"vcore": 4000})])
    s.schedule()
    counts = _counting(s)
    for i in range(5):
        _waiting_for_room(s, f"a{i}", UserGroup(f"y{i}"))
    _waiting_for_room(s, "big", SUE)
    s.schedule()
    assert counts["app_refusal"] == 6 and s.why_pending("big").kind == "node"
    running = "holder"
    for i in range(5):
        s.remove_application(running)
        assert [a.application_id for a in s.schedule()] == [f"a{i}"]
        running = f"a{i}"
    assert counts["app_refusal"] == 6, "an admission was read again with no count risen"
    assert s.why_pending("big").kind == "node"
    s.submit("sues", SUE, queue="root.work", asks=[Ask("s", ONE)])
    assert [a.application_id for a in s.schedule()] == ["sues"]
    assert counts["app_refusal"] == 6, "sue's admission in this leaf is remembered"
    s.remove_application(running)
    assert [a.application_id for a in s.schedule()] == ["big"]
    assert counts["app_refusal"] == 7, "sue started an application: her count is read again"
    _waiting_for_room(s, "zed", UserGroup("zed"))
    s.schedule()
    assert counts["app_refusal"] == 8 and s.why_pending("zed").kind == "node"
    s.update_config(CONFIG.replace("maxapplications: 2", "maxapplications: 3"))
    s.schedule()
    assert counts["app_refusal"] == 9, "new limits: a remembered admission is read again"


def test_a_count_raised_behind_the_schedulers_back_is_still_enforced(start_scheduler) -> None:
    """An admission remembered by the scheduler, then the user's count filled by the host's
    own call to the user group manager: the increase itself refuses, the application waits
    for the count, and the limit is never exceeded."""
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 4000})
    s.submit("holder", UserGroup("bob"), queue="root.work", asks=[Ask("h", {"vcore": 4000})])
    s.schedule()
    _waiting_for_room(s, "big", SUE)
    s.schedule()
    assert s.why_pending("big").kind == "node"
    ugm = s.ugm()
    for outside in ("o1", "o2"):  # sue's two applications, tracked outside the scheduler
        assert ugm.increase_tracked_resource("root.work", outside, ONE, SUE)
    s.remove_application("holder")
    assert s.schedule() == []
    assert not s.application("big").running
    wait = s.why_pending("big")
    assert (wait.kind, wait.name, wait.limit) == ("user", "sue", "applications")


@pytest.mark.parametrize(("config", "amy_groups", "reads"),
                         [(CONFIG, ("dev",), 2), (GROUP_COUNT, ("dev",), 3),
                          (GROUP_COUNT, ("ops",), 2)],
                         ids=["user counts only", "a group count", "another group's count"])
def test_a_start_forgets_the_admissions_its_counts_gave(start_scheduler, config, amy_groups,
                                                        reads) -> None:
    """Another user's start moves no count of sue's unless it counts for a group whose
    applications a limit counts (a group spans users): then every admission is read
    again."""
    s = start_scheduler(config)
    s.add_node("n1", {"vcore": 4000})
    s.submit("holder", UserGroup("zed"), queue="root.work", asks=[Ask("h", {"vcore": 3000})])
    s.schedule()
    counts = _counting(s)
    _waiting_for_room(s, "big", SUE)
    s.schedule()
    s.submit("amy", UserGroup("amy", amy_groups), queue="root.work", asks=[Ask("a", ONE)])
    assert [a.application_id for a in s.schedule()] == ["amy"]
    assert counts["app_refusal"] == 2
    s.remove_application("amy")
    s.remove_application("holder")
    assert [a.application_id for a in s.schedule()] == ["big"]
    assert counts["app_refusal"] == reads


def test_jobs_placed_whole_held_by_a_queue_maximum_are_not_attempted_again(
        start_scheduler, attempted) -> None:
    """A release under a queue's maximum wakes the jobs placed whole it could make room for;
    once the first has taken that room, the others still held by the same maximum are set
    aside unattempted, keeping their reason."""
    from quotactor.scheduler.objects.application import ALL_OR_NOTHING

    whole = {ALL_OR_NOTHING: "true"}
    s = start_scheduler(PLAIN.replace(
        "          - name: work\n",
        "          - name: work\n            resources:\n              max: {vcore: 4}\n"))
    s.add_node("n1", {"vcore": 64000})
    s.submit("three", UserGroup("bob"), queue="root.work", tags=whole,
             asks=[Ask(f"k{t}", ONE) for t in range(3)])
    s.submit("one", UserGroup("ann"), queue="root.work", asks=[Ask("k", ONE)])
    for i in range(20):
        s.submit(f"w{i}", UserGroup(f"u{i}"), queue="root.work", tags=whole,
                 asks=[Ask("a", ONE), Ask("b", ONE)])
    assert {a.application_id for a in s.schedule()} == {"three", "one"}
    s.schedule()
    attempted.clear()
    s.remove_application("three")
    assert [a.application_id for a in s.schedule()] == ["w0", "w0"]
    assert attempted == ["w0"]
    s.schedule()
    assert s._partition("default").backlog.screened_count() == 0, \
        "jobs set aside were screened by the end of every cycle"
    wait = s.why_pending("w19")
    assert (wait.kind, wait.name, wait.limit) == ("queue", "root.work", "resources")


def test_jobs_held_by_a_full_queue_maximum_are_set_aside_unattempted(start_scheduler,
                                                                      attempted) -> None:
    """A release under a queue's maximum wakes every job of a size it makes room for; once
    that room is taken, the queue fits nothing more, and the woken jobs still held by the
    same maximum are set aside as they were (token renewed: no cycle's end screens them),
    not attempted one by one."""
    s = start_scheduler(PLAIN.replace(
        "          - name: work\n",
        "          - name: work\n            resources:\n              max: {vcore: 4}\n"))
    s.add_node("n1", {"vcore": 64000})
    s.submit("three", UserGroup("bob"), queue="root.work",
             asks=[Ask(f"k{t}", ONE) for t in range(3)])
    s.submit("one", UserGroup("ann"), queue="root.work", asks=[Ask("k", ONE)])
    s.schedule()
    s.schedule()
    for i in range(20):
        s.submit(f"w{i}", UserGroup(f"u{i}"), queue="root.work", asks=[Ask("a", ONE)])
    s.schedule()
    assert s.why_pending("w0").kind == "queue"
    attempted.clear()
    s.remove_application("three")
    assert [a.application_id for a in s.schedule()] == ["w0", "w1", "w2"]
    assert attempted == ["w0", "w1", "w2"]
    s.schedule()
    assert s._partition("default").backlog.screened_count() == 0, \
        "jobs set aside were screened by the end of every cycle"
    for i in (3, 19):
        wait = s.why_pending(f"w{i}")
        assert (wait.kind, wait.name, wait.limit) == ("queue", "root.work", "resources")


ONE_FOR_SUE = """
partitions:
  - name: default
    placementrules:
      - name: provided
    queues:
      - name: root
        submitacl: '*'
        limits:
          - limit: one for sue
            users: [sue]
            maxapplications: 1
        queues:
          - name: work
            resources:
              max: {vcore: 4}
          - name: other
"""
"""sue runs one application at a time; root.work holds 4 vcores at most."""


@pytest.mark.parametrize("tasks", [1, 2], ids=["one ask", "placed whole"])
def test_a_new_job_woken_from_a_queue_maximum_meets_its_counts_first(start_scheduler,
                                                                     tasks) -> None:
    """A new job set aside for a queue's maximum whose user has since reached
    `maxApplications` is not set aside again for the maximum: an attempt asks the counts
    first (YuniKorn's `CanRunApp`), so that is its reason now."""
    from quotactor.scheduler.objects.application import ALL_OR_NOTHING

    s = start_scheduler(ONE_FOR_SUE)
    s.add_node("n1", {"vcore": 64000})
    tags = {ALL_OR_NOTHING: "true"} if tasks > 1 else {}
    size = {"vcore": 2000 // tasks}
    for holder in ("a", "b"):
        s.submit(holder, UserGroup("bob"), queue="root.work", asks=[Ask("k", {"vcore": 2000})])
    s.schedule()
    for app_id, user in (("w", UserGroup("ann")), ("s1", SUE)):
        s.submit(app_id, user, queue="root.work", tags=tags,
                 asks=[Ask(f"k{t}", size) for t in range(tasks)])
    s.schedule()
    assert s.why_pending("s1").kind == "queue"
    s.submit("s0", SUE, queue="root.other", asks=[Ask("k", ONE)])
    assert {a.application_id for a in s.schedule()} == {"s0"}
    s.remove_application("a")
    assert {a.application_id for a in s.schedule()} == {"w"}
    wait = s.why_pending("s1")
    assert (wait.kind, wait.name, wait.limit) == ("user", "sue", "applications")


def test_a_job_behind_a_held_head_meets_its_counts_first(start_scheduler) -> None:
    """Jobs of one size that a queue's maximum holds wait in a line; when its head is held
    again, one behind it whose user has since reached `maxApplications` is looked at all the
    same and records the count, as it would had every job of the line been woken."""
    s = start_scheduler(ONE_FOR_SUE)
    s.add_node("n1", {"vcore": 64000})
    for holder in ("a", "b"):
        s.submit(holder, UserGroup("bob"), queue="root.work", asks=[Ask("k", {"vcore": 2000})])
    s.schedule()
    s.submit("x", UserGroup("ann"), queue="root.work", asks=[Ask("k", {"vcore": 2000})])
    for app_id, user in (("w", UserGroup("carl")), ("s1", SUE)):
        s.submit(app_id, user, queue="root.work", asks=[Ask("k", ONE)])
    s.schedule()
    assert s.why_pending("s1").kind == "queue"
    s.submit("s0", SUE, queue="root.other", asks=[Ask("k", ONE)])
    assert {a.application_id for a in s.schedule()} == {"s0"}
    s.remove_application("a")
    assert {a.application_id for a in s.schedule()} == {"x"}
    assert s.why_pending("w").kind == "queue"
    wait = s.why_pending("s1")
    assert (wait.kind, wait.name, wait.limit) == ("user", "sue", "applications")

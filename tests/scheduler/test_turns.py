"""A user's alike new applications take turns: only the first of them is tried.

Alike: new applications of one user in one leaf asking the same (sizes, priorities, whether
they may preempt), none for a given node and none of a gang. Whatever holds the first back (a
count, a user's or group's limit, a queue's, full nodes) holds the others back too, so trying
them places nothing more; they wait untried with a reason of their own (`Wait.is_turn`), and
the next one's turn comes when the first starts or goes away. What changes is what the end of a
cycle offers: only the first of alike applications may reserve a node or preempt.
"""

from __future__ import annotations

import random
import textwrap

import pytest

from quotactor import UserGroup
from quotactor.scheduler import Ask, SchedulerOptions, VirtualClock
from quotactor.scheduler.booking.turns import Turns

LIMITS = """
partitions:
  - name: default
    placementrules:
      - name: provided
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: work
            maxapplications: 7
            limits:
              - limit: two each
                users: ["*"]
                maxapplications: 2
                maxresources: {vcore: "20"}
              - limit: dev group
                groups: [dev]
                maxapplications: 3
          - name: capped
            resources:
              max: {vcore: "12"}
"""

SUE = UserGroup("sue", ("dev",))
ONE = {"vcore": 1000}
GROUPS = {"sue": ("dev",), "bob": ("dev",), "kim": ("ops",)}


def _ops(seed: int, steps: int) -> list[tuple[str, ...]]:
    """Random submissions (few sizes, so that many are alike), ends and removals, new
    configurations (the leaf's order, the users' count), cycles; the clock stands still, so no
    ask waits long enough to reserve a node."""
    rng = random.Random(seed)
    ops: list[tuple[str, ...]] = []
    for step in range(steps):
        roll = rng.random()
        if roll < 0.55:
            queue = rng.choice(["root.work", "root.work", "root.capped"])
            size = str(rng.choice([1000, 2000, 8000]))
            ops.append(("submit", f"j{step}", rng.choice(list(GROUPS)), queue, size))
        elif roll < 0.75:
            ops.append(("end-running", str(rng.random())))
        elif roll < 0.85:
            ops.append(("remove-pending", str(rng.random())))
        elif roll < 0.88:
            ops.append(("reload", rng.choice(["fifo", "fair"]), rng.choice(["2", "3"])))
        if rng.random() < 0.5:
            ops.append(("schedule",))
    return [*ops, ("schedule",)]


def _play(start_scheduler, ops: list[tuple[str, ...]], exhaustive: bool = False
          ) -> tuple[list[list[str]], int]:
    """Run `ops`: every cycle's allocations in order, and how many reasons were turns."""
    s = start_scheduler(LIMITS, clock=VirtualClock(0.0),
                        options=SchedulerOptions(exhaustive_retries=exhaustive))
    s.add_node("n1", {"vcore": 16000})
    s.add_node("n2", {"vcore": 8000})
    made: list[list[str]] = []
    turns = 0
    for op in ops:
        if op[0] == "submit":
            _, app_id, user, queue, size = op
            s.submit(app_id, UserGroup(user, GROUPS[user]), queue=queue,
                     asks=[Ask("k", {"vcore": int(size)})])
        elif op[0] == "reload":  # another order in the leaf, another count: all tried anew
            _, policy, count = op
            sort = f"            properties: {{application.sort.policy: {policy}}}\n"
            s.update_config(textwrap.dedent(LIMITS).replace(
                "maxapplications: 2", f"maxapplications: {count}").replace(
                "          - name: work\n", "          - name: work\n" + sort))
        elif op[0] in ("end-running", "remove-pending"):
            running = op[0] == "end-running"
            apps = [a.application_id for a in s.applications()
                    if a.running == running and (running or a.pending)]
            if apps:
                s.remove_application(apps[int(float(op[1]) * len(apps))])
        else:
            made.append([a.application_id for a in s.schedule()])
            waits = (s.why_pending(a.application_id) for a in s.applications())
            turns += sum(1 for w in waits if w is not None and w.is_turn)
    return made, turns


@pytest.mark.parametrize("seed", range(8))
def test_turns_change_no_placement(start_scheduler, monkeypatch, seed: int) -> None:
    """With every alike application tried (turns switched off), the same applications
    start in the same cycles, in the same order."""
    ops = _ops(seed, 160)
    with_turns, turns = _play(start_scheduler, ops)
    assert turns > 0, "alike applications waited their turn"
    assert _play(start_scheduler, ops, exhaustive=True)[0] == with_turns
    with monkeypatch.context() as m:
        m.setattr(Turns, "ahead_of", lambda self, app: None)
        without, none = _play(start_scheduler, ops)
    assert none == 0
    assert without == with_turns


def test_alike_applications_wait_untried_behind_the_first(start_scheduler,
                                                          looked_at) -> None:
    s = start_scheduler(LIMITS)
    s.add_node("n1", {"vcore": 64000})
    for i in range(400):
        s.submit(f"a{i}", SUE, queue="root.work", asks=[Ask("k", ONE)])
    assert [a.application_id for a in s.schedule()] == ["a0", "a1"]
    first = s.why_pending("a2")
    assert first is not None and (first.kind, first.limit) == ("user", "applications")
    last = s.why_pending("a399")
    assert last is not None and last.is_turn and not last.is_count
    assert str(last) == ("waits its turn at root.work: an earlier application of sue asking "
                         "the same goes first")
    looked_at.clear()
    calls = s.ugm_calls
    s.remove_application("a0")
    assert [a.application_id for a in s.schedule()] == ["a2"]
    assert set(looked_at) == {"a2", "a3"}, "a3's turn came; a4 and after wait behind it"
    assert s.ugm_calls - calls == 4  # a0 leaves; a2 may start and starts; a3 may not
    assert s.why_pending("a3").limit == "applications"
    assert s.why_pending("a4").is_turn


def test_the_turn_passes_when_the_first_goes_away(start_scheduler) -> None:
    s = start_scheduler(LIMITS)
    s.add_node("n1", {"vcore": 64000})
    for i in range(5):
        s.submit(f"a{i}", SUE, queue="root.work", asks=[Ask("k", ONE)])
    s.schedule()
    assert s.why_pending("a3").is_turn
    s.remove_application("a2")
    assert s.schedule() == []
    assert s.why_pending("a3").limit == "applications", "a3 leads now, held by the count"
    assert s.why_pending("a4").is_turn
    s.remove_application("a0")
    assert [a.application_id for a in s.schedule()] == ["a3"]


def test_applications_asking_otherwise_are_not_alike(start_scheduler) -> None:
    """Another size, another user, another queue or another priority: each is tried."""
    s = start_scheduler(LIMITS)
    s.add_node("n1", {"vcore": 4000})
    s.submit("big", SUE, queue="root.work", asks=[Ask("k", {"vcore": 8000})])
    s.submit("big-2", SUE, queue="root.work", asks=[Ask("k", {"vcore": 8000})])
    s.submit("small", SUE, queue="root.work", asks=[Ask("k", ONE)])
    s.submit("urgent", SUE, queue="root.work", asks=[Ask("k", {"vcore": 8000}, priority=5)])
    s.submit("bobs", UserGroup("bob", ("dev",)), queue="root.work",
             asks=[Ask("k", {"vcore": 8000})])
    assert sorted(a.application_id for a in s.schedule()) == ["small"]
    assert s.why_pending("big-2").is_turn
    for app_id in ("big", "urgent", "bobs"):
        assert s.why_pending(app_id).kind == "node", app_id


def test_alike_applications_ask_the_same_number_of_each_size(start_scheduler) -> None:
    """Equal asks in a row are counted: three tasks of one size are alike three such tasks,
    not two of them, nor three in another order of sizes."""
    s = start_scheduler(LIMITS)
    s.add_node("n1", {"vcore": 500})

    def tasks(*sizes: int) -> list[Ask]:
        return [Ask(f"t{i}", {"vcore": size}) for i, size in enumerate(sizes)]

    s.submit("first", SUE, queue="root.work", asks=tasks(1000, 1000, 2000))
    s.submit("same", SUE, queue="root.work", asks=tasks(1000, 1000, 2000))
    s.submit("fewer", SUE, queue="root.work", asks=tasks(1000, 2000))
    s.submit("more", SUE, queue="root.work", asks=tasks(1000, 1000, 1000, 2000))
    s.submit("reordered", SUE, queue="root.work", asks=tasks(2000, 1000, 1000))
    assert s.schedule() == []
    assert s.why_pending("same").is_turn
    for app_id in ("first", "fewer", "more", "reordered"):
        assert s.why_pending(app_id).kind == "node", app_id


ROOM = LIMITS.split("            maxapplications: 7")[0] + "          - name: capped\n"


def test_only_the_first_of_alike_applications_reserves_a_node(start_scheduler,
                                                             clock) -> None:
    s = start_scheduler(ROOM)
    for node in ("n1", "n2"):
        s.add_node(node, {"vcore": 4000})
    s.submit("holder", UserGroup("bob"), queue="root.work", asks=[Ask("h", {"vcore": 3000}),
                                                                  Ask("i", {"vcore": 3000})])
    s.schedule()
    for i in range(3):
        s.submit(f"big-{i}", SUE, queue="root.work", asks=[Ask("k", {"vcore": 4000})])
    s.schedule()
    clock.advance(5)
    s.schedule()
    assert s.application_view("big-0")["reservations"] != []
    for app_id in ("big-1", "big-2"):
        assert s.application_view(app_id)["reservations"] == []
        assert s.why_pending(app_id).is_turn


def test_applications_that_went_away_leave_the_turns(start_scheduler) -> None:
    """Alike applications removed while they wait their turn are dropped by the backlog's
    sweep, even when their line never moves again."""
    s = start_scheduler(LIMITS)
    s.add_node("n1", {"vcore": 64000})
    turns = s._partition("default").backlog.turns
    for i in range(2):
        s.submit(f"runs-{i}", SUE, queue="root.work", asks=[Ask("k", ONE)])
    for i in range(3000):
        s.submit(f"a{i}", SUE, queue="root.work", asks=[Ask("k", ONE)])
        s.schedule()
        if i:
            assert s.why_pending(f"a{i}").is_turn
            s.remove_application(f"a{i}")
    assert turns.listed() <= 2048, "removed applications stayed in the turns"

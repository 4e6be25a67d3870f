"""Cycle listeners: told every cycle's allocations; a failing one does not fail the cycle."""

from __future__ import annotations

from quotactor import UserGroup
from quotactor.scheduler import Allocation, Ask, Scheduler


def test_listeners_hear_each_cycle_until_removed() -> None:
    heard: list[list[str]] = []
    with Scheduler.start() as scheduler:
        scheduler.add_node("n1", {"vcore": 4000})
        remove = scheduler.add_cycle_listener(lambda made: heard.append([a.key for a in made]))
        scheduler.submit("app", UserGroup("sue", []), queue="root.a",
                         asks=[Ask("k1", {"vcore": 1000}), Ask("k2", {"vcore": 1000})])
        scheduler.schedule()
        scheduler.schedule()
        remove()
        remove()
        scheduler.add_ask("app", Ask("k3", {"vcore": 1000}))
        scheduler.schedule()
    assert heard == [["k1", "k2"], []]


def test_a_failing_listener_leaves_the_cycle_and_the_others_alone() -> None:
    heard: list[Allocation] = []

    def broken(made: list[Allocation]) -> None:
        raise RuntimeError("observer bug")

    with Scheduler.start() as scheduler:
        scheduler.add_node("n1", {"vcore": 4000})
        scheduler.add_cycle_listener(broken)
        scheduler.add_cycle_listener(heard.extend)
        scheduler.submit("app", UserGroup("sue", []), queue="root.a",
                         asks=[Ask("k1", {"vcore": 1000})])
        made = scheduler.schedule()
        assert [a.key for a in made] == ["k1"] and heard == made
        assert scheduler.cycles == 1
        assert scheduler.application("app").allocated == {"vcore": 1000}

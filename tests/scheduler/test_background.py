"""The background scheduling loop: runs cycles on its own, stops without leaving a thread."""

from __future__ import annotations

import threading

import pytest

from quotactor import UserGroup
from quotactor.scheduler import Ask

SUE = UserGroup("sue", ["dev"])


def scheduler_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name == "quotactor-scheduler"]


def test_the_background_loop_places_work_without_being_asked(start_scheduler) -> None:
    s = start_scheduler()
    s.add_node("n1", {"vcore": 4000})
    s.start_background(interval=0.001)
    s.submit("a1", SUE, queue="root.q", asks=[Ask("k1", {"vcore": 1000})])
    assert s.wait_for_cycles(s.cycles + 2, timeout=10)
    assert s.application("a1").allocated == {"vcore": 1000}
    with pytest.raises(RuntimeError):
        s.start_background()
    s.stop_background()
    assert scheduler_threads() == []
    cycles = s.cycles
    s.schedule()
    assert s.cycles == cycles + 1


def test_stopping_the_scheduler_stops_its_loop(start_scheduler) -> None:
    s = start_scheduler()
    s.start_background(interval=0.001)
    assert s.wait_for_cycles(1, timeout=10)
    s.stop()
    assert scheduler_threads() == []
    s.stop()


def test_waiting_for_cycles_that_never_come_times_out(start_scheduler) -> None:
    s = start_scheduler()
    assert not s.wait_for_cycles(1, timeout=0.01)

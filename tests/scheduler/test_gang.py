"""Gang scheduling: placeholders, replacement, and the timeout cases of seed 000."""

from __future__ import annotations

from quotactor import Resource, UserGroup
from quotactor.scheduler import ApplicationState, Ask, Gang, PlaceholderData, TaskGroup
from quotactor.scheduler.objects.gang import GangStyle

S = ApplicationState
SUE = UserGroup("sue", ["dev"])
ONE = {"vcore": 1000}
TWO = {"vcore": 2000}
CONFIG = """
partitions:
  - name: default
    placementrules: [{name: provided, create: true}]
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: capped
            resources: {max: {vcore: 3}}
"""


def gang(count: int = 3, size: dict[str, int] = ONE, style: GangStyle = "Soft",
         timeout: float = 600) -> Gang:
    return Gang((TaskGroup("workers", count, size),), style=style, timeout=timeout)


def usage(s, user: str = "sue") -> dict[str, int] | None:
    found = s.ugm().get_user_resources(user)
    return None if found is None else dict(found)


def running(s, user: str = "sue") -> list[str]:
    found = s.ugm().user_usage(user)
    return [] if found is None else found["queues"].get("runningApplications", [])


def test_placeholders_reserve_the_gang_and_count_from_the_first_one(start_scheduler) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 2000})
    s.submit("g1", SUE, queue="root.q", gang=gang())
    assert len(s.schedule()) == 2
    info = s.application("g1")
    assert info.state is S.ACCEPTED and info.placeholder_allocated == TWO
    assert running(s) == ["g1"] and usage(s) == TWO
    s.add_node("n2", {"vcore": 2000})
    s.schedule()
    assert s.application("g1").state is S.STARTING


def test_real_asks_replace_placeholders_and_usage_follows_the_size_difference(
    start_scheduler,
) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 8000})
    s.submit("g1", SUE, queue="root.q", gang=gang(2, TWO))
    s.schedule()
    assert usage(s) == {"vcore": 4000}
    s.add_ask("g1", Ask("r1", {"vcore": 1500}, task_group="workers"))
    s.add_ask("g1", Ask("r2", TWO, task_group="workers"))
    s.schedule()
    info = s.application("g1")
    assert {a.key for a in info.allocations} == {"r1", "r2"}
    assert all(a.placeholder_used for a in info.allocations)
    assert usage(s) == {"vcore": 3500}
    assert s.queue("root.q").allocated == {"vcore": 3500}
    assert s.nodes_view()[0]["allocated"] == {"vcore": 3500}
    assert info.placeholder_data == (PlaceholderData("workers", 2, Resource(TWO), replaced=2),)
    assert info.state is S.RUNNING


def test_once_every_placeholder_is_replaced_the_timeout_does_nothing(start_scheduler,
                                                                     clock) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 8000})
    s.submit("g1", SUE, queue="root.q", gang=gang(2, ONE, timeout=60))
    s.schedule()
    for key in ("r1", "r2"):
        s.add_ask("g1", Ask(key, ONE, task_group="workers"))
    s.schedule()
    clock.advance(120)
    s.schedule()
    info = s.application("g1")
    assert info.state is S.RUNNING and len(info.allocations) == 2
    assert info.placeholder_data[0].timed_out == 0


def test_a_timeout_after_some_replacements_releases_the_rest(start_scheduler, clock) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 8000})
    s.submit("g1", SUE, queue="root.q", gang=gang(3, ONE, timeout=60))
    s.schedule()
    s.add_ask("g1", Ask("r1", ONE, task_group="workers"))
    s.schedule()
    clock.advance(60)
    s.schedule()
    info = s.application("g1")
    assert [a.key for a in info.allocations] == ["r1"]
    assert info.state is S.STARTING
    assert info.placeholder_data == (PlaceholderData("workers", 3, Resource(ONE), 1, 2),)
    assert usage(s) == ONE and running(s) == ["g1"]


def test_a_soft_gang_that_times_out_continues_as_a_normal_application(start_scheduler,
                                                                       clock) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 2000})
    s.submit("g1", SUE, queue="root.q", gang=gang(3, ONE, timeout=60),
             asks=[Ask("r1", ONE, task_group="workers")])
    s.schedule()
    assert usage(s) == TWO
    clock.advance(60)
    s.run_timers()
    info = s.application("g1")
    assert info.state is S.ACCEPTED
    assert info.allocations == () and [a.key for a in info.asks] == ["r1"]
    assert info.placeholder_data[0].timed_out == 3
    assert usage(s) == {} and running(s) == ["g1"], "still counts: its real ask waits"
    assert [a.key for a in s.schedule()] == ["r1"]
    assert s.application("g1").state is S.STARTING
    s.release("g1", "r1")
    assert running(s) == [] and usage(s) is None


def test_a_soft_gang_without_real_asks_stops_counting_when_it_times_out(start_scheduler,
                                                                        clock) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 2000})
    s.submit("g1", SUE, queue="root.q", gang=gang(3, ONE, timeout=60))
    s.schedule()
    clock.advance(60)
    s.schedule()
    assert s.application("g1").state is S.ACCEPTED
    assert running(s) == [] and usage(s) is None
    assert s.queue("root.q").running_applications == frozenset()


def test_a_hard_gang_that_times_out_fails(start_scheduler, clock) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 2000})
    s.submit("g1", SUE, queue="root.q", gang=gang(3, ONE, style="Hard", timeout=60),
             asks=[Ask("r1", ONE, task_group="workers")])
    s.schedule()
    clock.advance(60)
    s.run_timers()
    info = s.application("g1")
    assert info.state is S.FAILED
    assert info.asks == () and info.allocations == ()
    assert running(s) == [] and usage(s) is None
    assert s.queue("root").allocated == {}


def test_a_real_ask_larger_than_its_placeholders_is_placed_on_its_own(start_scheduler) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 8000})
    s.submit("g1", SUE, queue="root.q", gang=gang(2, ONE))
    s.schedule()
    s.add_ask("g1", Ask("big", {"vcore": 3000}, task_group="workers"))
    s.schedule()
    info = s.application("g1")
    assert [a.key for a in info.allocations] == ["big"]
    assert not info.allocations[0].placeholder_used
    assert info.placeholder_data[0].timed_out == 2
    assert usage(s) == {"vcore": 3000}


def test_a_gang_larger_than_its_queue_maximum_is_rejected(start_scheduler) -> None:
    s = start_scheduler(CONFIG)
    info = s.submit("g1", SUE, queue="root.capped", gang=gang(4, ONE))
    assert info.state is S.REJECTED
    assert "larger than the maximum of queue root.capped" in info.rejected_message


def test_leftover_placeholders_go_when_the_application_completes(start_scheduler,
                                                                 clock) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 8000})
    s.submit("g1", SUE, queue="root.q", gang=gang(3, ONE))
    s.schedule()
    s.add_ask("g1", Ask("r1", ONE, task_group="workers"))
    s.schedule()
    s.release("g1", "r1")
    assert s.application("g1").state is S.COMPLETING
    assert usage(s) == TWO and running(s) == ["g1"]
    clock.advance(30)
    s.run_timers()
    assert s.application("g1").state is S.COMPLETED
    assert usage(s) is None and s.queue("root").allocated == {}


def test_the_rest_view_shows_placeholder_progress(start_scheduler) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 8000})
    s.submit("g1", SUE, queue="root.q", gang=gang(2, ONE))
    s.schedule()
    view = s.application_view("g1")
    assert view["placeholderData"] == [{"taskGroupName": "workers", "count": 2,
                                        "minResource": ONE, "replaced": 0, "timedout": 0}]
    assert all(a["placeholder"] for a in view["allocations"])


def test_the_next_placeholder_timeout_is_that_of_a_gang_still_holding_placeholders(
    start_scheduler, clock,
) -> None:
    s = start_scheduler(CONFIG)
    s.add_node("n1", {"vcore": 8000})
    assert s.next_placeholder_timeout() is None
    s.submit("g1", SUE, queue="root.q", gang=gang(2, ONE, timeout=60))
    s.schedule()
    assert s.next_placeholder_timeout() == clock.now() + 60
    clock.advance(10)
    for key in ("r1", "r2"):
        s.add_ask("g1", Ask(key, ONE, task_group="workers"))
    s.schedule()  # every placeholder replaced: the timer is cleared
    assert s.next_placeholder_timeout() is None
    assert s.next_timer() is not None, "the state timers are not placeholder timers"

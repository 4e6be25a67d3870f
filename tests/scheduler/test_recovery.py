"""Recovery: a new scheduler fed the nodes and allocations of a running one ends up equal."""

from __future__ import annotations

import random

from quotactor import UserGroup
from quotactor.scheduler import ApplicationState, Ask, Gang, TaskGroup

S = ApplicationState
ONE = {"vcore": 1000}
CONFIG = """
partitions:
  - name: default
    placementrules:
      - name: provided
        create: true
      - name: user
        create: true
        parent: {name: fixed, value: root.users}
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: team
            resources: {max: {vcore: 12}}
            limits:
              - limit: dev
                groups: [dev]
                maxresources: {vcore: 8}
              - limit: everyone else
                groups: ['*']
                maxresources: {vcore: 6}
          - name: users
            parent: true
            childtemplate:
              resources: {max: {vcore: 6}}
"""


def _unreserved(nodes: list[dict]) -> list[dict]:
    """Reservations are not part of what a shim re-sends: the recovered scheduler makes its
    own in its next cycle (YuniKorn does not recover them either)."""
    return [{k: v for k, v in n.items() if k not in ("isReserved", "reservations")}
            for n in nodes]


def same_state(old, new) -> None:
    """Tracker state, queue usage and application states all equal."""
    assert new.ugm().users_usage() == old.ugm().users_usage()
    assert new.ugm().groups_usage() == old.ugm().groups_usage()
    assert new.queues_view() == old.queues_view()
    assert _unreserved(new.nodes_view()) == _unreserved(old.nodes_view())
    active = {a.application_id: a.state for a in old.applications(state="active")}
    assert {a.application_id: a.state for a in new.applications(state="active")} == active
    for app_id in active:
        assert new.application(app_id).running == old.application(app_id).running, app_id
        assert new.application(app_id).allocations == old.application(app_id).allocations


def test_a_restarted_scheduler_rebuilds_the_same_state(start_scheduler, clock) -> None:
    old = start_scheduler(CONFIG)
    for node in ("n1", "n2", "n3"):
        old.add_node(node, {"vcore": 4000})
    sue, bob, ann = UserGroup("sue", ["dev"]), UserGroup("bob", ["dev", "ops"]), \
        UserGroup("ann", ["ops"])
    old.submit("pending", ann, queue="root.team", asks=[Ask("k", {"vcore": 9000})])
    old.submit("starting", sue, queue="root.team", asks=[Ask("k", ONE)])
    old.submit("running", bob, queue="root.team", asks=[Ask("k1", ONE), Ask("k2", ONE)])
    old.submit("waiting", sue, asks=[Ask("k1", ONE), Ask("k2", {"vcore": 5000})])
    old.submit("restarted", ann, queue="root.team", asks=[Ask("k", ONE)])
    old.submit("gang", bob, queue="root.team",
               gang=Gang((TaskGroup("tg", 3, ONE),), timeout=600))
    old.schedule()
    clock.advance(10)
    old.add_ask("gang", Ask("real", ONE, task_group="tg"))
    old.release("restarted", "k")
    old.add_ask("restarted", Ask("again", {"vcore": 9000}))
    old.submit("completing", ann, queue="root.team", asks=[Ask("k", ONE)])
    old.schedule()
    old.release("completing", "k")
    old.release("waiting", "k1")
    states = {a.application_id: a.state for a in old.applications()}
    assert states == {
        "pending": S.ACCEPTED, "starting": S.STARTING, "running": S.RUNNING,
        "waiting": S.STARTING, "restarted": S.RUNNING, "gang": S.STARTING,
        "completing": S.COMPLETING,
    }
    assert old.application("restarted").running and not old.application("restarted").allocated
    new = start_scheduler(CONFIG)
    new.recover(old.recovery_feed())
    same_state(old, new)
    for s in (old, new):
        for app in list(s.applications(state="active")):
            s.remove_application(app.application_id)
    same_state(old, new)


def test_recovery_survives_limits_lowered_below_current_usage(start_scheduler) -> None:
    old = start_scheduler(CONFIG)
    old.add_node("n1", {"vcore": 16000})
    sue = UserGroup("sue", ["dev"])
    old.submit("a1", sue, queue="root.team", asks=[Ask(f"k{i}", ONE) for i in range(8)])
    old.schedule()
    lowered = CONFIG.replace("maxresources: {vcore: 8}", "maxresources: {vcore: 2}")
    old.update_config(lowered)
    new = start_scheduler(lowered)
    new.recover(old.recovery_feed())
    same_state(old, new)
    new.add_ask("a1", Ask("more", ONE))
    assert new.schedule() == []
    assert new.why_pending("a1").kind == "group"


def test_random_work_recovers_to_the_same_state(start_scheduler, clock,
                                                assert_books) -> None:
    rnd = random.Random(7)
    old = start_scheduler(CONFIG)
    for i in range(4):
        old.add_node(f"n{i}", {"vcore": 4000})
    users = [UserGroup(f"u{i}", [rnd.choice(["dev", "ops", "qa"])]) for i in range(6)]
    live: list[str] = []
    for step in range(60):
        clock.advance(rnd.choice([0.5, 5, 40]))
        roll = rnd.random()
        if roll < 0.4:
            app = f"app{step}"
            queue = rnd.choice(["root.team", ""])
            asks = [Ask(f"k{j}", {"vcore": rnd.choice([500, 1000, 2000])},
                        priority=rnd.randrange(3)) for j in range(rnd.randrange(1, 4))]
            if old.submit(app, rnd.choice(users), queue=queue, asks=asks).state \
                    is not S.REJECTED:
                live.append(app)
        elif roll < 0.7 and live:
            app = rnd.choice(live)
            info = old.application(app)
            if info.allocations:
                old.release(app, rnd.choice(info.allocations).key)
        elif live:
            app = rnd.choice(live)
            if old.application(app).state in (S.ACCEPTED, S.STARTING, S.RUNNING, S.COMPLETING):
                old.add_ask(app, Ask(f"x{step}", {"vcore": 1000}))
        old.schedule()
    new = start_scheduler(CONFIG)
    new.recover(old.recovery_feed())
    same_state(old, new)
    reserved = any(n["isReserved"] for n in old.nodes_view())
    old.schedule()
    new.schedule()
    if reserved:
        # The old scheduler's reservations steer its next cycle; the new one has none yet,
        # so the two may place differently: both must still keep their books.
        assert_books(old)
        assert_books(new)
    else:
        same_state(old, new)


PREEMPTION = """
partitions:
  - name: default
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: high
            resources: {guaranteed: {vcore: 4}}
            properties: {preemption.delay: 10s}
          - name: low
"""


def _preempting(start_scheduler, clock, **options):
    """A scheduler whose high-queue ask preempted l3 and waits for the shim's release."""
    from quotactor.scheduler import SchedulerOptions

    old = start_scheduler(PREEMPTION, options=SchedulerOptions(**options))
    old.add_node("n1", {"vcore": 4000})
    old.submit("low-app", UserGroup("bob", ["ops"]), queue="root.low")
    for i in range(4):
        old.add_ask("low-app", Ask(f"l{i}", ONE))
        old.schedule()
        clock.advance(1)
    old.submit("high-app", UserGroup("sue", ["dev"]), queue="root.high", asks=[Ask("h", ONE)])
    clock.advance(10)
    old.schedule()
    assert [r.allocation_key for r in old.release_requests()] == ["l3"]
    return old


def test_a_victim_awaiting_its_release_comes_back_as_a_running_allocation(
        start_scheduler, clock, assert_books) -> None:
    """As in YuniKorn: the core's preemption state is memory only, and the shim re-reports a
    pod that is still terminating as running. Usage is the same; the victim's late release
    then lets the preemptor in, and nothing is counted twice."""
    old = _preempting(start_scheduler, clock, shim_confirms_releases=True)
    feed = old.recovery_feed()
    (low,) = [a for a in feed.partitions[0].applications if a.application_id == "low-app"]
    assert not any(a.preempted for a in low.allocations)
    new = start_scheduler(PREEMPTION)
    new.recover(feed)
    assert new.queue("root.low").allocated == old.queue("root.low").allocated
    assert not any(a["preempted"] for a in new.application_view("low-app")["allocations"])
    assert new.application_view("high-app")["hasReserved"] is False
    assert new.nodes_view()[0]["isReserved"] is False
    assert_books(new)
    # the preemptor's delay counts from when it was asked, not from the restart: it preempts
    # at once, and picks the same newest allocation, which the shim is already stopping
    new.schedule()
    assert [r.allocation_key for r in new.release_requests()] == ["l3"]
    new.release("low-app", "l3")  # the shim's confirmation, late
    new.schedule()
    assert new.application_view("high-app")["allocations"][0]["nodeId"] == "n1"
    assert new.queue("root.low").allocated == {"vcore": 3000}
    assert_books(new)


def test_a_marked_allocation_in_a_hand_made_feed_is_recovered_unmarked(
        start_scheduler, clock) -> None:
    import dataclasses

    old = _preempting(start_scheduler, clock)
    feed = old.recovery_feed()
    part = feed.partitions[0]
    apps = tuple(dataclasses.replace(a, allocations=tuple(
        dataclasses.replace(x, preempted=True) for x in a.allocations))
        for a in part.applications)
    new = start_scheduler(PREEMPTION)
    new.recover(dataclasses.replace(feed, partitions=(dataclasses.replace(
        part, applications=apps),)))
    assert not any(a["preempted"] for a in new.application_view("low-app")["allocations"])
    assert new.queues_view()["children"][1]["preemptingResource"] == {}


def test_ask_times_survive_a_restart_and_a_bad_count_is_refused(start_scheduler,
                                                                clock) -> None:
    import dataclasses

    import pytest

    from quotactor.core.errors import InvalidRequest

    old = start_scheduler(PREEMPTION)
    old.add_node("n1", {"vcore": 1000})
    old.submit("app", UserGroup("sue", ["dev"]), queue="root.low", asks=[Ask("k", ONE)])
    asked = clock.now()
    clock.advance(100)
    feed = old.recovery_feed()
    (spec,) = feed.partitions[0].applications
    assert spec.asked_at == (asked,)
    new = start_scheduler(PREEMPTION)
    new.recover(feed)
    assert new.application_view("app")["requests"][0]["requestTime"] == \
        old.application_view("app")["requests"][0]["requestTime"]
    bad = dataclasses.replace(feed, partitions=(dataclasses.replace(
        feed.partitions[0], applications=(dataclasses.replace(spec, asked_at=(1.0, 2.0)),)),))
    other = start_scheduler(PREEMPTION)
    with pytest.raises(InvalidRequest, match="2 ask times for 1 asks"):
        other.recover(bad)
    assert other.nodes_view() == [] and other.applications() == []

"""A seeded storm of applications: books stay consistent throughout and balance to zero."""

from __future__ import annotations

import random
from collections import defaultdict

import pytest

from quotactor import Resource, UserGroup
from quotactor.scheduler import ApplicationState, Ask, Gang, TaskGroup

S = ApplicationState
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
          - name: batch
            maxapplications: 40
            resources: {max: {vcore: 60, memory: 600}}
            properties: {application.sort.policy: fair}
            limits:
              - limit: heavy user
                users: [u0]
                maxresources: {vcore: 10}
                maxapplications: 5
              - limit: any user
                users: ['*']
                maxresources: {vcore: 20}
              - limit: dev
                groups: [dev]
                maxresources: {vcore: 30}
          - name: interactive
            resources: {guaranteed: {vcore: 20}}
            limits:
              - limit: ops
                groups: [ops]
                maxapplications: 8
          - name: users
            parent: true
            childtemplate:
              resources: {max: {vcore: 12}}
"""
RELOADED = CONFIG.replace("maxresources: {vcore: 10}", "maxresources: {vcore: 4}").replace(
    "maxapplications: 40", "maxapplications: 60")


def check_books(s) -> None:
    """Queues, nodes and trackers agree with the applications' own books."""
    apps = s.applications(state="active")
    by_queue: dict[str, Resource] = defaultdict(Resource)
    by_user: dict[str, Resource] = defaultdict(Resource)
    for app in apps:
        held = app.allocated + app.placeholder_allocated
        by_user[app.user.user] = by_user[app.user.user] + held
        path = app.queue_path
        while path:
            by_queue[path] = by_queue[path] + held
            path = path.rpartition(".")[0]
    for queue in s.queues():
        assert queue.allocated == by_queue[queue.path], queue.path
    for user in s.ugm().users_usage():
        assert user["queues"].get("resourceUsage", {}) == by_user[user["userName"]]
    for node in s.nodes_view():
        total = Resource()
        for allocation in node["allocations"]:
            total = total + allocation["resource"]
        assert node["allocated"] == total


@pytest.mark.slow
def test_many_applications_balance_to_zero_after_everything_completes(
    start_scheduler, clock, assert_balanced,
) -> None:
    rnd = random.Random(20240601)
    s = start_scheduler(CONFIG)
    for i in range(8):
        s.add_node(f"n{i:02d}", {"vcore": 8000, "memory": 64})
    users = [UserGroup(f"u{i}", [rnd.choice(["dev", "ops", "qa"]), "all"]) for i in range(15)]
    live: list[str] = []
    allocations = 0
    for step in range(2000):
        clock.advance(rnd.choice([0.1, 1.0, 2.0, 10.0]))
        roll = rnd.random()
        if roll < 0.25:
            app = f"a{step}"
            gang = None
            asks = [Ask(f"k{j}", {"vcore": rnd.choice([500, 1000, 2000, 4000]),
                                  "memory": rnd.choice([1, 2, 4])},
                        priority=rnd.randrange(4)) for j in range(rnd.randrange(1, 5))]
            if rnd.random() < 0.25:
                gang = Gang((TaskGroup("tg", rnd.randrange(2, 9), {"vcore": 2000, "memory": 2}),),
                            style=rnd.choice(["Soft", "Hard"]), timeout=rnd.choice([3, 20, 200]))
                asks += [Ask(f"r{j}", {"vcore": rnd.choice([500, 1000, 1500]), "memory": 1},
                             task_group="tg") for j in range(rnd.randrange(0, 3))]
            queue = rnd.choice(["root.batch", "root.interactive", "", "root.batch"])
            info = s.submit(app, rnd.choice(users), queue=queue, gang=gang, asks=asks)
            if info.state is not S.REJECTED:
                live.append(app)
        elif roll < 0.65 and live:
            app = rnd.choice(live)
            held = s.application(app).allocations
            if held:
                s.release(app, rnd.choice(held).key)
        elif roll < 0.72 and live:
            app = rnd.choice(live)
            if s.application(app).state in (S.ACCEPTED, S.STARTING, S.RUNNING, S.COMPLETING):
                s.add_ask(app, Ask(f"x{step}", {"vcore": 1000, "memory": 1}))
        elif roll < 0.75 and live:
            app = rnd.choice(live)
            if s.application(app).state in (S.NEW, S.ACCEPTED, S.STARTING, S.RUNNING):
                s.fail(app, "random failure")
        elif roll < 0.78 and live:
            app = live.pop(rnd.randrange(len(live)))
            s.remove_application(app)
        elif roll < 0.80 and live:
            app = rnd.choice(live)
            held = [a for a in s.application(app).allocations if not a.placeholder]
            if held:
                s.resize(app, held[0].key, {"vcore": rnd.choice([500, 3000]), "memory": 1})
        elif roll < 0.81:
            node = f"n{rnd.randrange(8):02d}"
            s.remove_node(node)
            s.add_node(node, {"vcore": 8000, "memory": 64})
        elif roll < 0.815:
            s.update_config(rnd.choice([CONFIG, RELOADED]))
        allocations += len(s.schedule())
        for request in s.release_requests():  # the shim confirms preemption victims
            held = {a.key for a in s.application(request.application_id).allocations}
            if request.allocation_key in held:
                s.release(request.application_id, request.allocation_key)
        if step % 100 == 0:
            check_books(s)
    check_books(s)
    # Reservations hold nodes for big asks (YuniKorn's trade: fewer small allocations, no
    # starvation of big ones), so the storm places fewer asks than it did without them.
    assert allocations > 300
    assert s.preemption_counts()["reservations"] > 0
    for app in live:
        s.remove_application(app)
    clock.advance(4 * 24 * 3600)
    s.schedule()
    clock.advance(4 * 24 * 3600)
    s.run_timers()
    assert s.applications() == []
    assert_balanced(s)
    assert [q.path for q in s.queues()] == ["root", "root.batch", "root.interactive",
                                            "root.users"]
    assert [u["userName"] for u in s.ugm().users_usage()] == ["u0"], "named in the limits"


def test_the_same_calls_give_the_same_allocations(start_scheduler, clock) -> None:
    def replay() -> list[tuple[str, str, str]]:
        rnd = random.Random(3)
        s = start_scheduler(CONFIG)
        for i in range(3):
            s.add_node(f"n{i}", {"vcore": 4000, "memory": 64})
        made = []
        for step in range(80):
            user = UserGroup(f"u{rnd.randrange(5)}", ["dev"])
            s.submit(f"a{step}", user, queue="root.batch",
                     asks=[Ask("k", {"vcore": rnd.choice([500, 1000, 3000])})])
            made += [(a.application_id, a.key, a.node_id) for a in s.schedule()]
            if made and rnd.random() < 0.5:
                app_id, key, _ = made[rnd.randrange(len(made))]
                if s.application(app_id).allocations:
                    s.release(app_id, key)
        return made

    assert replay() == replay()

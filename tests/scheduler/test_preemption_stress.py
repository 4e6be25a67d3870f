"""Preemption, pinned asks and reservations under concurrent submissions: every invariant holds
throughout and at the end.

Three workers submit applications while a driver runs cycles in virtual time, plays the shim
(confirming each release request at once) and ends jobs. After each cycle the driver checks,
from one consistent view, that no queue is pushed below its guarantee by the victims it is
losing and that no maximum or user limit is broken; at the end usage equals the sum of the
live allocations everywhere, and everything balances to zero once the work is removed.

The second test adds asks pinned to a node (as daemon-set pods are) and asks as big as a node
(so they reserve one), and sometimes jumps more than an hour so old reservations become
cancellable. The required-node preemptor ignores guarantees, as YuniKorn's does, and runs
earlier in the cycle, so the floor is checked only for queues the default preemptor took from
(its check already counts the required-node victims); no node may hold more than its capacity.
"""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor

from quotactor import Resource, UserGroup
from quotactor.scheduler import Ask

CONFIG = """
partitions:
  - name: default
    queues:
      - name: root
        submitacl: '*'
        properties: {preemption.delay: 4s}
        queues:
          - name: gold
            resources: {guaranteed: {vcore: 12}, max: {vcore: 24}}
          - name: silver
            resources: {guaranteed: {vcore: 8}, max: {vcore: 24}}
          - name: scratch
            limits:
              - limit: everyone
                users: ['*']
                maxresources: {vcore: 10}
"""
USER_LIMIT = 10_000
QUEUES = ("root.gold", "root.silver", "root.scratch")
NODES = 4


def _walk(view):
    yield view
    for child in view["children"]:
        yield from _walk(child)


def check_user_limit(s) -> None:
    for user in s.ugm().users_usage():
        for child in user["queues"].get("children", ()):
            if child["queuePath"] == "root.scratch":
                assert child.get("resourceUsage", {}).get("vcore", 0) <= USER_LIMIT


def check_floors_and_limits(s) -> None:
    """One view, taken while only submissions (pending asks) may run concurrently."""
    for queue in _walk(s.queues_view()):
        used = Resource(queue["allocatedResource"])
        after = used - Resource(queue["preemptingResource"])
        for name, floor in queue["guaranteedResource"].items():
            if queue["preemptingResource"].get(name, 0):
                assert after.get(name, 0) >= floor, queue["queuename"]
        if queue["parent"]:
            assert used.fits_within(queue["maxResource"]), queue["queuename"]
    check_user_limit(s)


def submitter(s, worker: int, count: int) -> int:
    rnd = random.Random(worker)
    for i in range(count):
        app = f"w{worker}-{i}"
        asks = [Ask(f"k{j}", {"vcore": rnd.choice([1000, 2000, 3000])},
                    priority=rnd.randrange(3)) for j in range(rnd.randrange(1, 4))]
        s.submit(app, UserGroup(f"u{rnd.randrange(5)}", ["dev"]), queue=rnd.choice(QUEUES),
                 asks=asks)
    return count


def driver(s, clock, rounds: int) -> int:
    rnd = random.Random(99)
    preempted = 0
    for _ in range(rounds):
        clock.advance(2)
        s.schedule()
        check_floors_and_limits(s)
        for request in s.release_requests():
            s.release(request.application_id, request.allocation_key)
            preempted += 1
        for app in s.applications(state="active"):
            held = [a for a in app.allocations if not a.preempted]
            if held and rnd.random() < 0.1:
                s.release(app.application_id, rnd.choice(held).key)
    return preempted


def test_preemption_under_concurrent_submissions(start_scheduler, clock, assert_books,
                                                 assert_balanced):
    s = start_scheduler(CONFIG)
    for i in range(4):
        s.add_node(f"n{i}", {"vcore": 8000})
    with ThreadPoolExecutor(max_workers=4) as pool:
        submitted = [pool.submit(submitter, s, w, 60) for w in range(3)]
        driven = pool.submit(driver, s, clock, 200)
        assert sum(f.result(timeout=120) for f in submitted) == 180
        preempted = driven.result(timeout=120)
    preempted += driver(s, clock, 60)
    assert preempted > 0
    assert s.preemption_counts()["preemption"] == preempted
    assert_books(s)
    for app in s.applications(state="active"):
        s.remove_application(app.application_id)
    clock.advance(4 * 24 * 3600)
    s.run_timers()
    assert_balanced(s)


def check_victims_floors_and_capacity(s, requests) -> None:
    lost: dict[str, Resource] = {}
    by_default: set[str] = set()
    for request in requests:
        parts = request.queue_path.split(".")
        for depth in range(1, len(parts) + 1):
            path = ".".join(parts[:depth])
            lost[path] = lost.get(path, Resource()) + request.resource
            if request.reason == "preemption":
                by_default.add(path)
    for queue in _walk(s.queues_view()):
        used = Resource(queue["allocatedResource"])
        assert Resource(queue["preemptingResource"]) == lost.get(queue["queuename"], {})
        if queue["queuename"] in by_default and queue["parent"]:
            after = used - lost[queue["queuename"]]
            for name, floor in queue["guaranteedResource"].items():
                assert after.get(name, 0) >= floor, queue["queuename"]
        if queue["parent"]:
            assert used.fits_within(queue["maxResource"]), queue["queuename"]
    check_user_limit(s)
    for node in s.nodes_view():
        assert Resource(node["allocated"]).fits_within(node["capacity"]), node["nodeID"]


def pinned_submitter(s, worker: int, count: int) -> int:
    rnd = random.Random(worker)
    for i in range(count):
        asks = []
        for j in range(rnd.randrange(1, 4)):
            kind = rnd.random()
            if kind < 0.25:
                asks.append(Ask(f"k{j}", {"vcore": 1000}, priority=rnd.randrange(3),
                                required_node=f"n{rnd.randrange(NODES)}"))
            elif kind < 0.4:
                asks.append(Ask(f"k{j}", {"vcore": 8000}, priority=0))
            else:
                asks.append(Ask(f"k{j}", {"vcore": rnd.choice([1000, 2000, 3000])},
                                priority=rnd.randrange(1, 3)))
        s.submit(f"w{worker}-{i}", UserGroup(f"u{rnd.randrange(5)}", ["dev"]),
                 queue=rnd.choice(QUEUES), asks=asks)
    return count


def contention_driver(s, clock, rounds: int, offset: int = 0) -> dict[str, int]:
    rnd = random.Random(99 + offset)
    seen = {"preemption": 0, "required-node": 0}
    for round_ in range(rounds):
        if rnd.random() < 0.2:  # a daemon-set pod for a node, while reservations exist
            s.submit(f"ds-{offset}-{round_}", UserGroup("ops", ["ops"]),
                     queue=rnd.choice(QUEUES), asks=[Ask("ds", {"vcore": 1000}, priority=2,
                                                         required_node=f"n{rnd.randrange(NODES)}")])
        clock.advance(3700 if rnd.random() < 0.05 else 2)
        s.schedule()
        requests = s.release_requests()
        check_victims_floors_and_capacity(s, requests)
        for request in requests:
            s.release(request.application_id, request.allocation_key)
            seen[request.reason] += 1
        for app in s.applications(state="active"):
            held = [a for a in app.allocations if not a.preempted]
            if held and rnd.random() < 0.1:
                s.release(app.application_id, rnd.choice(held).key)
    return seen


def test_pinned_asks_reservations_and_preemption_under_concurrent_submissions(
        start_scheduler, clock, assert_books, assert_balanced):
    s = start_scheduler(CONFIG)
    for i in range(NODES):
        s.add_node(f"n{i}", {"vcore": 8000})
    with ThreadPoolExecutor(max_workers=4) as pool:
        submitted = [pool.submit(pinned_submitter, s, w, 60) for w in range(3)]
        driven = pool.submit(contention_driver, s, clock, 200)
        assert sum(f.result(timeout=120) for f in submitted) == 180
        seen = driven.result(timeout=120)
    more = contention_driver(s, clock, 80, offset=1)
    counts = s.preemption_counts()
    assert counts["preemption"] == seen["preemption"] + more["preemption"] > 0
    assert counts["requiredNode"] == seen["required-node"] + more["required-node"] > 0
    assert counts["reservationsCancelled"] > 0
    assert_books(s)
    for app in s.applications(state="active"):
        s.remove_application(app.application_id)
    clock.advance(4 * 24 * 3600)
    s.run_timers()
    assert_balanced(s)

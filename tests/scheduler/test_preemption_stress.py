"""Preemption under concurrent submissions: every invariant holds throughout and at the end.

Three workers submit applications while a driver runs cycles in virtual time, plays the shim
(confirming each release request at once) and ends jobs. After each cycle the driver checks,
from one consistent view, that no queue is pushed below its guarantee by the victims it is
losing and that no maximum or user limit is broken; at the end usage equals the sum of the
live allocations everywhere, and everything balances to zero once the work is removed.
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


def _walk(view):
    yield view
    for child in view["children"]:
        yield from _walk(child)


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
    for user in s.ugm().users_usage():
        for child in user["queues"].get("children", ()):
            if child["queuePath"] == "root.scratch":
                assert child.get("resourceUsage", {}).get("vcore", 0) <= USER_LIMIT


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

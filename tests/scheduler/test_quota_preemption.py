"""Quota preemption: usage above a lowered maximum is preempted after the queue's delay."""

from __future__ import annotations

from quotactor import UserGroup
from quotactor.scheduler import Ask

BOB = UserGroup("bob", ["ops"])
ONE = {"vcore": 1000}


def config(max_vcores: int, *, delay: str | None = "60s", enabled: bool = True,
           guaranteed: int | None = None, user_limit: int | None = None) -> str:
    props = f"\n            properties: {{quota.preemption.delay: {delay}}}" if delay else ""
    res = f"max: {{vcore: {max_vcores}}}"
    if guaranteed is not None:
        res += f", guaranteed: {{vcore: {guaranteed}}}"
    limits = (f"\n            limits:\n              - limit: bob\n                users: [bob]"
              f"\n                maxresources: {{vcore: {user_limit}}}") if user_limit else ""
    return f"""
partitions:
  - name: default
    preemption: {{quotapreemptionenabled: {str(enabled).lower()}}}
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: batch
            resources: {{{res}}}{props}{limits}
"""


def run_four(s, clock) -> None:
    s.add_node("n1", {"vcore": 8000})
    s.submit("app", BOB, queue="root.batch")
    for i in range(4):
        s.add_ask("app", Ask(f"a{i}", ONE, priority=1 if i == 1 else 0))
        s.schedule()
        clock.advance(1)


def keys(s) -> list[str]:
    return [r.allocation_key for r in s.release_requests()]


def test_the_timer_starts_when_the_maximum_is_lowered(start_scheduler, clock):
    s = start_scheduler(config(8))
    run_four(s, clock)
    before = s.next_timer()  # the application's starting timeout
    s.update_config(config(2))
    s.schedule()
    assert s.next_timer() == clock.now() + 60 < before


def test_quota_preemption_takes_the_excess_and_the_shim_confirms(start_scheduler, clock,
                                                                  assert_books):
    s = start_scheduler(config(8))
    run_four(s, clock)
    s.update_config(config(2))
    clock.advance(59)
    s.schedule()
    assert keys(s) == []
    clock.advance(1)
    s.schedule()
    requests = s.release_requests()
    assert sorted(r.allocation_key for r in requests) == ["a2", "a3"]
    assert {r.reason for r in requests} == {"quota"}
    assert s.queue("root.batch").allocated == {"vcore": 4000}  # until the shim confirms
    assert_books(s)
    for r in requests:
        s.release(r.application_id, r.allocation_key)
    assert s.queue("root.batch").allocated == {"vcore": 2000}
    clock.advance(600)
    s.schedule()
    assert keys(s) == []  # once per lowering
    assert_books(s)


def test_lowest_priority_goes_before_newest(start_scheduler, clock):
    s = start_scheduler(config(8))
    run_four(s, clock)
    s.update_config(config(1))
    clock.advance(60)
    s.schedule()
    assert sorted(keys(s)) == ["a0", "a2", "a3"]


def test_nothing_happens_without_the_partition_switch_or_the_delay(start_scheduler, clock):
    for before, after in ((config(8, enabled=False), config(2, enabled=False)),
                          (config(8, delay=None), config(2, delay=None))):
        s = start_scheduler(before)
        run_four(s, clock)
        s.update_config(after)
        clock.advance(3600)
        s.schedule()
        assert keys(s) == []


def test_never_below_the_guarantee(start_scheduler, clock):
    nested = """
partitions:
  - name: default
    preemption: {quotapreemptionenabled: true}
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: team
            resources: {guaranteed: {vcore: 3}}
            queues:
              - name: batch
                resources: {max: {vcore: MAX}}
                properties: {quota.preemption.delay: 60s}
"""
    s = start_scheduler(nested.replace("MAX", "8"))
    s.add_node("n1", {"vcore": 8000})
    s.submit("app", BOB, queue="root.team.batch", asks=[Ask(f"a{i}", ONE) for i in range(4)])
    s.schedule()
    s.update_config(nested.replace("MAX", "1"))
    clock.advance(60)
    s.schedule()
    assert len(keys(s)) == 1


def test_a_victim_larger_than_the_excess_is_skipped(start_scheduler, clock):
    s = start_scheduler(config(8))
    s.add_node("n1", {"vcore": 8000})
    s.submit("app", BOB, queue="root.batch", asks=[Ask("big", {"vcore": 3000}),
                                                  Ask("small", ONE)])
    s.schedule()
    s.update_config(config(3))
    clock.advance(60)
    s.schedule()
    assert keys(s) == ["small"]


def test_a_lowered_user_limit_preempts_nothing(start_scheduler, clock):
    s = start_scheduler(config(8, user_limit=8))
    run_four(s, clock)
    s.update_config(config(8, user_limit=1))
    clock.advance(3600)
    s.schedule()
    assert keys(s) == []

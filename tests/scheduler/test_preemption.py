"""Priority preemption: delay, guarantees as floors, priorities, fences, opt-outs, the shim."""

from __future__ import annotations

import textwrap

from quotactor import UserGroup
from quotactor.scheduler import Ask, ReleaseRequest, SchedulerOptions

SUE = UserGroup("sue", ["dev"])
BOB = UserGroup("bob", ["ops"])
ONE = {"vcore": 1000}


def config(queues: str, partition: str = "") -> str:
    return textwrap.dedent("""
        partitions:
          - name: default
        {partition}
            queues:
              - name: root
                submitacl: '*'
                queues:
        {queues}
        """).format(partition=textwrap.indent(textwrap.dedent(partition), "    "),
                    queues=textwrap.indent(textwrap.dedent(queues), " " * 10))


TWO_QUEUES = config("""
    - name: high
      resources: {guaranteed: {vcore: 4}}
      properties: {preemption.delay: 10s}
    - name: low
      resources: {guaranteed: {vcore: 1}}
""")


def fill_low(s, clock, count: int = 4, **ask_options) -> None:
    """`count` allocations of one vcore in root.low, one second apart (newest last)."""
    s.submit("low-app", BOB, queue="root.low")
    for i in range(count):
        options = {k: v[i] if isinstance(v, list) else v for k, v in ask_options.items()}
        s.add_ask("low-app", Ask(f"l{i}", ONE, **options))
        s.schedule()
        clock.advance(1)


def victims(s) -> list[str]:
    return sorted(r.allocation_key for r in s.release_requests())


def test_no_preemption_before_the_delay_then_the_newest_victim(start_scheduler, clock):
    s = start_scheduler(TWO_QUEUES)
    s.add_node("n1", {"vcore": 4000})
    fill_low(s, clock)
    s.submit("high-app", SUE, queue="root.high", asks=[Ask("h0", ONE)])
    s.schedule()
    clock.advance(9)
    s.schedule()
    assert victims(s) == []
    clock.advance(1)
    s.schedule()
    assert victims(s) == ["l3"]


def test_usage_is_unchanged_until_the_shim_confirms_the_release(start_scheduler, clock,
                                                                  assert_books):
    s = start_scheduler(TWO_QUEUES)
    s.add_node("n1", {"vcore": 4000})
    fill_low(s, clock)
    s.submit("high-app", SUE, queue="root.high", asks=[Ask("h0", ONE)])
    clock.advance(10)
    s.schedule()
    (request,) = s.release_requests()
    assert (request.application_id, request.allocation_key) == ("low-app", "l3")
    assert request.preemptor_application == "high-app" and request.reason == "preemption"
    for _ in range(3):
        s.schedule()
        clock.advance(20)
    assert s.queue("root.low").allocated == {"vcore": 4000}
    assert s.ugm().users_usage()[0]["queues"]["resourceUsage"] == {"vcore": 4000}
    view = s.application_view("low-app")
    assert [a["preempted"] for a in view["allocations"]] == [False, False, False, True]
    assert any(e.kind == "preempted" for e in s.events("low-app"))
    high = s.application_view("high-app")
    assert high["hasReserved"] and high["reservations"] == ["n1|h0"]
    assert high["requests"][0]["triggeredPreemption"] is True
    assert s.nodes_view()[0]["isReserved"] is True
    assert s.queues_view()["children"][1]["preemptingResource"] == {"vcore": 1000}
    wait = s.why_pending("high-app")
    assert wait is not None and wait.kind == "preemption" and wait.name == "n1"
    assert victims(s) == []
    assert_books(s)
    s.release("low-app", "l3")
    assert s.queue("root.low").allocated == {"vcore": 3000}
    made = s.schedule()
    assert [(a.application_id, a.node_id) for a in made] == [("high-app", "n1")]
    assert s.application_view("high-app")["hasReserved"] is False
    assert s.nodes_view()[0]["isReserved"] is False
    assert s.why_pending("high-app") is None
    assert_books(s)


def test_a_victim_queue_never_goes_below_its_guarantee(start_scheduler, clock):
    s = start_scheduler(TWO_QUEUES.replace("guaranteed: {vcore: 1}",
                                           "guaranteed: {vcore: 3}"))
    s.add_node("n1", {"vcore": 4000})
    fill_low(s, clock)
    s.submit("high-app", SUE, queue="root.high", asks=[Ask("h0", {"vcore": 2000})])
    clock.advance(30)
    s.schedule()
    assert victims(s) == []
    s.remove_ask("high-app", "h0")
    s.submit("high-2", SUE, queue="root.high", asks=[Ask("h1", ONE)])
    clock.advance(30)
    s.schedule()
    assert victims(s) == ["l3"]


def test_the_preemptor_queue_must_stay_within_its_guarantee(start_scheduler, clock):
    s = start_scheduler(TWO_QUEUES.replace("guaranteed: {vcore: 4}",
                                           "guaranteed: {vcore: 1}"))
    s.add_node("n1", {"vcore": 4000})
    fill_low(s, clock)
    s.submit("high-app", SUE, queue="root.high", asks=[Ask("h0", {"vcore": 2000})])
    clock.advance(30)
    s.schedule()
    assert victims(s) == []


def test_a_queue_without_any_guarantee_never_preempts(start_scheduler, clock):
    s = start_scheduler(TWO_QUEUES.replace("resources: {guaranteed: {vcore: 4}}",
                                           "resources: {max: {vcore: 4}}"))
    s.add_node("n1", {"vcore": 4000})
    fill_low(s, clock)
    s.submit("high-app", SUE, queue="root.high", asks=[Ask("h0", ONE)])
    clock.advance(60)
    s.schedule()
    assert victims(s) == []


def test_only_lower_or_equal_priorities_are_taken_lowest_first(start_scheduler, clock):
    s = start_scheduler(TWO_QUEUES)
    s.add_node("n1", {"vcore": 4000})
    fill_low(s, clock, priority=[3, 1, 9, 2])
    s.submit("high-app", SUE, queue="root.high", asks=[Ask("h0", ONE, priority=2)])
    clock.advance(10)
    s.schedule()
    assert victims(s) == ["l1"]
    s.submit("high-2", SUE, queue="root.high", asks=[Ask("h1", ONE, priority=0)])
    clock.advance(30)
    s.schedule()
    assert victims(s) == []


def test_opted_out_allocations_go_last_and_originators_after_them(start_scheduler, clock):
    s = start_scheduler(TWO_QUEUES)
    s.add_node("n1", {"vcore": 4000})
    fill_low(s, clock, allow_preempt_self=[True, False, False, True],
             originator=[True, False, False, False])
    taken = []
    for i in range(3):
        s.submit(f"high-{i}", SUE, queue="root.high", asks=[Ask(f"h{i}", ONE)])
        clock.advance(10)
        s.schedule()
        for request in s.release_requests():
            taken.append(request.allocation_key)
            s.release(request.application_id, request.allocation_key)
        assert [a.application_id for a in s.schedule()] == [f"high-{i}"]
    # l3 (opted in, newest), then the opted-out ones newest first, never the originator l0
    assert taken == ["l3", "l2", "l1"]


def test_an_ask_that_may_not_preempt_others_waits(start_scheduler, clock):
    s = start_scheduler(TWO_QUEUES)
    s.add_node("n1", {"vcore": 4000})
    fill_low(s, clock)
    s.submit("high-app", SUE, queue="root.high",
             asks=[Ask("h0", ONE, allow_preempt_other=False)])
    clock.advance(60)
    s.schedule()
    assert victims(s) == []


def test_an_ask_preempts_once_and_retries_at_most_every_15_seconds(start_scheduler, clock):
    s = start_scheduler(TWO_QUEUES)
    s.add_node("n1", {"vcore": 4000})
    fill_low(s, clock, priority=9)
    s.submit("high-app", SUE, queue="root.high", asks=[Ask("h0", ONE), Ask("h1", ONE)])
    clock.advance(10)
    s.schedule()  # h0 tries: nothing of priority <= 0 to take
    s.update_config(TWO_QUEUES.replace("guaranteed: {vcore: 1}}",
                                       "guaranteed: {vcore: 1}}\n            properties:"
                                       " {priority.offset: '-20'}"))
    clock.advance(10)
    s.schedule()
    assert victims(s) == []
    clock.advance(5)
    s.schedule()
    assert victims(s) == ["l3"]
    clock.advance(60)
    s.schedule()
    assert victims(s) == []  # h0 preempted once; h1 finds the only node reserved for h0


def test_preemption_policy_disabled_protects_a_subtree(start_scheduler, clock):
    s = start_scheduler(TWO_QUEUES.replace(
        "guaranteed: {vcore: 1}}", "guaranteed: {vcore: 1}}\n            properties:"
        " {preemption.policy: disabled}"))
    s.add_node("n1", {"vcore": 4000})
    fill_low(s, clock)
    s.submit("high-app", SUE, queue="root.high", asks=[Ask("h0", ONE)])
    clock.advance(60)
    s.schedule()
    assert victims(s) == []


def test_disabled_is_inherited_unless_a_child_sets_its_own_policy(start_scheduler, clock):
    s = start_scheduler(config("""
        - name: high
          resources: {guaranteed: {vcore: 4}}
          properties: {preemption.delay: 10s}
        - name: batch
          properties: {preemption.policy: disabled}
          queues:
            - name: kept
            - name: open
              properties: {preemption.policy: default}
    """))
    s.add_node("n1", {"vcore": 2000})
    s.submit("kept", BOB, queue="root.batch.kept", asks=[Ask("k0", ONE)])
    s.submit("open", BOB, queue="root.batch.open", asks=[Ask("o0", ONE)])
    s.schedule()
    s.submit("high-app", SUE, queue="root.high", asks=[Ask("h0", ONE), Ask("h1", ONE)])
    for _ in range(6):
        clock.advance(10)
        s.schedule()
    assert [(r.application_id, r.allocation_key) for r in s.release_requests()] == \
        [("open", "o0")]


def test_the_partition_switch_turns_preemption_off(start_scheduler, clock):
    s = start_scheduler(config("""
        - name: high
          resources: {guaranteed: {vcore: 4}}
          properties: {preemption.delay: 10s}
        - name: low
    """, partition="preemption: {enabled: false}"))
    s.add_node("n1", {"vcore": 4000})
    fill_low(s, clock)
    s.submit("high-app", SUE, queue="root.high", asks=[Ask("h0", ONE)])
    clock.advance(60)
    s.schedule()
    assert victims(s) == []


def test_priority_offsets_and_priority_fences(start_scheduler, clock):
    base = config("""
        - name: high
          resources: {guaranteed: {vcore: 4}}
          properties: {preemption.delay: 10s}
        - name: low
          properties: {PROPS}
    """)
    for props, taken in (("{priority.offset: '10'}", False),
                         ("{priority.offset: '-10'}", True),
                         ("{priority.policy: fence, priority.offset: '3'}", True),
                         ("{priority.policy: fence, priority.offset: '7'}", False)):
        s = start_scheduler(base.replace("{PROPS}", props))
        s.add_node("n1", {"vcore": 4000})
        fill_low(s, clock, priority=100 if "fence" in props else 0)
        s.submit("high-app", SUE, queue="root.high", asks=[Ask("h0", ONE, priority=5)])
        clock.advance(30)
        s.schedule()
        assert bool(victims(s)) is taken, props


def test_preemption_fence_keeps_victims_inside(start_scheduler, clock):
    s = start_scheduler(config("""
        - name: tenant
          properties: {preemption.policy: fence}
          queues:
            - name: a
              resources: {guaranteed: {vcore: 2}}
              properties: {preemption.delay: 10s}
        - name: other
    """))
    s.add_node("n1", {"vcore": 2000})
    s.submit("other", BOB, queue="root.other", asks=[Ask("o0", ONE), Ask("o1", ONE)])
    s.schedule()
    s.submit("a", SUE, queue="root.tenant.a", asks=[Ask("a0", ONE)])
    clock.advance(60)
    s.schedule()
    assert victims(s) == []


def test_victims_are_chosen_to_take_least(start_scheduler, clock):
    s = start_scheduler(TWO_QUEUES.replace("guaranteed: {vcore: 1}", "guaranteed: {}"))
    s.add_node("n1", {"vcore": 3000})
    s.submit("low-app", BOB, queue="root.low", asks=[Ask("big", {"vcore": 3000})])
    s.schedule()
    s.add_node("n2", {"vcore": 3000})
    for key in ("s0", "s1", "s2"):
        s.add_ask("low-app", Ask(key, ONE))
    s.schedule()
    assert {a["allocationKey"]: a["nodeId"] for a in
            s.application_view("low-app")["allocations"]} == {
        "big": "n1", "s0": "n2", "s1": "n2", "s2": "n2"}
    s.submit("high-app", SUE, queue="root.high", asks=[Ask("h0", {"vcore": 2000})])
    clock.advance(10)
    s.schedule()
    assert victims(s) == ["s0", "s1"]


def test_placeholders_can_be_victims_and_count_as_timed_out(start_scheduler, clock):
    from quotactor.scheduler import Gang, TaskGroup

    s = start_scheduler(TWO_QUEUES)
    s.add_node("n1", {"vcore": 4000})
    s.submit("gang", BOB, queue="root.low",
             gang=Gang((TaskGroup("tg", 4, ONE),), style="Soft", timeout=3600))
    s.schedule()
    assert len(s.application("gang").allocations) == 4
    s.submit("high-app", SUE, queue="root.high", asks=[Ask("h0", ONE)])
    clock.advance(10)
    s.schedule()
    (request,) = s.release_requests()
    assert request.application_id == "gang"
    s.release("gang", request.allocation_key)
    assert [a.application_id for a in s.schedule()] == ["high-app"]
    assert s.application("gang").placeholder_data[0].timed_out == 1


def test_an_ask_held_back_by_its_user_limit_does_not_preempt(start_scheduler, clock):
    s = start_scheduler(TWO_QUEUES.replace(
        "properties: {preemption.delay: 10s}",
        "properties: {preemption.delay: 10s}\n            limits:\n"
        "              - limit: sue\n                users: [sue]\n"
        "                maxresources: {vcore: 1}"))
    s.add_node("n1", {"vcore": 4000})
    s.add_node("n2", {"vcore": 1000})
    s.submit("first", SUE, queue="root.high", asks=[Ask("f0", ONE, required_node="n2")])
    s.schedule()
    fill_low(s, clock)
    s.submit("high-app", SUE, queue="root.high", asks=[Ask("h0", ONE)])
    clock.advance(60)
    s.schedule()
    assert victims(s) == []
    assert s.why_pending("high-app").kind == "user"


def test_an_interrupted_preemption_leaves_nothing_half_done(start_scheduler, clock,
                                                            monkeypatch, assert_books):
    import pytest

    from quotactor.scheduler.preemption import victims as marking

    s = start_scheduler(TWO_QUEUES)
    s.add_node("n1", {"vcore": 4000})
    fill_low(s, clock)
    s.submit("high-app", SUE, queue="root.high", asks=[Ask("h0", {"vcore": 2000})])
    clock.advance(10)
    real = marking.mark_victim
    calls = []

    def flaky(*args, **kwargs):
        calls.append(args[1].key)
        if len(calls) == 2:
            raise KeyboardInterrupt
        real(*args, **kwargs)

    monkeypatch.setattr(marking, "mark_victim", flaky)
    with pytest.raises(KeyboardInterrupt):
        s.schedule()
    assert s.release_requests() == []
    assert not any(a["preempted"] for a in s.application_view("low-app")["allocations"])
    assert s.application_view("high-app")["hasReserved"] is False
    assert s.application_view("high-app")["requests"][0]["triggeredPreemption"] is False
    assert s.preemption_counts()["preemption"] == 0
    assert s.queues_view()["children"][1]["preemptingResource"] == {}
    assert_books(s)
    monkeypatch.setattr(marking, "mark_victim", real)
    clock.advance(15)
    s.schedule()
    assert victims(s) == ["l2", "l3"]


def test_a_remote_shim_is_asked_to_release_a_victim_and_usage_waits_for_it(start_scheduler,
                                                                            clock, assert_books):
    s = start_scheduler(TWO_QUEUES, options=SchedulerOptions(shim_confirms_releases=True))
    heard: list[ReleaseRequest] = []
    s.add_release_listener(heard.extend)
    s.add_node("n1", {"vcore": 4000})
    fill_low(s, clock)
    s.submit("high-app", SUE, queue="root.high", asks=[Ask("h0", ONE)])
    clock.advance(10)
    s.schedule()
    (asked,) = heard
    assert (asked.application_id, asked.allocation_key, asked.termination) == \
        ("low-app", "l3", "PREEMPTED_BY_SCHEDULER")
    assert s.pending_releases() == [asked]
    s.schedule()
    assert s.queue("root.low").allocated == {"vcore": 4000}
    assert_books(s)
    released, replacement = s.confirm_release("low-app", "l3")
    assert (released.key, replacement) == ("l3", None)
    assert s.pending_releases() == [] and victims(s) == ["l3"]
    assert [(a.application_id, a.node_id) for a in s.schedule()] == [("high-app", "n1")]
    assert_books(s)

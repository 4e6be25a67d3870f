"""The examples of YuniKorn's preemption user guide, replayed: the same queue usages after.

Source: the "Preemption" page of the YuniKorn user guide (docs/user_guide/preemption.md in
apache/yunikorn-site, Apache-2.0); only the queue settings and the expected usages are taken.
Each pod is one ask of one vcore (three in the priority example); the test plays the shim,
confirming every release at once.
"""

from __future__ import annotations

import textwrap

from quotactor import UserGroup
from quotactor.scheduler import Ask

USER = UserGroup("sue", ["dev"])


def start(start_scheduler, queues: str, nodes: int, size: int):
    s = start_scheduler(textwrap.dedent("""
        partitions:
          - name: default
            queues:
              - name: root
                submitacl: '*'
                properties: {preemption.policy: fence, preemption.delay: 10s}
                queues:
        """) + textwrap.indent(textwrap.dedent(queues), " " * 10))
    for i in range(nodes):
        s.add_node(f"n{i}", {"vcore": size * 1000})
    return s


def deploy(s, clock, queue: str, pods: int, vcores: int = 1, **options) -> None:
    app = queue.rsplit(".", 1)[-1]
    s.submit(app, USER, queue=queue,
             asks=[Ask(f"{app}-{i}", {"vcore": vcores * 1000}, **options) for i in range(pods)])
    s.schedule()
    clock.advance(3)


def settle(s, clock, assert_books, rounds: int = 40) -> None:
    """Cycles every five seconds, the shim releasing each victim as soon as it is asked."""
    for _ in range(rounds):
        clock.advance(5)
        s.schedule()
        for request in s.release_requests():
            s.release(request.application_id, request.allocation_key)
        assert_books(s)


def used(s, path: str) -> int:
    return s.queue(path).allocated.get("vcore", 0) // 1000


def test_general_case(start_scheduler, clock, assert_books):
    s = start(start_scheduler, """
        - name: normal
          resources: {max: {vcore: 12}}
          queues:
            - name: queue-1
              resources: {max: {vcore: 10}, guaranteed: {vcore: 5}}
            - name: queue-2
              resources: {max: {vcore: 10}, guaranteed: {vcore: 5}}
    """, nodes=2, size=10)
    deploy(s, clock, "root.normal.queue-1", 10)
    deploy(s, clock, "root.normal.queue-2", 10)
    assert (used(s, "root.normal.queue-1"), used(s, "root.normal.queue-2")) == (10, 2)
    settle(s, clock, assert_books)
    assert (used(s, "root.normal.queue-1"), used(s, "root.normal.queue-2")) == (7, 5)


def test_priority_class_opt_out(start_scheduler, clock, assert_books):
    s = start(start_scheduler, """
        - name: rt
          resources: {max: {vcore: 16}}
          queues:
            - name: queue-1
              resources: {max: {vcore: 8}, guaranteed: {vcore: 3}}
            - name: queue-2
              resources: {max: {vcore: 8}, guaranteed: {vcore: 3}}
            - name: queue-3
              resources: {max: {vcore: 8}, guaranteed: {vcore: 3}}
    """, nodes=2, size=10)
    deploy(s, clock, "root.rt.queue-1", 8)
    deploy(s, clock, "root.rt.queue-2", 8, allow_preempt_self=False)
    deploy(s, clock, "root.rt.queue-3", 8)
    settle(s, clock, assert_books)
    assert [used(s, f"root.rt.queue-{i}") for i in (1, 2, 3)] == [5, 8, 3]


def test_priority_queues(start_scheduler, clock, assert_books):
    s = start(start_scheduler, """
        - name: high-pri
          resources: {max: {vcore: 10}, guaranteed: {vcore: 6}}
          properties: {priority.offset: '100'}
        - name: norm-pri
          resources: {max: {vcore: 18}, guaranteed: {vcore: 6}}
        - name: low-pri
          resources: {max: {vcore: 10}, guaranteed: {vcore: 6}}
          properties: {priority.offset: '-100'}
    """, nodes=3, size=6)
    deploy(s, clock, "root.norm-pri", 6, vcores=3)
    deploy(s, clock, "root.high-pri", 5, vcores=3)
    deploy(s, clock, "root.low-pri", 5, vcores=3)
    settle(s, clock, assert_books)
    assert [used(s, f"root.{q}") for q in ("high-pri", "norm-pri", "low-pri")] == [6, 12, 0]


def test_preemption_fence(start_scheduler, clock, assert_books):
    s = start(start_scheduler, """
        - name: ten-a
          resources: {max: {vcore: 15}, guaranteed: {vcore: 5}}
          properties: {preemption.policy: fence}
          queues:
            - name: queue-1
              resources: {max: {vcore: 15}, guaranteed: {vcore: 2}}
            - name: queue-2
              resources: {max: {vcore: 15}, guaranteed: {vcore: 2}}
              properties: {preemption.policy: fence}
        - name: ten-b
          resources: {max: {vcore: 15}, guaranteed: {vcore: 10}}
          properties: {preemption.policy: fence}
          queues:
            - name: queue-3
              resources: {max: {vcore: 15}, guaranteed: {vcore: 10}}
        - name: sys
          resources: {max: {vcore: 15}, guaranteed: {vcore: 10}}
    """, nodes=3, size=10)
    deploy(s, clock, "root.ten-a.queue-1", 15)
    deploy(s, clock, "root.ten-a.queue-2", 15)
    deploy(s, clock, "root.ten-b.queue-3", 15)
    deploy(s, clock, "root.sys", 15)
    settle(s, clock, assert_books)
    assert {q: used(s, f"root.{q}") for q in ("ten-a", "ten-a.queue-1", "ten-a.queue-2",
                                               "ten-b", "ten-b.queue-3", "sys")} == {
        "ten-a": 10, "ten-a.queue-1": 10, "ten-a.queue-2": 0,
        "ten-b": 10, "ten-b.queue-3": 10, "sys": 10}

"""The usage timeline: step functions per user, group, queue and the cluster."""

from __future__ import annotations

import gc
import tracemalloc

from quotactor.core.resources import Resource
from quotactor.sim.models.usage import UsageTimeline


def test_series_are_the_usage_after_each_instant() -> None:
    timeline = UsageTimeline()
    one = Resource({"vcore": 1000})
    timeline.change(0.0, "u1", "g", "root.a", one, 1)
    timeline.change(0.0, "u2", None, "root.a", one, 1)  # same instant: one point, the last
    timeline.change(5.0, "u1", "g", "root.a", -one, -1)
    queue = timeline.series("queue")["root.a"]
    assert queue.times == (0.0, 5.0)
    assert queue.values == (Resource({"vcore": 2000}), one)
    assert queue.running == (2, 1)
    assert timeline.series("user")["u1"].values == (one, Resource())
    assert set(timeline.series("group")) == {"g"}
    assert timeline.total().peak() == Resource({"vcore": 2000})


def test_a_long_history_adds_no_object_for_the_collector_to_walk() -> None:
    # a replay records a point per series at every change: kept as objects the garbage
    # collector tracks, every full collection of a long replay would walk them all
    timeline = UsageTimeline()
    one = Resource({"vcore": 1000})
    timeline.change(0.0, "u", "g", "root.a", one, 1)
    gc.collect()
    before = len(gc.get_objects())
    for step in range(1, 5001):
        timeline.change(float(step), "u", "g", "root.a", one if step % 2 else -one)
    gc.collect()
    assert len(gc.get_objects()) - before < 100
    assert len(timeline.series("user")["u"].times) == 5001


def test_a_long_history_costs_a_few_bytes_per_point() -> None:
    # a replay of 100,000 jobs keeps some 700,000 points: as a dict each, they took 160 MB
    # and spread the replay's live objects over that much more memory
    timeline = UsageTimeline()
    one = Resource({"vcore": 1000, "memory": 2**30})
    timeline.change(0.0, "u", "g", "root.a", one, 1)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for step in range(1, 5001):
            timeline.change(float(step), "u", "g", "root.a", one if step % 2 else -one)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    points = 4 * 5000  # the user's, the group's, the queue's and the cluster's
    assert grown / points < 48
    assert timeline.series("queue")["root.a"].values[-1] == one


def test_a_resource_first_named_late_was_zero_before() -> None:
    timeline = UsageTimeline()
    cpu, gpu = Resource({"vcore": 1000}), Resource({"nvidia.com/gpu": 2})
    timeline.change(0.0, "u", None, "root.a", cpu, 1)
    timeline.change(3.0, "u", None, "root.a", cpu, 1)
    timeline.change(3.0, "u", None, "root.a", gpu)  # same instant: the point takes it
    timeline.change(7.0, "u", None, "root.a", -cpu - cpu, -2)
    user = timeline.series("user")["u"]
    assert user.times == (0.0, 3.0, 7.0)
    assert user.values == (cpu, cpu + cpu + gpu, gpu)
    assert user.running == (1, 2, 0)
    assert user.integral("nvidia.com/gpu", 10.0) == 2 * 7


def test_quantities_beyond_64_bits_are_kept_exactly() -> None:
    timeline = UsageTimeline()
    half = Resource({"memory": 2**62})
    timeline.change(0.0, "u", None, "root.a", half, 1)
    timeline.change(1.0, "u", None, "root.a", half, 1)  # 2**63: past a signed 64-bit integer
    timeline.change(1.0, "u", None, "root.a", half, 1)  # and again at the same instant
    timeline.change(2.0, "u", None, "root.a", -half, -1)
    assert timeline.series("cluster")["cluster"].values == (
        half, Resource({"memory": 3 * 2**62}), Resource({"memory": 2**63}))

"""The usage timeline: step functions per user, group, queue and the cluster."""

from __future__ import annotations

import gc

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

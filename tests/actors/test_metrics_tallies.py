"""Metrics counted in per-thread tallies: exact over threads, read at scrape time."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from prometheus_client.parser import text_string_to_metric_families

from quotactor import UsageDecrease, UsageIncrease, UserGroup, UserGroupManager
from quotactor.core.limits import LimitEntry, LimitTable

TABLE = LimitTable({"root.a": [LimitEntry(users=("*",), max_applications=3)]})


def _samples(ugm: UserGroupManager) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in text_string_to_metric_families(ugm.render_metrics().decode()):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def test_counts_from_many_threads_add_up_exactly_also_after_the_threads_end() -> None:
    ugm = UserGroupManager.start(TABLE, timeout=20.0)
    try:
        start = threading.Barrier(4)

        def work(t: int) -> tuple[int, int]:
            start.wait(20)
            user = UserGroup(f"u{t}")
            accepted = refused = 0
            for i in range(50):  # 5 apps per user at most 3 running: every round refuses 2
                apps = [f"t{t}-r{i}-a{k}" for k in range(5)]
                results = [ugm.increase_tracked_resource("root.a", app, {"m": 1}, user)
                           for app in apps[:4]]
                batch = ugm.apply_batch([UsageIncrease("root.a", apps[4], {"m": 1}, user)])
                results.append(batch[0] is not None and batch[0].ok)
                accepted += sum(results)
                refused += len(results) - sum(results)
                for app, ok in zip(apps, results, strict=True):
                    if ok:
                        ugm.decrease_tracked_resource("root.a", app, {"m": 1}, user, True)
                ugm.apply_batch([UsageDecrease("root.a", apps[0], {}, user, False)])
            return accepted, refused

        with ThreadPoolExecutor(4) as workers:
            totals = [f.result(60) for f in [workers.submit(work, t) for t in range(4)]]
        # The workers have ended; their counts stay.
        samples = _samples(ugm)
    finally:
        ugm.stop()
    accepted = sum(a for a, _ in totals)
    refused = sum(r for _, r in totals)
    assert accepted == 4 * 50 * 3 and refused == 4 * 50 * 2
    part = ("partition", "default")
    assert samples[("quotactor_increases_total",
                    (("outcome", "accepted"), part, ("reason", "")))] == accepted
    assert samples[("quotactor_increases_total",
                    (("outcome", "refused"), part, ("reason", "user_applications")))] == refused
    assert samples[("quotactor_increase_decision_seconds_count", (part,))] == accepted + refused
    assert samples[("quotactor_decreases_total", (part,))] == accepted + 4 * 50
    assert samples[("quotactor_increase_decision_seconds_bucket",
                    (("le", "+Inf"), part))] == accepted + refused


def test_a_retirement_report_is_read_before_the_managers_next_answer(ugm) -> None:
    """Trackers report emptiness on a queue, not by message: whatever the manager answers next
    (here `stats`) already reflects it."""
    sue = UserGroup("sue")
    for round_ in range(20):
        assert ugm.increase_tracked_resource("root.a", f"app{round_}", {"m": 1}, sue)
        ugm.decrease_tracked_resource("root.a", f"app{round_}", {"m": 1}, sue, remove_app=True)
        stats = ugm.stats()
        assert (stats["users"], stats["retired"], stats["inflight"]) == (0, round_ + 1, 0)

"""Prometheus metrics of one manager, in a private registry (never a host process's global one).

The decision counters and the latency histogram cost nothing worth measuring on the hot path:
each thread that calls the facade counts into a `_Tally` of its own (plain ints and a list of
bucket counts, written by that thread only, so no lock and no lost update), and a collector
sums the tallies when Prometheus scrapes (prometheus_client's own counter and histogram take a
lock per observation, which would cost a sizeable share of a decision). Config reloads are
rare and keep a plain prometheus_client counter; gauges are read from the manager on scrape.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest
from prometheus_client.metrics_core import (
    CounterMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from quotactor.core.decision import Decision
from quotactor.core.queue_tracker import Refusal
from quotactor.core.tracker import count_answers

__all__ = ["Metrics"]

_LATENCY_BUCKETS = (5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 0.1, 1.0)


class _Tally:
    """One thread's counts: only that thread writes them; a scrape reads them."""

    __slots__ = ("accepted", "buckets", "decreases", "inflight", "refused", "seconds")

    def __init__(self) -> None:
        self.inflight = 0
        self.accepted = 0
        self.decreases = 0
        self.refused: dict[str, int] = {}
        self.buckets = [0] * (len(_LATENCY_BUCKETS) + 1)
        self.seconds = 0.0


class _Local(threading.local):
    tally: _Tally | None = None


class _Decisions(Collector):
    """Sums every thread's tally into the counter and histogram families, at scrape time."""

    def __init__(self, metrics: Metrics) -> None:
        self._metrics = metrics

    def describe(self) -> list[Metric]:
        return []  # generated on collect: the registry must not call collect to describe

    def collect(self) -> Iterator[Metric]:
        partition = self._metrics.partition
        accepted = decreases = 0
        refused: dict[str, int] = {}
        buckets = [0] * (len(_LATENCY_BUCKETS) + 1)
        seconds = 0.0
        for tally in self._metrics.tallies():
            accepted += tally.accepted
            decreases += tally.decreases
            for reason, count in list(tally.refused.items()):
                refused[reason] = refused.get(reason, 0) + count
            for i, count in enumerate(list(tally.buckets)):
                buckets[i] += count
            seconds += tally.seconds
        increases = CounterMetricFamily(
            "quotactor_increases", "Increase decisions, by outcome and refusal reason",
            labels=["partition", "outcome", "reason"])
        increases.add_metric([partition, "accepted", ""], accepted)
        for reason, count in sorted(refused.items()):
            increases.add_metric([partition, "refused", reason], count)
        yield increases
        counted = CounterMetricFamily("quotactor_decreases", "Decreases of tracked resources",
                                      labels=["partition"])
        counted.add_metric([partition], decreases)
        yield counted
        cumulative, total = [], 0
        for bound, count in zip((*map(str, _LATENCY_BUCKETS), "+Inf"), buckets, strict=True):
            total += count
            cumulative.append((bound, float(total)))
        latency = HistogramMetricFamily(
            "quotactor_increase_decision_seconds", "Latency of increase decisions",
            labels=["partition"])
        latency.add_metric([partition], cumulative, seconds)
        yield latency


def _count_refusal(tally: _Tally, refusal: Refusal | str) -> None:
    reason = f"{refusal.kind}_{refusal.limit}" if isinstance(refusal, Refusal) else "error"
    tally.refused[reason] = tally.refused.get(reason, 0) + 1


class Metrics:
    """Counters for decisions and config reloads, gauges read from the manager on scrape."""

    def __init__(self, partition: str) -> None:
        self.partition = partition
        self.registry = CollectorRegistry(auto_describe=True)
        self._local = _Local()
        self._tallies: list[_Tally] = []
        self._tallies_lock = threading.Lock()
        self.registry.register(_Decisions(self))
        self.reloads = Counter(
            "quotactor_config_reloads", "Config applications, by result",
            ["partition", "result"], registry=self.registry,
        )
        self._tracked = Gauge(
            "quotactor_tracked", "Trackers alive, by kind (user, group)",
            ["partition", "kind"], registry=self.registry,
        )
        self._actors = Gauge(
            "quotactor_live_actors", "Actors alive for this partition (trackers, manager, config)",
            ["partition"], registry=self.registry,
        ).labels(partition=partition)

    def tally(self) -> _Tally:
        """This thread's tally, for counters the facade keeps itself (`inflight`)."""
        tally = self._local.tally
        if tally is None:
            tally = self._local.tally = _Tally()
            with self._tallies_lock:
                self._tallies.append(tally)  # kept after the thread ends: its counts stay
        return tally

    def tallies(self) -> list[_Tally]:
        with self._tallies_lock:
            return list(self._tallies)

    def record_increase(self, refusal: Refusal | str | None, seconds: float) -> None:
        """Count one increase decision (the single call's path: no tuple, no loop)."""
        tally = self.tally()
        tally.buckets[bisect_left(_LATENCY_BUCKETS, seconds)] += 1
        tally.seconds += seconds
        if refusal is None:
            tally.accepted += 1
        else:
            _count_refusal(tally, refusal)

    def record_batch(self, results: list[Decision | None], seconds: float) -> None:
        """Count a batch's answers: each increase's decision with the batch's time per item,
        and its decreases (None)."""
        tally = self.tally()
        bucket = bisect_left(_LATENCY_BUCKETS, seconds)
        decreases, accepted, others = count_answers(results)  # compiled: no bytecode each
        tally.accepted += accepted
        for result in others:  # a refusal, mostly
            if result.refusal is None:
                tally.accepted += 1
            else:
                _count_refusal(tally, result.refusal)
        decisions = len(results) - decreases
        tally.buckets[bucket] += decisions
        tally.seconds += seconds * decisions
        tally.decreases += decreases

    def inflight(self) -> int:
        """Operations called and not yet answered, over every thread."""
        return sum(tally.inflight for tally in self.tallies())

    def record_decreases(self, count: int = 1) -> None:
        self.tally().decreases += count

    def record_reload(self, ok: bool) -> None:
        self.reloads.labels(self.partition, "succeeded" if ok else "failed").inc()

    def render(self, stats: Callable[[], dict[str, int]]) -> bytes:
        """The Prometheus text exposition, with gauges refreshed from `stats` first."""
        current = stats()
        self._tracked.labels(self.partition, "user").set(current["users"])
        self._tracked.labels(self.partition, "group").set(current["groups"])
        self._actors.set(current["users"] + current["groups"] + 2)
        return generate_latest(self.registry)

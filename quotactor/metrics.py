"""Prometheus metrics of one manager, in a private registry (never a host process's global one).

Recording happens on the caller's thread in the facade, after the decision: a counter increment
and a histogram observation cost about a microsecond, and no actor waits for them.
"""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from quotactor.core.queue_tracker import Refusal

__all__ = ["Metrics"]

_LATENCY_BUCKETS = (5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 0.1, 1.0)


class Metrics:
    """Counters for decisions and config reloads, gauges read from the manager on scrape."""

    def __init__(self, partition: str) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        labels = {"partition": partition}
        self.increases = Counter(
            "quotactor_increases", "Increase decisions, by outcome and refusal reason",
            ["partition", "outcome", "reason"], registry=self.registry,
        )
        self.decreases = Counter(
            "quotactor_decreases", "Decreases of tracked resources", ["partition"],
            registry=self.registry,
        ).labels(**labels)
        self.reloads = Counter(
            "quotactor_config_reloads", "Config applications, by result",
            ["partition", "result"], registry=self.registry,
        )
        self.latency = Histogram(
            "quotactor_increase_decision_seconds", "Latency of increase decisions",
            ["partition"], buckets=_LATENCY_BUCKETS, registry=self.registry,
        ).labels(**labels)
        self._tracked = Gauge(
            "quotactor_tracked", "Trackers alive, by kind (user, group)",
            ["partition", "kind"], registry=self.registry,
        )
        self._actors = Gauge(
            "quotactor_live_actors", "Actors alive for this partition (trackers, manager, config)",
            ["partition"], registry=self.registry,
        ).labels(**labels)
        self._partition = partition
        self._accepted = self.increases.labels(partition, "accepted", "")

    def record_increase(self, refusal: Refusal | str | None, seconds: float) -> None:
        self.latency.observe(seconds)
        if refusal is None:
            self._accepted.inc()
        elif isinstance(refusal, Refusal):
            self.increases.labels(self._partition, "refused",
                                  f"{refusal.kind}_{refusal.limit}").inc()
        else:
            self.increases.labels(self._partition, "refused", "error").inc()

    def record_reload(self, ok: bool) -> None:
        self.reloads.labels(self._partition, "succeeded" if ok else "failed").inc()

    def render(self, stats: Callable[[], dict[str, int]]) -> bytes:
        """The Prometheus text exposition, with gauges refreshed from `stats` first."""
        current = stats()
        self._tracked.labels(self._partition, "user").set(current["users"])
        self._tracked.labels(self._partition, "group").set(current["groups"])
        self._actors.set(current["users"] + current["groups"] + 2)
        return generate_latest(self.registry)

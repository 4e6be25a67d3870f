"""Per-tenant Prometheus metrics of a served scheduler, read at scrape time, with bounded labels.

Queues use YuniKorn's names (`yunikorn_queue_resource{queue,state,resource}`,
`yunikorn_queue_app{queue,state}`), with the partition added. Users and groups have no
YuniKorn metric, so they get quotactor's: usage and limits per resource, and running
applications. A cluster with 100k users must not put 100k label sets in every scrape: by
default only the `top` users and groups by usage are exported (the rest are counted in
`quotactor_tenants_omitted`); `"all"` exports everyone (opt in), `"none"` no one. Pending asks
are counted per queue and by why they wait (`user_resources`, `queue_applications`,
`node_capacity`, ...), and the delay from ask to allocation is a histogram.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from prometheus_client import Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from quotactor.logs import get_logger
from quotactor.scheduler import Allocation, Scheduler

__all__ = ["TenantMetrics", "TenantSelection"]

log = get_logger()

_LATENCY_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)
_QUEUE_STATES = ("allocated", "pending", "max", "guaranteed")


@dataclass(frozen=True, slots=True)
class TenantSelection:
    """Which users and groups get their own label sets: the `top` by usage, all, or none."""

    mode: Literal["top", "all", "none"] = "top"
    top: int = 20
    max_queues: int = 1000
    """Queues beyond this many (dynamic ones can multiply) are counted, not exported."""

    def __post_init__(self) -> None:
        if self.mode not in ("top", "all", "none"):
            raise ValueError(f"tenant metrics mode must be top, all or none, got {self.mode!r}")
        if self.top < 0 or self.max_queues < 0:
            raise ValueError("tenant metric bounds must not be negative")


class TenantMetrics(Collector):
    """A collector over `scheduler`; `observe` the allocations each cycle makes."""

    def __init__(self, scheduler: Scheduler, selection: TenantSelection | None = None) -> None:
        self._scheduler = scheduler
        self.selection = selection or TenantSelection()
        self._latency = Histogram(
            "quotactor_allocation_latency_seconds",
            "Scheduler-clock seconds from an ask's arrival to its allocation",
            ["partition"], buckets=_LATENCY_BUCKETS, registry=None)

    def observe(self, made: Iterable[Allocation]) -> None:
        for allocation in made:
            self._latency.labels(allocation.partition).observe(
                max(0.0, allocation.allocated_at - allocation.requested_at))

    def collect(self) -> Iterator[Metric]:
        try:
            yield from self._collect()
        except Exception:  # a scrape must not fail because one partition went away
            log.exception("rest.tenant_metrics_failed")
        yield from self._latency.collect()

    def _collect(self) -> Iterator[Metric]:
        queue_resource = GaugeMetricFamily(
            "yunikorn_queue_resource", "Queue resources by state (allocated, pending, max, "
            "guaranteed)", labels=["partition", "queue", "state", "resource"])
        queue_app = GaugeMetricFamily(
            "yunikorn_queue_app", "Queue applications by state",
            labels=["partition", "queue", "state"])
        pending = GaugeMetricFamily(
            "quotactor_pending_asks", "Asks waiting, by queue and why they wait",
            labels=["partition", "queue", "reason"])
        usage = GaugeMetricFamily(
            "quotactor_tenant_resource_usage", "Resources used by a user or group (root queue)",
            labels=["partition", "kind", "name", "resource"])
        limit = GaugeMetricFamily(
            "quotactor_tenant_resource_limit", "A user's or group's maximum resources in a queue",
            labels=["partition", "kind", "name", "queue", "resource"])
        running = GaugeMetricFamily(
            "quotactor_tenant_running_applications", "Running applications of a user or group",
            labels=["partition", "kind", "name"])
        omitted = GaugeMetricFamily(
            "quotactor_tenants_omitted", "Users, groups and queues tracked but not exported "
            "(label sets are bounded)", labels=["partition", "kind"])
        for partition in self._scheduler.partitions:
            queues = self._scheduler.queues(partition=partition)
            for queue in queues[:self.selection.max_queues]:
                for state, values in (("allocated", queue.allocated),
                                      ("pending", queue.pending),
                                      ("max", queue.max_resources or {}),
                                      ("guaranteed", queue.guaranteed or {})):
                    for resource, value in sorted(values.items()):
                        queue_resource.add_metric([partition, queue.path, state, resource],
                                                  value)
                queue_app.add_metric([partition, queue.path, "running"],
                                     len(queue.running_applications))
            omitted.add_metric([partition, "queue"],
                               max(0, len(queues) - self.selection.max_queues))
            waiting: dict[tuple[str, str], int] = {}
            for app in self._scheduler.applications(partition=partition, state="active"):
                if app.asks:
                    wait = app.wait
                    reason = f"{wait.kind}_{wait.limit}" if wait is not None else "none"
                    key = (app.queue_path, reason)
                    waiting[key] = waiting.get(key, 0) + len(app.asks)
            for (queue_path, reason), count in sorted(waiting.items()):
                pending.add_metric([partition, queue_path, reason], count)
            ugm = self._scheduler.ugm(partition)
            for kind, snapshots, field in (("user", ugm.users_usage(), "userName"),
                                           ("group", ugm.groups_usage(), "groupName")):
                chosen = self._choose(snapshots)
                omitted.add_metric([partition, kind], len(snapshots) - len(chosen))
                for snapshot in chosen:
                    name = snapshot[field]
                    root = snapshot.get("queues") or {}
                    for resource, value in sorted((root.get("resourceUsage") or {}).items()):
                        usage.add_metric([partition, kind, name, resource], value)
                    running.add_metric([partition, kind, name],
                                       len(root.get("runningApplications") or []))
                    for queue_node in _walk(root):
                        for resource, value in sorted(
                                (queue_node.get("maxResources") or {}).items()):
                            limit.add_metric([partition, kind, name, queue_node["queuePath"],
                                              resource], value)
        yield from (queue_resource, queue_app, pending, usage, limit, running, omitted)

    def _choose(self, snapshots: list[dict[str, Any]]) -> list[dict[str, Any]]:
        mode = self.selection.mode
        if mode == "all":
            return snapshots
        if mode == "none":
            return []

        def weight(snapshot: dict[str, Any]) -> tuple[int, int]:
            root = snapshot.get("queues") or {}
            used = root.get("resourceUsage") or {}
            return (len(root.get("runningApplications") or []), sum(used.values()))

        return sorted(snapshots, key=weight, reverse=True)[:self.selection.top]


def _walk(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    if not node:
        return
    yield node
    for child in node.get("children") or []:
        yield from _walk(child)

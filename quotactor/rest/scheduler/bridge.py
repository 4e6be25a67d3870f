"""What a served scheduler needs beyond the scheduler itself: its feeds and its history.

The bridge listens to every scheduling cycle (whoever drives it) and turns the allocations made
into YuniKorn event records (application, node, queue and user changes) and into decisions for
the shims that asked (`allocationResponse.new`). The shim API's handlers publish what their
writes changed through it as well. It also samples the application and container totals for
`/history/apps` and `/history/containers`, as YuniKorn does once a minute by default.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterable
from typing import Any

from quotactor.core.errors import InvalidRequest
from quotactor.rest.scheduler.feed import CHANGE_DETAILS, RELEASE_DETAILS, Feed, event_record
from quotactor.scheduler import Allocation, ApplicationInfo, ApplicationState, Scheduler
from quotactor.scheduler.objects.releases import ReleaseRequest

__all__ = ["HISTORY_SAMPLES", "SchedulerBridge", "allocated_records", "si_allocation",
           "si_resource"]

HISTORY_SAMPLES = 1440
"""A day of history at YuniKorn's default interval of one sample per minute."""


def si_resource(values: Iterable[tuple[str, int]]) -> dict[str, Any]:
    """An `si.Resource` in protobuf-JSON form: quantities as objects holding `value`."""
    return {"resources": {name: {"value": value} for name, value in sorted(values)}}


def si_allocation(allocation: Allocation) -> dict[str, Any]:
    """An `si.Allocation` (protobuf-JSON field names) for an allocation the scheduler made."""
    return {
        "allocationKey": allocation.key,
        "allocationTags": dict(sorted(allocation.tags.items())),
        "applicationID": allocation.application_id,
        "partitionName": allocation.partition,
        "nodeID": allocation.node_id,
        "resourcePerAlloc": si_resource(allocation.resource.items()),
        "priority": allocation.priority,
        "placeholder": allocation.placeholder,
        "taskGroupName": allocation.task_group,
    }


class SchedulerBridge:
    """The event and decision feeds and the history of one served scheduler; `close()` it."""

    def __init__(self, scheduler: Scheduler, history_interval: float = 60.0,
                 feed_capacity: int = 100_000) -> None:
        if history_interval <= 0:
            raise ValueError("the history interval must be positive")
        self.scheduler = scheduler
        self.events = Feed(feed_capacity)
        # Numbered from this run's start in microseconds since the epoch: a position from an
        # earlier run (or one never given out) is outside this run's range, and told apart.
        self.decisions = Feed(feed_capacity, first=time.time_ns() // 1000 + 1)
        self.history_interval = history_interval
        self._history: deque[tuple[int, int, int]] = deque(maxlen=HISTORY_SAMPLES)
        self._next_sample = time.monotonic() + history_interval
        self._owners: dict[tuple[str, str], str] = {}
        self._states: dict[tuple[str, str], ApplicationState] = {}
        self._lock = threading.Lock()
        self.sample()  # the history starts when serving does, not a minute later
        self._remove_listener = scheduler.add_cycle_listener(self._on_cycle)
        self._remove_release_listener = scheduler.add_release_listener(self._on_releases)

    def close(self) -> None:
        """Stop listening to the scheduler's cycles and release requests; safe twice."""
        self._remove_listener()
        self._remove_release_listener()

    # -- what shims own --------------------------------------------------------------------

    def claim(self, partition: str, application_id: str, rm_id: str) -> None:
        """Remember that the shim `rm_id` submitted the application (its decisions go there)."""
        with self._lock:
            self._owners[partition, application_id] = rm_id

    def owner(self, partition: str, application_id: str) -> str:
        with self._lock:
            return self._owners.get((partition, application_id), "")

    def forget(self, partition: str, application_id: str) -> None:
        with self._lock:
            self._owners.pop((partition, application_id), None)
            self._states.pop((partition, application_id), None)

    # -- application states ----------------------------------------------------------------

    def note_state(self, partition: str, application_id: str) -> None:
        """Publish the application's state if it changed since last noted (after a write)."""
        self.events.publish(self._state_records([(partition, application_id,
                                                  self._info(partition, application_id))]))

    def _state_records(self, infos: Iterable[tuple[str, str, ApplicationInfo | None]]
                       ) -> list[dict[str, Any]]:
        records = []
        with self._lock:
            for partition, app_id, info in infos:
                if info is None or self._states.get((partition, app_id)) is info.state:
                    continue
                self._states[partition, app_id] = info.state
                detail = f"APP_{info.state.value.upper()}"
                records.append(event_record(
                    "APP", app_id, "SET", detail if detail in CHANGE_DETAILS else "DETAILS_NONE",
                    message=f"state {info.state.value}", reference=info.queue_path))
        return records

    # -- decisions -------------------------------------------------------------------------

    def decide(self, rm_id: str, response: str, body: dict[str, Any]) -> None:
        """Publish one decision (`allocationResponse`, `applicationResponse`, `nodeResponse`)."""
        self.decisions.publish([{"rmID": rm_id, response: body}])

    def _on_cycle(self, made: list[Allocation]) -> None:
        """Called by the scheduler, under its lock, after every cycle."""
        if made:
            infos: dict[tuple[str, str], ApplicationInfo | None] = {}
            records: list[dict[str, Any]] = []
            by_owner: dict[str, list[dict[str, Any]]] = {}
            for allocation in made:
                key = (allocation.partition, allocation.application_id)
                if key not in infos:
                    infos[key] = self._info(*key)
                records.extend(allocated_records(allocation, infos[key]))
                by_owner.setdefault(self.owner(*key), []).append(si_allocation(allocation))
            records.extend(self._state_records((p, a, i) for (p, a), i in infos.items()))
            self.events.publish(records)
            self.decisions.publish([{"rmID": rm_id, "allocationResponse": {"new": news}}
                                    for rm_id, news in sorted(by_owner.items())])
        if time.monotonic() >= self._next_sample:
            self._next_sample = time.monotonic() + self.history_interval
            self.sample()

    def _on_releases(self, requests: list[ReleaseRequest]) -> None:
        """The scheduler asks shims to release allocations: `allocationResponse.released`,
        which the owning shim confirms by releasing them with the same `terminationType`."""
        by_owner: dict[str, list[dict[str, Any]]] = {}
        self.events.publish([event_record(
            "APP", r.application_id, "SET", RELEASE_DETAILS[r.termination],
            reference=r.allocation_key, message=f"release asked of the shim: {r.message}")
            for r in requests])
        for r in requests:
            by_owner.setdefault(self.owner(r.partition, r.application_id), []).append({
                "partitionName": r.partition, "applicationID": r.application_id,
                "allocationKey": r.allocation_key, "terminationType": r.termination,
                "message": r.message})
        self.decisions.publish([{"rmID": rm_id, "allocationResponse": {"released": asked}}
                                for rm_id, asked in sorted(by_owner.items())])

    def _info(self, partition: str, application_id: str) -> ApplicationInfo | None:
        try:
            return self.scheduler.application(application_id, partition=partition)
        except InvalidRequest:
            return None

    # -- history ---------------------------------------------------------------------------

    def sample(self) -> None:
        """Record the current totals of applications and containers now."""
        apps, containers = self.scheduler.totals()
        with self._lock:
            self._history.append((time.time_ns(), apps, containers))

    def history(self) -> list[tuple[int, int, int]]:
        """(timestamp ns, running applications, containers), oldest first."""
        with self._lock:
            return list(self._history)


def allocated_records(allocation: Allocation, info: ApplicationInfo | None
                       ) -> list[dict[str, Any]]:
    res = dict(allocation.resource.items())
    key = allocation.key
    records = [
        event_record("APP", allocation.application_id, "ADD", "APP_ALLOC", reference=key,
                     resource=res, message="allocation made"),
        event_record("NODE", allocation.node_id, "ADD", "NODE_ALLOC", reference=key,
                     resource=res, message=f"allocation of {allocation.application_id}"),
    ]
    if info is not None:
        records.append(event_record("QUEUE", info.queue_path, "ADD", "QUEUE_ALLOC",
                                    reference=allocation.application_id, resource=res))
        records.append(event_record("USERGROUP", info.user.user, "ADD", "UG_USER_RESOURCE",
                                    reference=info.queue_path, resource=res))
    return records

"""Read-only snapshots of applications and queues, for callers and tests.

A snapshot is taken under the scheduler's lock and never changes afterwards, so it can be
handed to any thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from quotactor.core.identity import UserGroup
from quotactor.core.resources import Resource
from quotactor.scheduler.objects.allocation import Allocation
from quotactor.scheduler.objects.application import Application
from quotactor.scheduler.objects.ask import Ask
from quotactor.scheduler.objects.gang import PlaceholderData
from quotactor.scheduler.objects.queue import Queue, QueueStatus
from quotactor.scheduler.objects.reasons import Wait
from quotactor.scheduler.objects.states import ApplicationState

__all__ = ["ApplicationInfo", "QueueInfo", "application_info", "queue_info"]


@dataclass(frozen=True, slots=True)
class ApplicationInfo:
    """An application as it stands: state, placement, books and why it waits.

    `running` is whether it counts as a running application for its user, group and queues.
    """

    application_id: str
    partition: str
    state: ApplicationState
    queue_path: str
    user: UserGroup
    pending: Resource
    allocated: Resource
    placeholder_allocated: Resource
    asks: tuple[Ask, ...]
    allocations: tuple[Allocation, ...]
    running: bool
    wait: Wait | None
    rejected_message: str
    placeholder_data: tuple[PlaceholderData, ...]
    submitted_at: float
    finished_at: float | None


@dataclass(frozen=True, slots=True)
class QueueInfo:
    """A queue's settings and the usage of its subtree."""

    path: str
    status: QueueStatus
    managed: bool
    leaf: bool
    allocated: Resource
    pending: Resource
    max_resources: Mapping[str, int] | None
    guaranteed: Mapping[str, int] | None
    max_applications: int
    running_applications: frozenset[str]
    applications: tuple[str, ...]
    properties: Mapping[str, str]


def application_info(app: Application) -> ApplicationInfo:
    return ApplicationInfo(
        application_id=app.application_id,
        partition=app.partition,
        state=app.state,
        queue_path=app.queue_path,
        user=app.user,
        pending=app.pending,
        allocated=app.allocated,
        placeholder_allocated=app.placeholder_allocated,
        asks=tuple(p.ask for p in app.sorted_asks()),
        allocations=tuple(app.allocations[k] for k in sorted(app.allocations)),
        running=app.tracked,
        wait=app.wait if app.asks else None,
        rejected_message=app.rejected_message,
        placeholder_data=tuple(app.placeholder_data()),
        submitted_at=app.submitted_at,
        finished_at=app.finished_at,
    )


def queue_info(queue: Queue) -> QueueInfo:
    return QueueInfo(
        path=queue.path,
        status=queue.status,
        managed=queue.managed,
        leaf=queue.is_leaf,
        allocated=queue.allocated,
        pending=queue.pending,
        max_resources=None if queue.max_resources is None
        else MappingProxyType(dict(queue.max_resources)),
        guaranteed=None if queue.guaranteed is None else MappingProxyType(dict(queue.guaranteed)),
        max_applications=queue.max_applications,
        running_applications=frozenset(queue.running),
        applications=tuple(sorted(queue.apps)),
        properties=queue.properties,
    )

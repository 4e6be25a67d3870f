"""What the partition's procedures may touch of it: two narrow views, not the `Partition` class.

The procedures that run inside a partition (state changes and releases in `lifecycle`, bookings
in `booking`, the walk in `cycle`, and the contention steps in `contention_step`,
`reservation`, `preemption` and `quota_preemption`) used to take the whole `Partition`, so
each of them imported `partition`, which imported them back: no module of the scheduler could
be read or changed on its own, and nothing said which parts of the partition a step relies on.

They now take one of these protocols instead. `Partition` satisfies both structurally and is
the only implementation; it imports the procedures, they import only this module. Every member
is read-only here: a procedure changes the nodes, queues or records it is given, but cannot
swap one of them for another behind the partition's back.

- `PartitionCore` is enough to move an application through its states and to book or release
  an allocation: the nodes, the queue tree, the accounting, the timers and the applications.
  It has no user group manager, configuration or contention records, so a booking cannot
  depend on them.
- `PartitionContext` adds what a scheduling cycle needs on top: the configuration (for the
  preemption switches), the user group manager (for headroom), the contention records, the
  applications whose reasons are stale, and the way to record a new reason.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from quotactor.scheduler.booking.accounting import Accounting
    from quotactor.scheduler.booking.backlog import Backlog
    from quotactor.scheduler.booking.timers import Deadlines
    from quotactor.scheduler.objects.application import Application
    from quotactor.scheduler.objects.contention import Contention
    from quotactor.scheduler.objects.node import NodeSet
    from quotactor.scheduler.objects.options import SchedulerOptions
    from quotactor.scheduler.objects.reasons import Wait
    from quotactor.scheduler.objects.releases import Releases
    from quotactor.scheduler.objects.spec import PartitionSpec
    from quotactor.scheduler.placement.hierarchy import Hierarchy
    from quotactor.ugm import UserGroupManager

__all__ = ["PartitionContext", "PartitionCore"]


class PartitionCore(Protocol):
    """The books of a partition: enough to change an application's state and its allocations."""

    @property
    def name(self) -> str: ...
    @property
    def options(self) -> SchedulerOptions: ...
    @property
    def log(self) -> Any: ...
    @property
    def nodes(self) -> NodeSet: ...
    @property
    def queues(self) -> Hierarchy: ...
    @property
    def accounting(self) -> Accounting: ...
    @property
    def backlog(self) -> Backlog: ...
    @property
    def deadlines(self) -> Deadlines: ...
    @property
    def apps(self) -> dict[str, Application]: ...
    @property
    def gang_apps(self) -> dict[str, Application]: ...
    @property
    def releases(self) -> Releases: ...

    def now(self) -> float: ...

    def forget(self, app: Application) -> None: ...


class PartitionContext(PartitionCore, Protocol):
    """The books plus what one scheduling cycle reads and records around them."""

    @property
    def spec(self) -> PartitionSpec: ...
    @property
    def ugm(self) -> UserGroupManager: ...
    @property
    def contention(self) -> Contention: ...
    @property
    def fresh(self) -> dict[str, Application]: ...

    def set_wait(self, app: Application, wait: Wait | None) -> None: ...

"""The scheduler around the user group managers: partitions, queues, applications, nodes.

```python
from quotactor import UserGroup
from quotactor.scheduler import Ask, Scheduler, VirtualClock

clock = VirtualClock()
with Scheduler.start(config_yaml, clock=clock) as scheduler:
    scheduler.add_node("n1", {"vcore": 8000, "memory": 32 << 30})
    scheduler.submit("app-1", UserGroup("sue", ["dev"]), queue="root.dev",
                     asks=[Ask("a1", {"vcore": 1000})])
    scheduler.schedule()
```
"""

from quotactor.scheduler.booking.clock import Clock, SystemClock, VirtualClock
from quotactor.scheduler.objects.allocation import Allocation
from quotactor.scheduler.objects.ask import Ask
from quotactor.scheduler.objects.contention import PreemptionVictim
from quotactor.scheduler.objects.events import Event
from quotactor.scheduler.objects.gang import Gang, GangStyle, PlaceholderData, TaskGroup
from quotactor.scheduler.objects.options import SchedulerOptions, Timeouts
from quotactor.scheduler.objects.reasons import Wait
from quotactor.scheduler.objects.releases import ReleaseRequest, Termination
from quotactor.scheduler.objects.spec import (
    FilterSpec,
    PartitionSpec,
    QueueSpec,
    RuleSpec,
    TemplateSpec,
)
from quotactor.scheduler.objects.states import ApplicationState, InvalidTransition, Trigger
from quotactor.scheduler.partition.recovery import (
    PartitionFeed,
    RecoveredApplication,
    RecoveredNode,
    RecoveryFeed,
)
from quotactor.scheduler.scheduler import Scheduler
from quotactor.scheduler.views.info import ApplicationInfo, QueueInfo

__all__ = [
    "Allocation",
    "ApplicationInfo",
    "ApplicationState",
    "Ask",
    "Clock",
    "Event",
    "FilterSpec",
    "Gang",
    "GangStyle",
    "InvalidTransition",
    "PartitionFeed",
    "PartitionSpec",
    "PlaceholderData",
    "QueueInfo",
    "QueueSpec",
    "RecoveredApplication",
    "RecoveredNode",
    "RecoveryFeed",
    "PreemptionVictim",
    "ReleaseRequest",
    "RuleSpec",
    "Scheduler",
    "SchedulerOptions",
    "SystemClock",
    "TaskGroup",
    "TemplateSpec",
    "Termination",
    "Timeouts",
    "Trigger",
    "VirtualClock",
    "Wait",
]

"""quotactor: resource quota tracking and enforcement for cluster schedulers.

An embedded actor system with the semantics of Apache YuniKorn's User Group Manager: per-user
and per-group usage in every queue of a hierarchy, and limits that refuse work which would
break them.
"""

from quotactor.config import ConfigError, load_config
from quotactor.core import InvalidRequest, Resource, UserGroup
from quotactor.core.changes import UsageDecrease, UsageIncrease
from quotactor.core.decision import Decision
from quotactor.core.errors import (
    ManagerClosed,
    OperationFailed,
    OperationTimeout,
    QuotactorError,
)
from quotactor.core.limits import Limit, LimitEntry, LimitTable
from quotactor.core.queue_tracker import Refusal
from quotactor.kueue import KueueError, KueueManager, KueueService
from quotactor.scheduler import Scheduler
from quotactor.ugm import UserGroupManager

__all__ = [
    "ConfigError",
    "Decision",
    "InvalidRequest",
    "KueueError",
    "KueueManager",
    "KueueService",
    "Limit",
    "LimitEntry",
    "LimitTable",
    "ManagerClosed",
    "OperationFailed",
    "OperationTimeout",
    "QuotactorError",
    "Refusal",
    "Resource",
    "Scheduler",
    "UsageDecrease",
    "UsageIncrease",
    "UserGroup",
    "UserGroupManager",
    "load_config",
]

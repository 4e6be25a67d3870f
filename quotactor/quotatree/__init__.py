"""MCAD-style hierarchical quota trees and forests (seed 004).

A quota tree groups consumers (jobs) in leaf nodes; each node has a quota and is hard (nothing
passes above it) or soft (consumers may borrow from its parent). A consumer is charged at the
lowest node on its group's path that can take it, sliding lower-priority consumers up and
preempting borrowers at the root; departures slide consumers back down. A forest allocates one
consumer on several trees together, or on none.

`QuotaManager` is MCAD's quota manager in snake_case (single-threaded); `SharedQuotaManager`
serves one from an actor (the package's runtime) so that concurrent callers need no locks.
"""

from quotactor.quotatree.actor import (
    QuotaManagerActor,
    RemoteTreeCache,
    SharedQuotaManager,
    TrialOutcome,
)
from quotactor.quotatree.cache import TreeCache, TreeCacheCreateResponse
from quotactor.quotatree.consumer_info import ConsumerInfo, ConsumerTreeSpec
from quotactor.quotatree.errors import QuotaTreeError
from quotactor.quotatree.manager import QuotaManager, UpdateAllResult
from quotactor.quotatree.mode import Mode
from quotactor.quotatree.response import AllocationResponse
from quotactor.quotatree.spec import NodeSpec

__all__ = [
    "AllocationResponse",
    "ConsumerInfo",
    "ConsumerTreeSpec",
    "Mode",
    "NodeSpec",
    "QuotaManager",
    "QuotaManagerActor",
    "QuotaTreeError",
    "RemoteTreeCache",
    "SharedQuotaManager",
    "TreeCache",
    "TreeCacheCreateResponse",
    "TrialOutcome",
    "UpdateAllResult",
]

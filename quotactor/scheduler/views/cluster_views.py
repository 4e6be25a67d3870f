"""The rest of YuniKorn's read views: one queue, one node, node utilisation buckets, placement
rules, the cluster list, history samples and the scheduler's health checks.

Like `views`, these are plain dicts with the field names of YuniKorn's web service DAOs
(`ClusterDAOInfo`, `PartitionNodesUtilDAOInfo`, `RuleDAOInfo`, `SchedulerHealthDAOInfo`), built
from a partition while the scheduler's lock is held. The health checks are real ones: they
compare the user group manager's tracked usage with the live allocations, and look for negative
usage and for allocations that lost their node or their application.
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib import metadata
from typing import Any

from quotactor.core.resources import Resource
from quotactor.scheduler.objects.contention import preempting_by_queue
from quotactor.scheduler.objects.queue import current_priority
from quotactor.scheduler.objects.spec import FilterSpec, RuleSpec
from quotactor.scheduler.partition.partition import Partition
from quotactor.scheduler.views.views import CLUSTER_ID, _node, _queue

__all__ = [
    "BUCKETS",
    "cluster_view",
    "health_checks",
    "node_utilizations_view",
    "node_view",
    "placement_rules_view",
    "queue_view",
]

BUCKETS = 10
"""Node utilisation is reported in ten buckets of ten percent, as YuniKorn does."""


def queue_view(p: Partition, path: str, subtree: bool) -> dict[str, Any] | None:
    """`PartitionQueueDAOInfo` of one queue; its children only with `subtree` (None: no queue)."""
    queue = p.queues.get(path)
    if queue is None:
        return None
    priorities: dict[str, int] = {}
    current_priority(p.queues.root, priorities)
    view = _queue(p, queue, priorities, preempting_by_queue(p.contention, p.apps))
    if not subtree:
        view["childNames"] = [child["queuename"] for child in view.pop("children")]
    return view


def node_view(p: Partition, node_id: str) -> dict[str, Any] | None:
    """`NodeDAOInfo` of one node (None: the partition has no such node)."""
    node = p.nodes.nodes.get(node_id)
    return None if node is None else _node(p, node)


def node_utilizations_view(p: Partition) -> dict[str, Any]:
    """`PartitionNodesUtilDAOInfo`: per resource type, how many nodes fall in each 10% band."""
    names = sorted({name for node in p.nodes.nodes.values() for name in node.capacity})
    utilizations = []
    for name in names:
        buckets: list[list[str]] = [[] for _ in range(BUCKETS)]
        for node_id in sorted(p.nodes.nodes):
            node = p.nodes.nodes[node_id]
            capacity = node.capacity.get(name, 0)
            if capacity <= 0:
                continue
            share = node.allocated.get(name, 0) / capacity
            buckets[min(BUCKETS - 1, max(0, int(share * BUCKETS)))].append(node_id)
        utilizations.append({"type": name, "utilization": [
            _bucket(i, members) for i, members in enumerate(buckets)]})
    return {"clusterId": CLUSTER_ID, "partition": p.name, "utilizations": utilizations}


def _bucket(index: int, members: list[str]) -> dict[str, Any]:
    step = 100 // BUCKETS
    bucket: dict[str, Any] = {"bucketName": f"{index * step}-{(index + 1) * step}%"}
    if members:  # YuniKorn omits the count and names of an empty bucket
        bucket["numOfNodes"] = len(members)
        bucket["nodeNames"] = members
    return bucket


def placement_rules_view(p: Partition) -> dict[str, Any]:
    """`RuleDAOInfo`: the partition's placement rules in the order they are tried."""
    return {"partition": p.name, "rules": [_rule(rule) for rule in p.spec.rules]}


def _rule(rule: RuleSpec) -> dict[str, Any]:
    view: dict[str, Any] = {"name": rule.name,
                            "parameters": {"create": str(rule.create).lower()}}
    if rule.value:
        view["parameters"]["value"] = rule.value
    if rule.filter is not None:
        view["filter"] = _filter(rule.filter)
    if rule.parent is not None:
        view["parentRule"] = _rule(rule.parent)
    return view


def _filter(spec: FilterSpec) -> dict[str, Any]:
    view: dict[str, Any] = {"type": spec.type}
    if spec.users:
        view["userList"] = list(spec.users)
    if spec.groups:
        view["groupList"] = list(spec.groups)
    return view


def cluster_view(partitions: Iterable[Partition], started_ns: int) -> list[dict[str, Any]]:
    """`ClusterDAOInfo` per partition, as YuniKorn lists one entry per partition."""
    build = {"buildDate": "", "buildVersion": _version(), "rmId": CLUSTER_ID}
    return [{"startTime": started_ns, "rmBuildInformation": [dict(build)],
             "partition": p.name, "clusterName": CLUSTER_ID} for p in partitions]


def _version() -> str:
    try:
        return f"quotactor {metadata.version('quotactor')}"
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "quotactor"


def _check(name: str, description: str, bad: list[str], what: str) -> dict[str, Any]:
    return {"Name": name, "Succeeded": not bad, "Description": description,
            "DiagnosisMessage": f"{what}: {sorted(bad)[:20]}"}


def health_checks(p: Partition) -> list[dict[str, Any]]:
    """Checks that fail when the scheduler's books disagree with themselves.

    Tracked usage is what the user group manager holds; it must equal the live allocations of
    the partition's tracked applications, user by user. Negative usage anywhere, nodes holding
    more than their capacity and allocations whose node or application is gone are reported.
    """
    live: dict[str, Resource] = {}
    orphans: list[str] = []
    for app in p.apps.values():
        for key, allocation in app.allocations.items():
            live[app.user.user] = live.get(app.user.user, Resource()) + allocation.resource
            node = p.nodes.nodes.get(allocation.node_id)
            if node is None or (app.application_id, key) not in node.allocations:
                orphans.append(f"{app.application_id}/{key}")
    for node in p.nodes.nodes.values():
        for app_id, key in node.allocations:
            owner = p.apps.get(app_id)
            if owner is None or key not in owner.allocations:
                orphans.append(f"{node.node_id}:{app_id}/{key}")
    tracked: dict[str, Resource] = {}
    negative: list[str] = []
    for snapshot in p.ugm.users_usage():
        usage = Resource.of(snapshot.get("queues", {}).get("resourceUsage", {}))
        tracked[snapshot["userName"]] = usage
        if usage.has_negative():
            negative.append(f"user {snapshot['userName']}")
    for snapshot in p.ugm.groups_usage():
        if Resource.of(snapshot.get("queues", {}).get("resourceUsage", {})).has_negative():
            negative.append(f"group {snapshot['groupName']}")
    mismatched = [user for user in sorted(set(live) | set(tracked))
                  if not _same(live.get(user, Resource()), tracked.get(user, Resource()))]
    overfull = [n.node_id for n in p.nodes.nodes.values()
                if not n.allocated.fits_within_strict(n.capacity) or n.allocated.has_negative()]
    where = f"in partition {p.name}"
    return [
        _check("Tracked usage", f"Check the user usage tracked {where} equals its allocations",
               mismatched, "Users whose tracked usage differs"),
        _check("Negative resources", f"Check for negative user and group usage {where}",
               negative, "Users and groups with negative usage"),
        _check("Orphan allocations",
               f"Check every allocation {where} has its node and its application",
               orphans, "Allocations without node or application"),
        _check("Consistency of data",
               f"Check if a node's allocated resource <= its capacity {where}",
               overfull, "Nodes with inconsistent data"),
    ]


def _same(a: Resource, b: Resource) -> bool:
    names = set(a) | set(b)
    return all(a.get(n, 0) == b.get(n, 0) for n in names)

"""The `--requests` file of `quotactor elastic`: pods to charge to the quotas, in YAML.

The file is a YAML list, one entry per pod::

    - id: train-1            # required, unique
      quota: team-a          # optional: no quota (or an unknown one) means the default group
      request: {cpu: "4", memory: 8Gi}   # Kubernetes quantities
      priority: 100          # optional, default 0
      preemptible: false     # optional, default true
      assigned: true         # optional, default false: pending pods count in request only,
                             # assigned ones in request and used

Assigned pods are recorded as the scheduler's decisions (no admission check), so a file can
describe a cluster that is over its runtime.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import yaml

from quotactor.core.resources import Resource
from quotactor.elastic.errors import QuotaError
from quotactor.elastic.manager import ElasticQuotaManager
from quotactor.elastic.quantity import parse_resource_list

__all__ = ["PodRequest", "apply_pod_requests", "load_pod_requests"]

_FIELDS = {"id", "quota", "request", "priority", "preemptible", "assigned"}


@dataclass(frozen=True, slots=True)
class PodRequest:
    """One entry of a requests file."""

    id: str
    quota: str | None
    request: Resource
    priority: int = 0
    preemptible: bool = True
    assigned: bool = False


def load_pod_requests(yaml_text: str) -> list[PodRequest]:
    """The pods of a requests file; `QuotaError` naming the entry (1-based) if one is bad."""
    try:
        document = yaml.safe_load(yaml_text)
    except yaml.YAMLError as exc:
        raise QuotaError(f"invalid YAML: {exc}") from None
    if document is None:
        return []
    if not isinstance(document, list):
        raise QuotaError("a requests file is a YAML list of pods")
    return [_entry(number, item) for number, item in enumerate(document, start=1)]


def apply_pod_requests(manager: ElasticQuotaManager, pods: list[PodRequest]) -> None:
    """Add every pod to `manager`, assigning those marked assigned."""
    for pod in pods:
        manager.add_pod(pod.id, pod.quota, pod.request, pod.priority, pod.preemptible)
        if pod.assigned:
            manager.assign_pod(pod.id)


def _entry(number: int, item: object) -> PodRequest:
    where = f"pod {number}"
    if not isinstance(item, Mapping):
        raise QuotaError(f"{where}: must be a mapping")
    unknown = sorted(set(map(str, item)) - _FIELDS)
    if unknown:
        raise QuotaError(f"{where}: unknown field {unknown[0]}")
    pod_id, quota = item.get("id"), item.get("quota")
    if not isinstance(pod_id, str) or not pod_id:
        raise QuotaError(f"{where}: id must be a non-empty string")
    if quota is not None and not isinstance(quota, str):
        raise QuotaError(f"{where}: quota must be a string")
    priority = item.get("priority", 0)
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise QuotaError(f"{where}: priority must be an integer")
    flags = {key: item.get(key, default) for key, default in
             (("preemptible", True), ("assigned", False))}
    for key, value in flags.items():
        if not isinstance(value, bool):
            raise QuotaError(f"{where}: {key} must be true or false")
    return PodRequest(pod_id, quota or None,
                      parse_resource_list(item.get("request"), f"request of {where}"),
                      priority, flags["preemptible"], flags["assigned"])

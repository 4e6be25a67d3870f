"""Kueue manifests (multi-document YAML, `kueue.x-k8s.io/v1beta1`) into API objects.

Reads what an admin would `kubectl apply`: ResourceFlavor, ClusterQueue, Cohort, LocalQueue,
WorkloadPriorityClass and Workload objects, and `List`s of them; `v1beta2` objects are read
too (their `spec.cohortName` is v1beta1's `spec.cohort`). Kubernetes `Namespace` objects give
the labels ClusterQueue namespace selectors match. Other kinds are refused, as are inputs
over `MAX_BYTES`. Quantities are Kubernetes'; a pod's request is what Kubernetes schedules
on (the sum over containers, at least the largest init container, plus the pod overhead).
A document that is a list holds workloads in a short form (`COMPACT_FORM`). Kueue's own
`Configuration` (`config.kueue.x-k8s.io/v1beta1`) is read for its `fairSharing` section.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import yaml

from quotactor.elastic.errors import QuotaError
from quotactor.elastic.quantity import parse_quantity
from quotactor.kueue.api import (
    BEST_EFFORT_FIFO,
    DEFAULT_POD_SET,
    MAY_STOP_SEARCH,
    NEVER,
    TRY_NEXT_FLAVOR,
    BorrowWithinCohort,
    ClusterQueue,
    Cohort,
    FlavorFungibility,
    FlavorQuotas,
    LabelRequirement,
    LabelSelector,
    LocalQueue,
    PodSet,
    Preemption,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    Taint,
    Toleration,
    Workload,
    WorkloadPriorityClass,
    frozen_map,
)
from quotactor.kueue.errors import KueueError

__all__ = ["API_GROUP", "COMPACT_FORM", "MAX_BYTES", "Manifests", "load_manifests",
           "parse_workload"]

API_GROUP = "kueue.x-k8s.io"
CONFIG_VERSION = "config.kueue.x-k8s.io/v1beta1"
MAX_BYTES = 16 * 2**20
_VERSIONS = (f"{API_GROUP}/v1beta1", f"{API_GROUP}/v1beta2")
_DEFAULT_WEIGHT = 1.0
COMPACT_FORM = """\
A YAML document that is a list holds workloads in a short form:
  - name: train-1              # required, unique in its namespace
    namespace: team-a          # optional, default "default"
    queue: team-a-queue        # required: the LocalQueue
    priority: 100              # optional (or priorityClass: NAME)
    count: 4                   # pods (default 1)
    requests: {cpu: "2", memory: 8Gi}   # per pod, Kubernetes quantities
Several pod sets: podSets: [{name: driver, count: 1, requests: {...}}, ...]."""


@dataclass(slots=True)
class Manifests:
    """The objects of one or more YAML streams, by kind, in document order."""

    flavors: list[ResourceFlavor] = field(default_factory=list)
    cluster_queues: list[ClusterQueue] = field(default_factory=list)
    cohorts: list[Cohort] = field(default_factory=list)
    local_queues: list[LocalQueue] = field(default_factory=list)
    priority_classes: list[WorkloadPriorityClass] = field(default_factory=list)
    workloads: list[Workload] = field(default_factory=list)
    namespaces: dict[str, dict[str, str]] = field(default_factory=dict)
    fair_sharing: bool = False
    """Whether a Kueue `Configuration` in the stream enables fair sharing."""
    fair_sharing_strategies: tuple[str, ...] = ()
    """Its `fairSharing.preemptionStrategies` (empty: Kueue's default pair)."""

    def objects(self) -> list[ResourceFlavor | ClusterQueue | Cohort | LocalQueue
                              | WorkloadPriorityClass]:
        """Everything but the workloads and namespaces, in the order to apply them."""
        return [*self.flavors, *self.priority_classes, *self.cohorts, *self.cluster_queues,
                *self.local_queues]


def load_manifests(text: str, into: Manifests | None = None) -> Manifests:
    """Every object of a YAML stream (added to `into` when given).

    Raises `KueueError` naming the document (1-based) and the field for YAML errors, unknown
    kinds or versions, missing names and malformed values; rules between fields are checked
    when the objects are applied to a `KueueManager`."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise KueueError(f"input is larger than {MAX_BYTES} bytes")
    try:
        documents = list(yaml.safe_load_all(text))
    except yaml.YAMLError as exc:
        raise KueueError(f"invalid YAML: {exc}") from None
    found = into if into is not None else Manifests()
    for number, document in enumerate(documents, start=1):
        if document is None:
            continue
        try:
            if isinstance(document, list):
                found.workloads.extend(_compact(item, i) for i, item in enumerate(document))
                continue
            for item in _items(document):
                _load_one(item, found)
        except KueueError as exc:
            raise KueueError(f"document {number}: {exc}") from None
    return found


def _items(document: object) -> list[Mapping[str, Any]]:
    if not isinstance(document, Mapping):
        raise KueueError("expected a Kubernetes object (a mapping)")
    kind = str(document.get("kind", ""))
    if kind.endswith("List") and "items" in document:
        items = document.get("items") or []
        if not isinstance(items, list) or not all(isinstance(i, Mapping) for i in items):
            raise KueueError("items: expected a list of objects")
        return list(items)
    return [document]


def _load_one(item: Mapping[str, Any], found: Manifests) -> None:
    kind = item.get("kind")
    version = item.get("apiVersion")
    if kind == "Namespace" and version == "v1":
        meta = _mapping(item.get("metadata"), "metadata")
        found.namespaces[_name(meta)] = _strings(meta.get("labels"), "metadata.labels")
        return
    if kind == "Configuration" and version == CONFIG_VERSION:
        _configuration(item, found)
        return
    if version not in _VERSIONS:
        raise KueueError(f"apiVersion {version!r} of {kind!r}: expected {_VERSIONS[0]}")
    meta = _mapping(item.get("metadata"), "metadata")
    name = _name(meta)
    spec = _mapping(item.get("spec"), "spec")
    where = f"{kind} {name}"
    try:
        if kind == "ResourceFlavor":
            found.flavors.append(_flavor(name, spec))
        elif kind == "ClusterQueue":
            found.cluster_queues.append(_cluster_queue(name, spec))
        elif kind == "Cohort":
            found.cohorts.append(_cohort(name, spec))
        elif kind == "LocalQueue":
            found.local_queues.append(LocalQueue(
                _namespace(meta), name, _str(spec.get("clusterQueue"), "spec.clusterQueue")))
        elif kind == "WorkloadPriorityClass":
            found.priority_classes.append(WorkloadPriorityClass(
                name, _int(item.get("value"), "value")))
        elif kind == "Workload":
            found.workloads.append(parse_workload(item))
        else:
            raise KueueError(f"unsupported kind {kind!r}")
    except KueueError as exc:
        raise KueueError(f"{where}: {exc}") from None


def _compact(item: object, index: int) -> Workload:
    """A workload of the short list form (see `COMPACT_FORM`)."""
    where = f"item {index + 1}"
    entry = _mapping(item, where)
    if entry.get("podSets") is not None:
        raw_sets = _mappings(entry.get("podSets"), f"{where}.podSets")
    else:
        raw_sets = [entry]
    pod_sets = []
    for i, raw in enumerate(raw_sets):
        path = f"{where}.podSets[{i}]"
        requests = {str(k): _quantity(str(k), v, f"{path}.requests.{k}")
                    for k, v in _mapping(raw.get("requests"), f"{path}.requests").items()}
        pod_sets.append(PodSet(
            _optional_str(raw.get("name") if raw is not entry else None, f"{path}.name")
            or DEFAULT_POD_SET,
            _int(raw.get("count", 1), f"{path}.count"), frozen_map(requests)))
    priority = entry.get("priority")
    created = entry.get("created")
    return Workload(
        name=_str(entry.get("name"), f"{where}.name"),
        queue_name=_str(entry.get("queue"), f"{where}.queue"),
        pod_sets=tuple(pod_sets),
        namespace=_optional_str(entry.get("namespace"), f"{where}.namespace") or "default",
        priority_class=_optional_str(entry.get("priorityClass"), f"{where}.priorityClass"),
        priority=None if priority is None else _int(priority, f"{where}.priority"),
        created=_timestamp(created),
    )


def _configuration(item: Mapping[str, Any], found: Manifests) -> None:
    """Kueue's own configuration: only `fairSharing` matters to admission here."""
    fair = _mapping(item.get("fairSharing"), "Configuration: fairSharing")
    enable = fair.get("enable", False)
    if not isinstance(enable, bool):
        raise KueueError(f"Configuration: fairSharing.enable: expected true or false, got "
                         f"{enable!r}")
    strategies = tuple(_str(v, f"Configuration: fairSharing.preemptionStrategies[{i}]")
                       for i, v in enumerate(_list(fair.get("preemptionStrategies"),
                                                   "Configuration: fairSharing."
                                                   "preemptionStrategies")))
    allowed = ("LessThanOrEqualToFinalShare", "LessThanInitialShare")
    if any(s not in allowed for s in strategies) or len(set(strategies)) != len(strategies):
        raise KueueError("Configuration: fairSharing.preemptionStrategies: expected "
                         f"{' and/or '.join(allowed)}, each once, got {list(strategies)}")
    found.fair_sharing = enable
    found.fair_sharing_strategies = strategies


def parse_workload(item: Mapping[str, Any]) -> Workload:
    """One Workload object (a mapping as read from YAML or JSON)."""
    meta = _mapping(item.get("metadata"), "metadata")
    spec = _mapping(item.get("spec"), "spec")
    raw_sets = spec.get("podSets")
    if not isinstance(raw_sets, list):
        raise KueueError("spec.podSets: expected a list")
    pod_sets = tuple(_pod_set(_mapping(p, f"spec.podSets[{i}]"), f"spec.podSets[{i}]")
                     for i, p in enumerate(raw_sets))
    priority = spec.get("priority")
    return Workload(
        name=_name(meta),
        queue_name=_str(spec.get("queueName"), "spec.queueName"),
        pod_sets=pod_sets,
        namespace=_namespace(meta),
        priority_class=_optional_str(spec.get("priorityClassName"), "spec.priorityClassName"),
        priority=None if priority is None else _int(priority, "spec.priority"),
        created=_timestamp(meta.get("creationTimestamp")),
    )


# -- object bodies ------------------------------------------------------------------------

def _flavor(name: str, spec: Mapping[str, Any]) -> ResourceFlavor:
    taints = tuple(
        Taint(_str(t.get("key"), f"spec.nodeTaints[{i}].key"),
              _optional_str(t.get("value"), f"spec.nodeTaints[{i}].value") or "",
              _str(t.get("effect"), f"spec.nodeTaints[{i}].effect"))
        for i, t in enumerate(_mappings(spec.get("nodeTaints"), "spec.nodeTaints")))
    return ResourceFlavor(name, frozen_map(_strings(spec.get("nodeLabels"), "spec.nodeLabels")),
                          taints, _tolerations(spec.get("tolerations"), "spec.tolerations"))


def _tolerations(value: object, path: str) -> tuple[Toleration, ...]:
    return tuple(
        Toleration(_optional_str(t.get("key"), f"{path}[{i}].key") or "",
                   _optional_str(t.get("operator"), f"{path}[{i}].operator") or "Equal",
                   _optional_str(t.get("value"), f"{path}[{i}].value") or "",
                   _optional_str(t.get("effect"), f"{path}[{i}].effect") or "")
        for i, t in enumerate(_mappings(value, path)))


def _resource_groups(value: object) -> tuple[ResourceGroup, ...]:
    groups = []
    for i, group in enumerate(_mappings(value, "spec.resourceGroups")):
        path = f"spec.resourceGroups[{i}]"
        covered = tuple(_str(r, f"{path}.coveredResources[{j}]") for j, r in
                        enumerate(_list(group.get("coveredResources"), f"{path}.coveredResources")))
        flavors = []
        for j, flavor in enumerate(_mappings(group.get("flavors"), f"{path}.flavors")):
            fpath = f"{path}.flavors[{j}]"
            quotas = []
            for k, quota in enumerate(_mappings(flavor.get("resources"), f"{fpath}.resources")):
                qpath = f"{fpath}.resources[{k}]"
                resource = _str(quota.get("name"), f"{qpath}.name")
                if "nominalQuota" not in quota:
                    raise KueueError(f"{qpath}.nominalQuota: Required value")
                quotas.append(ResourceQuota(
                    resource, _quantity(resource, quota["nominalQuota"], f"{qpath}.nominalQuota"),
                    _optional_quantity(resource, quota.get("borrowingLimit"),
                                       f"{qpath}.borrowingLimit"),
                    _optional_quantity(resource, quota.get("lendingLimit"),
                                       f"{qpath}.lendingLimit")))
            flavors.append(FlavorQuotas(_str(flavor.get("name"), f"{fpath}.name"),
                                        tuple(quotas)))
        groups.append(ResourceGroup(covered, tuple(flavors)))
    return tuple(groups)


def _cluster_queue(name: str, spec: Mapping[str, Any]) -> ClusterQueue:
    cohort = spec.get("cohort", spec.get("cohortName"))
    selector = spec.get("namespaceSelector")
    preemption = _mapping(spec.get("preemption"), "spec.preemption")
    bwc_raw = preemption.get("borrowWithinCohort")
    bwc = None
    if bwc_raw is not None:
        bwc_map = _mapping(bwc_raw, "spec.preemption.borrowWithinCohort")
        threshold = bwc_map.get("maxPriorityThreshold")
        bwc = BorrowWithinCohort(
            _optional_str(bwc_map.get("policy"), "spec.preemption.borrowWithinCohort.policy")
            or NEVER,
            None if threshold is None else _int(
                threshold, "spec.preemption.borrowWithinCohort.maxPriorityThreshold"))
    fungibility = _mapping(spec.get("flavorFungibility"), "spec.flavorFungibility")
    return ClusterQueue(
        name=name,
        resource_groups=_resource_groups(spec.get("resourceGroups")),
        cohort=_optional_str(cohort, "spec.cohort"),
        queueing_strategy=_optional_str(spec.get("queueingStrategy"), "spec.queueingStrategy")
        or BEST_EFFORT_FIFO,
        namespace_selector=None if selector is None else _selector(selector),
        preemption=Preemption(
            _optional_str(preemption.get("withinClusterQueue"),
                          "spec.preemption.withinClusterQueue") or NEVER,
            _optional_str(preemption.get("reclaimWithinCohort"),
                          "spec.preemption.reclaimWithinCohort") or NEVER,
            bwc),
        flavor_fungibility=FlavorFungibility(
            _optional_str(fungibility.get("whenCanBorrow"),
                          "spec.flavorFungibility.whenCanBorrow") or MAY_STOP_SEARCH,
            _optional_str(fungibility.get("whenCanPreempt"),
                          "spec.flavorFungibility.whenCanPreempt") or TRY_NEXT_FLAVOR,
            _optional_str(fungibility.get("preference"), "spec.flavorFungibility.preference")),
        fair_weight=_weight(spec.get("fairSharing")),
    )


def _cohort(name: str, spec: Mapping[str, Any]) -> Cohort:
    parent = spec.get("parentName")
    return Cohort(name, _optional_str(parent, "spec.parentName"),
                  _resource_groups(spec.get("resourceGroups")), _weight(spec.get("fairSharing")))


def _weight(value: object) -> float:
    fair = _mapping(value, "spec.fairSharing")
    weight = fair.get("weight")
    if weight is None:
        return _DEFAULT_WEIGHT
    if isinstance(weight, bool) or not isinstance(weight, int | float | str):
        raise KueueError(f"spec.fairSharing.weight: invalid quantity {weight!r}")
    text = str(weight).strip()
    scale = {"m": 1e-3, "u": 1e-6, "n": 1e-9}.get(text[-1:], 1.0)
    try:
        return float(text[:-1] if scale != 1.0 else text) * scale
    except ValueError:
        raise KueueError(f"spec.fairSharing.weight: invalid quantity {weight!r}") from None


def _selector(value: object) -> LabelSelector:
    selector = _mapping(value, "spec.namespaceSelector")
    expressions = tuple(
        LabelRequirement(
            _str(e.get("key"), f"spec.namespaceSelector.matchExpressions[{i}].key"),
            _str(e.get("operator"), f"spec.namespaceSelector.matchExpressions[{i}].operator"),
            tuple(_str(v, f"spec.namespaceSelector.matchExpressions[{i}].values") for v in
                  _list(e.get("values"), f"spec.namespaceSelector.matchExpressions[{i}].values")))
        for i, e in enumerate(_mappings(selector.get("matchExpressions"),
                                        "spec.namespaceSelector.matchExpressions")))
    labels = _strings(selector.get("matchLabels"), "spec.namespaceSelector.matchLabels")
    return LabelSelector(frozen_map(labels), expressions)


def _pod_set(raw: Mapping[str, Any], path: str) -> PodSet:
    template = _mapping(raw.get("template"), f"{path}.template")
    pod = _mapping(template.get("spec"), f"{path}.template.spec")
    requests: dict[str, int] = {}
    for i, container in enumerate(_mappings(pod.get("containers"),
                                            f"{path}.template.spec.containers")):
        for name, amount in _requests(container, f"{path}.template.spec.containers[{i}]").items():
            requests[name] = requests.get(name, 0) + amount
    for i, container in enumerate(_mappings(pod.get("initContainers"),
                                            f"{path}.template.spec.initContainers")):
        init = _requests(container, f"{path}.template.spec.initContainers[{i}]")
        for name, amount in init.items():
            requests[name] = max(requests.get(name, 0), amount)
    overhead = _mapping(pod.get("overhead"), f"{path}.template.spec.overhead")
    for name, amount in overhead.items():
        requests[str(name)] = requests.get(str(name), 0) + _quantity(
            str(name), amount, f"{path}.template.spec.overhead.{name}")
    count = raw.get("count", 1)
    return PodSet(
        name=_optional_str(raw.get("name"), f"{path}.name") or DEFAULT_POD_SET,
        count=_int(count, f"{path}.count"),
        requests=frozen_map(requests),
        node_selector=frozen_map(_strings(pod.get("nodeSelector"),
                                          f"{path}.template.spec.nodeSelector")),
        tolerations=_tolerations(pod.get("tolerations"), f"{path}.template.spec.tolerations"),
    )


def _requests(container: Mapping[str, Any], path: str) -> dict[str, int]:
    resources = _mapping(container.get("resources"), f"{path}.resources")
    raw = resources.get("requests")
    if raw is None:
        raw = resources.get("limits")
    values = _mapping(raw, f"{path}.resources.requests")
    return {str(k): _quantity(str(k), v, f"{path}.resources.requests.{k}")
            for k, v in values.items()}


# -- scalars ------------------------------------------------------------------------------

def _mapping(value: object, path: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise KueueError(f"{path}: expected a mapping")
    return value


def _list(value: object, path: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise KueueError(f"{path}: expected a list")
    return value


def _mappings(value: object, path: str) -> list[Mapping[str, Any]]:
    items = _list(value, path)
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise KueueError(f"{path}[{i}]: expected a mapping")
    return items


def _str(value: object, path: str) -> str:
    if not isinstance(value, str) or not value:
        raise KueueError(f"{path}: Required value (a non-empty string)")
    return value


def _optional_str(value: object, path: str) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise KueueError(f"{path}: expected a string, got {value!r}")
    return value


def _int(value: object, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise KueueError(f"{path}: expected an integer, got {value!r}")
    return value


def _strings(value: object, path: str) -> dict[str, str]:
    mapping = _mapping(value, path)
    out: dict[str, str] = {}
    for key, item in mapping.items():
        if not isinstance(item, str | int | float) or isinstance(item, bool):
            raise KueueError(f"{path}.{key}: expected a string")
        out[str(key)] = str(item)
    return out


def _name(meta: Mapping[str, Any]) -> str:
    return _str(meta.get("name"), "metadata.name")


def _namespace(meta: Mapping[str, Any]) -> str:
    return _optional_str(meta.get("namespace"), "metadata.namespace") or "default"


def _quantity(resource: str, value: object, path: str) -> int:
    try:
        return parse_quantity(resource, value)
    except QuotaError as exc:
        raise KueueError(f"{path}: {exc}") from None


def _optional_quantity(resource: str, value: object, path: str) -> int | None:
    return None if value is None else _quantity(resource, value, path)


def _timestamp(value: object) -> float:
    """`metadata.creationTimestamp` as seconds since the epoch (0 when absent)."""
    if value is None:
        return 0.0
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            pass
    raise KueueError(f"metadata.creationTimestamp: invalid time {value!r}")

"""Kueue's admission rules for its objects (CRD schema and webhooks), as `KueueError`s.

Each `validate_*` raises one `KueueError` listing every broken rule as
`<Kind> <name>: <field path>: <message>`, the field path spelled as in the manifest
(`spec.resourceGroups[0].flavors[1].resources[0].lendingLimit`). Rules that need other
objects (a cohort cycle, a workload's priority class) are the manager's.
"""

from __future__ import annotations

import math
import re

from quotactor.kueue.api import (
    ANY,
    BEST_EFFORT_FIFO,
    BORROW,
    LOWER_OR_NEWER_EQUAL_PRIORITY,
    LOWER_PRIORITY,
    MAY_STOP_SEARCH,
    NEVER,
    PREEMPT,
    STRICT_FIFO,
    TRY_NEXT_FLAVOR,
    ClusterQueue,
    Cohort,
    LabelSelector,
    LocalQueue,
    ResourceFlavor,
    ResourceGroup,
    Workload,
    WorkloadPriorityClass,
)
from quotactor.kueue.errors import KueueError

__all__ = [
    "validate_cluster_queue", "validate_cohort", "validate_local_queue",
    "validate_priority_class", "validate_resource_flavor", "validate_workload",
]

_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_NAME_PART = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_INT32 = (-(2**31), 2**31 - 1)
_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
MAX_POD_SETS = 18


class _Errors:
    def __init__(self, kind: str, name: str) -> None:
        self.kind = kind
        self.name = name
        self.items: list[str] = []

    def add(self, path: str, message: str) -> None:
        self.items.append(f"{path}: {message}")

    def raise_any(self) -> None:
        if self.items:
            raise KueueError(f"{self.kind} {self.name or '<unnamed>'}: " + "; ".join(self.items))


def _subdomain(errors: _Errors, path: str, value: str) -> None:
    if not value:
        errors.add(path, "Required value")
    elif len(value) > 253 or not _SUBDOMAIN.match(value):
        errors.add(path, f"Invalid value {value!r}: must be a lowercase RFC 1123 subdomain")


def _label_name(errors: _Errors, path: str, value: str) -> None:
    if not value:
        errors.add(path, "Required value")
    elif len(value) > 63 or not _LABEL.match(value):
        errors.add(path, f"Invalid value {value!r}: must be a lowercase RFC 1123 label")


def _qualified_name(errors: _Errors, path: str, value: str) -> None:
    """A label key or resource name: optional `prefix/` (a subdomain) and a name part."""
    prefix, sep, name = value.rpartition("/")
    if sep and (not prefix or len(prefix) > 253 or not _SUBDOMAIN.match(prefix)):
        errors.add(path, f"Invalid value {value!r}: prefix part must be a DNS subdomain")
    elif not name or len(name) > 63 or not _NAME_PART.match(name):
        errors.add(path, f"Invalid value {value!r}: name part must consist of alphanumeric "
                         "characters, '-', '_' or '.', and start and end with one")


def _non_negative(errors: _Errors, path: str, value: int) -> None:
    if value < 0:
        errors.add(path, f"Invalid value {value}: must be greater than or equal to 0")


def _one_of(errors: _Errors, path: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        errors.add(path, f"Unsupported value {value!r}: supported values: "
                         + ", ".join(f'"{a}"' for a in allowed))


def _weight(errors: _Errors, path: str, weight: float) -> None:
    if not math.isfinite(weight) or weight < 0:
        errors.add(path, f"Invalid value {weight}: must be greater than or equal to 0")
    elif 0 < weight <= 1e-9:
        errors.add(path, f"Invalid value {weight}: when not 0, weight must be > 10e-9")


def _resource_groups(errors: _Errors, groups: tuple[ResourceGroup, ...], has_parent: bool,
                     is_cohort: bool) -> None:
    base = "spec.resourceGroups"
    if len(groups) > 16:
        errors.add(base, f"Too many: {len(groups)}: must have at most 16 items")
    seen_resources: set[str] = set()
    seen_flavors: set[str] = set()
    parent_word = "parent" if is_cohort else "cohort"
    total_flavors = total_resources = 0
    for i, group in enumerate(groups):
        path = f"{base}[{i}]"
        total_flavors += len(group.flavors)
        total_resources += len(group.covered_resources)
        if not 1 <= len(group.covered_resources) <= 64:
            errors.add(f"{path}.coveredResources", "must have between 1 and 64 items")
        if not 1 <= len(group.flavors) <= 64:
            errors.add(f"{path}.flavors", "must have between 1 and 64 items")
        for j, resource in enumerate(group.covered_resources):
            rpath = f"{path}.coveredResources[{j}]"
            _qualified_name(errors, rpath, resource)
            if resource in seen_resources:
                errors.add(rpath, f"Duplicate value: {resource!r}")
            seen_resources.add(resource)
        for j, flavor in enumerate(group.flavors):
            fpath = f"{path}.flavors[{j}]"
            _subdomain(errors, f"{fpath}.name", flavor.name)
            if flavor.name in seen_flavors:
                errors.add(f"{fpath}.name", f"Duplicate value: {flavor.name!r}")
            seen_flavors.add(flavor.name)
            if len(flavor.resources) != len(group.covered_resources):
                errors.add(f"{fpath}.resources", "flavors must have the same number of "
                                                 "resources as the coveredResources")
            for k, (quota, covered) in enumerate(zip(flavor.resources, group.covered_resources,
                                                     strict=False)):
                qpath = f"{fpath}.resources[{k}]"
                if quota.name != covered:
                    errors.add(f"{qpath}.name", f"Invalid value {quota.name!r}: must match "
                                                "the name in coveredResources")
                _non_negative(errors, f"{qpath}.nominalQuota", quota.nominal)
                for field_name, limit in (("borrowingLimit", quota.borrowing_limit),
                                          ("lendingLimit", quota.lending_limit)):
                    if limit is None:
                        continue
                    _non_negative(errors, f"{qpath}.{field_name}", limit)
                    if not has_parent:
                        errors.add(f"{qpath}.{field_name}",
                                   f"must be nil when {parent_word} is empty")
                if (not is_cohort and quota.lending_limit is not None
                        and quota.lending_limit > quota.nominal):
                    errors.add(f"{qpath}.lendingLimit",
                               "must be less than or equal to the nominalQuota")
    if total_flavors > 256:
        errors.add(base, f"total number of flavors across all resourceGroups must be ≤ 256, "
                         f"got {total_flavors}")
    if total_resources > 256:
        errors.add(base, "total number of covered resources across all resourceGroups must "
                         f"be ≤ 256, got {total_resources}")


def _selector(errors: _Errors, path: str, selector: LabelSelector) -> None:
    for key, value in selector.match_labels.items():
        _qualified_name(errors, f"{path}.matchLabels", key)
        if value and (len(value) > 63 or not _NAME_PART.match(value)):
            errors.add(f"{path}.matchLabels", f"Invalid value {value!r}: not a label value")
    for i, requirement in enumerate(selector.match_expressions):
        rpath = f"{path}.matchExpressions[{i}]"
        _qualified_name(errors, f"{rpath}.key", requirement.key)
        _one_of(errors, f"{rpath}.operator", requirement.operator, _SELECTOR_OPERATORS)
        wants_values = requirement.operator in ("In", "NotIn")
        if wants_values and not requirement.values:
            errors.add(f"{rpath}.values", "must be specified when `operator` is 'In' or 'NotIn'")
        if not wants_values and requirement.values:
            errors.add(f"{rpath}.values",
                       "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")


def validate_cluster_queue(cq: ClusterQueue) -> None:
    errors = _Errors("ClusterQueue", cq.name)
    _subdomain(errors, "metadata.name", cq.name)
    if cq.cohort is not None:
        _subdomain(errors, "spec.cohort", cq.cohort)
    _resource_groups(errors, cq.resource_groups, bool(cq.cohort), False)
    _one_of(errors, "spec.queueingStrategy", cq.queueing_strategy,
            (STRICT_FIFO, BEST_EFFORT_FIFO))
    if cq.namespace_selector is not None:
        _selector(errors, "spec.namespaceSelector", cq.namespace_selector)
    preemption = cq.preemption
    _one_of(errors, "spec.preemption.withinClusterQueue", preemption.within_cluster_queue,
            (NEVER, LOWER_PRIORITY, LOWER_OR_NEWER_EQUAL_PRIORITY))
    _one_of(errors, "spec.preemption.reclaimWithinCohort", preemption.reclaim_within_cohort,
            (NEVER, LOWER_PRIORITY, ANY))
    bwc = preemption.borrow_within_cohort
    if bwc is not None:
        _one_of(errors, "spec.preemption.borrowWithinCohort.policy", bwc.policy,
                (NEVER, LOWER_PRIORITY))
        if bwc.max_priority_threshold is not None and not (
                _INT32[0] <= bwc.max_priority_threshold <= _INT32[1]):
            errors.add("spec.preemption.borrowWithinCohort.maxPriorityThreshold",
                       "must be a 32-bit integer")
        if preemption.reclaim_within_cohort == NEVER and bwc.policy != NEVER:
            errors.add("spec.preemption",
                       "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never")
    fungibility = cq.flavor_fungibility
    _one_of(errors, "spec.flavorFungibility.whenCanBorrow", fungibility.when_can_borrow,
            (MAY_STOP_SEARCH, TRY_NEXT_FLAVOR, BORROW))
    _one_of(errors, "spec.flavorFungibility.whenCanPreempt", fungibility.when_can_preempt,
            (MAY_STOP_SEARCH, TRY_NEXT_FLAVOR, PREEMPT))
    if fungibility.preference is not None:
        _one_of(errors, "spec.flavorFungibility.preference", fungibility.preference,
                ("BorrowingOverPreemption", "PreemptionOverBorrowing"))
        if (fungibility.when_can_borrow != TRY_NEXT_FLAVOR
                or fungibility.when_can_preempt != TRY_NEXT_FLAVOR):
            errors.add("spec.flavorFungibility.preference",
                       f"preference {fungibility.preference!r} requires both whenCanBorrow "
                       "and whenCanPreempt to be TryNextFlavor")
    _weight(errors, "spec.fairSharing.weight", cq.fair_weight)
    errors.raise_any()


def validate_cohort(cohort: Cohort) -> None:
    errors = _Errors("Cohort", cohort.name)
    _subdomain(errors, "metadata.name", cohort.name)
    if cohort.parent is not None:
        _subdomain(errors, "spec.parentName", cohort.parent)
        if cohort.parent == cohort.name:
            errors.add("spec.parentName", "a Cohort cannot be its own parent")
    _resource_groups(errors, cohort.resource_groups, bool(cohort.parent), True)
    _weight(errors, "spec.fairSharing.weight", cohort.fair_weight)
    errors.raise_any()


def validate_resource_flavor(flavor: ResourceFlavor) -> None:
    errors = _Errors("ResourceFlavor", flavor.name)
    _subdomain(errors, "metadata.name", flavor.name)
    for key in flavor.node_labels:
        _qualified_name(errors, "spec.nodeLabels", key)
    if len(flavor.node_labels) > 8:
        errors.add("spec.nodeLabels", "must have at most 8 items")
    if len(flavor.node_taints) > 8:
        errors.add("spec.nodeTaints", "must have at most 8 items")
    for i, taint in enumerate(flavor.node_taints):
        _qualified_name(errors, f"spec.nodeTaints[{i}].key", taint.key)
        _one_of(errors, f"spec.nodeTaints[{i}].effect", taint.effect, _TAINT_EFFECTS)
    for i, toleration in enumerate(flavor.tolerations):
        path = f"spec.tolerations[{i}]"
        _one_of(errors, f"{path}.operator", toleration.operator, ("Equal", "Exists"))
        if not toleration.key and toleration.operator != "Exists":
            errors.add(f"{path}.operator", "operator must be Exists when 'key' is empty")
        if toleration.operator == "Exists" and toleration.value:
            errors.add(f"{path}.value", "a value must be empty when 'operator' is 'Exists'")
        if toleration.effect:
            _one_of(errors, f"{path}.effect", toleration.effect, _TAINT_EFFECTS)
    errors.raise_any()


def validate_local_queue(queue: LocalQueue) -> None:
    errors = _Errors("LocalQueue", f"{queue.namespace}/{queue.name}")
    _label_name(errors, "metadata.namespace", queue.namespace)
    _subdomain(errors, "metadata.name", queue.name)
    _subdomain(errors, "spec.clusterQueue", queue.cluster_queue)
    errors.raise_any()


def validate_priority_class(priority_class: WorkloadPriorityClass) -> None:
    errors = _Errors("WorkloadPriorityClass", priority_class.name)
    _subdomain(errors, "metadata.name", priority_class.name)
    if not _INT32[0] <= priority_class.value <= _INT32[1]:
        errors.add("value", f"Invalid value {priority_class.value}: must be a 32-bit integer")
    errors.raise_any()


def validate_workload(workload: Workload) -> None:
    errors = _Errors("Workload", workload.key)
    _label_name(errors, "metadata.namespace", workload.namespace)
    _subdomain(errors, "metadata.name", workload.name)
    _subdomain(errors, "spec.queueName", workload.queue_name)
    if workload.priority is not None and not _INT32[0] <= workload.priority <= _INT32[1]:
        errors.add("spec.priority", f"Invalid value {workload.priority}: must be a 32-bit "
                                    "integer")
    if workload.priority_class is not None:
        _subdomain(errors, "spec.priorityClassName", workload.priority_class)
    if not math.isfinite(workload.created):
        errors.add("metadata.creationTimestamp", "must be a finite time")
    if not 1 <= len(workload.pod_sets) <= MAX_POD_SETS:
        errors.add("spec.podSets", f"must have between 1 and {MAX_POD_SETS} items")
    names: set[str] = set()
    for i, pod_set in enumerate(workload.pod_sets):
        path = f"spec.podSets[{i}]"
        _label_name(errors, f"{path}.name", pod_set.name)
        if pod_set.name in names:
            errors.add(f"{path}.name", f"Duplicate value: {pod_set.name!r}")
        names.add(pod_set.name)
        if not 0 <= pod_set.count <= _INT32[1]:
            errors.add(f"{path}.count", f"Invalid value {pod_set.count}: must be greater than "
                                        "or equal to 0")
        for resource, amount in sorted(pod_set.requests.items()):
            rpath = f"{path}.template.spec.containers[*].resources.requests[{resource}]"
            _qualified_name(errors, rpath, resource)
            _non_negative(errors, rpath, amount)
    errors.raise_any()

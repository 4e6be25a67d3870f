"""From `quotactor.config` models to the scheduler's specs.

The config package validates a document as YuniKorn would; this adapter only reshapes the
result. Every partition spec keeps the whole loaded config as its limits source: the user group
manager of each partition picks its own partition out of it.
"""

from __future__ import annotations

from collections.abc import Mapping

from quotactor.config import (
    ChildTemplate,
    Filter,
    PartitionConfig,
    PlacementRule,
    QueueConfig,
    SchedulerConfig,
)
from quotactor.core.queue_path import ROOT
from quotactor.scheduler.objects.node import NodeSortPolicy
from quotactor.scheduler.objects.spec import (
    FilterSpec,
    PartitionSpec,
    QueueSpec,
    RuleSpec,
    TemplateSpec,
)

__all__ = ["partition_specs"]


def partition_specs(config: SchedulerConfig) -> tuple[PartitionSpec, ...]:
    return tuple(_partition(part, config) for part in config.partitions)


def _partition(part: PartitionConfig, config: SchedulerConfig) -> PartitionSpec:
    root = part.root or QueueConfig(name=ROOT, parent=True)
    policy: NodeSortPolicy = "binpacking" if part.node_sort_policy.type.lower() == "binpacking" \
        else "fair"
    return PartitionSpec(
        name=part.name,
        root=_queue(root, ROOT),
        rules=tuple(_rule(rule) for rule in part.placement_rules),
        node_sort_policy=policy,
        limits=config,
        preemption_enabled=part.preemption.enabled is not False,
        quota_preemption_enabled=part.preemption.quota_preemption_enabled is True,
    )


def _queue(queue: QueueConfig, name: str) -> QueueSpec:
    return QueueSpec(
        name=name,
        parent=queue.parent,
        max_resources=_quantities(queue.max_resources),
        guaranteed=_quantities(queue.guaranteed),
        max_applications=queue.max_applications,
        properties=queue.properties,
        submit_acl=queue.submit_acl,
        admin_acl=queue.admin_acl,
        child_template=_template(queue.child_template),
        children=tuple(_queue(child, child.name) for child in queue.queues),
    )


def _template(template: ChildTemplate | None) -> TemplateSpec | None:
    if template is None:
        return None
    return TemplateSpec(
        max_resources=_quantities(template.max_resources),
        guaranteed=_quantities(template.guaranteed),
        max_applications=template.max_applications,
        properties=template.properties,
    )


def _quantities(values: Mapping[str, int]) -> Mapping[str, int] | None:
    """None when nothing is stated; the stated quantities, zeros included, otherwise."""
    return values if values else None


def _rule(rule: PlacementRule) -> RuleSpec:
    return RuleSpec(
        name=rule.name,
        create=rule.create,
        parent=_rule(rule.parent) if rule.parent is not None else None,
        filter=_filter(rule.filter),
        value=rule.value,
    )


def _filter(found: Filter | None) -> FilterSpec | None:
    if found is None:
        return None
    return FilterSpec(type="deny" if found.type.lower() == "deny" else "allow",
                      users=found.users, groups=found.groups)

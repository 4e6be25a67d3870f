"""What the scheduler needs from a configuration, as small frozen values.

The scheduler reads queue hierarchies and placement rules only through these values; the
adapter in `from_config` builds them from `quotactor.config` models. Tests may also build them
directly, and a partition spec carries the source its user group manager is configured with.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from quotactor.scheduler.objects.node import NodeSortPolicy

__all__ = [
    "DEFAULT_PARTITION",
    "FilterSpec",
    "PartitionSpec",
    "QueueSpec",
    "RuleSpec",
    "TemplateSpec",
    "default_partition",
]

DEFAULT_PARTITION = "default"


def _frozen_map(values: Mapping[str, str] | None) -> Mapping[str, str]:
    return MappingProxyType(dict(values or {}))


@dataclass(frozen=True, slots=True)
class TemplateSpec:
    """A parent's `childtemplate`: the settings its dynamically created children start with."""

    max_resources: Mapping[str, int] | None = None
    guaranteed: Mapping[str, int] | None = None
    max_applications: int = 0
    properties: Mapping[str, str] = field(default_factory=lambda: _frozen_map(None))


@dataclass(frozen=True, slots=True)
class QueueSpec:
    """One configured (managed) queue and its configured children.

    Resource maps keep explicit zeros: `{gpu: 0}` allows no GPU, an absent name is unlimited.
    """

    name: str
    parent: bool = False
    max_resources: Mapping[str, int] | None = None
    guaranteed: Mapping[str, int] | None = None
    max_applications: int = 0
    properties: Mapping[str, str] = field(default_factory=lambda: _frozen_map(None))
    submit_acl: str | None = None
    admin_acl: str | None = None
    child_template: TemplateSpec | None = None
    children: tuple[QueueSpec, ...] = ()


@dataclass(frozen=True, slots=True)
class FilterSpec:
    """A placement rule filter: users and groups as lists, or one regular expression each."""

    type: Literal["allow", "deny"] = "allow"
    users: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RuleSpec:
    """A placement rule: `provided`, `user`, `fixed` or `tag`, with create, parent and filter."""

    name: str
    create: bool = False
    parent: RuleSpec | None = None
    filter: FilterSpec | None = None
    value: str = ""


@dataclass(frozen=True, slots=True)
class PartitionSpec:
    """A partition: its queue tree, placement rules, node sorting, and its limits' source.

    `limits` is whatever `UserGroupManager.update_config` accepts for this partition (a loaded
    config, a limit table, or the minimal mapping form); None means no user or group limits.
    `preemption_enabled` and `quota_preemption_enabled` are the partition's `preemption`
    switches, with YuniKorn's defaults (priority preemption on, quota preemption off).
    """

    name: str
    root: QueueSpec
    rules: tuple[RuleSpec, ...] = ()
    node_sort_policy: NodeSortPolicy = "fair"
    limits: Any = None
    preemption_enabled: bool = True
    quota_preemption_enabled: bool = False


def default_partition(name: str = DEFAULT_PARTITION) -> PartitionSpec:
    """What a scheduler started without configuration runs: anyone may submit anywhere.

    The root allows every user and the `provided` rule creates the queue an application names.
    """
    return PartitionSpec(
        name=name,
        root=QueueSpec(name="root", parent=True, submit_acl="*"),
        rules=(RuleSpec(name="provided", create=True),),
    )

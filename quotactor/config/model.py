"""The YuniKorn scheduler configuration as immutable values.

Every key YuniKorn's config structs know has a field here, so a loaded config can be shown,
compared and re-validated without going back to the YAML. Each object remembers where it sat
in the document (`location`), which is left out of equality: two configs that say the same
thing are equal however they were laid out.

The loader hands out normalised configs, as YuniKorn's validator does: each partition holds
exactly one top queue, `root` (inserted when the document has none), marked as a parent, and
partition `limits` are also the root queue's limits when the root queue states none.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from quotactor.config.frozen import FrozenMap
from quotactor.config.quantities import EMPTY_QUANTITIES, Quantities

__all__ = [
    "ChildTemplate",
    "Filter",
    "LimitConfig",
    "NodeSortPolicy",
    "PartitionConfig",
    "PlacementRule",
    "PreemptionConfig",
    "QueueConfig",
    "SchedulerConfig",
    "UserGroupResolverConfig",
    "DEFAULT_PARTITION",
    "line_at",
]

DEFAULT_PARTITION = "default"
_EMPTY_TEXT_MAP: FrozenMap[str, str] = FrozenMap()
_EMPTY_WEIGHTS: FrozenMap[str, float] = FrozenMap()


def _set(obj: Any, name: str, value: Any) -> None:
    object.__setattr__(obj, name, value)


def _names(values: Iterable[str]) -> tuple[str, ...]:
    return (values,) if isinstance(values, str) else tuple(values)


def _text_map(values: Mapping[str, str] | None) -> FrozenMap[str, str]:
    if isinstance(values, FrozenMap):
        return values
    return FrozenMap(values) if values else _EMPTY_TEXT_MAP


@dataclass(frozen=True, slots=True)
class LimitConfig:
    """One `limits` entry: a limit for each named user and group, not one shared by them."""

    limit: str = ""
    users: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    max_resources: Quantities = EMPTY_QUANTITIES
    max_applications: int = 0
    location: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        _set(self, "users", _names(self.users))
        _set(self, "groups", _names(self.groups))
        _set(self, "max_resources", Quantities.of(self.max_resources))


@dataclass(frozen=True, slots=True)
class ChildTemplate:
    """Settings that queues created below a parent at run time (dynamic queues) start with."""

    max_applications: int = 0
    properties: FrozenMap[str, str] = _EMPTY_TEXT_MAP
    max_resources: Quantities = EMPTY_QUANTITIES
    guaranteed: Quantities = EMPTY_QUANTITIES
    location: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        _set(self, "properties", _text_map(self.properties))
        _set(self, "max_resources", Quantities.of(self.max_resources))
        _set(self, "guaranteed", Quantities.of(self.guaranteed))


@dataclass(frozen=True, slots=True)
class QueueConfig:
    """A configured (managed) queue and its children.

    `admin_acl`/`submit_acl` are None when the document leaves them out and `""` when it sets
    them empty; YuniKorn treats both as "nobody", but the difference is kept for display.
    """

    name: str
    parent: bool = False
    max_applications: int = 0
    properties: FrozenMap[str, str] = _EMPTY_TEXT_MAP
    admin_acl: str | None = None
    submit_acl: str | None = None
    max_resources: Quantities = EMPTY_QUANTITIES
    guaranteed: Quantities = EMPTY_QUANTITIES
    child_template: ChildTemplate | None = None
    limits: tuple[LimitConfig, ...] = ()
    queues: tuple[QueueConfig, ...] = ()
    location: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        _set(self, "properties", _text_map(self.properties))
        _set(self, "max_resources", Quantities.of(self.max_resources))
        _set(self, "guaranteed", Quantities.of(self.guaranteed))
        _set(self, "limits", tuple(self.limits))
        _set(self, "queues", tuple(self.queues))


@dataclass(frozen=True, slots=True)
class Filter:
    """Which users and groups a placement rule applies to (`type` empty means allow)."""

    type: str = ""
    users: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    location: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        _set(self, "users", _names(self.users))
        _set(self, "groups", _names(self.groups))


@dataclass(frozen=True, slots=True)
class PlacementRule:
    """A placement rule; `parent` is the rule that decides the parent queue of its result."""

    name: str
    create: bool = False
    parent: PlacementRule | None = None
    filter: Filter | None = None
    value: str = ""
    location: str = field(default="", compare=False)

    def chain(self) -> tuple[PlacementRule, ...]:
        """The rules from the outermost parent rule down to this one."""
        outer = self.parent.chain() if self.parent is not None else ()
        return (*outer, self)


@dataclass(frozen=True, slots=True)
class PreemptionConfig:
    """Partition preemption switches; None means "not set" (YuniKorn's default applies)."""

    enabled: bool | None = None
    quota_preemption_enabled: bool | None = None
    location: str = field(default="", compare=False)


@dataclass(frozen=True, slots=True)
class NodeSortPolicy:
    """How nodes are ordered for scheduling: `fair` (also when empty) or `binpacking`."""

    type: str = ""
    resource_weights: FrozenMap[str, float] = _EMPTY_WEIGHTS
    location: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        weights = self.resource_weights
        if not isinstance(weights, FrozenMap):
            _set(self, "resource_weights", FrozenMap(weights or {}))


@dataclass(frozen=True, slots=True)
class UserGroupResolverConfig:
    """Where group memberships come from: "" (none), `os`, `ldap` or `test`."""

    type: str = ""
    location: str = field(default="", compare=False)


@dataclass(frozen=True, slots=True)
class PartitionConfig:
    """One partition: its queue tree (a single `root`), placement rules and settings."""

    name: str = DEFAULT_PARTITION
    queues: tuple[QueueConfig, ...] = ()
    placement_rules: tuple[PlacementRule, ...] = ()
    limits: tuple[LimitConfig, ...] = ()
    preemption: PreemptionConfig = field(default_factory=PreemptionConfig)
    node_sort_policy: NodeSortPolicy = field(default_factory=NodeSortPolicy)
    statedump_file_path: str = ""
    user_group_resolver: UserGroupResolverConfig | None = None
    location: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        _set(self, "queues", tuple(self.queues))
        _set(self, "placement_rules", tuple(self.placement_rules))
        _set(self, "limits", tuple(self.limits))

    @property
    def root(self) -> QueueConfig | None:
        """The top queue (None only for a partition without any queue config)."""
        return self.queues[0] if self.queues else None


@dataclass(frozen=True, slots=True)
class SchedulerConfig:
    """A whole YuniKorn scheduler config (`queues.yaml`).

    `source` is the text it was loaded from, kept so that it can be served back as written;
    `checksum` is the document's own top-level `checksum` key, if it has one. `lines` maps
    document locations to YAML line numbers, for reporting.
    """

    partitions: tuple[PartitionConfig, ...] = ()
    source: str | None = field(default=None, compare=False)
    checksum: str | None = None
    lines: Mapping[str, int] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        _set(self, "partitions", tuple(self.partitions))

    def partition(self, name: str) -> PartitionConfig | None:
        """The partition called `name` (case-insensitive; "" means `default`)."""
        folded = (name or DEFAULT_PARTITION).casefold()
        exact = next((p for p in self.partitions if p.name == name), None)
        return exact or next((p for p in self.partitions if p.name.casefold() == folded), None)

    def line_of(self, location: str) -> int | None:
        """The YAML line of `location`, or of its closest enclosing node that has one."""
        return line_at(self.lines, location)


def line_at(lines: Mapping[str, int], location: str) -> int | None:
    """The line of `location` in `lines`, else of the closest enclosing location listed."""
    while location:
        line = lines.get(location)
        if line is not None:
            return line
        cut = max(location.rfind("."), location.rfind("["))
        location = location[:cut] if cut > 0 else ""
    return None

"""From the YAML node tree to the config model, with YuniKorn's normalisation.

Keys are YuniKorn's (lowercase, matched exactly, unknown ones rejected). After decoding, each
partition is normalised as YuniKorn's validator does before it checks anything: a `root` queue
is inserted above the top queues unless there is exactly one top queue called root, the root
queue is always a parent, and partition limits become the root queue's limits when it has
none. The partition name defaults to `default`.
"""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType

from yaml.nodes import Node

from quotactor.config.errors import ConfigError
from quotactor.config.facts import SourceFacts
from quotactor.config.frozen import FrozenMap
from quotactor.config.model import (
    DEFAULT_PARTITION,
    ChildTemplate,
    Filter,
    LimitConfig,
    NodeSortPolicy,
    PartitionConfig,
    PlacementRule,
    PreemptionConfig,
    QueueConfig,
    SchedulerConfig,
    UserGroupResolverConfig,
)
from quotactor.config.quantities import EMPTY_QUANTITIES, Quantities
from quotactor.config.yamlread import Field, Reader
from quotactor.core.queue_path import ROOT
from quotactor.core.resources import QuantityError, parse_quantity

__all__ = ["build"]

_TOP = ("partitions", "checksum")
_PARTITION = ("name", "queues", "placementrules", "limits", "preemption", "nodesortpolicy",
              "statedumpfilepath", "usergroupresolver")
_QUEUE = ("name", "parent", "resources", "maxapplications", "properties", "adminacl",
          "submitacl", "childtemplate", "queues", "limits")
_RESOURCES = ("guaranteed", "max")
_CHILD_TEMPLATE = ("maxapplications", "properties", "resources")
_LIMIT = ("limit", "users", "groups", "maxresources", "maxapplications")
_RULE = ("name", "create", "filter", "parent", "value")
_FILTER = ("type", "users", "groups")
_PREEMPTION = ("enabled", "quotapreemptionenabled")
_NODE_SORT = ("type", "resourceweights")
_RESOLVER = ("type",)


def build(root: Node | None, loader: object, source: str | None
          ) -> tuple[SchedulerConfig, SourceFacts]:
    """The normalised config of a composed document; `ConfigError` if it cannot be decoded."""
    return _Builder(Reader(loader, source or "")).document(root, source)


class _Builder:
    def __init__(self, reader: Reader) -> None:
        self.read = reader
        self.bad_quantities: dict[str, ConfigError] = {}
        self.declared: set[str] = set()

    def document(self, node: Node | None, source: str | None
                 ) -> tuple[SchedulerConfig, SourceFacts]:
        fields = self.read.fields(node, "", "the document", _TOP) or {}
        partitions = tuple(
            self.partition(item)
            for item in self.read.items(fields.get("partitions"), "partitions")
        )
        checksum = self.read.optional_text(fields.get("checksum"), "checksum")
        if self.read.errors:
            raise ConfigError.of(sorted(self.read.errors, key=lambda error: error.line or 0))
        config = SchedulerConfig(partitions, source, checksum, MappingProxyType(self.read.lines))
        return config, SourceFacts(self.bad_quantities, frozenset(self.declared))

    def partition(self, item: Field) -> PartitionConfig:
        fields = self.read.fields(item.node, item.location, "a partition", _PARTITION) or {}
        name = self.read.text(fields.get("name"), "the partition name")
        if not name or name.lower() == DEFAULT_PARTITION:
            name = DEFAULT_PARTITION
        queues_field = fields.get("queues")
        queues = tuple(self.queue(q) for q in self.read.items(queues_field, "queues"))
        limits = self.limits(fields.get("limits"))
        if queues_field is not None and not self.read.is_null(queues_field.node):
            queues = (self._root(queues, queues_field.location, limits),)
        return PartitionConfig(
            name=name,
            queues=queues,
            placement_rules=tuple(
                self.rule(r) for r in self.read.items(fields.get("placementrules"),
                                                      "placementrules")),
            limits=limits,
            preemption=self.preemption(fields.get("preemption")),
            node_sort_policy=self.node_sort(fields.get("nodesortpolicy")),
            statedump_file_path=self.read.text(fields.get("statedumpfilepath"),
                                               "statedumpfilepath"),
            user_group_resolver=self.resolver(fields.get("usergroupresolver")),
            location=item.location,
        )

    @staticmethod
    def _root(queues: tuple[QueueConfig, ...], location: str,
              partition_limits: tuple[LimitConfig, ...]) -> QueueConfig:
        if len(queues) == 1 and queues[0].name.lower() == ROOT:
            root = replace(queues[0], parent=True)
        else:
            root = QueueConfig(name=ROOT, parent=True, queues=queues, location=location)
        if partition_limits and not root.limits:
            root = replace(root, limits=partition_limits)
        return root

    def queue(self, item: Field) -> QueueConfig:
        fields = self.read.fields(item.node, item.location, "a queue", _QUEUE) or {}
        guaranteed, max_resources = self.resources(fields.get("resources"), item.location)
        template = fields.get("childtemplate")
        return QueueConfig(
            name=self.read.text(fields.get("name"), "the queue name"),
            parent=bool(self.read.flag(fields.get("parent"), "parent")),
            max_applications=self.read.count(fields.get("maxapplications"), "maxapplications"),
            properties=FrozenMap(self.read.text_map(fields.get("properties"), "properties")
                                 or {}),
            admin_acl=self.read.optional_text(fields.get("adminacl"), "adminacl"),
            submit_acl=self.read.optional_text(fields.get("submitacl"), "submitacl"),
            max_resources=max_resources,
            guaranteed=guaranteed,
            child_template=None if template is None else self.child_template(template),
            limits=self.limits(fields.get("limits")),
            queues=tuple(self.queue(q) for q in self.read.items(fields.get("queues"),
                                                                 "queues")),
            location=item.location,
        )

    def resources(self, item: Field | None, queue_location: str | None
                  ) -> tuple[Quantities, Quantities]:
        """(guaranteed, max) of a `resources` block."""
        if item is None:
            return EMPTY_QUANTITIES, EMPTY_QUANTITIES
        fields = self.read.fields(item.node, item.location, "queue resources", _RESOURCES) or {}
        declared = [fields.get(k) for k in _RESOURCES]
        if queue_location is not None and any(
                f is not None and not self.read.is_null(f.node) for f in declared):
            self.declared.add(queue_location)
        return (self.quantities(fields.get("guaranteed"), "guaranteed resources"),
                self.quantities(fields.get("max"), "max resources"))

    def quantities(self, item: Field | None, what: str) -> Quantities:
        """Parsed quantities; a bad entry is recorded for validation and empties the map."""
        raw = self.read.text_map(item, what)
        if not raw or item is None:
            return EMPTY_QUANTITIES
        values: dict[str, int] = {}
        for name, text in raw.items():
            entry = f"{item.location}.{name}"
            try:
                if not name:
                    raise QuantityError(f"{what} has an empty resource name")
                values[name] = parse_quantity(name, text)
            except QuantityError as exc:
                self.bad_quantities.setdefault(
                    item.location, ConfigError(str(exc), entry, self.read.lines.get(entry)))
        return EMPTY_QUANTITIES if item.location in self.bad_quantities else Quantities(values)

    def child_template(self, item: Field) -> ChildTemplate:
        fields = self.read.fields(item.node, item.location, "a child template",
                                  _CHILD_TEMPLATE) or {}
        guaranteed, max_resources = self.resources(fields.get("resources"), None)
        return ChildTemplate(
            max_applications=self.read.count(fields.get("maxapplications"), "maxapplications"),
            properties=FrozenMap(self.read.text_map(fields.get("properties"), "properties")
                                 or {}),
            max_resources=max_resources,
            guaranteed=guaranteed,
            location=item.location,
        )

    def limits(self, item: Field | None) -> tuple[LimitConfig, ...]:
        return tuple(self.limit(entry) for entry in self.read.items(item, "limits"))

    def limit(self, item: Field) -> LimitConfig:
        fields = self.read.fields(item.node, item.location, "a limit", _LIMIT) or {}
        return LimitConfig(
            limit=self.read.text(fields.get("limit"), "the limit description"),
            users=self.read.names(fields.get("users"), "users"),
            groups=self.read.names(fields.get("groups"), "groups"),
            max_resources=self.quantities(fields.get("maxresources"), "maxresources"),
            max_applications=self.read.count(fields.get("maxapplications"), "maxapplications"),
            location=item.location,
        )

    def rule(self, item: Field) -> PlacementRule:
        fields = self.read.fields(item.node, item.location, "a placement rule", _RULE) or {}
        parent, rule_filter = fields.get("parent"), fields.get("filter")
        return PlacementRule(
            name=self.read.text(fields.get("name"), "the rule name"),
            create=bool(self.read.flag(fields.get("create"), "create")),
            parent=None if parent is None or self.read.is_null(parent.node)
            else self.rule(parent),
            filter=None if rule_filter is None else self.filter(rule_filter),
            value=self.read.text(fields.get("value"), "the rule value"),
            location=item.location,
        )

    def filter(self, item: Field) -> Filter:
        fields = self.read.fields(item.node, item.location, "a rule filter", _FILTER) or {}
        return Filter(
            type=self.read.text(fields.get("type"), "the filter type"),
            users=self.read.names(fields.get("users"), "filter users"),
            groups=self.read.names(fields.get("groups"), "filter groups"),
            location=item.location,
        )

    def preemption(self, item: Field | None) -> PreemptionConfig:
        if item is None:
            return PreemptionConfig()
        fields = self.read.fields(item.node, item.location, "preemption", _PREEMPTION) or {}
        return PreemptionConfig(
            enabled=self.read.flag(fields.get("enabled"), "enabled"),
            quota_preemption_enabled=self.read.flag(fields.get("quotapreemptionenabled"),
                                                    "quotapreemptionenabled"),
            location=item.location,
        )

    def node_sort(self, item: Field | None) -> NodeSortPolicy:
        if item is None:
            return NodeSortPolicy()
        fields = self.read.fields(item.node, item.location, "nodesortpolicy", _NODE_SORT) or {}
        weights = {}
        for name, value in self.read.pairs(fields.get("resourceweights"), "resourceweights"):
            weight = self.read.number(value, f"the resource weight of {name!r}")
            if weight is not None:
                weights[name] = weight
        return NodeSortPolicy(
            type=self.read.text(fields.get("type"), "the node sort policy type"),
            resource_weights=FrozenMap(weights),
            location=item.location,
        )

    def resolver(self, item: Field | None) -> UserGroupResolverConfig | None:
        if item is None:
            return None
        fields = self.read.fields(item.node, item.location, "usergroupresolver",
                                  _RESOLVER) or {}
        return UserGroupResolverConfig(
            type=self.read.text(fields.get("type"), "the resolver type"),
            location=item.location,
        )

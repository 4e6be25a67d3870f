"""Queues: where applications wait and run, and where `resources.max` is enforced.

A queue keeps the usage of its whole subtree (allocated and pending resources, running
applications), so the limits of every ancestor can be checked by walking up from the leaf.
Managed queues come from the configuration; unmanaged ones are created by placement rules
and removed when they empty. A managed queue removed from the configuration drains: it takes
no new applications, keeps scheduling the ones it has, and disappears when it is empty.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

from quotactor.core.identity import UserGroup
from quotactor.core.resources import Resource
from quotactor.scheduler.objects.acl import Acl
from quotactor.scheduler.objects.ask import MIN_PRIORITY
from quotactor.scheduler.objects.spec import QueueSpec, TemplateSpec

if TYPE_CHECKING:
    from quotactor.scheduler.objects.application import Application
    from quotactor.scheduler.objects.ask import Ask

__all__ = ["MIN_PRIORITY", "PRIORITY_OFFSET", "PRIORITY_POLICY", "Queue", "QueueStatus",
           "SORT_POLICY", "SORT_PRIORITY", "current_priority"]

QueueStatus = Literal["Active", "Draining"]

SORT_POLICY = "application.sort.policy"
SORT_PRIORITY = "application.sort.priority"
PRIORITY_POLICY = "priority.policy"
PRIORITY_OFFSET = "priority.offset"
_NOT_INHERITED = (PRIORITY_POLICY, PRIORITY_OFFSET)
_EMPTY: Mapping[str, str] = MappingProxyType({})


class Queue:
    """One queue of a partition's hierarchy, with the usage of its subtree."""

    __slots__ = (
        "admin_acl", "allocated", "apps", "children", "guaranteed", "is_parent", "managed",
        "max_applications", "max_resources", "name", "own_properties", "parent", "path",
        "pending", "pending_apps", "pinned", "priorities", "priority_fence", "priority_offset",
        "properties", "running", "shapes", "sort_fair", "sort_priority", "status", "submit_acl",
        "template",
    )

    def __init__(self, name: str, parent: Queue | None, managed: bool,
                 is_parent: bool = False) -> None:
        self.name = name
        self.parent = parent
        self.path: str = name if parent is None else f"{parent.path}.{name}"
        self.managed = managed
        self.is_parent = is_parent
        self.status: QueueStatus = "Active"
        self.max_resources: Mapping[str, int] | None = None
        self.guaranteed: Mapping[str, int] | None = None
        self.max_applications = 0
        self.own_properties: Mapping[str, str] = _EMPTY
        self.properties: Mapping[str, str] = _EMPTY
        self.submit_acl: Acl | None = None
        self.admin_acl: Acl | None = None
        self.template: TemplateSpec | None = None
        self.children: dict[str, Queue] = {}
        self.apps: dict[str, Application] = {}
        self.pending_apps: dict[str, Application] = {}
        self.shapes: dict[Resource, int] = {}
        self.priorities: dict[int, int] = {}
        self.pinned = 0
        self.allocated = Resource()
        self.pending = Resource()
        self.running: set[str] = set()
        self.sort_fair = False
        self.sort_priority = True
        self.priority_fence = False
        self.priority_offset = 0
        if parent is not None:
            parent.children[name] = self
        self.refresh_properties()

    # -- shape -------------------------------------------------------------------------

    @property
    def is_leaf(self) -> bool:
        return not self.is_parent and not self.children

    def lineage(self) -> Iterator[Queue]:
        """This queue, then each ancestor up to root."""
        queue: Queue | None = self
        while queue is not None:
            yield queue
            queue = queue.parent

    def walk(self) -> Iterator[Queue]:
        """This queue and every descendant, parents before children, children by name."""
        yield self
        for name in sorted(self.children):
            yield from self.children[name].walk()

    def inherited_template(self) -> TemplateSpec | None:
        """The child template that applies to new dynamic children here (nearest ancestor's)."""
        for queue in self.lineage():
            if queue.template is not None:
                return queue.template
        return None

    def is_empty(self) -> bool:
        return not self.apps and not self.children

    # -- configuration -------------------------------------------------------------------

    def apply_spec(self, spec: QueueSpec) -> None:
        """Take a managed queue's configured settings; usage and applications are kept."""
        self.managed = True
        self.status = "Active"
        self.is_parent = spec.parent or bool(spec.children)
        self.max_resources = spec.max_resources
        self.guaranteed = spec.guaranteed
        self.max_applications = spec.max_applications
        self.submit_acl = Acl.parse(spec.submit_acl)
        self.admin_acl = Acl.parse(spec.admin_acl)
        self.template = spec.child_template
        self.own_properties = MappingProxyType(dict(spec.properties))
        self.refresh_properties()

    def apply_template(self, template: TemplateSpec | None) -> None:
        """Start a dynamic queue from its ancestors' child template (nothing if none)."""
        if template is None:
            return
        self.max_resources = template.max_resources
        self.guaranteed = template.guaranteed
        self.max_applications = template.max_applications
        self.own_properties = MappingProxyType(dict(template.properties))
        self.refresh_properties()

    def refresh_properties(self) -> None:
        """Recompute the effective properties: the parent's (bar priority settings), then own."""
        merged: dict[str, str] = {}
        if self.parent is not None:
            merged.update((k, v) for k, v in self.parent.properties.items()
                          if k not in _NOT_INHERITED)
        merged.update(self.own_properties)
        self.properties = MappingProxyType(merged)
        self.sort_fair = merged.get(SORT_POLICY, "fifo").lower() == "fair"
        self.sort_priority = merged.get(SORT_PRIORITY, "enabled").lower() != "disabled"
        self.priority_fence = merged.get(PRIORITY_POLICY, "default").lower() == "fence"
        self.priority_offset = _int(merged.get(PRIORITY_OFFSET, "0"))
        for child in self.children.values():
            child.refresh_properties()

    # -- access ---------------------------------------------------------------------------

    def may_submit(self, user: UserGroup) -> bool:
        """Submit or admin ACL grants here or on an ancestor (no ACL anywhere: denied)."""
        for queue in self.lineage():
            for acl in (queue.submit_acl, queue.admin_acl):
                if acl is not None and acl.allows(user):
                    return True
        return False

    # -- usage ----------------------------------------------------------------------------

    def over_max(self, resource: Resource) -> Queue | None:
        """The first queue, leaf to root, whose `resources.max` `resource` would break."""
        queue: Queue | None = self  # a loop, not `lineage()`: every attempt asks it
        while queue is not None:
            if queue.max_resources is not None and not queue.admits(resource):
                return queue
            queue = queue.parent
        return None

    def admits(self, resource: Resource) -> bool:
        """Whether `resource` fits under this queue's own `resources.max` (ancestors aside)."""
        limit = self.max_resources
        if limit is None:
            return True
        used = self.allocated
        for name, quantity in resource.items():
            cap = limit.get(name)
            if cap is not None and used.get(name, 0) + quantity > cap:
                return False
        return True

    def full_of_apps(self, application_id: str) -> Queue | None:
        """The first queue, leaf to root, whose `maxapplications` a new application would break."""
        queue: Queue | None = self  # a loop, not `lineage()`: every new application asks it
        while queue is not None:
            if queue.max_applications and application_id not in queue.running \
                    and len(queue.running) >= queue.max_applications:
                return queue
            queue = queue.parent
        return None

    def add_allocated(self, delta: Resource) -> None:
        for queue in self.lineage():
            queue.allocated = queue.allocated + delta

    def ask_added(self, app: Application, ask: Ask, replaced: Ask | None) -> None:
        """Count a new pending ask of `app` in this leaf and up the hierarchy."""
        if replaced is not None:
            self.ask_removed(app, replaced)
        for queue in self.lineage():
            queue.pending = queue.pending + ask.resource
            queue._count(ask, 1)
        self.pending_apps[app.application_id] = app

    def asks_added(self, app: Application, asks: Sequence[Ask]) -> None:
        """Count new pending asks of `app` (none replacing another) in this leaf and up the
        hierarchy, as `ask_added` of each would."""
        total, alike = _tally(asks)
        for queue in self.lineage():
            queue.pending = queue.pending + total
            for ask, count in alike:
                queue._count(ask, count)
        self.pending_apps[app.application_id] = app

    def asks_removed(self, app: Application, asks: Sequence[Ask]) -> None:
        """Stop counting pending asks of `app`, as `ask_removed` of each would."""
        total, alike = _tally(asks)
        for queue in self.lineage():
            queue.pending = queue.pending - total
            for ask, count in alike:
                queue._count(ask, -count)
        if not app.asks:
            self.pending_apps.pop(app.application_id, None)

    def ask_removed(self, app: Application, ask: Ask) -> None:
        for queue in self.lineage():
            queue.pending = queue.pending - ask.resource
            queue._count(ask, -1)
        if not app.asks:
            self.pending_apps.pop(app.application_id, None)

    def _count(self, ask: Ask, delta: int) -> None:
        """Sizes and priorities of the subtree's pending asks.

        A cycle skips a subtree when none of its sizes can fit, without looking at its
        applications; the leaf's priority is the highest pending one.
        """
        _bump(self.priorities, ask.priority, delta)
        if ask.required_node is not None:
            self.pinned += delta
        else:
            _bump(self.shapes, ask.resource, delta)

    def start_app(self, application_id: str) -> None:
        for queue in self.lineage():
            queue.running.add(application_id)

    def end_app(self, application_id: str) -> None:
        for queue in self.lineage():
            queue.running.discard(application_id)


def current_priority(queue: Queue, into: dict[str, int] | None = None) -> int:
    """The queue's scheduling priority: its best pending priority plus `priority.offset`.

    A fenced child (`priority.policy: fence`) shows its parent only its offset. `into`
    collects the priority of every queue visited.
    """
    if queue.children:
        best = MIN_PRIORITY
        for child in queue.children.values():
            if child.pending:
                value = current_priority(child, into)
                best = max(best, child.priority_offset if child.priority_fence else value)
    else:
        best = max(queue.priorities, default=MIN_PRIORITY)
    value = best + queue.priority_offset if best > MIN_PRIORITY else best
    if into is not None:
        into[queue.path] = value
    return value


def _bump(counts: dict[Any, int], key: Any, delta: int) -> None:
    count = counts.get(key, 0) + delta
    if count:
        counts[key] = count
    else:
        del counts[key]


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        return 0


def _tally(asks: Sequence[Ask]) -> tuple[Resource, list[tuple[Ask, int]]]:
    """The total of `asks`, and one of each kind `Queue._count` tells apart with how many
    there are of that kind."""
    total: dict[str, int] = {}
    kinds: dict[tuple[Resource, int, bool], tuple[Ask, int]] = {}
    for ask in asks:
        for name, quantity in ask.resource.items():
            total[name] = total.get(name, 0) + quantity
        key = (ask.resource, ask.priority, ask.required_node is not None)
        kind = kinds.get(key)
        kinds[key] = (ask, 1) if kind is None else (kind[0], kind[1] + 1)
    return Resource(total), list(kinds.values())

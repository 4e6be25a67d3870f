"""The hierarchical queue tracker: usage and running applications per queue node.

Usage at a node is the aggregate of its whole subtree (an increase on `root.a.b` adds to `root`,
`root.a` and `root.a.b`); the running applications of a node are those with usage anywhere below
it. Children are created on demand and removed by the decrease that empties them.

Limits are not stored here: the check takes a `limit_at(path)` lookup, so the same tree is
judged under whichever limit table the operation carries.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from quotactor.core.journal import ADDED, ATTRIBUTE, DISCARDED, ENTRY, MISSING, Journal
from quotactor.core.limits import Limit, LimitTable
from quotactor.core.resources import Resource

__all__ = ["AppKey", "QueueNode", "Refusal", "LimitLookup", "merge_headroom", "positive"]

LimitLookup = Callable[[str], "Limit | None"]
AppKey = str | tuple[str, str]
"""How a tree names a running application: a user's by its id, a group's by (id, user), so that
two members running applications with the same id are two applications of the group."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why an increase was refused: who, where, and which kind of limit."""

    kind: Literal["user", "group"]
    name: str
    queue_path: str
    limit: Literal["resources", "applications"]
    detail: str

    def __str__(self) -> str:
        return f"{self.kind} {self.name} at {self.queue_path}: {self.detail}"


class QueueNode:
    """One node of a user's or group's queue tree."""

    __slots__ = ("children", "path", "running", "usage")

    def __init__(self, path: str) -> None:
        self.path = path
        self.usage: dict[str, int] = {}
        self.running: set[AppKey] = set()
        self.children: dict[str, QueueNode] = {}

    def is_empty(self) -> bool:
        return not self.children and not self.running and not self.usage

    def walk(self, parts: tuple[str, ...]) -> list[QueueNode] | None:
        """Nodes from root to the end of `parts`, or None if a node is missing (creates nothing)."""
        nodes = [self]
        node = self
        for name in parts[1:]:
            child = node.children.get(name)
            if child is None:
                return None
            nodes.append(child)
            node = child
        return nodes

    def walk_existing(self, parts: tuple[str, ...]) -> list[QueueNode]:
        """The nodes that exist along `parts`, root first, stopping at the first missing one."""
        nodes = [self]
        node = self
        for name in parts[1:]:
            child = node.children.get(name)
            if child is None:
                break
            nodes.append(child)
            node = child
        return nodes

    def check_increase(
        self,
        parts: tuple[str, ...],
        paths: Sequence[str],
        app: AppKey,
        usage: Resource,
        table: LimitTable,
        kind: Literal["user", "group"],
        name: str,
        added: dict[str, int] | None = None,
    ) -> Refusal | None:
        """The first limit (leaf to root) that this increase of `kind` `name` would break
        under `table`, or None.

        `paths` lists the queue paths leaf first. Only names the increase adds are checked
        (`added`: the positive quantities of `usage`, when the caller has them already), and
        a running application does not count again. The limits are looked up in the table
        directly (compiled, a direct call each), not through a `LimitLookup`.
        """
        existing = self.walk_existing(parts)
        depth = len(parts)
        if added is None:  # inline (as `positive`): the reference model's path, unchanged
            added = {n: q for n, q in usage.items() if q > 0}
        user = kind == "user"
        for i, path in enumerate(paths):
            limit = table.user_limit(path, name) if user else table.group_limit(path, name)
            if limit is None:
                continue
            level = depth - 1 - i
            node = existing[level] if level < len(existing) else None
            if limit.max_applications:
                running = node.running if node is not None else ()
                if app not in running and len(running) + 1 > limit.max_applications:
                    return _apps_refusal(kind, name, path, len(running), limit.max_applications)
            caps = limit.max_resources
            if caps and added:
                current = node.usage if node is not None else _NO_USAGE
                for res, delta in added.items():
                    if res not in caps:  # `in` and `[]`: no method call on the mapping proxy
                        continue
                    cap = caps[res]
                    if current.get(res, 0) + delta > cap:
                        return Refusal(
                            kind, name, path, "resources",
                            f"{res} usage {current.get(res, 0)} + {delta} above maxResources"
                            f" {cap}",
                        )
        return None

    def increase(
        self, parts: tuple[str, ...], app: AppKey, usage: Resource, journal: Journal
    ) -> None:
        """Add usage and mark the app running on every node of the path (creating nodes).

        Every mutation goes through `journal`, so the caller can undo a failure half-way.
        """
        record = journal.record
        delta = usage._values  # the dict itself: compiled code iterates it without a call
        node = self
        names = iter(parts[1:])
        while True:
            record((ATTRIBUTE, node, "usage", node.usage))
            node.usage = _added(node.usage, delta, 1)
            running = node.running
            if app not in running:
                record((ADDED, running, app, None))
                running.add(app)
            name = next(names, None)
            if name is None:
                return
            children = node.children
            child = children.get(name)
            if child is None:
                child = QueueNode(f"{node.path}.{name}")
                record((ENTRY, children, name, MISSING))
                children[name] = child
            node = child

    def decrease(
        self, parts: tuple[str, ...], app: AppKey, usage: Resource, remove_app: bool,
        journal: Journal,
    ) -> bool:
        """Subtract usage along the whole path; False (and no change) if the path is not tracked.

        Emptied nodes are removed on the way back up; YuniKorn's partial decrease (ancestors
        changed when a deeper node is missing) is deliberately not reproduced.
        """
        nodes = self.walk(parts)
        if nodes is None:
            return False
        record = journal.record
        delta = usage._values
        for node in nodes:
            record((ATTRIBUTE, node, "usage", node.usage))
            node.usage = _added(node.usage, delta, -1)
            if remove_app and app in node.running:
                record((DISCARDED, node.running, app, None))
                node.running.discard(app)
        _prune_path(nodes, parts, journal)
        return True

    def remove_app(self, parts: tuple[str, ...], app: AppKey, journal: Journal) -> None:
        """Forget a running application along one path (its usage stays where it is)."""
        nodes = self.walk_existing(parts)
        for node in nodes:
            journal.discard(node.running, app)
        _prune_path(nodes, parts, journal)

    def headroom(
        self, parts: tuple[str, ...], paths: Sequence[str], limit_at: LimitLookup
    ) -> dict[str, int] | None:
        """Component-wise min of limit minus usage over every limited level, None if none."""
        existing = self.walk_existing(parts)
        depth = len(parts)
        result: dict[str, int] | None = None
        for i, path in enumerate(paths):
            limit = limit_at(path)
            if limit is None or not limit.max_resources:
                continue
            level = depth - 1 - i
            usage = existing[level].usage if level < len(existing) else _NO_USAGE
            room = {n: cap - usage.get(n, 0) for n, cap in limit.max_resources.items()}
            result = merge_headroom(result, room)
        return result

    def app_refusal(
        self,
        parts: tuple[str, ...],
        paths: Sequence[str],
        app: AppKey,
        limit_at: LimitLookup,
        kind: Literal["user", "group"],
        name: str,
    ) -> Refusal | None:
        """The first `maxApplications` (leaf to root) a new app would break, None when the app
        runs already or fits every one: YuniKorn's `CanRunApp`, with the reason it says no."""
        existing = self.walk_existing(parts)
        depth = len(parts)
        for i, path in enumerate(paths):
            limit = limit_at(path)
            if limit is None or not limit.max_applications:
                continue
            level = depth - 1 - i
            running = existing[level].running if level < len(existing) else ()
            if app not in running and len(running) + 1 > limit.max_applications:
                return _apps_refusal(kind, name, path, len(running), limit.max_applications)
        return None

    def render(self, limit_at: LimitLookup, extra_paths: Iterable[str] = ()) -> dict[str, Any]:
        """The REST `ResourceUsageDAOInfo` of this tree, with limits from `limit_at`.

        `extra_paths` adds nodes that carry a limit but no usage (a user the config names).
        """
        shown: dict[str, Any] = {}
        self._render_into(shown, limit_at)
        for path in extra_paths:
            _ensure_rendered(shown, path, limit_at)
        return _finish(shown)

    def _render_into(self, out: dict[str, Any], limit_at: LimitLookup) -> None:
        node = _node_dict(self.path, limit_at)
        if self.usage:
            node["resourceUsage"] = dict(sorted(self.usage.items()))
        if self.running:  # by id: a group lists an id once per member running it
            node["runningApplications"] = [
                key if isinstance(key, str) else key[0] for key in sorted(self.running)]
        out[self.path] = node
        for child in self.children.values():
            child._render_into(node.setdefault("_children", {}), limit_at)


_NO_USAGE: Mapping[str, int] = {}


def _apps_refusal(kind: Literal["user", "group"], name: str, path: str, running: int,
                  limit: int) -> Refusal:
    return Refusal(kind, name, path, "applications",
                   f"{running} running applications, maxApplications {limit}")


def merge_headroom(
    first: dict[str, int] | None, second: dict[str, int] | None
) -> dict[str, int] | None:
    """Per-name minimum of two headrooms; a name absent from one is unlimited there, and None
    (nothing limited) leaves the other as it is."""
    if first is None:
        return second
    if second is None:
        return first
    merged = dict(first)
    for name, room in second.items():
        if name not in merged or room < merged[name]:
            merged[name] = room
    return merged


def _added(usage: dict[str, int], delta: dict[str, int], sign: int) -> dict[str, int]:
    """A node's usage plus `sign * delta` (`sign` 1 or -1), zeros pruned, as a new dict (the
    hot path: no multiplication, which compiled code does on boxed integers for quantities
    of 2**31 and more, as memory in bytes is)."""
    total = dict(usage)
    for name, quantity in delta.items():
        current: int = total.get(name, 0)
        value = current + quantity if sign > 0 else current - quantity
        if value:
            total[name] = value
        else:
            total.pop(name, None)
    return total


def _prune_path(nodes: list[QueueNode], parts: tuple[str, ...], journal: Journal) -> None:
    """Detach emptied nodes along a path, deepest first."""
    for i in range(len(nodes) - 1, 0, -1):
        node = nodes[i]
        if node.children or node.running or node.usage:
            return
        children = nodes[i - 1].children
        journal.record((ENTRY, children, parts[i], node))
        del children[parts[i]]


def _node_dict(path: str, limit_at: LimitLookup) -> dict[str, Any]:
    node: dict[str, Any] = {"queuePath": path}
    limit = limit_at(path)
    if limit is not None:
        if limit.max_resources:
            node["maxResources"] = dict(limit.max_resources)
        if limit.max_applications:
            node["maxApplications"] = limit.max_applications
    return node


def _ensure_rendered(shown: dict[str, Any], path: str, limit_at: LimitLookup) -> None:
    parts = path.split(".")
    level = shown
    prefix = ""
    for name in parts:
        prefix = name if not prefix else f"{prefix}.{name}"
        node = level.get(prefix)
        if node is None:
            node = _node_dict(prefix, limit_at)
            level[prefix] = node
        level = node.setdefault("_children", {})


def _finish(shown: Mapping[str, Any]) -> dict[str, Any]:
    """Turn the keyed tree into the REST shape: ordered keys, sorted children, no empties."""
    (root,) = shown.values()
    return _finish_node(root)


def _finish_node(node: dict[str, Any]) -> dict[str, Any]:
    children = node.pop("_children", {})
    out: dict[str, Any] = {"queuePath": node["queuePath"]}
    for key in ("resourceUsage", "runningApplications", "maxResources", "maxApplications"):
        if key in node:
            out[key] = node[key]
    if children:
        out["children"] = [_finish_node(children[k]) for k in sorted(children)]
    return out


def positive(usage: Resource) -> dict[str, int]:
    """The quantities an increase adds (its positive ones): what `check_increase` checks."""
    return {n: q for n, q in usage._values.items() if q > 0}

"""Placement rules: which queue an application goes to, decided by the first rule that matches.

Rules are YuniKorn's `provided`, `user`, `fixed` and `tag`, each with a `create` flag, an
optional `parent` rule that supplies the parent queue, and an optional user/group filter. A
rule that produces a queue the user may not submit to (ACLs checked up the hierarchy, on the
deepest existing queue when the queue is still to be created) does not match, and the next
rule is tried. When no rule matches the application is rejected, with every rule's outcome
in the reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from quotactor.core.identity import GROUP_NAME, USER_NAME, UserGroup
from quotactor.core.queue_path import QUEUE_NAME, ROOT
from quotactor.scheduler.objects.application import tag_value
from quotactor.scheduler.objects.queue import Queue
from quotactor.scheduler.objects.spec import FilterSpec, RuleSpec

__all__ = ["NO_RULE_MATCHED", "Placement", "PlacementError", "Request", "RULE_NAMES"]

NO_RULE_MATCHED = "application rejected: no placement rule matched"
RULE_NAMES = ("provided", "user", "fixed", "tag")
DOT_REPLACEMENT = "_dot_"
_PREFIX = ROOT + "."

QueueLookup = Callable[[str], Queue | None]


class PlacementError(ValueError):
    """A rule failed in a way that stops placement (a parent rule that names a leaf queue)."""


@dataclass(frozen=True, slots=True)
class Request:
    """What placement knows of an application: who submits it, the queue it asks for, tags."""

    user: UserGroup
    queue: str
    tags: Mapping[str, str]


class _Filter:
    """A rule filter: a list of names, or (a single entry that is no valid name) a regexp."""

    __slots__ = ("allow", "empty", "group_exp", "groups", "user_exp", "users")

    def __init__(self, spec: FilterSpec | None) -> None:
        spec = spec or FilterSpec()
        self.allow = spec.type != "deny"
        self.empty = not spec.users and not spec.groups
        self.users, self.user_exp = _names_or_pattern(spec.users, USER_NAME)
        self.groups, self.group_exp = _names_or_pattern(spec.groups, GROUP_NAME)

    def admits(self, user: UserGroup) -> bool:
        """Whether the rule applies to `user`: listed (user, then groups) xor deny."""
        if self.empty:
            return self.allow
        if _matches(user.user, self.users, self.user_exp):
            return self.allow
        if any(_matches(g, self.groups, self.group_exp) for g in user.groups):
            return self.allow
        return not self.allow


def _names_or_pattern(entries: tuple[str, ...], syntax: re.Pattern[str]) -> tuple[
    frozenset[str], re.Pattern[str] | None
]:
    if len(entries) == 1 and not syntax.match(entries[0]):
        try:
            return frozenset(), re.compile(entries[0])
        except re.error:
            return frozenset(), None
    return frozenset(e for e in entries if syntax.match(e)), None


def _matches(name: str, names: frozenset[str], pattern: re.Pattern[str] | None) -> bool:
    if pattern is not None:
        return pattern.search(name) is not None
    return name in names


def _qualified(name: str) -> bool:
    return name == ROOT or name.startswith(_PREFIX)


class _Rule:
    """One configured rule; `place` returns a fully qualified queue path or None (no match)."""

    def __init__(self, spec: RuleSpec) -> None:
        self.name = spec.name.lower()
        self.create = spec.create
        self.value = spec.value
        self.filter = _Filter(spec.filter)
        self.parent = _Rule(spec.parent) if spec.parent is not None else None

    def place(self, request: Request, lookup: QueueLookup) -> str | None:
        if not self.filter.admits(request.user):
            return None
        name = self._queue_name(request)
        if name is None:
            return None
        if _qualified(name):
            path = name
        else:
            parent = self._parent_path(request, lookup)
            if parent is None:
                return None
            path = f"{parent}.{name}"
        if not self.create and lookup(path) is None:
            return None
        return path

    def _queue_name(self, request: Request) -> str | None:
        if self.name == "provided":
            return _provided(request.queue)
        if self.name == "user":
            return request.user.user.replace(".", DOT_REPLACEMENT)
        if self.name == "fixed":
            return self.value or None
        if self.name == "tag":
            found = tag_value(request.tags, self.value) if self.value else None
            if not found:
                return None
            return found if _qualified(found) else found.replace(".", DOT_REPLACEMENT)
        raise PlacementError(f"unknown placement rule {self.name!r}")

    def _parent_path(self, request: Request, lookup: QueueLookup) -> str | None:
        if self.parent is None:
            return ROOT
        parent = self.parent.place(request, lookup)
        if parent is None:
            return None
        if not _qualified(parent):
            parent = _PREFIX + parent
        queue = lookup(parent)
        if queue is not None and queue.is_leaf:
            raise PlacementError(f"parent rule returned a leaf queue: {parent}")
        return parent


def _provided(queue: str) -> str | None:
    if not queue:
        return None
    return queue if _qualified(queue) else queue.replace(".", DOT_REPLACEMENT)


@dataclass(frozen=True, slots=True)
class Placed:
    """Where an application goes, and which rule put it there."""

    queue_path: str
    rule: str


class Placement:
    """The partition's placement policy: rules tried in order, the first match wins.

    Without configured rules the `provided` rule (no create) applies, as in YuniKorn.
    """

    def __init__(self, rules: tuple[RuleSpec, ...]) -> None:
        specs = rules or (RuleSpec(name="provided"),)
        self.rules = tuple(_Rule(spec) for spec in specs)

    def place(self, request: Request, lookup: QueueLookup) -> Placed:
        """The queue for `request`; `PlacementError` with every rule's outcome if none fits."""
        outcomes: list[str] = []
        for rule in self.rules:
            path = rule.place(request, lookup)
            if path is None:
                outcomes.append(f"{rule.name}: no queue")
                continue
            bad = [p for p in path.split(".")[1:] if not QUEUE_NAME.match(p)]
            if not path.startswith(ROOT) or bad:
                outcomes.append(f"{rule.name}: invalid queue name {path}")
                continue
            if not _deepest(path, lookup).may_submit(request.user):
                outcomes.append(f"{rule.name}: {path} denies user {request.user.user}")
                continue
            return Placed(path, rule.name)
        raise PlacementError(f"{NO_RULE_MATCHED} ({'; '.join(outcomes)})")


def _deepest(path: str, lookup: QueueLookup) -> Queue:
    """The queue at `path`, or its deepest existing ancestor (root always exists)."""
    parts = path.split(".")
    for depth in range(len(parts), 0, -1):
        queue = lookup(".".join(parts[:depth]))
        if queue is not None:
            return queue
    raise PlacementError(f"queue path {path} has no root")

"""Limits down the queue tree: a child may only narrow what its ancestors allow a user or group.

Only the same name can be compared across levels (we do not know group memberships), plus a
named user or group against an ancestor's `*` limit, which applies to everyone not named there.
Siblings are independent, and names an ancestor leaves out are unconstrained.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from quotactor.config.check_limits import label
from quotactor.config.findings import Findings
from quotactor.config.model import LimitConfig, QueueConfig
from quotactor.core.identity import WILDCARD
from quotactor.core.queue_path import ROOT

__all__ = ["check_resources", "check_applications"]


@dataclass(frozen=True, slots=True)
class _Known:
    """The tightest value ancestors allow a name, and the queues whose limits set it."""

    value: Any
    origin: str


_Inherited = dict[str, dict[str, _Known]]
_Judge = Callable[[str, str, LimitConfig, str, dict[str, _Known], str, Findings], _Known]


def check_resources(root: QueueConfig, out: Findings) -> None:
    """A child's maxresources for a name fit in what every ancestor allows that name."""
    _walk(root, ROOT, {"user": {}, "group": {}}, _judge_resources, out)


def check_applications(root: QueueConfig, out: Findings) -> None:
    """A child's maxapplications for a name is set and no higher once an ancestor sets one."""
    _walk(root, ROOT, {"user": {}, "group": {}}, _judge_applications, out)


def _walk(queue: QueueConfig, path: str, inherited: _Inherited, judge: _Judge,
          out: Findings) -> None:
    mine = inherited
    if queue.limits:
        mine = {kind: dict(known) for kind, known in inherited.items()}
        for limit in queue.limits:
            for kind, names in (("user", limit.users), ("group", limit.groups)):
                for index, name in enumerate(names):
                    where = f"{limit.location}.{kind}s[{index}]"
                    mine[kind][name] = judge(kind, name, limit, path, inherited[kind], where,
                                             out)
    for child in queue.queues:
        _walk(child, f"{path}.{child.name}", mine, judge, out)


def _judge_resources(kind: str, name: str, limit: LimitConfig, path: str,
                     known: dict[str, _Known], where: str, out: Findings) -> _Known:
    value = limit.max_resources
    ancestor = known.get(name)
    if ancestor is not None:
        if over := ancestor.value.exceeded_by(value):
            out.add(where, f"{kind} {name} max resource {value} of queue {path} "
                    f"({label(limit)}) is greater than immediate or ancestor parent maximum "
                    f"resource {ancestor.value} for {kind} {name}, set at {ancestor.origin} "
                    f"(on {', '.join(over)})")
        return _Known(value.min_with(ancestor.value), f"{ancestor.origin}, {path}")
    wildcard = known.get(WILDCARD)
    if wildcard is not None and (over := wildcard.value.exceeded_by(value)):
        out.add(where, f"{kind} {name} max resource {value} of queue {path} ({label(limit)}) "
                f"is greater than wildcard maximum resource {wildcard.value} of immediate or "
                f"ancestor parent queue {wildcard.origin} (on {', '.join(over)}; the '*' "
                f"{kind} limit there applies to {name} too)")
    return _Known(value, path)


def _apps(count: int) -> str:
    return f"{count}" if count else "0 (unlimited)"


def _judge_applications(kind: str, name: str, limit: LimitConfig, path: str,
                        known: dict[str, _Known], where: str, out: Findings) -> _Known:
    value = limit.max_applications
    ancestor = known.get(name)
    if ancestor is not None:
        if ancestor.value and (value == 0 or value > ancestor.value):
            out.add(where, f"{kind} {name} max applications {_apps(value)} of queue {path} "
                    f"({label(limit)}) is greater than immediate or ancestor parent max "
                    f"applications {ancestor.value} for {kind} {name}, set at "
                    f"{ancestor.origin}")
        return _Known(value, path)
    wildcard = known.get(WILDCARD)
    if wildcard is not None and wildcard.value and (value == 0 or value > wildcard.value):
        out.add(where, f"{kind} {name} max applications {_apps(value)} of queue {path} "
                f"({label(limit)}) is greater than wildcard max applications {wildcard.value} "
                f"of immediate or ancestor parent queue {wildcard.origin} (the '*' {kind} "
                f"limit there applies to {name} too)")
    return _Known(value, path)

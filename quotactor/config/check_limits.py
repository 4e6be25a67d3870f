"""The rules for the `limits` list of one queue (seed 001, YuniKorn's `checkLimits`).

Names are checked in list order across all limits of the queue, because order carries meaning:
a `*` entry is the fallback for everyone not named before it, so nothing may follow it, and a
`*` group limit alone would just repeat the queue's own limit.
"""

from __future__ import annotations

from quotactor.config.findings import Findings
from quotactor.config.model import LimitConfig, QueueConfig
from quotactor.core.identity import GROUP_NAME, USER_NAME, WILDCARD
from quotactor.core.queue_path import ROOT

__all__ = ["check_queue_limits", "label"]

_USER_SYNTAX = ("a user name starts with a letter or _ and holds letters, digits and "
                ": # / _ . @ -, with an optional final $")
_GROUP_SYNTAX = "a group name starts with a letter or _ and holds letters, digits and : _ . -"


def label(limit: LimitConfig) -> str:
    """How messages name a limit: by its description when it has one."""
    return f"limit '{limit.limit}'" if limit.limit else "the unnamed limit"


def check_queue_limits(queue: QueueConfig, path: str, out: Findings) -> None:
    names = _Names(path, out)
    for limit in queue.limits:
        _check_limit(limit, queue, path, names, out)


class _Names:
    """The users and groups named so far in one queue's limits, and where."""

    def __init__(self, path: str, out: Findings) -> None:
        self.path = path
        self.out = out
        self.users: dict[str, str] = {}
        self.groups: dict[str, str] = {}
        self.lone_wildcard_reported = False

    def add(self, kind: str, name: str, where: str) -> None:
        seen = self.users if kind == "user" else self.groups
        syntax = USER_NAME if kind == "user" else GROUP_NAME
        if name != WILDCARD and not syntax.match(name):
            rule = _USER_SYNTAX if kind == "user" else _GROUP_SYNTAX
            self.out.add(where, f"invalid limit {kind} name '{name}' in limit definition: "
                         f"{rule}")
            return
        if name in seen:
            self.out.add(where, f"duplicated {kind} name '{name}', already exists in the limits"
                         f" of {self.path} (first at {seen[name]})")
            return
        seen[name] = where
        if name != WILDCARD and WILDCARD in seen:
            self.out.add(where, f"should not set no wildcard {kind} {name} after wildcard {kind}"
                         f" limit: in {self.path} the '*' {kind} entry must come last")

    def check_lone_group_wildcard(self) -> None:
        if (WILDCARD in self.groups and len(self.groups) == 1
                and not self.lone_wildcard_reported):
            self.lone_wildcard_reported = True
            self.out.add(self.groups[WILDCARD],
                         "should not specify only one group limit that is using the wildcard: "
                         f"in {self.path} name at least one group before the '*' group (a '*' "
                         "group limit alone is just the queue's own limit)")


def _check_limit(limit: LimitConfig, queue: QueueConfig, path: str, names: _Names,
                 out: Findings) -> None:
    where = limit.location
    if not limit.users and not limit.groups:
        out.add(where, f"empty user and group lists defined in {label(limit)}: name at least "
                "one user or group")
    for index, user in enumerate(limit.users):
        names.add("user", user, f"{where}.users[{index}]")
    for index, group in enumerate(limit.groups):
        names.add("group", group, f"{where}.groups[{index}]")
    names.check_lone_group_wildcard()
    if not out.quantities_ok(f"{where}.maxresources"):
        return
    stated = limit.max_resources
    if stated and stated.is_zero():
        out.add(f"{where}.maxresources",
                f"MaxResources should be greater than zero in '{limit.limit}' limit: "
                f"{stated} allows nothing; set at least one resource above 0")
    elif not stated and limit.max_applications == 0:
        out.add(where, f"invalid resource combination for {label(limit)}: all resource limits "
                "are null; set maxresources or maxapplications")
    if queue.max_applications and limit.max_applications > queue.max_applications:
        out.add(f"{where}.maxapplications",
                f"invalid MaxApplications settings for {label(limit)}: maxapplications "
                f"{limit.max_applications} exceeds the maxapplications "
                f"{queue.max_applications} of queue {path}")
    if path == ROOT or not out.quantities_ok(f"{queue.location}.resources.max",
                                             f"parse queue {path} max resource failed: "):
        return
    over = queue.max_resources.exceeded_by(stated)
    if over:
        out.add(f"{where}.maxresources",
                f"invalid MaxResources settings for {label(limit)}: maxresources {stated} "
                f"exceeds the resources.max {queue.max_resources} of queue {path} "
                f"(on {', '.join(over)})")

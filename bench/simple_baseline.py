"""The simplified single-lock baseline: the workload's rules written as plainly as Python allows.

Per user and per group a dict from queue path to `[usage, running apps]`, one lock around
everything, no journal, no actors, no validation beyond splitting the path: the practical floor
of a call in this interpreter, which issue 17's goals are stated against (a call of the actor
path should cost at most 5x one of these). Same accept/refuse rules as the reference model for
the benchmark's workload (user and group limits on every level, the group an app counts for
fixed at its first increase).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from quotactor.core.identity import UserGroup
from quotactor.core.limits import Limit, LimitTable

Levels = dict[str, list[Any]]


class SimpleBaseline:
    def __init__(self, table: LimitTable) -> None:
        self.table = table
        self.lock = threading.Lock()
        self.users: dict[str, Levels] = {}
        self.groups: dict[str, Levels] = {}
        self.links: dict[str, dict[str, str | None]] = {}
        self._paths: dict[str, list[str]] = {}

    def _levels(self, queue: str) -> list[str]:
        paths = self._paths.get(queue)
        if paths is None:
            parts = queue.split(".")
            paths = [".".join(parts[:i]) for i in range(len(parts), 0, -1)]
            self._paths[queue] = paths
        return paths

    @staticmethod
    def _fits(levels: Levels | None, paths: list[str], app: str, usage: Mapping[str, int],
              limit_at: Any, name: str) -> bool:
        for path in paths:
            limit: Limit | None = limit_at(path, name)
            if limit is None:
                continue
            level = levels.get(path) if levels is not None else None
            if (limit.max_applications and (level is None or app not in level[1])
                    and (len(level[1]) if level else 0) + 1 > limit.max_applications):
                return False
            for res, cap in limit.max_resources.items():
                delta = usage.get(res, 0)
                if delta > 0 and (level[0].get(res, 0) if level else 0) + delta > cap:
                    return False
        return True

    @staticmethod
    def _add(levels: Levels, paths: list[str], app: str, usage: Mapping[str, int],
             sign: int, remove: bool) -> None:
        for path in paths:
            level = levels.get(path)
            if level is None:
                level = levels[path] = [{}, set()]
            used = level[0]
            for res, q in usage.items():
                used[res] = used.get(res, 0) + sign * q
            if remove:
                level[1].discard(app)
            else:
                level[1].add(app)
            if not level[1] and not any(used.values()):
                del levels[path]

    def increase_tracked_resource(self, queue: str, app: str, usage: Mapping[str, int],
                                  user: UserGroup) -> bool:
        paths = self._levels(queue)
        table = self.table
        with self.lock:
            links = self.links.setdefault(user.user, {})
            group = links[app] if app in links else table.resolve_group(paths, user.groups)
            mine = self.users.get(user.user)
            if not self._fits(mine, paths, app, usage, table.user_limit, user.user):
                return False
            if group is not None and not self._fits(
                    self.groups.get(group), paths, app, usage, table.group_limit, group):
                return False
            links[app] = group
            self._add(self.users.setdefault(user.user, {}), paths, app, usage, 1, False)
            if group is not None:
                self._add(self.groups.setdefault(group, {}), paths, app, usage, 1, False)
            return True

    def decrease_tracked_resource(self, queue: str, app: str, usage: Mapping[str, int],
                                  user: UserGroup, remove_app: bool = False) -> None:
        paths = self._levels(queue)
        with self.lock:
            links = self.links.get(user.user)
            if links is None or app not in links:
                return
            group = links.pop(app) if remove_app else links[app]
            mine = self.users[user.user]
            self._add(mine, paths, app, usage, -1, remove_app)
            if not mine:
                del self.users[user.user]
                if not links:
                    del self.links[user.user]
            if group is not None:
                levels = self.groups[group]
                self._add(levels, paths, app, usage, -1, remove_app)
                if not levels:
                    del self.groups[group]

"""The live set of managers a server answers for, keyed by partition name.

The server reads this mapping on every request instead of copying it at start, so `serve` can
add and remove partitions while it runs; the lock makes each read see a whole set.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping

from quotactor.ugm import UserGroupManager

__all__ = ["Partitions"]


class Partitions(Mapping[str, UserGroupManager]):
    """A thread-safe mapping `partition name -> UserGroupManager` that may change over time."""

    def __init__(self, managers: Mapping[str, UserGroupManager] | None = None) -> None:
        self._lock = threading.Lock()
        self._managers: dict[str, UserGroupManager] = {}
        for manager in (managers or {}).values():
            self.add(manager)

    def __getitem__(self, name: str) -> UserGroupManager:
        with self._lock:
            return self._managers[name]

    def __iter__(self) -> Iterator[str]:
        with self._lock:
            names = sorted(self._managers)
        return iter(names)

    def __len__(self) -> int:
        with self._lock:
            return len(self._managers)

    def snapshot(self) -> dict[str, UserGroupManager]:
        """Every manager at one instant, sorted by partition name."""
        with self._lock:
            return dict(sorted(self._managers.items()))

    def add(self, manager: UserGroupManager) -> None:
        """Serve `manager` under its own partition name (replacing none: names are unique)."""
        with self._lock:
            if manager.partition in self._managers:
                raise ValueError(f"partition {manager.partition!r} is served already")
            self._managers[manager.partition] = manager

    def remove(self, name: str) -> UserGroupManager | None:
        """Stop serving partition `name`; returns its manager (still running) or None."""
        with self._lock:
            return self._managers.pop(name, None)

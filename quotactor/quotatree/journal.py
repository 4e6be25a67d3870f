"""An undo log: the single mechanism behind MCAD's recovery, snapshots and forest rollback.

MCAD undoes a failed partial allocation with a recovery object that re-appends moved consumers
(changing list order) and takes separate snapshots for try/undo. Here every mutation of a tree
and its controller records its inverse; rolling back to a mark replays the inverses in reverse
order, which restores the exact prior state, consumer order included. A failed attempt, an
undone trial and a failed forest allocation are all the same operation.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from typing import Any

__all__ = ["Journal"]

_MISSING = object()


class Journal:
    """Inverse operations recorded since the last commit."""

    __slots__ = ("_entries",)

    def __init__(self) -> None:
        self._entries: list[tuple[Callable[..., None], tuple[Any, ...]]] = []

    def mark(self) -> int:
        """A point to roll back to."""
        return len(self._entries)

    def record(self, undo: Callable[..., None], *args: Any) -> None:
        self._entries.append((undo, args))

    def rollback(self, mark: int = 0) -> None:
        """Undo everything recorded after `mark`, newest first."""
        entries = self._entries
        while len(entries) > mark:
            undo, args = entries.pop()
            undo(*args)

    def commit(self) -> None:
        """Forget the log: what happened can no longer be undone."""
        self._entries.clear()

    def set_item(self, mapping: MutableMapping[str, Any], key: str, value: Any) -> None:
        self.record(_restore_item, mapping, key, mapping.get(key, _MISSING))
        mapping[key] = value

    def del_item(self, mapping: MutableMapping[str, Any], key: str) -> None:
        self.record(_restore_item, mapping, key, mapping[key])
        del mapping[key]


def _restore_item(mapping: MutableMapping[str, Any], key: str, old: Any) -> None:
    if old is _MISSING:
        mapping.pop(key, None)
    else:
        mapping[key] = old

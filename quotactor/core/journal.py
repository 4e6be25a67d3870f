"""Undo records for a change in progress, so that a change that fails half-way is undone whole.

A tracker change touches several nodes; any step may raise (a bug, `MemoryError`, an injected
fault). Every mutation of a tracker goes through a `Journal`, which records how to put the old
value back before it changes anything; `rollback` replays those records newest first using
only builtin stores, which call no code of ours. A user tracker keeps its journal open while
its group decides, and rolls back if the group refuses or fails: both change or neither.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ADDED", "ATTRIBUTE", "DISCARDED", "ENTRY", "MISSING", "Journal"]

ATTRIBUTE, ENTRY, ADDED, DISCARDED = range(4)
"""Kinds of undo records: `(ATTRIBUTE, obj, name, old)` puts an attribute back, `(ENTRY, dict,
key, old)` a dict entry (`old` may be `MISSING`), `(ADDED, set, item, None)` takes an added item
out, `(DISCARDED, set, item, None)` puts a discarded one back."""

MISSING: Any = object()


class Journal:
    """Mutations of dicts, sets and attributes that can be undone, newest first.

    The hot paths of the queue tree append their records through `record` (a bound
    `list.append`) right before they mutate; the methods below do both for the rest.
    """

    __slots__ = ("_undo", "record")

    def __init__(self) -> None:
        self._undo: list[tuple[int, Any, Any, Any]] = []
        self.record = self._undo.append

    def store(self, mapping: dict[Any, Any], key: Any, value: Any) -> None:
        self._undo.append((ENTRY, mapping, key, mapping.get(key, MISSING)))
        mapping[key] = value

    def pop(self, mapping: dict[Any, Any], key: Any) -> Any:
        old = mapping.get(key, MISSING)
        self._undo.append((ENTRY, mapping, key, old))
        del mapping[key]
        return old

    def add(self, members: set[Any], item: Any) -> None:
        if item not in members:
            self._undo.append((ADDED, members, item, None))
            members.add(item)

    def discard(self, members: set[Any], item: Any) -> None:
        if item in members:
            self._undo.append((DISCARDED, members, item, None))
            members.discard(item)

    def rollback(self) -> None:
        """Undo every recorded mutation, newest first; the journal is empty afterwards."""
        undo = self._undo
        while undo:
            kind, target, key, old = undo.pop()
            if kind == ATTRIBUTE:
                setattr(target, key, old)
            elif kind == ENTRY:
                if old is MISSING:
                    target.pop(key, None)
                else:
                    target[key] = old
            elif kind == ADDED:
                target.discard(key)
            else:
                target.add(key)

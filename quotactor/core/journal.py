"""Undo records for a change in progress, so that a change that fails half-way is undone whole.

A tracker change touches several nodes; any step may raise (a bug, `MemoryError`, an injected
fault). Every mutation of a tracker goes through a `Journal`, which records how to put the old
value back before it changes anything; `rollback` replays those records newest first using
only builtin stores, which call no code of ours. A user tracker keeps its journal open while
its group decides, and rolls back if the group refuses or fails: both change or neither.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Journal"]

_MISSING: Any = object()


class Journal:
    """Mutations of dicts, sets and attributes that can be undone, newest first."""

    __slots__ = ("_undo",)

    def __init__(self) -> None:
        self._undo: list[tuple[int, Any, Any, Any]] = []

    def assign(self, obj: Any, attr: str, value: Any) -> None:
        self._undo.append((0, obj, attr, getattr(obj, attr)))
        setattr(obj, attr, value)

    def store(self, mapping: dict[Any, Any], key: Any, value: Any) -> None:
        self._undo.append((1, mapping, key, mapping.get(key, _MISSING)))
        mapping[key] = value

    def pop(self, mapping: dict[Any, Any], key: Any) -> Any:
        old = mapping.get(key, _MISSING)
        self._undo.append((1, mapping, key, old))
        del mapping[key]
        return old

    def add(self, members: set[Any], item: Any) -> None:
        if item not in members:
            self._undo.append((2, members, item, None))
            members.add(item)

    def discard(self, members: set[Any], item: Any) -> None:
        if item in members:
            self._undo.append((3, members, item, None))
            members.discard(item)

    def rollback(self) -> None:
        """Undo every recorded mutation, newest first; the journal is empty afterwards."""
        undo = self._undo
        while undo:
            kind, target, key, old = undo.pop()
            if kind == 0:
                setattr(target, key, old)
            elif kind == 1:
                if old is _MISSING:
                    target.pop(key, None)
                else:
                    target[key] = old
            elif kind == 2:
                target.discard(key)
            else:
                target.add(key)

"""`KueueActor`: one `KueueManager` served to concurrent callers.

An actor of the package's runtime (`quotactor.actors.runtime`): messages are handled one at a
time, so every scheduling cycle runs on one consistent state and no lock is needed. A message
is a `Read` or a `Change` naming a manager method and its arguments. The manager is held under
a `Checkpoint`: a step that raises inside a handler leaves it as before the message and the
error reaches the caller (a refusal as its `KueueError`); a handler that raises never stops
the actor.
"""

from __future__ import annotations

from typing import Any

from quotactor.actors.checkpoint import Checkpoint
from quotactor.actors.runtime import Actor, WorkerPool
from quotactor.actors.served import Change, Read
from quotactor.kueue.errors import KueueError
from quotactor.kueue.manager import KueueManager

__all__ = ["KueueActor", "KueueMessage"]

KueueMessage = Read[KueueManager] | Change[KueueManager]


class KueueActor(Actor[KueueMessage]):
    """Serialises all access to one manager (a new, empty one by default; the actor owns
    it)."""

    def __init__(self, pool: WorkerPool, manager: KueueManager | None = None) -> None:
        # the first copy may fail (a state that cannot be copied): before the actor counts
        self._state = Checkpoint(manager if manager is not None else KueueManager(),
                                 (KueueError,))
        super().__init__(pool)

    @property
    def manager(self) -> KueueManager:
        """The served manager (a rebuilt one after a failure): only for the actor's thread."""
        return self._state.state

    @property
    def rebuilds(self) -> int:
        """How often a failure inside a handler made the actor rebuild its manager."""
        return self._state.rebuilds

    def handle(self, message: KueueMessage) -> Any:
        if isinstance(message, Read):
            return self._state.read(message)
        if isinstance(message, Change):
            return self._state.change(message)
        raise TypeError(f"unexpected message {type(message).__name__}")

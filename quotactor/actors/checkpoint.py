"""A state that a failed operation cannot leave half-changed: a copy, and the changes since.

The elastic engine and the quota trees change many linked objects in one operation (a pod's
request along its path, consumers slid up and down a tree), so a step that raises half-way
would leave, say, a parent that is not the sum of its children. Rather than an undo for every
step, the actor that owns such a state keeps a deep copy taken earlier (the base) and the
changes it applied since, each a deterministic function of the state. When an operation raises
anything but the domain's refusal (which is documented to be raised before anything changes),
the state is rebuilt: a new copy of the base, the logged changes replayed. Rebuilding is rare
(a bug, or an injected fault); copying is amortised: a new base is taken once the logged
changes have taken `REBASE_RATIO` times as long as the last copy, so copies cost at most
1/`REBASE_RATIO` of the time spent changing, and a rebuild replays at most that much work.

A rebuild that fails itself (a fault that persists) leaves the rebuild owed: the next
operation tries again first, and fails with it, so no operation ever sees the half-changed
state. Reads are not logged; a read that raises (the elastic engine settles runtimes on read)
rebuilds too. Changes must not keep a caller's mutable arguments: copy them when the message
is built, so that the replay does what the change did.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from typing import Generic, TypeVar

from quotactor.logs import get_logger

__all__ = ["REBASE_RATIO", "Checkpoint"]

S = TypeVar("S")
R = TypeVar("R")
REBASE_RATIO = 10.0
log = get_logger()


class Checkpoint(Generic[S]):
    """Owns `state`; run operations on it with `read` and `change` (one thread at a time: the
    actor's).

    Args:
        state: the state to own (copied once now: the first base).
        refusals: exception types the state raises before changing anything; they pass
            without a rebuild.
    """

    __slots__ = ("_base", "_copy_s", "_log", "_owed", "_refusals", "_spent", "rebuilds",
                 "state")

    def __init__(self, state: S, refusals: tuple[type[Exception], ...]) -> None:
        self.state = state
        self._refusals = refusals
        self._owed = False
        self.rebuilds = 0
        self._base: S = state
        self._log: list[Callable[[S], object]] = []
        self._copy_s = 0.0
        self._spent = 0.0
        self._rebase()

    def read(self, operation: Callable[[S], R]) -> R:
        """`operation(state)`; the state is rebuilt if it raises (not a refusal)."""
        if self._owed:
            self._rebuild()
        try:
            return operation(self.state)
        except self._refusals:
            raise
        except BaseException:
            self._rebuild_after_failure()
            raise

    def change(self, operation: Callable[[S], R],
               replay: Callable[[R], Callable[[S], object]] | None = None) -> R:
        """`operation(state)`, logged to be replayed after a later failure (as
        `replay(result)` when given: for a change that called back into its caller, replayed
        with the decision it got); the state is rebuilt if it raises."""
        if self._owed:
            self._rebuild()
        began = time.perf_counter()
        try:
            result = operation(self.state)
        except self._refusals:
            raise
        except BaseException:
            self._rebuild_after_failure()
            raise
        self._log.append(operation if replay is None else replay(result))
        self._spent += time.perf_counter() - began
        if self._spent > REBASE_RATIO * self._copy_s:
            try:
                self._rebase()
            except Exception:  # the change is done and logged: the old base still serves
                self._spent = 0.0
                log.exception("checkpoint_copy_failed", state=type(self.state).__name__)
        return result

    def _rebase(self) -> None:
        began = time.perf_counter()
        self._base = copy.deepcopy(self.state)
        self._copy_s = time.perf_counter() - began
        self._log.clear()
        self._spent = 0.0

    def _rebuild_after_failure(self) -> None:
        """Rebuild now; if that fails too, leave it owed (the original error is raised)."""
        try:
            self._rebuild()
        except BaseException:
            log.exception("checkpoint_rebuild_failed", state=type(self.state).__name__)

    def _rebuild(self) -> None:
        """The base's state with the logged changes replayed; owed until it succeeds."""
        self._owed = True
        state = copy.deepcopy(self._base)
        for change in self._log:
            change(state)
        self.state = state
        self._owed = False
        self.rebuilds += 1
        log.warning("checkpoint_rebuilt", state=type(state).__name__, replayed=len(self._log))


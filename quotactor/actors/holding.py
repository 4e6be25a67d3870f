"""A thread holding several actors at once (the runtime's invariant 7): a batch's claims.

`holding` claims those of some actors that are idle (never waiting for a claim) and runs one
piece of work holding them; `holding_in_order` claims every one of some actors whose handlers
never wait, in one global order, waiting for a busy one's turn. Both release every claim in
the `finally` of their own frame (the runtime's claims: this module shares its internals).
`stop_all` stops many actors, the idle ones under one `holding`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from quotactor.actors.runtime import (
    _BATCH,
    BUSY,
    Actor,
    Busy,
    Reply,
    _guarded,
    _Handover,
    _held,
    stop,
)
from quotactor.core.errors import ActorStopped, OperationTimeout

__all__ = ["holding", "holding_in_order", "let_go", "stop_all"]

T = TypeVar("T")


def holding(actors: Sequence[Actor[Any]], work: Callable[[list[int]], T]) -> T:
    """Claim those of `actors` that are idle, run `work(positions of the claimed)` on this
    thread holding them all, then release them all (invariant 7): how a batch runs many user
    trackers' handlers for one claim each. Nothing is claimed on the main thread (invariant 2):
    `work` then gets no position, and the caller sends every message.

    `work` runs the held actors' steps as their handlers would, and may wait only on actors
    whose handlers never wait (invariants 6, 7). A release runs the messages that arrived for
    an actor meanwhile on this thread when its handlers never wait, as `_handle_inline` does;
    otherwise it hands the actor to its pool (invariant 3).
    """
    held: list[int] = []
    if _guarded():
        return work(held)
    _held.depth += 1
    try:
        for position, actor in enumerate(actors):
            if actor._claim():
                held.append(position)
        return work(held)
    finally:
        _held.depth -= 1
        _release(actors, held)


def _release(actors: Sequence[Actor[Any]], held: list[int]) -> None:
    """Let go of `actors[i]` for every i in `held` (invariant 3): what arrived meanwhile runs on
    this thread for an actor whose handlers never wait (another batch's group changes, whose
    sender waits, as `_handle_inline` does), goes to the pool for one that may wait (this
    thread may still hold others); a waiter's turn (`_Handover`) there passes the claim on."""
    for position in held:
        let_go(actors[position])


def let_go(actor: Actor[Any]) -> None:
    """Release a claim this thread holds (invariant 3), as `_release` does for each actor."""
    if actor._let_go():
        return
    # messages arrived meanwhile: the actor is still this thread's
    if actor.handlers_wait:
        actor._pool.schedule(actor._run_batch)
    else:
        actor._finish(_BATCH)


def holding_in_order(
    actors: Sequence[Actor[Any]], deadline: float, work: Callable[[], T]
) -> T | Busy:
    """Claim every one of `actors` (distinct, handlers that never wait, in one global order
    that every caller of this uses), waiting for each busy one in turn, then run `work()`
    holding them all and release them all; `BUSY` (nothing held, nothing run) if one was not
    handed over by `deadline` (`time.monotonic()`) or is stopped, and on the main thread.

    A busy actor's turn is a `_Handover` queued in its inbox: its holder, letting go, runs what
    was sent before it, then hands the claim over. Every such wait ends (invariant 7); `work`
    may wait only as a handler may. A waiter that gives up at `deadline` abandons its turn,
    unless the holder took it first (invariant 9): then it takes the claim on its way.
    """
    if _guarded():
        return BUSY
    held: list[int] = []
    _held.depth += 1
    try:
        for position, actor in enumerate(actors):
            if not actor._claim() and not _handed_over(actor, deadline):
                return BUSY
            held.append(position)
        return work()
    finally:
        _held.depth -= 1
        _release(actors, held)


def _handed_over(actor: Actor[Any], deadline: float) -> bool:
    """Queue a turn for `actor` and wait until its holder hands the claim over (True), or
    until `deadline` or its stop (False: not claimed)."""
    turn = _Handover()
    reply: Reply[None] = Reply()
    actor._post(turn, reply)
    try:
        reply.get(max(0.0, deadline - time.monotonic()))
    except OperationTimeout:
        if turn.abandon():
            return False
        reply.get(None)  # the holder took the turn first: the claim is on its way
    except ActorStopped:
        return False
    return True


def stop_all(actors: Sequence[Actor[Any]], timeout: float) -> None:
    """Stop every one of `actors`, each after what it was sent before, and wait until all have
    stopped; `OperationTimeout` if one has not within `timeout` of its wait.

    The idle ones (most trackers at a manager's shutdown) are stopped here, holding them all
    (`holding`: a claim each, then the stop's own steps, `Actor._halt`, as a stop message's
    handler would run them), with no message, reply or handler frame each: stopping a
    tracker cost several times a decision that way. Each busy one gets a stop message, all
    sent before the first wait; on the main thread, which claims nothing, every one does.
    """

    def halt_idle(held: list[int]) -> list[Actor[Any]]:
        for position in held:
            actors[position]._halt()
        idle = set(held)
        return [actor for position, actor in enumerate(actors) if position not in idle]

    stops = [stop(actor) for actor in holding(actors, halt_idle)]
    for stopped in stops:
        stopped.get(timeout)

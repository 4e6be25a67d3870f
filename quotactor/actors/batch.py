"""A batch's delivery: its items decided on the sender's thread, holding their trackers.

After the manager's route (one step for the whole batch), the sender claims every idle user
tracker the batch names, then every idle group tracker those users' items name
(`holding.holding`, nested: the runtime's invariant 7; it never waits for a claim), and
decides each item whose user and group it holds directly, in the caller's order, the way the
reference model does: check the user side, check the group side, apply the user side
(journaled), apply the group side, and undo the user side if that fails. Nobody else sees a
tracker the sender holds, so this is what the user tracker's handler asking the group would
do, without a group message, an open journal per item or a status per round: one claim per
tracker per batch, and no report for the trackers it left empty (they are marked idle, for
the manager to retire lazily).

A held user with an item for a busy group (another caller's batch holds it, most often the
`*` group most users count for) waits, once the groups are released, for that group's turn:
the sender claims every group those users' items name, in one order (by name), and a busy one
is handed over by its holder when it lets go (`holding.holding_in_order`, which argues why
every such wait ends); then it decides those users' items held, as above. Only if a turn does
not come by the caller's deadline are they decided by `user_tracker.decide`, which sends the
groups messages (abandoned at the deadline: an increase is then not applied, a decrease is
applied when the group runs). A busy user gets its items as one message. Each user's items
stay in the caller's order on every path; items of different users are independent (as if
sent by different callers).
"""

from __future__ import annotations

import operator
import time
from collections.abc import Callable, Sequence
from itertools import compress
from operator import itemgetter

from quotactor.actors.group_tracker import GroupTrackerActor
from quotactor.actors.holding import holding, holding_in_order, let_go
from quotactor.actors.known import NOT_KNOWN, apply_known
from quotactor.actors.manager import ManagerActor
from quotactor.actors.messages import Route
from quotactor.actors.runtime import BUSY, Ticket, _guarded, _held, call, submit
from quotactor.actors.user_tracker import (
    Result,
    Routing,
    UserBatch,
    UserChange,
    UserIncrease,
    UserTrackerActor,
    decide,
    explain,
)
from quotactor.core.decision import Decision
from quotactor.core.errors import OperationTimeout
from quotactor.core.intake import Decrease, Increase
from quotactor.core.tracker import (
    decide_held,
)
from quotactor.logs import get_logger

__all__ = ["apply_one", "deliver_batch", "deliver_one", "route_queued"]

log = get_logger()

_GROUP, _GROUP_REF, _TRACKER = itemgetter(4), itemgetter(5), itemgetter(9)
"""A routed message's group name, group tracker and user tracker (`group`, `group_ref` and
`user_ref` of both kinds): C-level getters, so that grouping and splitting a batch's items
by tracker runs no bytecode per item."""


def _groups_named(items: Sequence[UserChange]) -> dict[GroupTrackerActor, str]:
    """The group trackers `items` name, each once in the order first named, with its name."""
    named = dict(zip(map(_GROUP_REF, items), map(_GROUP, items), strict=True))
    named.pop(None, None)  # items of no group
    return named


def deliver_batch(routing: Routing, results: list[Result], deadline: float) -> Exception | None:
    """Decide every routed item, writing each answer at its position in `results`; the first
    item's failure, if any (every item is decided all the same)."""
    routed, users = routing.routed, routing.users
    failures: list[Exception] = []
    busy: dict[UserTrackerActor, list[UserChange]] = {}

    def with_users(held: list[int]) -> None:
        mine: Sequence[UserChange] = routed
        groups = routing.groups  # those the items name, each once: all of them are `mine`
        if len(held) < len(users):
            mine_users = [users[i] for i in held]
            mine, others = _split(routed, set(mine_users).__contains__)
            for msg in others:
                busy.setdefault(msg.user_ref, []).append(msg)
            if not mine:
                return
            groups = list(_groups_named(mine))
        later = holding(groups, lambda gheld: _decide_held(mine, groups, gheld, results,
                                                           failures))
        if later and not _decide_in_turn(later, results, failures, deadline):
            shares = list(later.items())
            for (_, changes), answers in zip(shares, decide(shares, deadline), strict=True):
                _settle(changes, answers, results, failures)

    holding(users, with_users)
    for ref, changes in busy.items():  # busy user trackers (or the main thread): a message each
        try:
            answers = call(ref, UserBatch(tuple(changes), deadline), _left(deadline))
        except Exception as exc:
            failures.append(exc)
            continue
        _settle(changes, answers, results, failures)
    return failures[0] if failures else None


def apply_one(manager: ManagerActor, item: Increase | Decrease, deadline: float
              ) -> Decision | None:
    """A single call's validated change: its answer (a `Decision`, or None for a decrease),
    or its failure raised.

    Decided without the manager when its user and application are known
    (`quotactor.actors.known`); else routed (on this thread when the manager is idle, behind
    the other callers otherwise) and delivered (`deliver_one`).
    """
    known = apply_known(manager, item)
    if known is not NOT_KNOWN:
        return known  # type: ignore[return-value]  # narrowed: a Decision or None
    msg: UserChange | None
    if not _guarded() and manager._claim():  # routed here, as `here` would run its handler
        held = _held
        held.depth += 1
        try:
            msg = manager.route_held(item)
        finally:
            held.depth -= 1
            let_go(manager)
    else:
        routing = route_queued(manager, (item,), deadline)
        if routing.refused:
            raise routing.refused[0][1]
        msg = routing.routed[0] if routing.routed else None
    return None if msg is None else deliver_one(msg, deadline)


def route_queued(manager: ManagerActor, items: tuple[Increase | Decrease, ...],
                 deadline: float) -> Routing:
    """Route behind another caller: with a ticket, so that a wait that times out either
    withdraws the items whole or waits for the routing the manager has begun (invariant 9)."""
    ticket = Ticket()
    pending = submit(manager, Route(items, deadline, ticket))
    try:
        routing: Routing = pending.get(_left(deadline))
    except OperationTimeout:
        if ticket.abandon():
            raise  # the manager will route nothing of it
        routing = pending.get(None)  # taken: the manager never waits, its answer is coming
    return routing


def deliver_one(msg: UserChange, deadline: float) -> Decision | None:
    """A single call's routed item: its answer (a `Decision`, or None for a decrease), or its
    failure raised.

    Decided as a batch of one when its user and group trackers are idle: holding both
    (claimed here and released in this frame's `finally`: invariants 3 and 7), in one
    compiled core call. With the group busy, the held user asks it by message at once (its
    holder runs the message as it lets go): under contention one thread then decides many
    callers' changes, where waiting for the group's turn, as a batch does, would hand the
    claim from thread to thread, a switch per call. With the user busy (or on the main
    thread, which claims nothing: invariant 2), the item is one message to it.
    """
    user = msg.user_ref
    answer: Result
    if _guarded() or not user._claim():
        [answer] = call(user, UserBatch((msg,), deadline), _left(deadline))
    else:
        group = msg.group_ref
        held = _held
        held.depth += 1
        try:
            if group is None or group._claim():
                try:
                    results: list[Result] = [None]
                    notes = decide_held([msg], UserIncrease, results, user.idle)
                    answer = results[0]
                    if notes:
                        failures: list[Exception] = []
                        explain([msg], notes, failures)
                        if failures:
                            answer = failures[0]
                finally:
                    if group is not None:
                        let_go(group)
            else:  # the group is busy: asked by message, holding the user
                [[answer]] = decide(((user, (msg,)),), deadline)
        finally:
            held.depth -= 1
            let_go(user)
    if isinstance(answer, Exception):
        raise answer
    return answer


def _decide_in_turn(
    later: dict[UserTrackerActor, list[UserChange]], results: list[Result],
    failures: list[Exception], deadline: float,
) -> bool:
    """Decide the items of the held users one of whose groups another caller held, holding
    every group they name: claimed by name (one partition's groups have distinct names: the
    one order `holding_in_order` needs), each busy one in its turn (its holder hands it over
    when it lets go), after this thread has let go of every group it held. False if a group
    was not handed over by the deadline (or is stopped): nothing decided, for `decide` to send
    them as messages."""
    items = [msg for changes in later.values() for msg in changes]
    named = _groups_named(items)
    groups = sorted(named, key=named.__getitem__)
    everyone = list(range(len(groups)))
    return holding_in_order(groups, deadline, lambda: _decide_held(
        items, groups, everyone, results, failures)) is not BUSY


def _settle(changes: Sequence[UserChange], answers: Sequence[Result], results: list[Result],
            failures: list[Exception]) -> None:
    for msg, answer in zip(changes, answers, strict=True):
        if isinstance(answer, Exception):
            failures.append(answer)
        else:
            results[msg.position] = answer


def _decide_held(
    mine: Sequence[UserChange], groups: list[GroupTrackerActor], gheld: list[int],
    results: list[Result], failures: list[Exception],
) -> dict[UserTrackerActor, list[UserChange]]:
    """Decide the items of `mine` (their user trackers held) whose groups are all held, in one
    compiled core call (`decide_held`, which also counts them handled and marks the trackers
    they leave idle); the others' items, by user, for `decide` once the groups are released."""
    later: dict[UserTrackerActor, list[UserChange]] = {}
    if len(gheld) < len(groups):
        busy_groups = set(groups).difference([groups[i] for i in gheld])
        blocked = set(compress(map(_TRACKER, mine), map(
            busy_groups.__contains__, map(_GROUP_REF, mine))))
        others, mine = _split(mine, blocked.__contains__)
        for msg in others:
            later.setdefault(msg.user_ref, []).append(msg)
    if not mine:
        return later
    # the manager's `idle` set (every tracker holds it): where the trackers left idle go
    notes = decide_held(mine, UserIncrease, results, mine[0].user_ref.idle)  # type: ignore[arg-type]
    explain(mine, notes, failures)
    return later


def _split(items: Sequence[UserChange], keep: Callable[[UserTrackerActor], bool]
           ) -> tuple[list[UserChange], list[UserChange]]:
    """`items` whose user tracker `keep` accepts, and the others, each in order: filtered in
    C (`compress`), with no bytecode per item when `keep` is a C-level method."""
    kept = list(map(keep, map(_TRACKER, items)))
    return (list(compress(items, kept)),
            list(compress(items, map(operator.not_, kept))))


def _left(deadline: float) -> float:
    return max(0.0, deadline - time.monotonic())

"""Concurrent histories of the user group manager are linearizable under the reference model.

Eight threads call one manager at once (increases of new and running applications, decreases,
removals, headroom reads, usage reads that retire idle trackers, sweeps, config switches),
each call recorded with its arguments, its answer and the times it was invoked and answered.
A history is linearizable when some order of its calls (a) keeps every call that was answered
before another was invoked ahead of it, and (b) gives, replayed on the reference model
(`quotactor.core.reference.ReferenceTracking`), every call the answer it got. `legal_order`
searches for one as Wing and Gong's algorithm does, with Lowe's memo (as Knossos and porcupine
do): at each step it tries each pending call invoked before the earliest answer among the
pending ones, and never visits a (set of calls ordered, model state) pair twice (the state
summed up by `_fingerprint`). A read that fits the model as it is goes next at once (it
changes nothing, so nothing is lost by not trying it later). The model cannot be copied, so a
step that fails is undone by its inverse where that is one step (`_undo`), else by replaying
the order so far.

Config switches: the manager promises that each call is judged under the limits of one config,
the one in force when it routed the call (or, for a known user's call, when it checked its
views), never a mix. A call routed just before a switch may be decided after calls routed after
it, so a call that overlaps a switch may be judged under the table before it or after it
(`tables`): weaker than linearizability for the switch itself (found by this check), while the
usage every call leaves must still be explained by one sequential order.

Reads: a headroom read of a user with a group reads the user's tracker and the group's, each at
its own moment (as YuniKorn's reads them under two locks), so it is not one atomic read and a
change between the two shows in one side only (found by this check); the histories read the
headroom of the user of no group, and whole users' usage, each one tracker's state.

The history is checked whole, not split per user: the users share groups and every call is
judged under the config in force, so no key's calls are independent of another's.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pytest

from quotactor import UserGroup
from quotactor.core.limits import LimitEntry as L
from quotactor.core.limits import LimitTable
from quotactor.core.queue_path import parse_queue_path
from quotactor.core.reference import ReferenceTracking
from quotactor.core.resources import Resource
from quotactor.ugm import UserGroupManager

THREADS = 8
CALLS = 14
SEEDS = 40
YIELDING_SEEDS = 10
QUEUES = ("root.a", "root.b")
USERS = [UserGroup(f"u{i}", [f"g{i % 2}"]) for i in range(4)] + [UserGroup("u4", [])]
TABLES = (
    LimitTable({
        "root": [L(users=("*",), max_resources={"m": 7}, max_applications=3),
                 L(groups=("g0", "g1"), max_resources={"m": 11})],
        "root.a": [L(users=("u0",), max_resources={"m": 4})],
    }),
    LimitTable({
        "root": [L(users=("*",), max_resources={"m": 5}),
                 L(groups=("g0",), max_resources={"m": 8}, max_applications=4)],
    }),
)
READS = ("headroom", "usage", "stats")
BUDGET = 20_000
"""Orders tried per history before its search gives up as inconclusive: the search is
exponential at worst (as Knossos's and porcupine's are), and a history whose calls all
overlap, on a loaded machine, could otherwise outlast the test's timeout."""


class Inconclusive(Exception):
    """The search for a legal order spent its budget without an answer."""


@dataclass(frozen=True)
class Call:
    """One recorded call: what was asked, what came back, and when (ns, one clock)."""

    thread: int
    kind: str
    args: tuple[Any, ...]
    answer: Any
    invoked: int
    answered: int
    tables: tuple[LimitTable, ...] = ()
    """When it overlaps switches: the tables it may be judged under (see the module)."""


def _tables(call: Call, calls: Sequence[Call], first: LimitTable) -> tuple[LimitTable, ...]:
    """The tables `call` may be judged under besides the one in force where it is ordered:
    none if it overlaps no switch; else those the overlapping switches set, and those that
    may have been in force when it was invoked (set by a switch answered before, with no
    switch wholly between the two, or `first` if none was)."""
    switches = [c for c in calls if c.kind == "switch"]
    overlapping = [s for s in switches if s.invoked < call.answered and call.invoked < s.answered]
    if not overlapping:
        return ()
    before = [s for s in switches if s.answered < call.invoked]
    last = [s for s in before if not any(
        s.answered < other.invoked and other.answered < call.invoked for other in before)]
    return tuple({id(t): t for t in [s.args[0] for s in overlapping + last]
                  + ([] if before else [first])}.values())


def apply(model: ReferenceTracking, call: Call, table: LimitTable | None = None) -> Any:
    """The model's answer to `call`, in the shape the manager answers it (and its change),
    judged under `table` if given (the model's own stays in force after)."""
    if table is None or call.kind == "switch":
        return _apply(model, call)
    in_force, model.table = model.table, table
    try:
        return _apply(model, call)
    finally:
        model.table = in_force


def _apply(model: ReferenceTracking, call: Call) -> Any:
    kind, args = call.kind, call.args
    if kind == "increase":
        queue, app, usage, user = args
        return model.increase(parse_queue_path(queue), app, Resource.of(usage), user) is None
    if kind == "decrease":
        queue, app, usage, user, remove = args
        model.decrease(parse_queue_path(queue), app, Resource.of(usage), user, remove)
        return None
    if kind == "headroom":
        queue, app, user = args
        return model.headroom(parse_queue_path(queue), app, user)
    if kind == "usage":
        (name,) = args
        state = model.users.get(name)  # a user tracked or not: `_usage` tells no difference
        return _usage(None if state is None else state.snapshot(model.table))
    if kind == "switch":
        (model.table,) = args
        return None
    assert kind == "stats"
    return None  # a sweep: retires idle trackers, which no answer shows


def _fingerprint(model: ReferenceTracking) -> tuple[Any, ...]:
    """What, with the set of calls ordered so far, determines the model's state: the table in
    force and each running application's group. Every ordered call got the answer it got, so
    the same increases were applied whatever their order; each application is one thread's,
    which decreases it after its increases and never below what it holds; so every usage is
    the same sum, and only the group an application was linked to (chosen under the table in
    force at its start) can differ."""
    return (TABLES.index(model.table), tuple(sorted(
        (name, tuple(sorted(state.app_groups.items(), key=repr)))
        for name, state in model.users.items())))


def _undo(model: ReferenceTracking, call: Call) -> Callable[[ReferenceTracking], None] | None:
    """How to take `call` back once applied to `model` as it is now (on the model then in use),
    where that is one step:
    a switch, by the table in force again; an increase the model accepts, by its decrease
    (removing the application if it was new: the model's views are then as before, which a
    randomised comparison of every snapshot checked); None for the rest, which are replayed."""
    if call.kind == "switch":
        table = model.table
        return lambda now: setattr(now, "table", table)
    if call.kind != "increase":
        return None
    queue, app, usage, user = call.args
    state = model.users.get(user.user)
    new = state is None or app not in state.app_groups
    return lambda now: now.decrease(parse_queue_path(queue), app, Resource.of(usage), user, new)


def legal_order(calls: Sequence[Call], first: LimitTable, budget: int = BUDGET
                ) -> list[Call] | None:
    """An order of `calls` that respects real time and that the reference model (starting
    with `first` in force) answers as they were answered; None if there is none. Raises
    `Inconclusive` once `budget` calls were tried without an answer either way."""
    calls = sorted((c if c.kind == "switch" else replace(c, tables=_tables(c, calls, first))
                    for c in calls), key=lambda c: c.invoked)
    everyone = (1 << len(calls)) - 1
    order: list[Call] = []
    seen: set[tuple[Any, ...]] = set()
    model = ReferenceTracking(first)
    tried = 0

    def replayed() -> ReferenceTracking:
        fresh = ReferenceTracking(first)
        for call in order:
            if call.kind not in READS:
                apply(fresh, call, call.tables[0] if call.tables else None)
        return fresh

    def candidates(done: int) -> list[int]:
        """The pending calls that may come next: invoked before the earliest answer among the
        pending ones (that one must come before any call invoked after it was answered)."""
        pending = [i for i in range(len(calls)) if not done >> i & 1]
        horizon = min(calls[i].answered for i in pending)
        return [i for i in pending if calls[i].invoked <= horizon]

    def fits(call: Call) -> tuple[LimitTable | None] | None:
        """For a read: the table under which the model answers it as it was answered now (None
        for the one in force), or None if there is none."""
        for table in (None, *call.tables):
            if apply(model, call, table) == call.answer:
                return (table,)
        return None

    def search(done: int) -> bool:
        nonlocal model, tried
        greedy = 0
        while done != everyone:  # a read that fits now goes now: later it changes nothing
            read = next(((i, t) for i in candidates(done) if calls[i].kind in READS
                         and (t := fits(calls[i])) is not None), None)
            if read is None:
                break
            i, (table,) = read
            order.append(replace(calls[i], tables=(table,) if table else ()))
            done |= 1 << i
            greedy += 1
        if done == everyone:
            return True
        key = (done, *_fingerprint(model))
        if key not in seen:
            seen.add(key)
            for i in candidates(done):
                call = calls[i]
                tried += 1
                if tried > budget:
                    raise Inconclusive(f"no answer after {budget} calls tried")
                for table in (None, *(t for t in call.tables if t is not model.table)):
                    undo = _undo(model, call)
                    answer = apply(model, call, table)
                    if answer == call.answer:
                        order.append(replace(call, tables=(table,) if table else ()))
                        if search(done | 1 << i):
                            return True
                        order.pop()
                    if call.kind in READS or answer is False:
                        continue  # a read, or a refused increase: the model did not change
                    if undo is None:
                        model = replayed()
                    else:
                        undo(model)  # `model` may be another object by now (a replay)
        del order[len(order) - greedy:]
        return False

    return list(order) if search(0) else None


def _usage(snapshot: dict[str, Any] | None) -> dict[str, Any] | None:
    """A user's snapshot as the histories compare it: None when it holds nothing (a user whose
    first change is on its way shows as tracked and empty for that moment: no usage either
    way)."""
    if snapshot is None or not snapshot["queues"].get("runningApplications"):
        return None
    return snapshot


def perform(ugm: UserGroupManager, kind: str, args: tuple[Any, ...]) -> Any:
    """Make the call `kind` with `args` (as `apply` reads them); its answer, in that shape."""
    if kind == "increase":
        queue, app, usage, user = args
        return ugm.decide_increase(queue, app, usage, user).ok
    if kind == "decrease":
        queue, app, usage, user, remove = args
        return ugm.decrease_tracked_resource(queue, app, usage, user, remove)
    if kind == "headroom":
        return ugm.headroom(*args)
    if kind == "usage":
        return _usage(ugm.user_usage(*args))
    if kind == "stats":
        ugm.stats()  # counts of listed trackers: no view of the model's, not checked
        return None
    ugm.update_config(args[0])
    return None


def record(ugm: UserGroupManager, seed: int) -> list[Call]:
    """Run eight threads' calls against `ugm` at once; every call, recorded."""
    calls: list[Call] = []
    lock = threading.Lock()
    go = threading.Barrier(THREADS)

    def timed(thread: int, kind: str, *args: Any) -> Any:
        invoked = time.perf_counter_ns()
        answer = perform(ugm, kind, args)
        answered = time.perf_counter_ns()
        with lock:
            calls.append(Call(thread, kind, args, answer, invoked, answered))
        return answer

    def worker(thread: int) -> None:
        rng = random.Random(seed * 100 + thread)
        running: dict[str, tuple[str, UserGroup, int]] = {}  # app -> queue, user, usage held
        go.wait()
        for n in range(CALLS):
            step = rng.random()
            if running and step < 0.45:  # a running application: more, some back, or its end
                app = rng.choice(sorted(running))
                queue, user, held = running[app]
                if step < 0.15:
                    more = {"m": rng.randint(1, 2)}
                    if timed(thread, "increase", queue, app, more, user):
                        running[app] = (queue, user, held + more["m"])
                elif step < 0.3:
                    back = {"m": rng.randint(0, held)}
                    timed(thread, "decrease", queue, app, back, user, False)
                    running[app] = (queue, user, held - back["m"])
                else:
                    del running[app]
                    rest = {"m": held}
                    timed(thread, "decrease", queue, app, rest, user, True)
            elif step < 0.75:  # a new application
                queue, user = rng.choice(QUEUES), rng.choice(USERS)
                app, usage = f"t{thread}-{n}", {"m": rng.randint(1, 3)}
                if timed(thread, "increase", queue, app, usage, user):
                    running[app] = (queue, user, usage["m"])
            elif step < 0.85:  # a read of one tracker: the user of no group (see the module)
                queue, user = rng.choice(QUEUES), USERS[-1]
                app = rng.choice(sorted(running)) if running else f"t{thread}-new"
                timed(thread, "headroom", queue, app, user)
            elif step < 0.92:
                name = rng.choice(USERS).user
                timed(thread, "usage", name)
            elif step < 0.96:
                timed(thread, "stats")
            else:
                table = rng.choice(TABLES)
                timed(thread, "switch", table)

    threads = [threading.Thread(target=worker, args=(t,), name=f"history-{t}")
               for t in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not any(thread.is_alive() for thread in threads)
    assert len(calls) == THREADS * CALLS
    return calls


@pytest.mark.timeout(120)
def test_concurrent_histories_have_a_legal_sequential_order(
    start_ugm: Any, shaken: None,
) -> None:
    """Many seeds' histories, each with a legal order under the reference model."""
    _check_histories(start_ugm, range(SEEDS))


def _check_histories(start_ugm: Any, seeds: range) -> None:
    """Every history of `seeds` has a legal order; a search that runs out of budget proves
    nothing either way, and at most a quarter of them may."""
    inconclusive = 0
    for seed in seeds:
        ugm = start_ugm(TABLES[0])
        calls = record(ugm, seed)
        try:
            assert legal_order(calls, TABLES[0]) is not None, f"seed {seed}: no legal order"
        except Inconclusive:
            inconclusive += 1
        ugm.stop()
    assert inconclusive <= len(seeds) // 4, f"{inconclusive} of {len(seeds)} inconclusive"


@pytest.mark.timeout(120)
def test_histories_with_a_switch_offered_at_every_hand_off_have_a_legal_order(
    start_ugm: Any, yielding: None,
) -> None:
    """The same, with the runtime offering a thread switch around each of its hand-off steps
    (fewer seeds: each history takes longer)."""
    _check_histories(start_ugm, range(SEEDS, SEEDS + YIELDING_SEEDS))


def _call(kind: str, args: tuple[Any, ...], answer: Any, invoked: int, answered: int) -> Call:
    return Call(0, kind, args, answer, invoked, answered)


SUE = USERS[0]


def test_the_search_finds_the_order_that_explains_overlapping_calls() -> None:
    """Two overlapping increases where only one fits: the refused one must be ordered after
    the accepted one, whichever was invoked first."""
    calls = [
        _call("increase", ("root.a", "x", {"m": 3}, SUE), False, 0, 10),
        _call("increase", ("root.a", "y", {"m": 3}, SUE), True, 1, 9),
    ]
    order = legal_order(calls, TABLES[0])
    assert order is not None and [c.args[1] for c in order] == ["y", "x"]


def test_the_search_rejects_a_history_with_no_legal_order() -> None:
    """A read that saw an increase answered only after the read was: not linearizable; and an
    increase accepted past the limit: not either."""
    stale = [
        _call("increase", ("root.a", "x", {"m": 3}, SUE), True, 0, 1),
        _call("headroom", ("root.a", "x", SUE), {"m": 4}, 2, 3),  # saw nothing of x
    ]
    assert legal_order(stale, TABLES[0]) is None
    over = [_call("increase", ("root.a", f"x{i}", {"m": 3}, SUE), True, 2 * i, 2 * i + 1)
            for i in range(2)]
    assert legal_order(over, TABLES[0]) is None


def test_a_switch_orders_the_calls_around_it() -> None:
    """An increase refused under the second table but fine under the first is legal only if
    the switch can come before it."""
    big = ("root.b", "x", {"m": 6}, USERS[1])
    assert legal_order([_call("switch", (TABLES[1],), None, 0, 5),
                        _call("increase", big, False, 1, 4)], TABLES[0]) is not None
    assert legal_order([_call("switch", (TABLES[1],), None, 3, 5),
                        _call("increase", big, False, 0, 2)], TABLES[0]) is None

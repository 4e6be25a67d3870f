"""The pooled runtime: who runs a message, in which order, and what survives a failure."""

from __future__ import annotations

import gc
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest

from quotactor import OperationTimeout, UserGroup
from quotactor.actors.holding import holding, holding_in_order, stop_all
from quotactor.actors.runtime import (
    Actor,
    Busy,
    Ticket,
    WorkerPool,
    call,
    deliver,
    idle,
    live_actors,
    stop,
    stop_now,
    submit,
)
from quotactor.core.errors import ActorStopped
from quotactor.core.limits import LimitEntry, LimitTable

T = TypeVar("T")


def off_main(fn: Callable[[], T]) -> T:
    """Run `fn` on a thread that is not the main one (where senders may run handlers)."""
    with ThreadPoolExecutor(1) as executor:
        return executor.submit(fn).result(WAIT)

WAIT = 10.0


@dataclass(frozen=True)
class Block:
    """Hold the actor: say so on `started`, then wait for `release`."""

    started: threading.Event
    release: threading.Event


@dataclass(frozen=True)
class Append:
    value: Any


@dataclass(frozen=True)
class Nested:
    """Call `inner` with `message` from inside this actor's handler."""

    inner: Actor
    message: Any


class Recorder(Actor):
    """Records what it handled and on which thread."""

    def __init__(self, pool: WorkerPool) -> None:
        super().__init__(pool)
        self.seen: list[tuple[Any, str]] = []

    def handle(self, message: Any) -> Any:
        thread = threading.current_thread().name
        if isinstance(message, Block):
            message.started.set()
            assert message.release.wait(WAIT)
        elif isinstance(message, Append):
            self.seen.append((message.value, thread))
        elif isinstance(message, Nested):
            return call(message.inner, message.message, WAIT)
        elif message == "fail":
            raise ValueError("handler failed")
        elif message == "seen":
            return list(self.seen)
        return thread


class NeverWaits(Recorder):
    handlers_wait = False


@pytest.fixture
def pool() -> Iterator[WorkerPool]:
    pool = WorkerPool("test", 2)
    yield pool
    pool.shutdown()


@pytest.fixture
def started(pool: WorkerPool) -> Iterator[Any]:
    refs: list[Actor] = []

    def start(cls: type[Recorder] = Recorder) -> Actor:
        ref = cls(pool)
        refs.append(ref)
        return ref

    yield start
    for ref in refs:
        if ref.is_alive():
            stop(ref).get(WAIT)
    assert live_actors().get("Recorder", 0) == 0
    assert live_actors().get("NeverWaits", 0) == 0


def hold(ref: Actor, message_for: Any = None) -> tuple[threading.Thread,
                                                                     threading.Event]:
    """Occupy `ref` from another thread (through `message_for(block)` if given)."""
    began, release = threading.Event(), threading.Event()
    block = Block(began, release)
    message = block if message_for is None else message_for(block)
    holder = threading.Thread(target=call, args=(ref, message, WAIT), name="holder")
    holder.start()
    assert began.wait(WAIT)
    return holder, release


def test_an_idle_actor_runs_on_the_callers_thread(started: Any) -> None:
    ref = started()

    def sender() -> tuple[str, Any, str]:
        where = call(ref, "where", WAIT)
        deliver(ref, Append(1))
        return where, call(ref, "seen", WAIT), threading.current_thread().name

    where, seen, me = off_main(sender)
    assert where == me
    assert seen == [(1, me)]


def test_the_main_thread_never_runs_a_handler(started: Any) -> None:
    """Signal handlers' exceptions land on the main thread: it only queues and waits."""
    ref = started()
    assert call(ref, "where", WAIT).startswith("quotactor-test")
    for value in range(20):
        deliver(ref, Append(value))
    seen = call(ref, "seen", WAIT)
    assert [value for value, _ in seen] == list(range(20))  # in the order sent
    assert all(thread.startswith("quotactor-test") for _, thread in seen)


def test_messages_to_a_busy_actor_wait_in_order_and_the_holder_runs_them(started: Any) -> None:
    ref = started()
    holder, release = hold(ref)
    for value in range(5):
        deliver(ref, Append(value))
    where = submit(ref, "where")
    release.set()
    holder.join(WAIT)
    assert where.get(WAIT) == "holder"
    assert call(ref, "seen", WAIT) == [(v, "holder") for v in range(5)]


def test_a_nested_holder_leaves_waiting_messages_of_a_waiting_actor_to_the_pool(
    started: Any,
) -> None:
    outer, inner = started(), started()
    holder, release = hold(outer, lambda block: Nested(inner, block))
    deliver(inner, Append("queued"))
    release.set()
    holder.join(WAIT)
    [(value, thread)] = call(inner, "seen", WAIT)
    assert value == "queued" and thread.startswith("quotactor-test")


def test_a_queued_handler_leaves_waiting_messages_of_a_waiting_actor_to_the_pool(
    started: Any,
) -> None:
    """As above, when the outer handler is one that waited in the inbox of an actor that never
    waits (the manager), run by its holder as it lets go: it still counts as held (invariant
    6), so the inner actor's waiting messages go to the pool, not to the outer's holder (which
    may hold a lock a user tracker's handler takes)."""
    outer, inner = started(NeverWaits), started()
    holder, release = hold(outer)
    began, inner_release = threading.Event(), threading.Event()
    deliver(outer, Nested(inner, Block(began, inner_release)))  # queued behind the hold
    release.set()
    assert began.wait(WAIT)  # the holder runs the queued handler, holding `inner` inline
    deliver(inner, Append("queued"))
    inner_release.set()
    holder.join(WAIT)
    [(value, thread)] = call(inner, "seen", WAIT)
    assert value == "queued" and thread.startswith("quotactor-test")


def test_a_nested_holder_runs_waiting_messages_of_an_actor_that_never_waits(
    started: Any,
) -> None:
    outer, inner = started(), started(NeverWaits)
    holder, release = hold(outer, lambda block: Nested(inner, block))
    deliver(inner, Append("queued"))
    release.set()
    holder.join(WAIT)
    assert call(inner, "seen", WAIT) == [("queued", "holder")]


@pytest.mark.parametrize("kind", ["never_waits", "may_wait"])
def test_holding_runs_what_arrived_meanwhile_for_an_actor_that_never_waits(
    started: Any, kind: str,
) -> None:
    """A batch holding two actors releases them: what arrived for the one whose handlers never
    wait runs on the releasing thread (a group's changes from another caller); for one whose
    handlers may wait (a user tracker), on the pool, as the holder still holds the next one."""
    first = started(NeverWaits if kind == "never_waits" else Recorder)
    second = started()
    claimed, release = threading.Event(), threading.Event()

    def batch() -> list[int]:
        def work(held: list[int]) -> list[int]:
            claimed.set()
            assert release.wait(WAIT)
            return held

        return holding([first, second], work)

    with ThreadPoolExecutor(1, thread_name_prefix="batch") as executor:
        done = executor.submit(batch)
        assert claimed.wait(WAIT)
        deliver(first, Append("queued"))
        release.set()
        assert done.result(WAIT) == [0, 1]
    [(value, thread)] = call(first, "seen", WAIT)
    assert value == "queued"
    if kind == "never_waits":
        assert thread.startswith("batch")
    else:
        assert thread.startswith("quotactor-test")


def test_a_failing_call_raises_to_the_caller_and_the_actor_lives_on(started: Any) -> None:
    ref = started()
    with pytest.raises(ValueError, match="handler failed"):
        call(ref, "fail", WAIT)
    deliver(ref, "fail")  # a failing tell is logged, not fatal
    holder, release = hold(ref)
    queued = submit(ref, "fail")
    release.set()
    holder.join(WAIT)
    with pytest.raises(ValueError):
        queued.get(WAIT)
    assert off_main(lambda: call(ref, "where", WAIT)) != "holder"


def test_stop_now_stops_an_idle_actor_at_once_and_a_busy_one_after_its_queue(
    started: Any,
) -> None:
    idle_one = started()
    stop_now(idle_one)
    assert not idle_one.is_alive()
    with pytest.raises(ActorStopped):
        call(idle_one, "where", WAIT)

    busy = started()
    holder, release = hold(busy)
    deliver(busy, Append("before the stop"))
    stop_now(busy)
    late = submit(busy, "where")
    release.set()
    holder.join(WAIT)
    with pytest.raises(ActorStopped):
        late.get(WAIT)
    assert not busy.is_alive()


def test_a_stopped_actor_is_freed_without_the_cyclic_collector(pool: WorkerPool) -> None:
    """At 100k trackers a full collection takes seconds: retiring must not leave cycles."""
    ref = Recorder(pool)
    call(ref, Append("work"), WAIT)
    actor = weakref.ref(ref)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        stop(ref).get(WAIT)
        del ref
        assert actor() is None
    finally:
        if was_enabled:
            gc.enable()


def test_many_threads_calling_one_actor_lose_nothing(started: Any) -> None:
    ref = started(NeverWaits)
    errors: list[BaseException] = []

    def worker(t: int) -> None:
        try:
            for i in range(300):
                if i % 2:
                    call(ref, Append((t, i)), WAIT)
                else:
                    deliver(ref, Append((t, i)))
        except BaseException as exc:  # surfaced by the test thread
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT * 3)
    assert errors == []
    seen = [value for value, _ in call(ref, "seen", WAIT)]
    assert sorted(seen) == sorted((t, i) for t in range(8) for i in range(300))
    for t in range(8):  # each sender's messages in the order it sent them
        assert [i for s, i in seen if s == t] == list(range(300))


def test_a_ticket_is_settled_once_by_whoever_comes_first() -> None:
    taken = Ticket()
    assert taken.take() and taken.take()
    assert not taken.abandon()
    abandoned = Ticket()
    assert abandoned.abandon()
    assert not abandoned.take()


def test_a_wait_honours_the_callers_timeout(started: Any) -> None:
    ref = started()
    holder, release = hold(ref)
    try:
        with pytest.raises(OperationTimeout):
            call(ref, "where", 0.05)
    finally:
        release.set()
        holder.join(WAIT)


def test_a_user_tracker_that_gives_up_on_a_wedged_group_changes_nothing(
    start_ugm: Any,
) -> None:
    """The user tracker waits for its group no longer than the caller's timeout (0.3 s; not a
    fixed 30 s, which `off_main`, giving up after WAIT, would turn into a failure) and then
    refuses the increase whole."""
    ugm = start_ugm(LimitTable({"root": [LimitEntry(groups=("dev",), max_resources={"m": 100})]}))
    ugm.timeout = 0.3
    sue = UserGroup("sue", ["dev"])
    assert ugm.increase_tracked_resource("root.a", "app1", {"m": 1}, sue)
    group = ugm._manager.groups["dev"]
    assert off_main(group._claim)  # wedge the group tracker: claimed, and nobody runs it
    try:
        with pytest.raises(OperationTimeout, match="did not answer in time"):
            off_main(lambda: ugm.decide_increase("root.a", "app2", {"m": 1}, sue))
    finally:
        group._finish(64)  # it wakes up, finds the increase abandoned, applies nothing
    ugm.timeout = 20.0
    assert ugm.get_group_resources("dev") == {"m": 1}
    assert ugm.get_user_resources("sue") == {"m": 1}
    assert ugm.increase_tracked_resource("root.a", "app3", {"m": 1}, sue)
    assert ugm.get_group_resources("dev") == {"m": 2}


@pytest.mark.parametrize("relay", [True, False])
def test_main_thread_calls_run_on_the_relay_unless_the_host_opts_out(
    relay: bool, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from quotactor.actors import batch
    from quotactor.ugm import UserGroupManager

    threads: list[str] = []
    real = batch.decide_held

    def decide_held(*args: Any) -> Any:  # where the held trackers' steps run
        threads.append(threading.current_thread().name)
        return real(*args)

    monkeypatch.setattr(batch, "decide_held", decide_held)
    with UserGroupManager.start(main_thread_relay=relay) as ugm:
        assert ugm.increase_tracked_resource("root.a", "app", {"m": 1}, UserGroup("sue"))
    assert live_actors() == {}
    [thread] = threads
    assert thread.startswith("quotactor-relay") if relay else thread == "MainThread"


def test_a_ticket_raced_by_both_sides_has_exactly_one_winner() -> None:
    """A ticket raced by both sides: whatever the interleaving, one of take/abandon wins, never both
    or neither (workers through futures, every result collected)."""
    tickets = [Ticket() for _ in range(2000)]
    start = threading.Barrier(2)

    def settle(side: str) -> list[bool]:
        start.wait(WAIT)
        return [t.take() if side == "group" else t.abandon() for t in tickets]

    with ThreadPoolExecutor(2) as workers:
        group, user = (f.result(WAIT) for f in
                       [workers.submit(settle, "group"), workers.submit(settle, "user")])
    assert all(g != u for g, u in zip(group, user, strict=True))


@pytest.mark.timeout(60)
def test_a_message_waiting_keeps_the_actor_held_so_no_claim_jumps_it(
    started: Any, held_by_another_batch: Any,
) -> None:
    """A message queued for a held actor keeps it held until it has run (invariant 8): a
    caller that comes later finds it busy and queues behind it (nor may a batch hold it),
    and both run in the order they were sent, the actor idle after."""
    ref = started()
    done, release = held_by_another_batch([ref])
    deliver(ref, Append("waiting"))
    with ThreadPoolExecutor(1) as executor:
        mine = executor.submit(call, ref, Append("mine"), WAIT)
        assert off_main(lambda: holding([ref], lambda held: held)) == []  # counted busy
        assert not mine.done() and not idle(ref)
        release.set()
        assert done.result(WAIT) == [0]
        mine.result(WAIT)
    assert [v for v, _ in call(ref, "seen", WAIT)] == ["waiting", "mine"]
    assert idle(ref)


@pytest.mark.timeout(120)
def test_claims_under_contention_lose_nothing_and_keep_each_senders_order(
    started: Any, shaken: None, yielding: None,
) -> None:
    """Eight threads mix inline calls, tells, asks and batches (`holding`) over three actors,
    two of which never wait: every message is handled once, in each sender's order, every
    answer arrives, and nothing is left claimed."""
    refs = [started(NeverWaits), started(NeverWaits), started()]

    def worker(t: int) -> int:
        answers = []
        for i in range(400):
            ref = refs[(t + i) % len(refs)]
            step = i % 4
            if step == 0:
                call(ref, Append((t, i)), WAIT)
            elif step == 1:
                deliver(ref, Append((t, i)))
            elif step == 2:
                answers.append(submit(ref, Append((t, i))))
            else:
                def work(held: list[int], ref: Any = ref, i: int = i) -> None:
                    for _ in held:  # run the step as its handler would, holding it
                        ref.seen.append(((t, i), "held"))
                    if not held:
                        deliver(ref, Append((t, i)))
                holding([ref], work)
        for answer in answers:
            answer.get(WAIT)
        return len(answers)

    with ThreadPoolExecutor(8) as executor:
        futures = [executor.submit(worker, t) for t in range(8)]
        assert [f.result(WAIT * 6) for f in futures] == [100] * 8
    seen = [value for ref in refs for value, _ in call(ref, "seen", WAIT)]
    assert sorted(seen) == sorted((t, i) for t in range(8) for i in range(400))
    for ref in refs:  # each sender's messages to one actor in the order it sent them
        mine = [value for value, _ in call(ref, "seen", WAIT)]
        for t in range(8):
            order = [i for s, i in mine if s == t]
            assert order == sorted(order)
    assert all(idle(ref) for ref in refs)


@pytest.mark.timeout(60)
def test_a_stop_racing_senders_answers_every_message(
    pool: WorkerPool, shaken: None, yielding: None,
) -> None:
    """Senders keep asking while the actor stops: each gets an answer or `ActorStopped`
    (whoever drains the inbox, the stop or a sender that finds it stopped), none waits for
    ever, and the stopped actor is left unclaimed."""
    for _ in range(20):
        ref = Recorder(pool)
        go = threading.Event()

        def sender(ref: Any = ref, go: threading.Event = go) -> tuple[int, int]:
            assert go.wait(WAIT)
            done = stopped = 0
            for i in range(50):
                try:
                    submit(ref, Append(i)).get(WAIT)
                    done += 1
                except ActorStopped:
                    stopped += 1
            return done, stopped

        with ThreadPoolExecutor(4) as executor:
            futures = [executor.submit(sender) for _ in range(3)]
            go.set()
            executor.submit(lambda ref=ref: stop(ref).get(WAIT)).result(WAIT)
            results = [f.result(WAIT) for f in futures]
        assert all(done + stopped == 50 for done, stopped in results)
        assert not ref.is_alive() and idle(ref)
    assert live_actors().get("Recorder", 0) == 0


@pytest.mark.timeout(60)
def test_holding_in_order_gets_a_busy_actor_from_its_holder_after_what_was_sent_before(
    started: Any, held_by_another_batch: Any, turn_queued: threading.Event,
) -> None:
    """The waiter's turn is queued behind the messages sent before it: the holder, letting go,
    runs those, then hands the claim over; the waiter's work runs holding both actors."""
    first, second = started(NeverWaits), started(NeverWaits)
    done, release = held_by_another_batch([second])
    deliver(second, Append("before the turn"))
    with ThreadPoolExecutor(1) as executor:
        waiting = executor.submit(holding_in_order, [first, second], time.monotonic() + WAIT,
                                  lambda: (list(first.seen), list(second.seen),
                                           not idle(first), not idle(second)))
        assert turn_queued.wait(WAIT)
        assert not waiting.done()
        release.set()
        assert done.result(WAIT) == [0]
        got = waiting.result(WAIT)
    assert got[0] == [] and [v for v, _ in got[1]] == ["before the turn"]
    assert got[1][0][1].startswith("batch")  # run by the holder as it let go
    assert got[2:] == (True, True)
    assert idle(first) and idle(second)
    assert off_main(lambda: call(second, "where", WAIT)) != "batch"  # idle, claimable


@pytest.mark.timeout(60)
def test_holding_in_order_gives_up_at_the_deadline_and_the_actor_runs_on(
    started: Any, held_by_another_batch: Any, turn_queued: threading.Event,
) -> None:
    """A waiter whose turn does not come by its deadline holds nothing and runs nothing (its
    first actor released too); the holder later skips the abandoned turn; a stopped actor is
    never handed over."""
    first, second = started(NeverWaits), started(NeverWaits)
    done, release = held_by_another_batch([second])
    ran: list[bool] = []
    got = off_main(lambda: holding_in_order(
        [first, second], time.monotonic() + 0.2, lambda: ran.append(True)))
    assert isinstance(got, Busy) and ran == []
    assert idle(first)
    deliver(second, Append("after"))
    release.set()
    assert done.result(WAIT) == [0]
    assert [v for v, _ in call(second, "seen", WAIT)] == ["after"]
    assert idle(second)

    stop(second).get(WAIT)
    assert isinstance(off_main(lambda: holding_in_order(
        [first, second], time.monotonic() + WAIT, lambda: ran.append(True))), Busy)
    assert ran == [] and idle(first) and idle(second)


@pytest.mark.timeout(60)
def test_stop_all_stops_the_idle_here_and_a_busy_one_after_what_it_was_sent(
    started: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Idle actors are stopped on the caller's thread without a message (the stop's own
    steps under `holding`); a busy one gets a stop message behind what it was sent before,
    and `stop_all` returns only once it has run; messages sent after a stop fail; nothing is
    left claimed or counted live."""
    idle_ones = [started() for _ in range(3)]
    busy = started()
    holder, release = hold(busy)
    deliver(busy, Append("before"))
    posted: list[Any] = []
    stop_sent = threading.Event()
    original = Actor._post

    def watched(actor: Any, message: Any, reply: Any) -> None:
        posted.append((actor, type(message).__name__))
        original(actor, message, reply)
        stop_sent.set()

    monkeypatch.setattr(Actor, "_post", watched)
    with ThreadPoolExecutor(1) as executor:
        stopping = executor.submit(stop_all, [*idle_ones[:2], busy, idle_ones[2]], WAIT)
        assert stop_sent.wait(WAIT)  # sent once the idle ones are stopped
        assert not any(ref.is_alive() for ref in idle_ones)
        assert busy.is_alive() and not stopping.done()
        release.set()
        assert stopping.result(WAIT) is None
    holder.join(WAIT)
    assert [name for _, name in posted] == ["_Stop"]  # only the busy one got a message
    assert [value for value, _ in busy.seen] == ["before"]
    assert not busy.is_alive()
    with pytest.raises(ActorStopped):
        off_main(lambda: call(idle_ones[0], "where", WAIT))
    assert all(idle(ref) for ref in [*idle_ones, busy])
    assert live_actors().get("Recorder", 0) == 0


@pytest.mark.timeout(60)
def test_stop_all_on_the_main_thread_sends_every_actor_its_stop(started: Any) -> None:
    """The main thread claims nothing (invariant 2): every actor gets a stop message, handled
    on its pool, and `stop_all` waits for them all."""
    refs = [started() for _ in range(4)]
    stop_all(refs, WAIT)
    assert not any(ref.is_alive() for ref in refs)
    assert live_actors().get("Recorder", 0) == 0

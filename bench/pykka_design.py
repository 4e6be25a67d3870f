"""The issue card's design on pykka, measured against this runtime and a single lock.

The card: an actor per user tracker and per group tracker, a manager that routes user then
group, a config actor, batch messages. Here on pykka's public API only (`ThreadingActor`,
`ask`, `tell`, futures; the `bench` extra): a `ThreadingActor` per tracker (a thread each), the
manager resolving a call's user and group trackers (starting them on first use), the user
tracker checking its side, asking its group to check and apply, then applying its own (it
handles one message at a time, so its check still holds), a config actor handing the manager
its limit table. A single call wakes five threads (manager, caller, user, group, user) and
answers the caller.

    python bench/pykka_design.py [--quick] [--rounds N]

In one run, for each target (the pykka design, the runtime's `UserGroupManager`, the reference
model behind one lock): single calls (an application's start and its removal) and batch
decisions (100 starts, then their removals) per CPU-second of the whole process, and the p50 and
p99 latency of a single call, at 1 and 8 callers; then the threads and resident memory with 1k
and 10k users each running one application. Rounds alternate the targets; the table gives the
median and the range.
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import pykka

from quotactor import UsageDecrease, UsageIncrease, UserGroup, core
from quotactor.core.limits import LimitEntry, LimitTable
from quotactor.core.queue_path import ancestors, parse_queue_path
from quotactor.core.reference import ReferenceTracking
from quotactor.core.resources import Resource
from quotactor.core.tracker import GroupTrackerState, UserTrackerState
from quotactor.ugm import UserGroupManager

GROUPS = [f"g{i}" for i in range(8)]
TABLE = LimitTable({
    "root": [LimitEntry(users=("*",), max_resources={"vcore": 10**9}),
             LimitEntry(groups=tuple(GROUPS), max_resources={"vcore": 10**12})],
    "root.a": [LimitEntry(users=("*",), max_resources={"vcore": 10**8})],
})
QUEUES = ("root.a.x", "root.a.y", "root.b")
USAGE = {"vcore": 1}


# -- the card's design on pykka ------------------------------------------------------------


class ConfigActor(pykka.ThreadingActor):
    """Builds the limit table (here: takes it) and hands it to the manager."""

    def __init__(self, manager: pykka.ActorRef[Any]) -> None:
        super().__init__()
        self.manager = manager

    def on_receive(self, message: Any) -> Any:
        return self.manager.ask(("table", message))


class GroupTracker(pykka.ThreadingActor):
    def __init__(self, name: str) -> None:
        super().__init__()
        self.state = GroupTrackerState(name)

    def on_receive(self, message: Any) -> Any:
        kind, table, parts, app, usage, user = message
        if kind == "increase":
            refusal = self.state.check_increase(table, parts, app, user, usage)
            if refusal is None:
                self.state.increase(parts, app, usage, user)
            return refusal is None
        self.state.decrease(parts, app, usage, kind == "remove", user)
        return None


class UserTracker(pykka.ThreadingActor):
    def __init__(self, name: str) -> None:
        super().__init__()
        self.state = UserTrackerState(name)

    def on_receive(self, message: Any) -> Any:
        if message[0] == "batch":
            return [self._one(item) for item in message[1]]
        return self._one(message)

    def _one(self, message: Any) -> Any:
        kind, table, parts, app, usage, group, group_ref = message
        state = self.state
        if kind == "increase":
            if state.check_increase(table, parts, app, usage) is not None:
                return False
            if group_ref is not None and not group_ref.ask(
                    ("increase", table, parts, app, usage, state.name)):
                return False
            state.increase(parts, app, usage, group)
            return True
        state.decrease(parts, app, usage, kind == "remove")
        if group_ref is not None:
            group_ref.ask((kind, table, parts, app, usage, state.name))
        return None


class Manager(pykka.ThreadingActor):
    """Routes a call: its user's tracker, its group and the group's tracker (started on first
    use), and the table in force."""

    def __init__(self) -> None:
        super().__init__()
        self.table = LimitTable({})
        self.users: dict[str, pykka.ActorRef[Any]] = {}
        self.groups: dict[str, pykka.ActorRef[Any]] = {}
        self.links: dict[tuple[str, str], str | None] = {}

    def on_receive(self, message: Any) -> Any:
        if message[0] == "table":
            self.table = message[1]
            return True
        if message[0] == "batch":
            return [self._route(*item) for item in message[1]]
        return self._route(*message[1:])

    def _route(self, kind: str, parts: tuple[str, ...], app: str, user: UserGroup) -> Any:
        name = user.user
        ref = self.users.get(name) or self.users.setdefault(name, UserTracker.start(name))
        key = (name, app)
        if key in self.links:
            group = self.links[key]
        else:
            group = self.table.resolve_group(ancestors(parts), user.groups)
        if kind == "increase":
            self.links[key] = group
        elif kind == "remove":
            self.links.pop(key, None)
        group_ref = None
        if group is not None:
            group_ref = self.groups.get(group) or self.groups.setdefault(
                group, GroupTracker.start(group))
        return ref, self.table, group, group_ref


class PykkaDesign:
    """The card's design, called like the user group manager."""

    def __init__(self, table: LimitTable) -> None:
        self.manager = Manager.start()
        self.config = ConfigActor.start(self.manager)
        self.config.ask(table)

    def _call(self, kind: str, queue: str, app: str, usage: Any, user: UserGroup) -> Any:
        parts, res = parse_queue_path(queue), Resource.of(usage)
        ref, table, group, group_ref = self.manager.ask(("route", kind, parts, app, user))
        return ref.ask((kind, table, parts, app, res, group, group_ref))

    def increase_tracked_resource(self, queue: str, app: str, usage: Any,
                                  user: UserGroup) -> bool:
        return bool(self._call("increase", queue, app, usage, user))

    def decrease_tracked_resource(self, queue: str, app: str, usage: Any, user: UserGroup,
                                  remove_app: bool = False) -> None:
        self._call("remove" if remove_app else "decrease", queue, app, usage, user)

    def apply_batch(self, changes: Sequence[UsageIncrease | UsageDecrease]) -> list[Any]:
        items = [("increase" if isinstance(c, UsageIncrease) else
                  "remove" if c.remove_app else "decrease",
                  parse_queue_path(c.queue_path), c.application_id, c.user) for c in changes]
        routes = self.manager.ask(("batch", items))
        by_user: dict[Any, list[tuple[int, Any]]] = {}
        for position, ((kind, parts, app, _), (ref, table, group, group_ref), change) in \
                enumerate(zip(items, routes, changes, strict=True)):
            by_user.setdefault(ref, []).append((position, (
                kind, table, parts, app, Resource.of(change.usage), group, group_ref)))
        futures = [(mine, ref.ask(("batch", [m for _, m in mine]), block=False))
                   for ref, mine in by_user.items()]
        out: list[Any] = [None] * len(changes)
        for mine, future in futures:
            for (position, _), answer in zip(mine, future.get(), strict=True):
                out[position] = answer
        return out

    def stop(self) -> None:
        pykka.ActorRegistry.stop_all()


# -- the other two targets -----------------------------------------------------------------


class SingleLock:
    """The reference model behind one lock."""

    def __init__(self, table: LimitTable) -> None:
        self.model = ReferenceTracking(table)
        self.lock = threading.Lock()

    def increase_tracked_resource(self, queue: str, app: str, usage: Any,
                                  user: UserGroup) -> bool:
        parts, res = parse_queue_path(queue), Resource.of(usage)
        with self.lock:
            return self.model.increase(parts, app, res, user) is None

    def decrease_tracked_resource(self, queue: str, app: str, usage: Any, user: UserGroup,
                                  remove_app: bool = False) -> None:
        parts, res = parse_queue_path(queue), Resource.of(usage)
        with self.lock:
            self.model.decrease(parts, app, res, user, remove_app)

    def apply_batch(self, changes: Sequence[UsageIncrease | UsageDecrease]) -> list[Any]:
        parsed = [(c, parse_queue_path(c.queue_path), Resource.of(c.usage)) for c in changes]
        out: list[Any] = []
        with self.lock:
            for c, parts, res in parsed:
                if isinstance(c, UsageIncrease):
                    out.append(self.model.increase(parts, c.application_id, res, c.user) is None)
                else:
                    self.model.decrease(parts, c.application_id, res, c.user, c.remove_app)
                    out.append(None)
        return out

    def stop(self) -> None:
        pass


class Runtime:
    """This project's `UserGroupManager` on its actor runtime."""

    def __init__(self, table: LimitTable) -> None:
        self.ugm = UserGroupManager.start(table)
        self.increase_tracked_resource = self.ugm.increase_tracked_resource
        self.decrease_tracked_resource = self.ugm.decrease_tracked_resource
        self.apply_batch = self.ugm.apply_batch

    def stop(self) -> None:
        self.ugm.stop()


TARGETS: dict[str, Callable[[LimitTable], Any]] = {
    "pykka design": PykkaDesign, "runtime": Runtime, "single lock": SingleLock}


# -- the measurements ----------------------------------------------------------------------


def _users(caller: int, count: int) -> list[UserGroup]:
    return [UserGroup(f"c{caller}-u{i}", [GROUPS[(caller + i) % len(GROUPS)]])
            for i in range(count)]


def _threads(body: Callable[[int], None], callers: int) -> float:
    """Run `body(caller)` on `callers` threads at once; the process CPU seconds it took."""
    barrier = threading.Barrier(callers + 1)

    def run(caller: int) -> None:
        barrier.wait()
        body(caller)
        barrier.wait()

    threads = [threading.Thread(target=run, args=(c,)) for c in range(callers)]
    for thread in threads:
        thread.start()
    barrier.wait()
    cpu = time.process_time()
    barrier.wait()
    cpu = time.process_time() - cpu
    for thread in threads:
        thread.join()
    return cpu


def single_calls(target: Any, callers: int, pairs: int) -> dict[str, float]:
    """Each caller starts an application and removes it, `pairs` times, over its own users."""
    latencies: list[list[float]] = [[] for _ in range(callers)]

    def body(caller: int) -> None:
        users, mine = _users(caller, 20), latencies[caller]
        for i in range(pairs):
            user, queue, app = users[i % 20], QUEUES[i % 3], f"c{caller}-{i}"
            began = time.perf_counter()
            target.increase_tracked_resource(queue, app, USAGE, user)
            mine.append(time.perf_counter() - began)
            began = time.perf_counter()
            target.decrease_tracked_resource(queue, app, USAGE, user, True)
            mine.append(time.perf_counter() - began)

    cpu = _threads(body, callers)
    every = sorted(x for mine in latencies for x in mine)
    return {"calls_per_cpu_s": len(every) / cpu, "p50_us": every[len(every) // 2] * 1e6,
            "p99_us": every[int(len(every) * 0.99)] * 1e6}


def batches(target: Any, callers: int, count: int, size: int = 100) -> dict[str, float]:
    """Each caller applies `count` batches of `size` starts, each followed by their removals."""

    def body(caller: int) -> None:
        users = _users(caller, 20)
        for b in range(count):
            adds = [UsageIncrease(QUEUES[i % 3], f"c{caller}-b{b}-{i}", USAGE, users[i % 20])
                    for i in range(size)]
            target.apply_batch(adds)
            target.apply_batch([UsageDecrease(c.queue_path, c.application_id, c.usage, c.user,
                                              True) for c in adds])

    cpu = _threads(body, callers)
    return {"decisions_per_cpu_s": 2 * callers * count * size / cpu}


def _rss_kib() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


def footprint(make: Callable[[LimitTable], Any], users: int) -> dict[str, float]:
    """Threads and resident memory added by `users` users running one application each (run
    in a fresh process: `measured_apart`)."""
    gc.collect()
    threads, rss = threading.active_count(), _rss_kib()
    target = make(TABLE)
    try:
        everyone = _users(0, users)

        def body(_: int) -> None:
            for i, user in enumerate(everyone):
                target.increase_tracked_resource(QUEUES[i % 3], f"app-{i}", USAGE, user)

        _threads(body, 1)
        gc.collect()
        return {"threads": threading.active_count() - threads,
                "rss_mib": (_rss_kib() - rss) / 1024}
    finally:
        target.stop()


def measured_apart(name: str, users: int) -> dict[str, float]:
    """`footprint` of the target `name`, in a process of its own (memory freed by another
    target would otherwise show as negative)."""
    done = subprocess.run([sys.executable, __file__, "--footprint", name, str(users)],
                          capture_output=True, text=True, check=True, timeout=600)
    figures: dict[str, float] = json.loads(done.stdout)
    return figures


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):,.0f} ({min(values):,.0f}-{max(values):,.0f})"


def main(quick: bool, rounds: int) -> None:
    pairs, count = (300, 4) if quick else (1500, 15)
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {os.cpu_count()} CPUs;"
          f" load average before: {os.getloadavg()[0]:.2f}; core: {core.build_note};"
          f" {rounds} rounds, median (range)\n")
    got: dict[tuple[str, str], list[float]] = {}
    for _ in range(rounds):
        for name, make in TARGETS.items():
            for callers in (1, 8):
                target = make(TABLE)
                try:
                    single_calls(target, callers, pairs // 10)  # warm-up
                    figures = single_calls(target, callers, pairs // callers)
                    figures.update(batches(target, callers, max(1, count // callers)))
                finally:
                    target.stop()
                for key, value in figures.items():
                    got.setdefault((f"{name}|{callers}", key), []).append(value)
    print("| target | callers | calls/CPU-s | p50 µs | p99 µs | batch decisions/CPU-s |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in TARGETS:
        for callers in (1, 8):
            row = f"{name}|{callers}"
            print(f"| {name} | {callers} | {_spread(got[(row, 'calls_per_cpu_s')])} |"
                  f" {_spread(got[(row, 'p50_us')])} | {_spread(got[(row, 'p99_us')])} |"
                  f" {_spread(got[(row, 'decisions_per_cpu_s')])} |")
    print("\n| target | users | threads added | resident MiB added |\n|---|---:|---:|---:|")
    for users in (1000, 10000):
        for name in TARGETS:
            figures = measured_apart(name, users)
            print(f"| {name} | {users:,} | {figures['threads']:,.0f} |"
                  f" {figures['rss_mib']:,.1f} |")
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    if "--footprint" in sys.argv:
        at = sys.argv.index("--footprint")
        print(json.dumps(footprint(TARGETS[sys.argv[at + 1]], int(sys.argv[at + 2]))))
        sys.exit(0)
    main("--quick" in sys.argv,
         int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 3)

"""quotactor's side of the comparison with YuniKorn's user group manager, on the shape of stream
`../shared/peer-compare.py` replays through both (that script also runs YuniKorn's own Go code
and checks the decisions agree; this one needs nothing outside the repository).

Eight callers each start applications and remove their oldest one past a window of live ones,
then drain; 30 % of the starts come from four heavy users, the rest from 1,000 users in one to
three of 100 groups; a depth-4 tree of 64 leaves with user limits at the root, the second level
and the leaves, and group limits (named groups and `*`) at the root and the first level, so
that user and group limits of both kinds refuse. Replayed as single calls and as batches of up
to 100, by 1 thread (the callers' lists one after the other) and by 8, each in a fresh manager
after an untimed warm-up; CPU is the process's (`getrusage`: every thread).

    python bench/peer_stream.py [--ops 2500] [--window 64] [--rounds 3]
"""

from __future__ import annotations

import argparse
import gc
import random
import resource
import statistics
import threading
import time
from collections.abc import Callable
from typing import Any

from markdown import header

from quotactor import UsageDecrease, UsageIncrease, UserGroup, UserGroupManager

Op = tuple[bool, str, str, dict[str, int], UserGroup]
"""(a start, else a removal; queue path, application id, usage, user)."""
GI = 2**30
LEAVES = [f"root.d{a}.t{b}.q{c}" for a in range(4) for b in range(4) for c in range(4)]


def config(groups: list[str]) -> str:
    """The limits: users at root, tB and the leaves; groups at root (named, `*`) and dA."""
    lines = ["partitions:", "  - name: default", "    queues:", "      - name: root",
             "        limits:",
             "          - {limit: u, users: ['*'], maxresources: {memory: 24Gi, vcore: 12},"
             " maxapplications: 5}",
             f"          - {{limit: g, groups: [{', '.join(groups[:10])}],"
             " maxresources: {memory: 48Gi}}",
             "          - {limit: any, groups: ['*'], maxapplications: 64}",
             "        queues:"]
    for a in range(4):
        dept = ", ".join(groups[10 + 10 * a:20 + 10 * a])
        lines += [f"          - name: d{a}", "            limits:",
                  f"              - {{limit: d, groups: [{dept}], maxresources:"
                  " {memory: 32Gi, vcore: 20}, maxapplications: 12}", "            queues:"]
        for b in range(4):
            lines += [f"              - name: t{b}", "                limits:",
                      "                  - {limit: t, users: ['*'], maxresources:"
                      " {memory: 16Gi, vcore: 8}, maxapplications: 4}",
                      "                queues:"]
            lines += [f"                  - {{name: q{c}, limits: [{{limit: q, users: ['*'],"
                      " maxapplications: 2}]}" for c in range(4)]
    return "\n".join(lines) + "\n"


def stream(ops: int, window: int, seed: int = 7) -> tuple[str, list[Op], list[list[Op]]]:
    """The config, a warm-up (each start followed by its removal) and each caller's ops."""
    rng = random.Random(seed)
    groups = [f"g{i}" for i in range(100)]
    users = [UserGroup(f"u{i}", sorted(rng.sample(groups, rng.randint(1, 3))))
             for i in range(1000)]
    users[:4] = [UserGroup(f"u{i}", ["g0", "g10"]) for i in range(4)]

    def start(tag: str) -> Op:
        user = users[rng.randrange(4) if rng.random() < 0.3 else rng.randrange(1000)]
        usage = {"memory": rng.randint(1, 8) * GI, "vcore": rng.randint(1, 4) * 1000}
        return True, rng.choice(LEAVES), tag, usage, user

    warm: list[Op] = []
    for i in range(1000):
        op = start(f"w-{i}")
        warm += [op, removal(op)]
    callers: list[list[Op]] = []
    for c in range(8):
        mine: list[Op] = []
        live: list[Op] = []
        for i in range(ops):
            if len(live) >= window:
                mine.append(removal(live.pop(0)))
            op = start(f"c{c}-{i}")
            live.append(op)
            mine.append(op)
        mine += [removal(op) for op in live]
        callers.append(mine)
    return config(groups), warm, callers


def removal(op: Op) -> Op:
    """The removal of the application `op` starts, with the usage it started with."""
    return False, op[1], op[2], op[3], op[4]


def replay_single(ugm: UserGroupManager, ops: list[Op], latencies: list[float]) -> int:
    """Each op as one call (a removal of a refused start skipped); the calls made."""
    refused: set[str] = set()
    calls = 0
    clock = time.perf_counter
    for starting, queue, app, usage, user in ops:
        if not starting and app in refused:
            refused.discard(app)
            continue
        began = clock()
        if starting:
            if not ugm.increase_tracked_resource(queue, app, usage, user):
                refused.add(app)
        else:
            ugm.decrease_tracked_resource(queue, app, usage, user, remove_app=True)
        latencies.append(clock() - began)
        calls += 1
    return calls


def replay_batches(ugm: UserGroupManager, ops: list[Op], latencies: list[float]) -> int:
    """The ops in batches of up to 100, cut before a removal whose start is in the batch."""
    refused: set[str] = set()
    calls = i = 0
    while i < len(ops):
        batch: list[UsageIncrease | UsageDecrease] = []
        pending: set[str] = set()
        while i < len(ops) and len(batch) < 100:
            starting, queue, app, usage, user = ops[i]
            if starting:
                batch.append(UsageIncrease(queue, app, usage, user))
                pending.add(app)
            elif app in pending:
                break
            elif app in refused:
                refused.discard(app)
            else:
                batch.append(UsageDecrease(queue, app, usage, user, remove_app=True))
            i += 1
        began = time.perf_counter()
        answers = ugm.apply_batch(batch)
        latencies.append(time.perf_counter() - began)
        calls += len(batch)
        refused.update(c.application_id for c, answer in zip(batch, answers, strict=True)
                       if answer is not None and not answer.ok)
    return calls


def measure(conf: str, warm: list[Op], callers: list[list[Op]], threads: int,
            replay: Callable[[UserGroupManager, list[Op], list[float]], int]) -> dict[str, Any]:
    lists = callers if threads > 1 else [[op for mine in callers for op in mine]]
    ugm = UserGroupManager.start(config=conf)
    try:
        warming = threading.Thread(target=replay, args=(ugm, warm, []))
        warming.start()
        warming.join()
        gc.collect()
        latencies: list[list[float]] = [[] for _ in lists]
        calls = [0] * len(lists)
        barrier = threading.Barrier(len(lists) + 1)

        def run(k: int) -> None:
            barrier.wait()
            calls[k] = replay(ugm, lists[k], latencies[k])

        workers = [threading.Thread(target=run, args=(k,)) for k in range(len(lists))]
        for worker in workers:
            worker.start()
        usage = resource.getrusage(resource.RUSAGE_SELF)
        barrier.wait()
        for worker in workers:
            worker.join()
        after = resource.getrusage(resource.RUSAGE_SELF)
    finally:
        ugm.stop()
    cpu = after.ru_utime + after.ru_stime - usage.ru_utime - usage.ru_stime
    every = sorted(x for mine in latencies for x in mine)
    return {"rate": sum(calls) / cpu, "p50": every[len(every) // 2] * 1e6,
            "p99": every[len(every) * 99 // 100] * 1e6}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=2500, help="starts per caller")
    parser.add_argument("--window", type=int, default=64, help="live applications per caller")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    conf, warm, callers = stream(args.ops, args.window)
    rows = [("single calls", 1, replay_single), ("single calls", 8, replay_single),
            ("apply_batch (<= 100)", 1, replay_batches),
            ("apply_batch (<= 100)", 8, replay_batches)]
    got: dict[int, list[dict[str, Any]]] = {i: [] for i in range(len(rows))}
    for _ in range(args.rounds):
        for i, (_, threads, replay) in enumerate(rows):
            got[i].append(measure(conf, warm, callers, threads, replay))
    lines = header("replay", "callers", "calls/CPU-s", "p50 µs", "p99 µs")
    for i, (name, threads, _) in enumerate(rows):
        rate, p50, p99 = ([r[key] for r in got[i]] for key in ("rate", "p50", "p99"))
        unit = " (per batch)" if name.startswith("apply") else ""
        lines.append(f"| {name} | {threads} | {statistics.median(rate):,.0f} ({min(rate):,.0f}-"
                     f"{max(rate):,.0f}) | {statistics.median(p50):,.1f}{unit} |"
                     f" {statistics.median(p99):,.1f}{unit} |")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

"""Where a batch's CPU goes with several callers: CPU per decision, context switches per
decision, and how the actors decided the items (held; held after waiting for the turn of a
group another caller held; by messages to such a group, when the turn did not come in time;
as one message to a user tracker another caller held), against the reference model behind one
lock in the same run.

    python bench/contention.py [--rounds N]

Context switches are the process's (`getrusage`: every thread, the actors' pools included);
the paths are counted by wrapping `quotactor.actors.batch`'s wait for a group's turn and its
two fallbacks, which costs the actors a little.
"""

from __future__ import annotations

import os
import resource
import sys
import time
from collections.abc import Sequence
from typing import Any

from tracking_bench import LockedBaseline, drive_batches
from workload import make_workload

from quotactor import core
from quotactor.actors import batch as batch_module
from quotactor.ugm import UserGroupManager

BATCHES = 30
SIZE = 100
counts = {"turn": 0, "busy_group": 0, "busy_user": 0}


def _count_fallbacks() -> None:
    decide, call, in_turn = batch_module.decide, batch_module.call, batch_module._decide_in_turn

    def counted_in_turn(later: dict[Any, list[Any]], *args: Any) -> bool:
        decided = in_turn(later, *args)
        if decided:
            counts["turn"] += sum(len(changes) for changes in later.values())
        return decided

    def counted_decide(shares: Sequence[tuple[Any, Sequence[Any]]], deadline: float) -> Any:
        counts["busy_group"] += sum(len(changes) for _, changes in shares)
        return decide(shares, deadline)

    def counted_call(ref: Any, msg: Any, timeout: float | None) -> Any:
        counts["busy_user"] += len(msg.items)
        return call(ref, msg, timeout)

    batch_module.decide = counted_decide  # type: ignore[assignment]
    batch_module._decide_in_turn = counted_in_turn
    batch_module.call = counted_call


def measure(target: Any, threads: int) -> dict[str, float]:
    work = make_workload()
    drive_batches(target, work, threads, 3)
    for key in counts:
        counts[key] = 0
    before, cpu = resource.getrusage(resource.RUSAGE_SELF), time.process_time()
    drive_batches(target, work, threads, BATCHES, SIZE)
    after, cpu = resource.getrusage(resource.RUSAGE_SELF), time.process_time() - cpu
    n = threads * BATCHES * SIZE
    return {
        "cpu_us": cpu / n * 1e6,
        "voluntary": (after.ru_nvcsw - before.ru_nvcsw) / n,
        "involuntary": (after.ru_nivcsw - before.ru_nivcsw) / n,
        "turn": counts["turn"] / n,
        "busy_group": counts["busy_group"] / n,
        "busy_user": counts["busy_user"] / n,
    }


def main(rounds: int) -> None:
    _count_fallbacks()
    work = make_workload()
    print(f"load average before: {os.getloadavg()[0]:.2f}; core: {core.build_note}\n")
    print("| callers | target | CPU µs per decision | voluntary switches per decision |"
          " involuntary | items held after a busy group's turn |"
          " items by messages to a busy group | to a busy user tracker |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for _ in range(rounds):
        for threads in (1, 4):
            ref = measure(LockedBaseline(work), threads)
            with UserGroupManager.start(work.table) as ugm:
                act = measure(ugm, threads)
            for name, got in (("reference, one lock", ref), ("actors", act)):
                paths = ((f"{got['turn']:.1%}", f"{got['busy_group']:.1%}",
                          f"{got['busy_user']:.1%}") if name == "actors" else ("", "", ""))
                print(f"| {threads} | {name} | {got['cpu_us']:.1f} | {got['voluntary']:.4f} |"
                      f" {got['involuntary']:.4f} | {' | '.join(paths)} |")
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main(int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 2)

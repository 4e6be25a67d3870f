"""Instructions per call, counted by valgrind's callgrind: exact and repeatable on a shared
machine where timings swing by 2x.

    python bench/instructions.py            # the table (needs valgrind)
    python bench/instructions.py --one actors single 2000   # one measurement (used by the above)

Each figure is (instructions of a run of N2 operations - those of a run of N1) / (N2 - N1), so
interpreter start-up, imports and the warm-up cancel out. The workload is the benchmark's
(1k users, 100 groups, depth 4): increase + matching decrease (remove_app) pairs, one caller on
a worker thread (as a scheduler's threads call); `allocations`: each application started, then
three allocations and releases on it, then removed (eight single calls, six of them for a user
and application already tracked); and `apply_batch` of 100 increases then their decreases (the
simplified baseline has no batch API), by one caller and by four at once. With four
(`batch4`), valgrind runs one thread at a time and the callers meet each other's held trackers
and groups far more often than natively (see `SLOWDOWN`), and the counts vary a little by run;
`batch4, native switch rate` meets them about as often as natively. `batch, users seen` is
`batch` after 80 batches of other applications (another seed) have made every user and group
known: the steady state of a scheduler whose users come back, where `batch`'s window still
meets 16 % of its increases' users for the first time (the actors then build, and at the end
stop, a tracker each; the reference rebuilds a user's state for every application anyway).
Targets: the actor path
(`UserGroupManager`), the reference model behind one lock (`LockedBaseline`, the batch goal's
yardstick) and the simplified single-lock baseline (the single calls' yardstick), on whichever
build of the core runs (`QUOTACTOR_PURE=1` forces the pure-Python one; the line above the table
says which ran).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

WARM = 300
SLOWDOWN = 35
"""About how many times slower the batch runs under callgrind (measured on 2026-11-27: 1.8 ms
of wall time per decision against 50 µs natively, four callers). CPython hands the GIL to a
waiting thread after a switch interval of wall time (5 ms), so under callgrind a thread does
only ~1/35 of the native work between two switches, and four callers meet each other's held
trackers ~35 times as often as they do natively; `batch4-native` stretches the interval by this
factor (in the benchmark's own process) to meet them about as often as natively."""
ALLOCATIONS = 8
"""Operations per application in the `allocations` workload: start, three allocations and
their releases, removal."""


def _target(name: str, work: Any) -> Any:
    from simple_baseline import SimpleBaseline
    from tracking_bench import LockedBaseline

    from quotactor.ugm import UserGroupManager

    if name == "actors":
        return UserGroupManager.start(work.table)
    if name == "reference":
        return LockedBaseline(work)
    return SimpleBaseline(work.table)


def one(name: str, mode: str, count: int) -> None:
    """Run `count` operations (pairs count 2, batches count their items) on a worker thread."""
    from tracking_bench import drive_batches
    from workload import make_workload, operations

    work = make_workload()
    target = _target(name, work)

    def body() -> None:
        if mode == "single":
            for queue, app, usage, user in operations(work, WARM + count // 2, seed=7):
                if target.increase_tracked_resource(queue, app, usage, user):
                    target.decrease_tracked_resource(queue, app, usage, user, remove_app=True)
        elif mode == "allocations":
            # An application's life: started by its first increase, then allocations and
            # releases on it (a user and application the manager already knows), then removed.
            step = {"memory": 2**20, "vcore": 100}
            for queue, app, usage, user in operations(work, WARM + count // ALLOCATIONS, seed=7):
                if target.increase_tracked_resource(queue, app, usage, user):
                    for _ in range((ALLOCATIONS - 2) // 2):
                        if target.increase_tracked_resource(queue, app, step, user):
                            target.decrease_tracked_resource(queue, app, step, user)
                    target.decrease_tracked_resource(queue, app, usage, user, remove_app=True)
        elif mode.startswith("batch4"):  # four callers at once: contention for trackers
            if mode == "batch4-native":  # see SLOWDOWN
                sys.setswitchinterval(sys.getswitchinterval() * SLOWDOWN)
            drive_batches(target, work, 4, count // 400)
        else:
            if mode == "batch-seen":  # every user and group known first
                drive_batches(target, work, 1, 80, seed=900)
            drive_batches(target, work, 1, count // 100)

    worker = threading.Thread(target=body)
    worker.start()
    worker.join()
    if hasattr(target, "stop"):
        target.stop()


def _instructions(name: str, mode: str, count: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg.out"
        subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
             sys.executable, __file__, "--one", name, mode, str(count)],
            check=True, capture_output=True, env={**os.environ, "PYTHONHASHSEED": "0"},
        )
        summary = re.search(r"^summary: (\d+)", out.read_text(), re.M)
        assert summary is not None
        return int(summary.group(1))


def per_call(names: tuple[str, ...], mode: str, small: int, large: int) -> dict[str, float]:
    """Instructions per operation of each target, its two runs side by side (one process per
    core: callgrind counts are the same however the runs are placed)."""
    with ThreadPoolExecutor(os.cpu_count()) as pool:
        runs = {(name, count): pool.submit(_instructions, name, mode, count)
                for name in names for count in (small, large)}
        return {name: (runs[name, large].result() - runs[name, small].result())
                / (large - small) for name in names}


def main() -> None:
    from quotactor import core

    rows = [("single", 1000, 3000), ("allocations", 1000, 3000), ("batch", 1000, 3000),
            ("batch-seen", 1000, 3000), ("batch4", 2000, 6000), ("batch4-native", 2000, 6000)]
    print(f"core: {core.build_note} (QUOTACTOR_PURE=1 measures the pure one)\n")
    print("| workload | actors | reference, one lock | simplified baseline |"
          " actors / reference | actors / simplified |")
    print("|---|---:|---:|---:|---:|---:|")
    for mode, small, large in rows:
        names = (("actors", "reference") if mode.startswith("batch")
                 else ("actors", "reference", "simple"))
        got = per_call(names, mode, small, large)
        actors, simple = got["actors"], got.get("simple")
        label = {"batch-seen": "batch, users seen",
                 "batch4-native": "batch4, native switch rate"}.get(mode, mode)
        print(f"| {label} | {actors:,.0f} | {got['reference']:,.0f} |"
              f" {'' if simple is None else f'{simple:,.0f}'} |"
              f" {actors / got['reference']:.3f} |"
              f" {'' if simple is None else f'{actors / simple:.3f}'} |")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        one(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        main()

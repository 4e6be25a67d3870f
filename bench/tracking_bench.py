"""Decision throughput and latency of the actor system against the one-lock baseline.

Each caller thread runs increase + matching decrease pairs over 1k users, 100 groups and a queue
tree of depth 4 with limits on several levels (some increases are refused). The baseline is the
same semantics (`quotactor.core.reference`) in one process behind one lock: the practical limit.
Calls/s counts increases and decreases; increases/s counts the increases alone (each a decision
to accept or refuse). Each figure is taken after a warm-up round (see `warmed`).
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable
from typing import Any

from markdown import header
from workload import Workload, make_workload, operations

from quotactor import Decision, UsageDecrease, UsageIncrease
from quotactor.core.queue_path import parse_queue_path
from quotactor.core.reference import ReferenceTracking
from quotactor.core.resources import Resource
from quotactor.ugm import UserGroupManager


class LockedBaseline:
    """The reference model behind one lock, with the facade's argument handling."""

    def apply_batch(self, changes: list[Any]) -> list[Any]:
        parsed = [(c, parse_queue_path(c.queue_path), Resource.of(c.usage)) for c in changes]
        out: list[Any] = []
        with self.lock:
            for c, parts, res in parsed:
                if isinstance(c, UsageIncrease):
                    refusal = self.model.increase(parts, c.application_id, res, c.user)
                    out.append(Decision(refusal is None, refusal))
                else:
                    self.model.decrease(parts, c.application_id, res, c.user, c.remove_app)
                    out.append(None)
        return out

    def __init__(self, work: Workload) -> None:
        self.model = ReferenceTracking(work.table)
        self.lock = threading.Lock()

    def increase_tracked_resource(self, queue: str, app: str, usage: Any, user: Any) -> bool:
        parts, res = parse_queue_path(queue), Resource.of(usage)
        with self.lock:
            return self.model.increase(parts, app, res, user) is None

    def decrease_tracked_resource(self, queue: str, app: str, usage: Any, user: Any,
                                  remove_app: bool = False) -> None:
        parts, res = parse_queue_path(queue), Resource.of(usage)
        with self.lock:
            self.model.decrease(parts, app, res, user, remove_app)


def run_timed(body: Callable[[int], None], threads: int, barrier: threading.Barrier,
              cpu: list[float] | None = None) -> float:
    """Run `body(t)` on `threads` threads released together by `barrier`; seconds taken.

    `cpu`, when given, receives the process CPU seconds used meanwhile (every thread's, the
    actors' pools included): the figure a shared machine's load disturbs least.
    """
    workers = [threading.Thread(target=body, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    barrier.wait()
    began, began_cpu = time.perf_counter(), time.process_time()
    for w in workers:
        w.join()
    if cpu is not None:
        cpu.append(time.process_time() - began_cpu)
    return time.perf_counter() - began


def drive(target: Any, work: Workload, threads: int, pairs: int,
          allocations: int = 0) -> dict[str, float]:
    """Run `pairs` increase/decrease pairs per thread; return decisions/s and latencies (µs).

    With `allocations`, each accepted increase (an application's start) is followed by that
    many allocations and releases on the same application before its removal: the calls for
    a running application that a scheduler makes most."""
    step = {"memory": 2**20, "vcore": 100}
    latencies: list[list[float]] = [[] for _ in range(threads)]
    refused = [0] * threads
    barrier = threading.Barrier(threads + 1)

    def run(t: int) -> None:
        ops = operations(work, pairs, seed=100 + t)
        clock: Callable[[], float] = time.perf_counter
        lat = latencies[t]
        barrier.wait()
        for queue, app, usage, user in ops:
            start = clock()
            ok = target.increase_tracked_resource(queue, app, usage, user)
            lat.append(clock() - start)
            if ok:
                for _ in range(allocations):
                    start = clock()
                    if target.increase_tracked_resource(queue, app, step, user):
                        lat.append(clock() - start)
                        start = clock()
                        target.decrease_tracked_resource(queue, app, step, user)
                    lat.append(clock() - start)
                start = clock()
                target.decrease_tracked_resource(queue, app, usage, user, remove_app=True)
                lat.append(clock() - start)
            else:
                refused[t] += 1

    cpu: list[float] = []
    elapsed = run_timed(run, threads, barrier, cpu)
    flat = sorted(x for lat in latencies for x in lat)
    return {
        "calls_per_s": len(flat) / elapsed,
        "calls_per_cpu_s": len(flat) / cpu[0],
        "decisions_per_s": threads * pairs / elapsed,
        "p50_us": statistics.median(flat) * 1e6,
        "p99_us": flat[int(len(flat) * 0.99)] * 1e6,
        "p999_us": flat[int(len(flat) * 0.999)] * 1e6,
        "refused_pct": 100.0 * sum(refused) / (threads * pairs),
    }


def drive_batches(target: Any, work: Workload, threads: int, batches: int,
                  size: int = 100, seed: int = 200) -> dict[str, float]:
    """Each thread sends `batches` batches of `size` increases, then their decreases (thread
    t's operations drawn with `seed + t`)."""
    latencies: list[list[float]] = [[] for _ in range(threads)]
    barrier = threading.Barrier(threads + 1)

    def run(t: int) -> None:
        ops = operations(work, batches * size, seed=seed + t)
        lat = latencies[t]
        barrier.wait()
        for b in range(batches):
            chunk = ops[b * size:(b + 1) * size]
            start = time.perf_counter()
            results = target.apply_batch([UsageIncrease(*op) for op in chunk])
            lat.append(time.perf_counter() - start)
            undo = [UsageDecrease(q, a, u, g, True)
                    for (q, a, u, g), r in zip(chunk, results, strict=True) if r.ok]
            start = time.perf_counter()
            target.apply_batch(undo)
            lat.append(time.perf_counter() - start)

    cpu: list[float] = []
    elapsed = run_timed(run, threads, barrier, cpu)
    flat = sorted(x for lat in latencies for x in lat)
    return {
        "decisions_per_s": threads * batches * size / elapsed,
        "decisions_per_cpu_s": threads * batches * size / cpu[0],
        "batch_p50_ms": statistics.median(flat) * 1e3,
        "batch_p99_ms": flat[int(len(flat) * 0.99)] * 1e3,
    }


def warmed(measure: Callable[[], dict[str, float]], warm_up: Callable[[], Any]) -> dict[str, float]:
    """Measure after a warm-up round: a scheduler runs for days, so its steady state is what
    counts, not the first second's tracker creation and garbage-collector passes."""
    warm_up()
    return measure()


def run_batches(quick: bool = False) -> dict[str, Any]:
    work = make_workload()
    batches = 10 if quick else 40
    baseline = LockedBaseline(work)
    base = warmed(lambda: drive_batches(baseline, work, 4, batches),
                  lambda: drive_batches(baseline, work, 4, 3))
    with UserGroupManager.start(work.table) as ugm:
        actors = warmed(lambda: drive_batches(ugm, work, 4, batches),
                        lambda: drive_batches(ugm, work, 4, 3))
    return {"actors": actors, "baseline": base}


def batch_table(result: dict[str, Any]) -> str:
    a, b = result["actors"], result["baseline"]
    return "\n".join([
        "| batch API (4 callers, 100 items) | decisions/s | batch p50 ms | batch p99 ms |",
        "|---|---:|---:|---:|",
        f"| actors | {a['decisions_per_s']:,.0f} | {a['batch_p50_ms']:.1f} |"
        f" {a['batch_p99_ms']:.1f} |",
        f"| one-lock baseline | {b['decisions_per_s']:,.0f} | {b['batch_p50_ms']:.1f} |"
        f" {b['batch_p99_ms']:.1f} |",
        f"| actors / baseline | {a['decisions_per_s'] / b['decisions_per_s']:.3f} | | |",
    ])


def run(quick: bool = False) -> list[dict[str, Any]]:
    work = make_workload()
    pairs = 500 if quick else 3000
    rows = []
    for threads in (1, 4, 8):
        baseline = LockedBaseline(work)
        base = warmed(lambda: drive(baseline, work, threads, pairs),  # noqa: B023
                      lambda: drive(baseline, work, threads, 200))  # noqa: B023
        with UserGroupManager.start(work.table) as ugm:
            actors = warmed(lambda: drive(ugm, work, threads, pairs),  # noqa: B023
                            lambda: drive(ugm, work, threads, 200))  # noqa: B023
        rows.append({"threads": threads, "actors": actors, "baseline": base})
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    lines = header(
        "callers", "actors calls/s", "increases/s", "p50 µs", "p99 µs", "p99.9 µs",
        "baseline calls/s", "increases/s", "base p50 µs", "base p99 µs", "base p99.9 µs",
        "actors/baseline", "refused %",
    )
    for row in rows:
        a, b = row["actors"], row["baseline"]
        lines.append(
            f"| {row['threads']} | {a['calls_per_s']:,.0f} | {a['decisions_per_s']:,.0f} |"
            f" {a['p50_us']:.0f} | {a['p99_us']:.0f} | {a['p999_us']:.0f} |"
            f" {b['calls_per_s']:,.0f} | {b['decisions_per_s']:,.0f} | {b['p50_us']:.1f} |"
            f" {b['p99_us']:.1f} | {b['p999_us']:.0f} |"
            f" {a['calls_per_s'] / b['calls_per_s']:.3f} | {a['refused_pct']:.1f} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    import sys

    quick = "--quick" in sys.argv
    print(table(run(quick)))
    print()
    print(batch_table(run_batches(quick)))

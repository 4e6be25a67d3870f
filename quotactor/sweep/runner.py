"""A sweep end to end: expand the grid, skip what `DIR` already holds, replay the rest on the
chosen executor, log each point as it finishes, and write the tables in grid order.

Ctrl-C (KeyboardInterrupt) stops the executor, keeps every point that finished (they are in the
log already) and writes the tables of what there is; the outcome says it was interrupted and a
rerun picks up the rest.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TextIO

from quotactor.sim import Workload
from quotactor.sweep.executors import (
    Finished,
    Results,
    Setup,
    Task,
    pool_results,
    ray_results,
    serial_results,
)
from quotactor.sweep.grid import InvalidPoint, Point, expand
from quotactor.sweep.inputs import check_workloads
from quotactor.sweep.spec import SweepSpec
from quotactor.sweep.store import PointLog, read_log, write_rows
from quotactor.sweep.transport import pack_cluster

__all__ = ["Executor", "SweepOutcome", "default_workers", "run_sweep"]

Executor = Literal["local", "ray"]
Row = dict[str, Any]


@dataclass(frozen=True, slots=True)
class SweepOutcome:
    """What a run left: `rows` one per finished point in grid order (this run's and earlier
    runs'), the invalid combinations, the points whose replay failed, and timings."""

    rows: tuple[Row, ...]
    invalid: tuple[Row, ...]
    failed: tuple[Row, ...]
    ran: int
    reused: int
    interrupted: bool
    wall_seconds: float
    replay_seconds: float
    files: tuple[Path, ...]


def default_workers() -> int:
    """The cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def run_sweep(spec: SweepSpec, out: Path, *, executor: Executor = "local",
              workers: int | None = None, ray_address: str | None = None,
              progress: TextIO | None = None, progress_interval: float = 5.0) -> SweepOutcome:
    """Run the points of `spec` that `out` lacks. `workers` 1 replays in this process; more
    (default: the cores) use a process pool; with `executor` "ray" each point is a Ray task."""
    started = time.perf_counter()
    grid = expand(spec)
    done = read_log(out)
    todo = [p for p in grid.points if p.key not in done]
    workloads = check_workloads(spec.workloads, {p.workload for p in todo})
    reused = len(grid.points) - len(todo)
    setup = Setup(spec.model, pack_cluster(spec.cluster.build()), spec.packing, spec.partition,
                  spec.kill_preempted, spec.preemption_grace)
    tasks = [Task(p.key, f"point-{p.index}", p.workload, p.config_text) for p in todo]
    stream = progress if progress is not None else sys.stderr
    meter = _Progress(len(tasks), reused, len(grid.invalid), stream, progress_interval)
    count = workers or default_workers()
    log = PointLog(out)
    failed: dict[str, str] = {}
    replay_seconds = 0.0
    interrupted = False
    results = _results(executor, tasks, workloads, setup, count, ray_address)
    try:
        for finished in results:
            replay_seconds += finished.seconds
            if finished.error:
                failed[finished.key] = finished.error
            else:
                log.add(finished)
                done[finished.key] = finished
            meter.step()
    except KeyboardInterrupt:
        interrupted = True
    finally:
        results.close()
        log.close()
    rows = tuple(_row(p, done[p.key]) for p in grid.points if p.key in done)
    invalid = tuple(_invalid_row(p) for p in grid.invalid)
    failures = tuple({**_point_row(p), "error": failed[p.key]} for p in todo
                     if p.key in failed)
    files = tuple(write_rows(out, rows, invalid))
    meter.close(interrupted)
    return SweepOutcome(rows, invalid, failures, meter.done, reused, interrupted,
                        time.perf_counter() - started, replay_seconds, files)


def _results(executor: Executor, tasks: list[Task], workloads: Mapping[str, Workload],
             setup: Setup, workers: int, ray_address: str | None) -> Results:
    if executor == "ray":
        return ray_results(tasks, workloads, setup, ray_address,
                           None if ray_address else workers)
    if workers == 1 or len(tasks) <= 1:
        return serial_results(tasks, workloads, setup)
    return pool_results(tasks, workloads, setup, min(workers, len(tasks)))


def _point_row(point: Point | InvalidPoint) -> Row:
    return {"point": point.index, "workload": point.workload, **dict(point.values)}


def _row(point: Point, finished: Finished) -> Row:
    return {**_point_row(point), **(finished.figures or {})}


def _invalid_row(point: InvalidPoint) -> Row:
    return {**_point_row(point), "reason": point.reason}


class _Progress:
    """One line on stderr every `interval` seconds (and at the end): points done, rate, ETA.
    Written whether or not stderr is a terminal, so a sweep in a CI log or under nohup shows
    it is alive."""

    def __init__(self, total: int, reused: int, invalid: int, stream: TextIO,
                 interval: float) -> None:
        self.total, self.stream, self.interval = total, stream, interval
        self.done = 0
        self.started = time.monotonic()
        self._next = self.started + interval
        skipped = [f"{reused} already in the output folder"] if reused else []
        if invalid:
            skipped.append(f"{invalid} invalid combination{'s' if invalid != 1 else ''} "
                           "skipped")
        extra = f" ({', '.join(skipped)})" if skipped else ""
        self._write(f"sweep: {total} point{'s' if total != 1 else ''} to replay{extra}")

    def step(self) -> None:
        self.done += 1
        now = time.monotonic()
        if now >= self._next and self.done < self.total:
            self._next = now + self.interval
            self._write(self._line(now))

    def close(self, interrupted: bool) -> None:
        elapsed = time.monotonic() - self.started
        if interrupted:
            self._write(f"sweep: interrupted after {self.done}/{self.total} points "
                        f"({_duration(elapsed)}); the finished ones are kept")
        else:
            self._write(f"sweep: {self.done}/{self.total} points in {_duration(elapsed)}")

    def _line(self, now: float) -> str:
        elapsed = now - self.started
        rate = self.done / elapsed if elapsed > 0 else 0.0
        eta = (self.total - self.done) / rate if rate > 0 else 0.0
        return (f"sweep: {self.done}/{self.total} points, {rate * 60:.1f} points/min, "
                f"ETA {_duration(eta)}")

    def _write(self, line: str) -> None:
        self.stream.write(line + "\n")
        self.stream.flush()


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"

"""Where the replays of a sweep run: in this process, on a local process pool, or on Ray.

Every executor runs the same `replay_point` and yields its answers as they finish, in whatever
order; the runner sorts them, so results never depend on the executor. What crosses a process
boundary per point is small: the task (the rendered config text, a few kilobytes) out, the
headline figures (a few hundred bytes) back. Workloads, the large part, move once: the pool's
workers receive them when they start, Ray tasks read them from the object store (`ray.put`
once per sweep, deserialised once per Ray worker process), packed as plain tuples
(`transport`).

Workers ignore SIGINT: on Ctrl-C the runner alone decides, stops the workers and keeps what
finished, instead of every worker printing its own traceback.
"""

from __future__ import annotations

import multiprocessing
import signal
import time
from collections.abc import Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from quotactor.config import load_config
from quotactor.sim import ReplayOptions, Workload
from quotactor.sim.model_runs import build_model
from quotactor.sim.models.models import ModelOptions, replay_model
from quotactor.sim.session import ConfigRun, run_config
from quotactor.sweep.errors import SweepError
from quotactor.sweep.headline import Value, headline
from quotactor.sweep.transport import (
    PackedCluster,
    PackedWorkload,
    pack_workload,
    unpack_cluster,
    unpack_workload,
)

__all__ = ["Finished", "Setup", "Task", "pool_results", "ray_results", "replay_point",
           "serial_results"]


@dataclass(frozen=True, slots=True)
class Setup:
    """What every point of a sweep shares besides its workload (the cluster packed: a
    handful of nodes, unpacked per point at no measurable cost)."""

    model: str
    cluster: PackedCluster
    packing: str
    partition: str
    kill_preempted: bool = False
    preemption_grace: float = 0.0


@dataclass(frozen=True, slots=True)
class Task:
    key: str
    label: str
    workload: str
    config_text: str


@dataclass(frozen=True, slots=True)
class Finished:
    """A point's figures, or `error` when its replay failed; `seconds` is the replay's wall
    time in the worker (kept apart from the figures, which are deterministic)."""

    key: str
    figures: Mapping[str, Value] | None
    error: str
    seconds: float


def replay_point(workload: Workload, setup: Setup, task: Task) -> Finished:
    """Replay one point and reduce it to its headline figures: the YuniKorn scheduler under
    the queue config, or `replay_model` under a fresh elastic or quota-tree model (a model
    holds the replay's state, so each point builds its own)."""
    started = time.perf_counter()
    try:
        cluster = unpack_cluster(setup.cluster)
        if setup.model == "yunikorn":
            run = ConfigRun(task.label, "sweep", load_config(task.config_text))
            options = ReplayOptions(partition=setup.partition, packing=setup.packing,  # type: ignore[arg-type]
                                    label=task.label, progress=False,
                                    kill_preempted=setup.kill_preempted,
                                    preemption_grace=setup.preemption_grace)
            result = run_config(run, workload, cluster, options)
        else:
            model = build_model(setup.model, task.config_text, cluster.capacity)
            result = replay_model(model, workload, cluster, ModelOptions(
                label=task.label, config_source="sweep", progress=False,
                kill_preempted=setup.kill_preempted))
        figures = headline(result, setup.model)
    except Exception as exc:  # one failing point must not end the sweep: it is reported
        return Finished(task.key, None, f"{type(exc).__name__}: {exc}",
                        time.perf_counter() - started)
    return Finished(task.key, figures, "", time.perf_counter() - started)


def serial_results(tasks: Sequence[Task], workloads: Mapping[str, Workload],
                   setup: Setup) -> Results:
    for task in tasks:
        yield replay_point(workloads[task.workload], setup, task)


Results = Generator[Finished, None, None]
"""Answers as they finish; closing it stops the executor's work."""

_worker_state: dict[str, Any] = {}
"""A pool worker's workloads and setup, set once when the worker starts."""


def _start_worker(workloads: Mapping[str, PackedWorkload], setup: Setup) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _worker_state["workloads"] = {name: unpack_workload(w) for name, w in workloads.items()}
    _worker_state["setup"] = setup


def _pool_task(task: Task) -> Finished:
    return replay_point(_worker_state["workloads"][task.workload], _worker_state["setup"], task)


def pool_results(tasks: Sequence[Task], workloads: Mapping[str, Workload], setup: Setup,
                 workers: int) -> Results:
    """A pool of `workers` fresh (spawned, so safe beside threads) processes, stopped at once
    if the caller stops reading (Ctrl-C included). As with any spawning pool, a script calling
    this needs the `if __name__ == "__main__":` guard."""
    context = multiprocessing.get_context("spawn")
    packed = {name: pack_workload(w) for name, w in workloads.items()}
    pool = context.Pool(workers, initializer=_start_worker, initargs=(packed, setup))
    finished = False
    try:
        yield from pool.imap_unordered(_pool_task, tasks, chunksize=1)
        finished = True
    finally:
        if finished:
            pool.close()
        else:
            pool.terminate()
        pool.join()


_ray_workloads: dict[str, Workload] = {}
"""Workloads a Ray worker process has already taken from the object store, by object id."""


def _ray_task(holder: list[Any], setup: Setup, task: Task) -> Finished:
    import ray

    ref = holder[0]
    key = ref.hex()
    if key not in _ray_workloads:
        _ray_workloads.clear()  # one sweep at a time: keep one set of workloads
        _ray_workloads[key] = unpack_workload(ray.get(ref))
    return replay_point(_ray_workloads[key], setup, task)


def ray_results(tasks: Sequence[Task], workloads: Mapping[str, Workload], setup: Setup,
                address: str | None, cpus: int | None) -> Results:
    """Each point a Ray task on the cluster at `address` (None: a local Ray started here,
    with `cpus` CPUs, and shut down at the end). A Ray already initialised in this process is
    used as it is and left running."""
    import logging

    import ray

    owned = not ray.is_initialized()
    if owned:
        try:
            ray.init(address=address, num_cpus=cpus if address is None else None,
                     include_dashboard=False, log_to_driver=False,
                     logging_level=logging.ERROR)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            where = f"at {address}" if address else "locally"
            raise SweepError(f"cannot start or reach Ray {where}: {exc}") from None
    pending: list[Any] = []
    try:
        setup_ref = ray.put(setup)
        refs = {name: ray.put(pack_workload(workload)) for name, workload in workloads.items()}
        remote = ray.remote(num_cpus=1, max_retries=0)(_ray_task)
        pending = [remote.remote([refs[t.workload]], setup_ref, t) for t in tasks]
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            finished: Finished = ray.get(done[0])
            yield finished
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)
        if owned:
            ray.shutdown()

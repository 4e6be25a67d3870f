"""`simulate --target URL`: replay a workload against a running service, as a remote shim would.

Where `replay` drives an in-process scheduler on a virtual clock, this drives a real
`quotactor serve` through the shim API, in accelerated real time: a trace second lasts
`1/speed` wall seconds. It registers the cluster's nodes, submits each job when its time
comes, asks for its tasks, learns its allocations from the decision long-poll, and once a
job holds all its tasks lets it run for its duration, then releases everything and removes
the application. It is the end-to-end proof that a shim in another process works; the
service's own clock and background cycles do the scheduling.
"""

from __future__ import annotations

import heapq
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

from quotactor.client import Client
from quotactor.sim.inputs.cluster import ClusterSpec
from quotactor.sim.inputs.jobs import Job, Workload

__all__ = ["RemoteOutcome", "replay_remote"]


@dataclass(frozen=True, slots=True)
class RemoteOutcome:
    """What happened to the workload on the service (waits in trace seconds)."""

    submitted: int
    completed: int
    rejected: int
    unfinished: int
    allocations: int
    wall_seconds: float
    mean_wait: float
    max_wait: float

    def format(self) -> str:
        return (f"remote replay: {self.submitted} jobs submitted, {self.completed} completed, "
                f"{self.rejected} rejected, {self.unfinished} unfinished; "
                f"{self.allocations} allocations in {self.wall_seconds:.1f} s wall; "
                f"wait mean {self.mean_wait:.0f} s, max {self.max_wait:.0f} s (trace time)")


class _Run:
    """The bookkeeping of one job on the service."""

    __slots__ = ("app_id", "held", "job", "keys", "started")

    def __init__(self, app_id: str, job: Job) -> None:
        self.app_id = app_id
        self.job = job
        self.keys = [f"{group.name or 'task'}-{i}" for group in job.task_groups
                     for i in range(group.count)]
        self.held: set[str] = set()
        self.started: float | None = None


def replay_remote(client: Client, workload: Workload, cluster: ClusterSpec, *,
                  speed: float = 1000.0, timeout: float = 600.0, partition: str = "",
                  clock: Callable[[], float] = time.monotonic) -> RemoteOutcome:
    """Replay `workload` on the service behind `client`; returns when every job is done,
    rejected, or `timeout` wall seconds have passed."""
    if speed <= 0:
        raise ValueError("the replay speed must be positive")
    tag = uuid.uuid4().hex[:8]
    for node in cluster.nodes:
        client.add_node(f"{node.node_id}", dict(node.capacity.items()), partition=partition)
    jobs = sorted(workload.jobs, key=lambda j: (j.submit, j.job_id))
    first = jobs[0].submit if jobs else 0.0
    start = clock()
    position = client.decisions().position

    def wall(trace_time: float) -> float:
        return start + (trace_time - first) / speed

    runs: dict[str, _Run] = {}
    ends: list[tuple[float, str]] = []
    rejected = completed = allocations = 0
    waits: list[float] = []
    pending = 0
    while (pending < len(jobs) or runs) and clock() - start < timeout:
        now = clock()
        while pending < len(jobs) and wall(jobs[pending].submit) <= now:
            run = _Run(f"{tag}-{jobs[pending].job_id}", jobs[pending])
            pending += 1
            answer = client.add_application(run.app_id, run.job.user, groups=run.job.groups,
                                            queue=run.job.queue or "", partition=partition,
                                            tags=dict(run.job.tags))
            if answer["rejected"]:
                rejected += 1
                continue
            runs[run.app_id] = run
            for group in run.job.task_groups:
                for i in range(group.count):
                    client.ask(run.app_id, f"{group.name or 'task'}-{i}",
                               dict(group.resources.items()), partition=partition)
        while ends and ends[0][0] <= now:
            _, app_id = heapq.heappop(ends)
            run = runs.pop(app_id)
            for key in sorted(run.held):
                client.release(app_id, key, partition=partition)
            client.remove_application(app_id, partition=partition)
            completed += 1
        upcoming = [wall(jobs[pending].submit)] if pending < len(jobs) else []
        upcoming += [ends[0][0]] if ends else []
        wait = max(0.0, min([*upcoming, now + 1.0]) - clock())
        page = client.decisions(after=position, wait=min(wait, 1.0))
        position = page.position
        for allocation in page.allocations():
            found = runs.get(allocation["applicationID"])
            if found is None:
                continue
            allocations += 1
            found.held.add(allocation["allocationKey"])
            if found.started is None and len(found.held) == len(found.keys):
                found.started = clock()
                waits.append((found.started - wall(found.job.submit)) * speed)
                heapq.heappush(ends, (found.started + found.job.duration / speed,
                                      found.app_id))
        for refused in page.rejected_allocations():
            gone = runs.pop(refused["applicationID"], None)
            if gone is not None:
                rejected += 1
                client.remove_application(gone.app_id, partition=partition)
    return RemoteOutcome(
        submitted=pending, completed=completed, rejected=rejected,
        unfinished=len(runs) + len(jobs) - pending, allocations=allocations,
        wall_seconds=clock() - start,
        mean_wait=sum(waits) / len(waits) if waits else 0.0, max_wait=max(waits, default=0.0))

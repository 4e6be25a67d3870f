"""A seeded synthetic workload, for trying configurations without a trace at hand.

Arrivals are a Poisson process; users are drawn with Zipf-like popularity (a few heavy users
and a long tail, as real logs show); job sizes are powers of two up to `max_tasks`, smaller
ones likelier; durations are log-normal. The same spec and seed always give the same jobs.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Callable
from dataclasses import dataclass

from quotactor.core.resources import Resource, parse_quantity
from quotactor.sim.inputs.jobs import Job, TaskGroup, Workload, WorkloadError

__all__ = ["SyntheticSpec", "generate", "parse_synthetic"]

PREFIX = "synthetic"
MAX_JOBS = 5_000_000
"""More jobs than this would take hours to replay and gigabytes to hold: refused up front.
At the bound, generating takes some 40 s and 1.3 GB (`generate` reports its progress)."""
PROGRESS_EVERY = 250_000
"""Jobs generated between two progress reports."""
MAX_USERS = 1_000_000
MAX_GPUS = 64
"""More GPUs per task than any node holds."""
GPU = "nvidia.com/gpu"


@dataclass(frozen=True, slots=True)
class SyntheticSpec:
    """What to generate; every field can be set from the command line (`synthetic:jobs=500`).

    `interarrival` is the mean gap between submissions in seconds; `duration` the median run
    time in seconds with log-normal spread `sigma`; each task asks for `vcore`, `memory` (none
    when empty) and `gpu` whole `nvidia.com/gpu`s (none when 0); `queues` is a `;`-separated
    list of queue paths assigned to groups in turn (empty: placement rules decide).
    """

    jobs: int = 2000
    users: int = 20
    groups: int = 3
    seed: int = 1
    interarrival: float = 60.0
    max_tasks: int = 64
    duration: float = 900.0
    sigma: float = 1.2
    vcore: str = "1"
    memory: str = ""
    gpu: int = 0
    queues: str = ""

    def __post_init__(self) -> None:
        for name in ("jobs", "users", "groups", "max_tasks"):
            if getattr(self, name) < 1:
                raise WorkloadError(f"synthetic {name} must be at least 1")
        for name in ("interarrival", "duration"):
            if not getattr(self, name) > 0:
                raise WorkloadError(f"synthetic {name} must be positive")
        if self.sigma < 0:
            raise WorkloadError("synthetic sigma must not be negative")
        if self.jobs > MAX_JOBS:
            raise WorkloadError(f"synthetic jobs={self.jobs} is more than {MAX_JOBS:,}, the "
                                "most a replay takes")
        if not 0 <= self.gpu <= MAX_GPUS:
            raise WorkloadError(f"synthetic gpu must be between 0 and {MAX_GPUS} per task")
        for name in ("users", "groups", "max_tasks"):
            if getattr(self, name) > MAX_USERS:
                raise WorkloadError(f"synthetic {name} must be at most {MAX_USERS:,}")


def parse_synthetic(text: str) -> SyntheticSpec:
    """`synthetic` or `synthetic:key=value,key=value` -> a spec (`WorkloadError` if malformed)."""
    name, _, options = text.partition(":")
    if name != PREFIX:
        raise WorkloadError(f"not a synthetic workload spec: {text!r}")
    types = {f.name: f.type for f in dataclasses.fields(SyntheticSpec)}
    values: dict[str, object] = {}
    for item in filter(None, (part.strip() for part in options.split(","))):
        key, sep, value = item.partition("=")
        if not sep or key not in types:
            raise WorkloadError(f"unknown synthetic option {item!r}; known: {', '.join(types)}")
        kind = types[key]
        try:
            values[key] = int(value) if kind == "int" else float(value) if kind == "float" \
                else value
        except ValueError:
            raise WorkloadError(f"synthetic {key} must be a {kind}, got {value!r}") from None
    return SyntheticSpec(**values)  # type: ignore[arg-type]


def generate(spec: SyntheticSpec,
             progress: Callable[[int, int], None] | None = None) -> Workload:
    """The jobs of `spec`, deterministically from its seed; `progress(done, total)` is called
    every `PROGRESS_EVERY` jobs (a large spec takes tens of seconds)."""
    rng = random.Random(spec.seed)
    width = len(str(spec.users))
    users = [f"user-{i:0{width}d}" for i in range(1, spec.users + 1)]
    groups = [f"group-{chr(ord('a') + i)}" if spec.groups <= 26 else f"group-{i + 1}"
              for i in range(spec.groups)]
    group_of = {user: groups[i % len(groups)] for i, user in enumerate(users)}
    queues = [q.strip() for q in spec.queues.split(";") if q.strip()]
    queue_of = {g: queues[i % len(queues)] for i, g in enumerate(groups)} if queues else {}
    weights = [1.0 / rank for rank in range(1, len(users) + 1)]
    sizes = [2**k for k in range(int(math.log2(spec.max_tasks)) + 1)]
    size_weights = [1.0 / (k + 1) for k in range(len(sizes))]
    per_task = {"vcore": parse_quantity("vcore", spec.vcore)}
    if spec.memory:
        per_task["memory"] = parse_quantity("memory", spec.memory)
    if spec.gpu:
        per_task[GPU] = spec.gpu
    task = Resource(per_task)
    # jobs of one size share their task groups, as a parsed trace's do (`SharedParts`)
    task_groups = {size: (TaskGroup("tasks", size, task),) for size in sizes}
    mu = math.log(spec.duration)
    jobs: list[Job] = []
    now = 0.0
    for number in range(1, spec.jobs + 1):
        user = rng.choices(users, weights)[0]
        group = group_of[user]
        size = rng.choices(sizes, size_weights)[0]
        duration = float(max(1, round(rng.lognormvariate(mu, spec.sigma))))
        jobs.append(Job(f"job-{number}", user, (group,), queue_of.get(group), round(now, 3),
                        duration, task_groups[size], line=number))
        now += rng.expovariate(1.0 / spec.interarrival)
        if progress is not None and number % PROGRESS_EVERY == 0:
            progress(number, spec.jobs)
    return Workload(f"{PREFIX}:seed={spec.seed}", tuple(jobs))

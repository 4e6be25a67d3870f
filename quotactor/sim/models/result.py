"""Everything one replay produced, as one frozen value that reports, plots and comparisons read.

Results are deterministic for a given workload, cluster and configuration, except for
`performance` (wall-clock figures), which is kept apart so that two runs compare equal on
everything that matters.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from quotactor.core.resources import Resource
from quotactor.sim.inputs.cluster import ClusterSpec
from quotactor.sim.inputs.jobs import Workload
from quotactor.sim.models.limits import LimitLine
from quotactor.sim.models.outcomes import JobOutcome
from quotactor.sim.models.preemptions import PreemptionStats
from quotactor.sim.models.stats import EntityStats
from quotactor.sim.models.usage import Series

__all__ = ["Performance", "QuotaTrack", "SimulationResult"]


@dataclass(frozen=True, slots=True)
class Performance:
    """How fast the replay ran: wall time, scheduling cycles, and decisions made.

    A decision is one answer of a cycle: each allocation it made, and "hold" for each job
    still waiting after it (held back by a limit or by full nodes, whether the scheduler
    checked again or knew the obstacle had not moved).
    """

    wall_seconds: float
    cycles: int
    decisions: int
    allocations: int
    tracker_calls: int

    @property
    def decisions_per_second(self) -> float:
        return self.decisions / self.wall_seconds if self.wall_seconds > 0 else 0.0

    def to_json(self) -> dict[str, float | int]:
        return {"wallSeconds": round(self.wall_seconds, 3), "cycles": self.cycles,
                "decisions": self.decisions, "allocations": self.allocations,
                "trackerCalls": self.tracker_calls,
                "decisionsPerSecond": round(self.decisions_per_second, 1)}


@dataclass(frozen=True, slots=True)
class QuotaTrack:
    """One quota group of an elastic or tree model over time: `used[i]` and `runtime[i]`
    (what it may use at that moment, borrowing included) hold from `times[i]` on."""

    name: str
    times: tuple[float, ...]
    used: tuple[Resource, ...]
    runtime: tuple[Resource, ...]
    min: Resource
    max: Resource
    borrowed: tuple[Resource, ...] = ()
    """What it used above its own quota, like `used` (empty where the model does not say)."""
    lent: tuple[Resource, ...] = ()
    """What others used of its quota, like `used` (empty where the model does not say)."""
    cohort_quota: Resource = field(default_factory=Resource)
    """The quota of all the groups it may borrow from, itself included (or empty)."""


@dataclass(frozen=True, slots=True)
class SimulationResult:
    """One replay of `workload` on `cluster` under the configuration called `label`.

    Times are the workload's own (seconds); `start_time` is the first submission and
    `end_time` the moment the last job ended, so `end_time - start_time` is the virtual span.
    """

    label: str
    config_source: str
    workload: Workload
    cluster: ClusterSpec
    outcomes: tuple[JobOutcome, ...]
    everybody: EntityStats
    users: tuple[EntityStats, ...]
    groups: tuple[EntityStats, ...]
    user_series: Mapping[str, Series]
    group_series: Mapping[str, Series]
    queue_series: Mapping[str, Series]
    total_series: Series
    user_limits: Mapping[str, tuple[LimitLine, ...]]
    group_limits: Mapping[str, tuple[LimitLine, ...]]
    start_time: float
    end_time: float
    leftover: Mapping[str, Resource]
    performance: Performance
    pending_series: tuple[tuple[float, int], ...] = ()
    """(time, jobs waiting to start) at every change."""
    preemptions: PreemptionStats = field(default_factory=PreemptionStats)
    model: str = "yunikorn"
    """The quota model replayed: yunikorn, elastic or quotatree."""
    placement: str = ""
    """How the replay placed a job's tasks, as the report names it (`whole`, `tasks`, `gang
    (Soft, placeholders time out after 15.0m)`); empty for models that place no tasks."""
    quota_tracks: tuple[QuotaTrack, ...] = ()
    """Per quota group figures over time (models with quota groups only)."""
    node_class_series: Mapping[str, Series] = field(
        default_factory=lambda: MappingProxyType({}))
    """Usage per node class (see `quotactor.sim.models.utilization.node_classes`), recorded when
    the cluster's nodes differ and the replay places tasks on nodes; empty otherwise."""
    queue_max: Mapping[str, Resource] = field(default_factory=dict)
    """The maximum of each queue that has one at the end of the replay, by path (the
    YuniKorn model only)."""

    @property
    def primary_resource(self) -> str:
        """The resource the headline figures are about: a GPU when jobs ask for one (on a
        GPU cluster that is what is scarce and dear), else vcore when they ask for it, else
        the first they ask for."""
        names = sorted({n for job in self.workload.jobs[:1000] for n in job.total})
        gpus = [n for n in names if "gpu" in n.lower()]
        if gpus:
            return gpus[0]
        return "vcore" if "vcore" in names or not names else names[0]

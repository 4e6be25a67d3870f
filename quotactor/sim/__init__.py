"""Replaying real and synthetic workloads through the embedded scheduler, in virtual time.

```python
from quotactor.scheduler import Scheduler, VirtualClock
from quotactor.sim import ReplayOptions, load_workload, replay, uniform_cluster

workload = load_workload("trace.swf.gz")            # or .csv, .jsonl, "synthetic:jobs=500"
with Scheduler.start(Path("queues.yaml"), clock=VirtualClock()) as scheduler:
    result = replay(scheduler, workload, uniform_cluster(1, {"vcore": "128"}))
print(format_summary(result))
what_if = analyse(result)                            # causes, obstacles, queues, fairness
failed = [line for _, ok, line in evaluate([parse_check("p95_wait < 2h")], result) if not ok]
```
`quotactor simulate` and `quotactor demo` (`quotactor.sim.cli`) wrap this with reports, plots,
comparisons and a REST server.
"""

from quotactor.sim.checks import Check, CheckError, evaluate, parse_check
from quotactor.sim.cluster import ClusterError, ClusterSpec, NodeSpec, load_cluster, uniform_cluster
from quotactor.sim.jobs import Job, LineProblem, TaskGroup, Workload, WorkloadError
from quotactor.sim.outcomes import JobOutcome, JobState
from quotactor.sim.replay import ReplayOptions, replay
from quotactor.sim.result import Performance, SimulationResult
from quotactor.sim.summary import format_summary
from quotactor.sim.synthetic import SyntheticSpec, generate
from quotactor.sim.whatif import QueueFigures, WhatIf, analyse
from quotactor.sim.workload import load_workload

__all__ = [
    "Check",
    "CheckError",
    "ClusterError",
    "ClusterSpec",
    "Job",
    "JobOutcome",
    "JobState",
    "LineProblem",
    "NodeSpec",
    "Performance",
    "QueueFigures",
    "ReplayOptions",
    "SimulationResult",
    "SyntheticSpec",
    "TaskGroup",
    "Workload",
    "WhatIf",
    "WorkloadError",
    "analyse",
    "evaluate",
    "format_summary",
    "generate",
    "load_cluster",
    "load_workload",
    "parse_check",
    "replay",
    "uniform_cluster",
]

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
The same workload replays under Koordinator's elastic quota or MCAD's quota trees with
`replay_model(load_elastic_model(yaml_text, cluster.capacity), workload, cluster)` (or
`load_quotatree_model(json_text)`): same result, report and plots. `verify(result)` checks
any result against the invariants every model must keep (usage within the cluster, quotas
and limits; jobs run as long as they last) and names each breach.
`quotactor simulate` and `quotactor demo` (`quotactor.sim.cli`) wrap this with reports, plots,
comparisons and a REST server.
"""

from quotactor.sim.inputs.cluster import (
    ClusterError,
    ClusterSpec,
    NodeSpec,
    load_cluster,
    uniform_cluster,
)
from quotactor.sim.inputs.jobs import Job, LineProblem, TaskGroup, Workload, WorkloadError
from quotactor.sim.inputs.synthetic import SyntheticSpec, generate
from quotactor.sim.inputs.workload import load_workload
from quotactor.sim.models.elastic_model import ElasticModel, load_elastic_model
from quotactor.sim.models.models import GroupFigures, ModelOptions, QuotaModel, replay_model
from quotactor.sim.models.outcomes import JobOutcome, JobState
from quotactor.sim.models.quotatree_model import QuotaTreeModel, load_quotatree_model
from quotactor.sim.models.replay import ReplayOptions, replay
from quotactor.sim.models.result import Performance, QuotaTrack, SimulationResult
from quotactor.sim.models.verify import Verification, Violation, check_result, verify
from quotactor.sim.reports.checks import Check, CheckError, evaluate, parse_check
from quotactor.sim.reports.summary import format_summary
from quotactor.sim.reports.whatif import QueueFigures, WhatIf, analyse

__all__ = [
    "Check",
    "CheckError",
    "ClusterError",
    "ClusterSpec",
    "ElasticModel",
    "GroupFigures",
    "Job",
    "JobOutcome",
    "JobState",
    "LineProblem",
    "ModelOptions",
    "NodeSpec",
    "Performance",
    "QueueFigures",
    "QuotaModel",
    "QuotaTrack",
    "QuotaTreeModel",
    "ReplayOptions",
    "SimulationResult",
    "SyntheticSpec",
    "TaskGroup",
    "Verification",
    "Violation",
    "WhatIf",
    "Workload",
    "WorkloadError",
    "analyse",
    "check_result",
    "evaluate",
    "format_summary",
    "generate",
    "load_cluster",
    "load_elastic_model",
    "load_quotatree_model",
    "load_workload",
    "parse_check",
    "replay",
    "replay_model",
    "uniform_cluster",
    "verify",
]

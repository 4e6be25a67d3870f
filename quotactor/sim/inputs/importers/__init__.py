"""Bring your own cluster: a cluster's history as files `quotactor simulate` replays.

Three sources, one module each, all producing an `Imported` (jobs validated by the workload
reader itself, the nodes by class, a queue config) that `write_imported` writes as
`workload.csv`/`.jsonl`, `cluster.yaml` and `queues.yaml`:

- `import_yunikorn`: a running YuniKorn's (or `quotactor serve`'s) REST API;
- `import_pods`: `kubectl get pods -A -o json` output (and `kubectl get nodes -o json`);
- `import_alibaba_gpu`: Alibaba's public GPU cluster trace (cluster-trace-gpu-v2023).

Every input is bounded (bytes, rows, items, response sizes); what cannot be used is left out
and counted, or, when nothing is usable, refused with a one-line `SourceError`. The command
line is `quotactor import SOURCE` (`quotactor.sim.inputs.importers.cli`).
"""

from quotactor.sim.inputs.importers.alibaba import import_alibaba_gpu
from quotactor.sim.inputs.importers.imported import (
    FetchError,
    Imported,
    NodeClass,
    SourceError,
    Written,
    write_imported,
)
from quotactor.sim.inputs.importers.pods import import_pods
from quotactor.sim.inputs.importers.yunikorn import import_yunikorn

__all__ = [
    "FetchError", "Imported", "NodeClass", "SourceError", "Written", "import_alibaba_gpu",
    "import_pods", "import_yunikorn", "write_imported",
]

"""YuniKorn scheduler configuration: model, strict loader and every validation rule.

```python
from quotactor.config import load_config, limit_entries
config = load_config(Path("queues.yaml"))          # ConfigError if YuniKorn would reject it
limits = limit_entries(config.partition("default"))  # {"root": (...), "root.a": (...)}
```
"""

from quotactor.config.entries import iter_queues, limit_entries
from quotactor.config.errors import ConfigError
from quotactor.config.frozen import FrozenMap
from quotactor.config.loader import ConfigSource, load_config, load_scheduler_config
from quotactor.config.model import (
    ChildTemplate,
    Filter,
    LimitConfig,
    NodeSortPolicy,
    PartitionConfig,
    PlacementRule,
    PreemptionConfig,
    QueueConfig,
    SchedulerConfig,
    UserGroupResolverConfig,
)
from quotactor.config.quantities import Quantities
from quotactor.config.validate import find_problems, validate

__all__ = [
    "ChildTemplate",
    "ConfigError",
    "ConfigSource",
    "Filter",
    "FrozenMap",
    "LimitConfig",
    "NodeSortPolicy",
    "PartitionConfig",
    "PlacementRule",
    "PreemptionConfig",
    "Quantities",
    "QueueConfig",
    "SchedulerConfig",
    "UserGroupResolverConfig",
    "find_problems",
    "iter_queues",
    "limit_entries",
    "load_config",
    "load_scheduler_config",
    "validate",
]

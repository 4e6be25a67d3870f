"""All of YuniKorn's config rules, run in the order YuniKorn runs them.

YuniKorn stops at the first problem; we go on and report every problem, but keep its order, so
the first one reported (the exception itself) is the one YuniKorn would have named.
"""

from __future__ import annotations

from quotactor.config import check_hierarchy, check_partition, check_placement, check_queues
from quotactor.config.errors import ConfigError
from quotactor.config.facts import NO_FACTS, SourceFacts
from quotactor.config.findings import Findings
from quotactor.config.model import SchedulerConfig

__all__ = ["find_problems", "validate"]


def find_problems(config: SchedulerConfig, facts: SourceFacts = NO_FACTS) -> list[ConfigError]:
    """Every rule broken by `config`, partition by partition, in YuniKorn's check order."""
    out = Findings(config.lines, facts)
    names: dict[str, str] = {}
    for partition in config.partitions:
        check_partition.check_name(partition, names, out)
        root = check_partition.check_structure(partition, out)
        if root is None:
            continue
        check_partition.check_root_limits(partition, root, out)
        check_queues.check_tree(root, out)
        check_queues.check_resources(root, out)
        check_placement.check_rules(partition, out)
        check_partition.check_node_sort(partition, out)
        check_queues.check_max_applications(root, out)
        check_hierarchy.check_resources(root, out)
        check_hierarchy.check_applications(root, out)
    return out.errors


def validate(config: SchedulerConfig, facts: SourceFacts = NO_FACTS) -> None:
    """Raise `ConfigError` (with every problem) unless `config` is valid."""
    problems = find_problems(config, facts)
    if problems:
        raise ConfigError.of(problems)

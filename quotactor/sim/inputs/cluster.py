"""The cluster a replay runs on: nodes and their capacities, from a small YAML file or flags.

```yaml
nodes:
  - name: ipsc          # node ids: ipsc-001 ... ipsc-128 when count > 1
    count: 128
    resources: {vcore: "1", memory: 8Mi}
```
Quantities are YuniKorn's (`vcore` "1" is 1000 millicores), like everywhere in quotactor.
"""

from __future__ import annotations

from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any

import yaml

from quotactor.core.resources import QuantityError, Resource, parse_quantity

__all__ = ["ClusterError", "ClusterSpec", "NodeSpec", "load_cluster", "uniform_cluster"]


class ClusterError(ValueError):
    """A cluster description that cannot be used."""


@dataclass(frozen=True, slots=True)
class NodeSpec:
    node_id: str
    capacity: Resource


@dataclass(frozen=True, slots=True)
class ClusterSpec:
    """The nodes, in the order they are registered with the scheduler."""

    nodes: tuple[NodeSpec, ...]

    def __post_init__(self) -> None:
        if not self.nodes:
            raise ClusterError("a cluster needs at least one node")
        ids = [n.node_id for n in self.nodes]
        if len(set(ids)) != len(ids):
            raise ClusterError("node ids must be unique")

    @property
    def capacity(self) -> Resource:
        total = Resource()
        for node in self.nodes:
            total = total + node.capacity
        return total

    def describe(self) -> str:
        """`128 nodes, vcore 128` style one-liner for summaries (vcore in cores)."""
        parts = [f"{name} {_shown(name, q)}" for name, q in sorted(self.capacity.items())]
        return f"{len(self.nodes)} node{'s' if len(self.nodes) != 1 else ''}, " + ", ".join(parts)


def _shown(name: str, quantity: int) -> str:
    if name == "vcore":
        return f"{quantity / 1000:g}"
    return str(quantity)


def uniform_cluster(count: int, resources: dict[str, str], prefix: str = "node") -> ClusterSpec:
    """`count` identical nodes, e.g. `uniform_cluster(128, {"vcore": "1"})`."""
    if count < 1:
        raise ClusterError(f"the node count must be at least 1, got {count}")
    capacity = _capacity(resources, "node resources")
    width = max(3, len(str(count)))
    return ClusterSpec(tuple(NodeSpec(f"{prefix}-{i:0{width}d}" if count > 1 else prefix,
                                      capacity) for i in range(1, count + 1)))


def load_cluster(path: str | PathLike[str]) -> ClusterSpec:
    """A cluster from a YAML file as shown in the module docstring."""
    try:
        document = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ClusterError(f"cannot read {path}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise ClusterError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(document, dict) or not isinstance(document.get("nodes"), list):
        raise ClusterError(f"{path}: expected a mapping with a `nodes` list")
    nodes: list[NodeSpec] = []
    for index, entry in enumerate(document["nodes"]):
        where = f"{path}: nodes[{index}]"
        if not isinstance(entry, dict):
            raise ClusterError(f"{where}: expected a mapping")
        unknown = set(entry) - {"name", "count", "resources"}
        if unknown:
            raise ClusterError(f"{where}: unknown keys {sorted(unknown)}")
        name = str(entry.get("name") or f"node{index}")
        count = entry.get("count", 1)
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ClusterError(f"{where}: count must be a positive integer")
        resources = entry.get("resources")
        if not isinstance(resources, dict):
            raise ClusterError(f"{where}: resources must be a mapping")
        try:
            nodes.extend(uniform_cluster(count, resources, name).nodes)
        except ClusterError as exc:
            raise ClusterError(f"{where}: {exc}") from None
    return ClusterSpec(tuple(nodes))


def _capacity(resources: dict[str, Any], where: str) -> Resource:
    try:
        capacity = Resource({str(n): parse_quantity(str(n), q) for n, q in resources.items()})
    except QuantityError as exc:
        raise ClusterError(f"{where}: {exc}") from None
    if capacity.is_empty():
        raise ClusterError(f"{where}: a node must offer some resource")
    return capacity

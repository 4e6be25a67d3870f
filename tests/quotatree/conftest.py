"""Builders for quota-tree tests: compact trees and consumers, and a managed actor."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from quotactor.actors.runtime import live_actors
from quotactor.quotatree import (
    ConsumerInfo,
    Mode,
    QuotaManager,
    QuotaManagerActor,
    SharedQuotaManager,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "quotactor" / "quotatree" / "examples"

# node -> (parent or None, quota, hard); quota is an int (first resource) or a mapping
NodeTable = Mapping[str, tuple[str | None, int | Mapping[str, int], bool]]


def tree_doc(name: str, nodes: NodeTable, resources: tuple[str, ...] = ("cpu",)) -> str:
    """MCAD QuotaTree JSON (with MCAD's string-typed values) for a compact node table."""
    spec = {}
    for node, (parent, quota, hard) in nodes.items():
        amounts = quota if isinstance(quota, Mapping) else {resources[0]: quota}
        spec[node] = {
            "parent": parent if parent is not None else "nil",
            "hard": "true" if hard else "false",
            "quota": {r: str(v) for r, v in amounts.items()},
        }
    return json.dumps({"kind": "QuotaTree", "metadata": {"name": name},
                       "spec": {"resourceNames": list(resources), "nodes": spec}})


def consumer(cid: str, tree: str, group: str, request: int | Mapping[str, int],
             priority: int = 0, ctype: int = 0, unpreemptable: bool = False,
             resource: str = "cpu") -> ConsumerInfo:
    amounts = request if isinstance(request, Mapping) else {resource: request}
    return ConsumerInfo.from_json({
        "kind": "Consumer", "metadata": {"name": cid},
        "spec": {"id": cid, "trees": [{
            "treeName": tree, "groupID": group, "request": dict(amounts),
            "priority": priority, "type": ctype, "unPreemptable": unpreemptable,
        }]},
    })


def forest_consumer(cid: str, entries: Mapping[str, tuple[str, Mapping[str, int]]],
                    priority: int = 0) -> ConsumerInfo:
    return ConsumerInfo.from_json({
        "kind": "Consumer", "metadata": {"name": cid},
        "spec": {"id": cid, "trees": [
            {"treeName": tree, "groupID": group, "request": dict(request),
             "priority": priority}
            for tree, (group, request) in entries.items()
        ]},
    })


class Build:
    """Test helpers handed out as a fixture (tests are imported with importlib)."""

    tree_doc = staticmethod(tree_doc)
    consumer = staticmethod(consumer)
    forest_consumer = staticmethod(forest_consumer)

    def manager(self, name: str, nodes: NodeTable, resources: tuple[str, ...] = ("cpu",),
                mode: Mode = Mode.NORMAL) -> QuotaManager:
        qm = QuotaManager()
        qm.add_tree_from_json(tree_doc(name, nodes, resources))
        qm.set_mode(mode)
        return qm

    def place(self, qm: QuotaManager, tree: str, cid: str, group: str,
              request: int | Mapping[str, int], **kwargs: Any) -> Any:
        """Add a single-tree consumer and allocate it; returns the response."""
        qm.add_consumer(consumer(cid, tree, group, request, **kwargs))
        return qm.allocate(tree, cid)

    @staticmethod
    def nodes_of(qm: QuotaManager, tree: str) -> dict[str, str]:
        """consumer -> node it is charged at."""
        return {cid: node for node, state in qm.tree_state(tree).items()
                for cid in state["consumers"]}

    @staticmethod
    def allocated(qm: QuotaManager, tree: str, resource: str = "cpu") -> dict[str, int]:
        return {node: state["allocated"][resource]
                for node, state in qm.tree_state(tree).items()}


@pytest.fixture
def build() -> Build:
    return Build()


@pytest.fixture
def example() -> QuotaManager:
    """MCAD's README example tree with its consumers added, in NORMAL mode."""
    qm = QuotaManager()
    qm.add_tree_from_json((EXAMPLES / "ExampleTree.json").read_text())
    for path in sorted((EXAMPLES / "consumers").glob("*.json")):
        qm.add_consumer(ConsumerInfo.from_file(path))
    qm.set_mode(Mode.NORMAL)
    return qm


def live_quota_actors() -> list[str]:
    """Quota-tree actors not stopped, and their threads."""
    actors = [name for name in live_actors() if name == QuotaManagerActor.__name__]
    return actors + [t.name for t in threading.enumerate()
                     if t.name.startswith("quotactor-quotatree")]


@pytest.fixture
def shared() -> Iterator[SharedQuotaManager]:
    """A started SharedQuotaManager, stopped afterwards; no quota actor may outlive it."""
    service = SharedQuotaManager.start(timeout=20.0)
    try:
        yield service
    finally:
        service.stop()
    assert live_quota_actors() == []

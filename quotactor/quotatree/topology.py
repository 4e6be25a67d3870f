"""Strict topology checks for a tree spec that is added whole (`add_tree_from_json`).

MCAD accepts such a spec with dangling nodes and only logs a warning; the nodes are then
silently missing from the tree. A spec that is added whole is checked here instead, and a bad
one is refused with the reason. (A tree cache edited step by step is still allowed to pass
through dangling states; `update_tree` reports them, as MCAD does.)
"""

from __future__ import annotations

from collections.abc import Mapping

from quotactor.quotatree.errors import QuotaTreeError
from quotactor.quotatree.spec import NodeSpec

__all__ = ["check_topology"]


def check_topology(tree_name: str, specs: Mapping[str, NodeSpec]) -> None:
    """Exactly one root, every parent known, every node reachable from the root."""
    if not specs:
        raise QuotaTreeError(f"tree {tree_name}: no nodes")
    for name in sorted(specs):
        parent = specs[name].parent
        if parent is not None and parent not in specs:
            raise QuotaTreeError(f"tree {tree_name}: node {name}: unknown parent {parent}")
    roots = sorted(name for name, spec in specs.items() if spec.parent is None)
    if not roots:
        raise QuotaTreeError(f"tree {tree_name}: no root node (a node with parent \"nil\")")
    if len(roots) > 1:
        raise QuotaTreeError(f"tree {tree_name}: more than one root: {', '.join(roots)}")
    reachable = {roots[0]}
    children: dict[str, list[str]] = {}
    for name, spec in specs.items():
        if spec.parent is not None:
            children.setdefault(spec.parent, []).append(name)
    frontier = [roots[0]]
    while frontier:
        for child in children.get(frontier.pop(), ()):
            if child not in reachable:
                reachable.add(child)
                frontier.append(child)
    cycle = sorted(set(specs) - reachable)
    if cycle:
        raise QuotaTreeError(f"tree {tree_name}: nodes in a parent cycle: {', '.join(cycle)}")

"""Read-only views of a tree: MCAD's text dump and a JSON-ready state."""

from __future__ import annotations

from typing import Any

from quotactor.quotatree.tree import QuotaTree

__all__ = ["dump_tree", "tree_state"]


def dump_tree(tree: QuotaTree) -> str:
    """MCAD's `QuotaTree.String()`: one line per node, children and consumer IDs sorted.
    The header ends with a space, as MCAD's does; golden files compare byte for byte.

    ```
    QuotaTree ExampleTree:
    |A: isHard=false; quota=[10]; allocated=[1]; consumers={ }
    --|B: isHard=false; quota=[2]; allocated=[1]; consumers={ a }
    ```
    """
    lines = [f"QuotaTree {tree.name}: "]
    if tree.root is None:
        return lines[0] + "\nnull"
    depth = {tree.root.id: 0}
    for node in tree.nodes.values():
        level = depth[node.id]
        for child in node.children:
            depth[child.id] = level + 1
        ids = "".join(f"{cid} " for cid in sorted(node.consumers))
        lines.append(
            f"{'--' * level}|{node.id}: isHard={str(node.hard).lower()}; "
            f"quota={_vector(node.quota)}; allocated={_vector(node.allocated)}; "
            f"consumers={{ {ids}}}"
        )
    return "\n".join(lines) + "\n"


def tree_state(tree: QuotaTree) -> dict[str, dict[str, Any]]:
    """Every node (in tree order) with its parent, hardness, quota and allocation by resource
    name, and the consumers charged exactly there in charge order."""
    names = tree.resource_names
    return {
        node.id: {
            "parent": node.parent.id if node.parent is not None else None,
            "hard": node.hard,
            "quota": dict(zip(names, node.quota, strict=True)),
            "allocated": dict(zip(names, node.allocated, strict=True)),
            "consumers": list(node.consumers),
        }
        for node in tree.nodes.values()
    }


def _vector(values: tuple[int, ...]) -> str:
    return "[" + " ".join(str(v) for v in values) + "]"

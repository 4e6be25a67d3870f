"""`quotactor quotatree TREE.json --consumers DIR`: replay consumers on a quota tree.

Every `*.json` file in DIR is a Consumer document; they are allocated one by one in file-name
order, in NORMAL mode, and the tree is printed after each step (MCAD's text dump, or one JSON
object per step with `--format json`), with where the consumer landed, whom it preempted and
which consumers slid to another node. The MCAD README example ships with the package:

    quotactor quotatree quotactor/quotatree/examples/ExampleTree.json \\
        --consumers quotactor/quotatree/examples/consumers
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from quotactor.quotatree.consumer_info import ConsumerInfo
from quotactor.quotatree.errors import QuotaTreeError
from quotactor.quotatree.manager import QuotaManager
from quotactor.quotatree.mode import Mode

__all__ = ["EXAMPLES", "add_parser", "run"]

EXAMPLES = Path(__file__).resolve().parent / "examples"


def add_parser(subparsers: Any) -> None:
    """Register the `quotatree` subcommand on the `quotactor` parser's subparsers."""
    parser = subparsers.add_parser(
        "quotatree",
        help="replay MCAD consumers on a quota tree and print the tree after each step",
        description="Allocate each Consumer JSON file of DIR (in file-name order, NORMAL mode)"
                    " on the tree of TREE.json and print the tree after every step.",
    )
    parser.add_argument("tree", type=Path, help="MCAD QuotaTree JSON file")
    parser.add_argument("--consumers", type=Path, required=True,
                        help="directory of MCAD Consumer JSON files (allocated in name order)")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="MCAD's text dump (default) or one JSON object per step")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Replay; 0 when every file could be read (refused allocations included), 1 if not."""
    stream = out if out is not None else sys.stdout
    manager = QuotaManager()
    try:
        tree = manager.add_tree_from_json(_read(args.tree))
        files = sorted(args.consumers.glob("*.json"))
        infos = [(path.name, ConsumerInfo.from_json(_read(path))) for path in files]
        for _, info in infos:
            manager.add_consumer(info)
    except QuotaTreeError as exc:
        print(f"quotactor quotatree: {exc}", file=sys.stderr)
        return 1
    manager.set_mode(Mode.NORMAL)
    text = args.format == "text"
    _emit(stream, text, manager, tree, {"step": "initial"}, "Initial tree:")
    for file_name, info in infos:
        before = _placements(manager, tree)
        response = manager.allocate(tree, info.id)
        after = _placements(manager, tree)
        moved = {cid: [node, after[cid]] for cid, node in before.items()
                 if cid in after and after[cid] != node}
        step = {
            "step": file_name,
            "consumer": info.id,
            "allocated": response.allocated,
            "node": after.get(info.id),
            "preempted": sorted(response.preempted_ids),
            "moved": moved,
            "message": response.message,
        }
        _emit(stream, text, manager, tree, step, _headline(step))
    return 0


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise QuotaTreeError(f"cannot read {path}: {reason}") from None


def _placements(manager: QuotaManager, tree: str) -> dict[str, str]:
    return {cid: node for node, state in manager.tree_state(tree).items()
            for cid in state["consumers"]}


def _headline(step: dict[str, Any]) -> str:
    head = f"Allocating consumer {step['consumer']} ({step['step']}): "
    if not step["allocated"]:
        return f"{head}refused: {step['message']}"
    parts = [f"{head}on node {step['node']}"]
    if step["preempted"]:
        parts.append("preempted " + ", ".join(step["preempted"]))
    if step["moved"]:
        moves = (f"{cid} {a}->{b}" for cid, (a, b) in step["moved"].items())
        parts.append("moved " + ", ".join(moves))
    return "; ".join(parts)


def _emit(stream: TextIO, text: bool, manager: QuotaManager, tree: str,
          step: dict[str, Any], headline: str) -> None:
    if text:
        stream.write(f"{headline}\n{manager.dump(tree)}\n")
    else:
        stream.write(json.dumps({**step, "tree": manager.tree_state(tree)}) + "\n")

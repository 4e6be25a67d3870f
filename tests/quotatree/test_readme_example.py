"""MCAD's README example (docs/tree-example.txt), step by step, and the CLI that replays it."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest

from quotactor.quotatree import QuotaManager
from quotactor.quotatree.cli import EXAMPLES, add_parser

TREE = "ExampleTree"

# (operation, consumer, where every allocated consumer is charged, preempted, non-zero nodes)
STEPS = [
    ("allocate", "a", {"a": "N"}, set(), {"A": 1, "C": 1, "H": 1, "N": 1}),
    ("allocate", "b", {"a": "N", "b": "N"}, set(), {"A": 2, "C": 2, "H": 2, "N": 2}),
    ("allocate", "c", {"a": "N", "b": "N", "c": "H"}, set(),
     {"A": 3, "C": 3, "H": 3, "N": 2}),
    ("deallocate", "a", {"b": "N", "c": "N"}, set(), {"A": 2, "C": 2, "H": 2, "N": 2}),
    ("allocate", "d", {"b": "C", "c": "H", "d": "N"}, set(),
     {"A": 4, "C": 4, "H": 3, "N": 2}),
    ("allocate", "e", {"b": "A", "c": "H", "d": "N", "e": "G"}, set(),
     {"A": 7, "C": 6, "G": 3, "H": 3, "N": 2}),
    ("allocate", "f", {"b": "A", "c": "H", "d": "N", "e": "G", "f": "A"}, set(),
     {"A": 10, "C": 6, "G": 3, "H": 3, "N": 2}),
    ("allocate", "g", {"c": "H", "d": "N", "e": "G", "f": "A", "g": "J"}, {"b"},
     {"A": 10, "C": 6, "G": 3, "H": 3, "N": 2, "D": 1, "J": 1}),
    ("allocate", "h", {"c": "H", "d": "N", "e": "A", "g": "J", "h": "K"}, {"f"},
     {"A": 8, "C": 4, "G": 1, "K": 1, "H": 3, "N": 2, "D": 1, "J": 1}),
    ("allocate", "i", {"c": "H", "d": "N", "g": "J", "h": "K", "i": "A"}, {"e"},
     {"A": 8, "C": 4, "G": 1, "K": 1, "H": 3, "N": 2, "D": 1, "J": 1}),
    ("allocate", "j", {"c": "H", "d": "N", "g": "J", "h": "K", "i": "A", "j": "B"}, set(),
     {"A": 10, "B": 2, "C": 4, "G": 1, "K": 1, "H": 3, "N": 2, "D": 1, "J": 1}),
]

FINAL_DUMP = (Path(__file__).parent / "golden" / "example_final_dump.txt").read_text()


def test_the_readme_example_goes_step_by_step_as_documented(example: QuotaManager) -> None:
    for operation, cid, placements, preempted, nonzero in STEPS:
        if operation == "allocate":
            response = example.allocate(TREE, cid)
            assert response.allocated, (cid, response.message)
            assert response.preempted_ids == preempted, cid
        else:
            assert example.deallocate(TREE, cid)
        state = example.tree_state(TREE)
        charged = {c: node for node, s in state.items() for c in s["consumers"]}
        assert charged == placements, cid
        for c, node in placements.items():
            assert example.allocated_node(TREE, c) == node
            assert example.is_allocated(TREE, c)
        allocated = {node: s["allocated"]["cpu"] for node, s in state.items()}
        assert allocated == {node: nonzero.get(node, 0) for node in state}, cid
    assert example.dump(TREE) == FINAL_DUMP


def test_preempted_consumers_are_no_longer_allocated(example: QuotaManager) -> None:
    for operation, cid, *_ in STEPS:
        (example.allocate if operation == "allocate" else example.deallocate)(TREE, cid)
    for gone in "abef":
        assert not example.is_allocated(TREE, gone)
        assert example.allocated_node(TREE, gone) is None


def test_the_dump_of_the_empty_example_tree_lists_every_node_in_mcad_format(
    example: QuotaManager,
) -> None:
    lines = example.dump(TREE).splitlines()
    assert lines[0] == "QuotaTree ExampleTree: "
    assert lines[1] == "|A: isHard=false; quota=[10]; allocated=[0]; consumers={ }"
    assert lines[2] == "--|B: isHard=false; quota=[2]; allocated=[0]; consumers={ }"
    assert lines[7] == "------|K: isHard=false; quota=[1]; allocated=[0]; consumers={ }"
    assert len(lines) == 15


def _cli(*argv: str) -> tuple[int, str]:
    parser = argparse.ArgumentParser(prog="quotactor")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["quotatree", *argv])
    out = io.StringIO()
    code = args.func(args, out)
    assert isinstance(code, int)
    return code, out.getvalue()


def test_the_cli_replays_the_shipped_example_in_file_name_order() -> None:
    code, text = _cli(str(EXAMPLES / "ExampleTree.json"),
                      "--consumers", str(EXAMPLES / "consumers"))
    assert code == 0
    headlines = [line for line in text.splitlines() if line.startswith("Allocating")]
    assert [h.split()[2] for h in headlines] == list("abcdefghij")
    assert headlines[3] == (
        "Allocating consumer d (cd.json): on node N; moved c H->C, a N->C, b N->H"
    )
    assert headlines[5].startswith("Allocating consumer f (cf.json): refused: Failed to allocate")
    assert headlines[8] == "Allocating consumer i (ci.json): on node A; preempted a, c, e"
    assert text.startswith("Initial tree:\nQuotaTree ExampleTree: \n|A: isHard=false;")


def test_the_cli_json_format_prints_one_tree_state_per_step() -> None:
    code, text = _cli(str(EXAMPLES / "ExampleTree.json"),
                      "--consumers", str(EXAMPLES / "consumers"), "--format", "json")
    assert code == 0
    steps = [json.loads(line) for line in text.splitlines()]
    assert len(steps) == 11
    assert steps[0]["step"] == "initial"
    last = steps[-1]
    assert (last["consumer"], last["allocated"], last["node"]) == ("j", True, "B")
    assert last["tree"]["A"]["allocated"] == {"cpu": 10}
    assert steps[7]["preempted"] == [] and steps[9]["preempted"] == ["a", "c", "e"]


@pytest.mark.parametrize("problem", ["missing tree", "bad consumer"])
def test_the_cli_reports_unreadable_input_and_exits_1(
    problem: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    consumers = tmp_path / "consumers"
    consumers.mkdir()
    tree = EXAMPLES / "ExampleTree.json"
    if problem == "missing tree":
        tree = tmp_path / "nope.json"
    else:
        (consumers / "x.json").write_text('{"kind": "Nope"}')
    code, text = _cli(str(tree), "--consumers", str(consumers))
    assert code == 1
    assert text == ""
    assert "quotatree:" in capsys.readouterr().err

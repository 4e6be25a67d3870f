"""The scheduler's modules import each other without a cycle, type-only imports included.

A cycle among them means no module can be read, tested or changed on its own: before issue 21's
"house" step, partition, cycle, booking and lifecycle (and the contention steps) all imported
each other, the procedures reaching back for `Partition` under `TYPE_CHECKING`. The graph is
read from the source, so imports hidden under `if TYPE_CHECKING:` or inside functions count.

One two-way reference is part of the data model and allowed: an application knows its queue
and a queue its applications. Both sides import the other for annotations only, and the test
holds them to that.
"""

from __future__ import annotations

import ast
from pathlib import Path

import quotactor.scheduler

PACKAGE = "quotactor.scheduler"
SOURCE = Path(quotactor.scheduler.__file__).parent
TYPE_ONLY_PAIR = (f"{PACKAGE}.application", f"{PACKAGE}.queue")

Graph = dict[str, dict[str, bool]]
"""module -> {imported scheduler module: True if only under `if TYPE_CHECKING:`}."""


class _Imports(ast.NodeVisitor):
    def __init__(self) -> None:
        self.found: dict[str, bool] = {}
        self._type_only = 0

    def visit_If(self, node: ast.If) -> None:
        guarded = isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
        self._type_only += guarded
        for child in node.body:
            self.visit(child)
        self._type_only -= guarded
        for child in node.orelse:
            self.visit(child)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module == PACKAGE:
            self._add(*(f"{PACKAGE}.{alias.name}" for alias in node.names))
        elif node.module is not None and node.module.startswith(PACKAGE + "."):
            self._add(node.module)

    def visit_Import(self, node: ast.Import) -> None:
        self._add(*(a.name for a in node.names if a.name.startswith(PACKAGE + ".")))

    def _add(self, *modules: str) -> None:
        for module in modules:
            self.found[module] = self.found.get(module, True) and self._type_only > 0


def import_graph() -> Graph:
    paths = {f"{PACKAGE}.{p.stem}": p for p in SOURCE.glob("*.py") if p.stem != "__init__"}
    graph: Graph = {}
    for name, path in paths.items():
        visitor = _Imports()
        visitor.visit(ast.parse(path.read_text(encoding="utf-8")))
        graph[name] = {m: t for m, t in visitor.found.items() if m in paths and m != name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path that starts and ends at the same module, or None."""
    done: set[str] = set()
    stack: list[str] = []

    def visit(module: str) -> list[str] | None:
        stack.append(module)
        for target in sorted(graph[module]):
            if target in stack:
                return [*stack[stack.index(target):], target]
            if target not in done:
                cycle = visit(target)
                if cycle is not None:
                    return cycle
        stack.pop()
        done.add(module)
        return None

    for module in sorted(graph):
        if module not in done:
            cycle = visit(module)
            if cycle is not None:
                return cycle
    return None


def test_the_graph_is_read_from_the_source() -> None:
    graph = import_graph()
    assert graph[f"{PACKAGE}.partition"][f"{PACKAGE}.cycle"] is False
    assert graph[f"{PACKAGE}.context"][f"{PACKAGE}.accounting"] is True  # under TYPE_CHECKING
    assert f"{PACKAGE}.views" in graph[f"{PACKAGE}.scheduler"]  # `from package import module`


def test_a_cycle_is_found_when_there_is_one() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_scheduler_modules_import_each_other_without_a_cycle() -> None:
    graph = {module: set(targets) for module, targets in import_graph().items()}
    application, queue = TYPE_ONLY_PAIR
    graph[queue].discard(application)
    assert find_cycle(graph) is None


def test_application_and_queue_know_each_other_for_annotations_only() -> None:
    graph = import_graph()
    application, queue = TYPE_ONLY_PAIR
    assert graph[application].get(queue, True) is True
    assert graph[queue].get(application, True) is True

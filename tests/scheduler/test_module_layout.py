"""The scheduler's modules import each other without a cycle, type-only imports included.

A cycle among them means no module can be read, tested or changed on its own: before issue 21's
"house" step, partition, cycle, booking and lifecycle (and the contention steps) all imported
each other, the procedures reaching back for `Partition` under `TYPE_CHECKING`. The graph is
read from the source, so imports hidden under `if TYPE_CHECKING:` or inside functions count.

The modules are grouped by idea into subpackages (objects, placement, booking, preemption,
partition, views) and the subpackages too import each other without a cycle: objects at the
bottom, then placement, booking, preemption, partition, views, and the `Scheduler` facade on top.

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
TYPE_ONLY_PAIR = (f"{PACKAGE}.objects.application", f"{PACKAGE}.objects.queue")

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
        module = node.module
        if module is not None and (module == PACKAGE or module.startswith(PACKAGE + ".")):
            # `from package import module` names a module; names that are not modules drop out
            # when the graph keeps only the package's modules
            self._add(module, *(f"{module}.{alias.name}" for alias in node.names))

    def visit_Import(self, node: ast.Import) -> None:
        self._add(*(a.name for a in node.names if a.name.startswith(PACKAGE + ".")))

    def _add(self, *modules: str) -> None:
        for module in modules:
            self.found[module] = self.found.get(module, True) and self._type_only > 0


def import_graph() -> Graph:
    paths = {
        ".".join((PACKAGE, *p.relative_to(SOURCE).with_suffix("").parts)): p
        for p in SOURCE.rglob("*.py")
        if p.stem != "__init__"
    }
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
    partition = graph[f"{PACKAGE}.partition.partition"]
    assert partition[f"{PACKAGE}.partition.cycle"] is False
    context = graph[f"{PACKAGE}.booking.context"]
    assert context[f"{PACKAGE}.booking.accounting"] is True  # under TYPE_CHECKING
    # `from package import module`
    assert f"{PACKAGE}.views.views" in graph[f"{PACKAGE}.scheduler"]


def test_a_cycle_is_found_when_there_is_one() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_scheduler_modules_import_each_other_without_a_cycle() -> None:
    graph = {module: set(targets) for module, targets in import_graph().items()}
    application, queue = TYPE_ONLY_PAIR
    graph[queue].discard(application)
    assert find_cycle(graph) is None


def idea(module: str) -> str:
    """The subpackage a module belongs to, or the module itself when it lies at the top."""
    parts = module.split(".")
    return ".".join(parts[:3])


def test_the_subpackages_import_each_other_without_a_cycle() -> None:
    ideas: dict[str, set[str]] = {}
    for module, targets in import_graph().items():
        ideas.setdefault(idea(module), set()).update(idea(t) for t in targets)
    for name, targets in ideas.items():
        targets.discard(name)
        for target in targets:
            ideas.setdefault(target, set())
    assert find_cycle(ideas) is None


def test_application_and_queue_know_each_other_for_annotations_only() -> None:
    graph = import_graph()
    application, queue = TYPE_ONLY_PAIR
    assert graph[application].get(queue, True) is True
    assert graph[queue].get(application, True) is True

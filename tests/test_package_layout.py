"""The package's modules import each other without a circle that crosses a package boundary.

Each package holds one idea (the scheduler's objects, the replay's inputs, the REST user group
routes...). A circle between modules of two packages ties the two ideas together: neither can
be read, tested or changed without the other. The graph is read from the source with `ast`, so
imports under `if TYPE_CHECKING:` and inside functions count. `from package import name` is an
edge to the submodule when `name` is one, else to the package's `__init__`; importing a module
is not counted as importing its parent packages (Python runs their `__init__` first, but no
author chose that).

A circle within one package is allowed only when it is listed in `CIRCLES_WITHIN_A_PACKAGE`,
with its reason; a new one, or one that grows, fails.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import quotactor

ROOT = Path(quotactor.__file__).parent

CIRCLES_WITHIN_A_PACKAGE: frozenset[frozenset[str]] = frozenset({
    # an application knows its queue and a queue its applications, for annotations only
    # (tests/scheduler/test_module_layout.py holds both sides to that)
    frozenset({"quotactor.scheduler.objects.application", "quotactor.scheduler.objects.queue"}),
    # a consumer knows the quota node that holds it and a node its consumers, for annotations
    # only (both imports sit under `if TYPE_CHECKING:`)
    frozenset({"quotactor.quotatree.consumer", "quotactor.quotatree.node"}),
})

Graph = dict[str, set[str]]


def module_names() -> dict[str, Path]:
    """Every module of the package by dotted name; a package is named by its `__init__`."""
    names: dict[str, Path] = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def imports(tree: ast.AST, modules: dict[str, Path]) -> Iterator[str]:
    """The package's modules a parsed module imports, anywhere in its body."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name in modules)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in modules:
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                yield submodule if submodule in modules else node.module


def import_graph() -> Graph:
    modules = module_names()
    graph: Graph = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        graph[name] = {m for m in imports(tree, modules) if m != name}
    return graph


def package_of(module: str, graph_modules: dict[str, Path]) -> str:
    """The package a module belongs to: itself for a package's `__init__`, else its parent."""
    if graph_modules[module].name == "__init__.py":
        return module
    return module.rpartition(".")[0]


def circles(graph: Graph) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(graph.get(module, ())):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def test_circles_are_found() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert circles(graph) == [frozenset({"a", "b", "c"})]
    assert circles({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def test_the_graph_is_read_from_the_source() -> None:
    graph = import_graph()
    # `from package import module` is an edge to the module, not to the package
    assert "quotactor.scheduler.views.views" in graph["quotactor.scheduler.scheduler"]
    assert "quotactor.scheduler.views" not in graph["quotactor.scheduler.scheduler"]
    # a package's `__init__` imports what it re-exports
    assert "quotactor.scheduler.scheduler" in graph["quotactor.scheduler"]


def test_no_import_circle_crosses_a_package_boundary() -> None:
    modules = module_names()
    crossing = {circle: sorted({package_of(m, modules) for m in circle})
                for circle in circles(import_graph())}
    assert {c: p for c, p in crossing.items() if len(p) > 1} == {}


def test_circles_within_a_package_are_the_listed_ones() -> None:
    assert set(circles(import_graph())) <= CIRCLES_WITHIN_A_PACKAGE

"""The modules of `quotactor.actors` import each other without a cycle.

Every import counts, wherever it stands (those only for type checking and those inside a
function too): a cycle means two modules that cannot be read, changed or tested one without the
other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import quotactor.actors

PACKAGE = "quotactor.actors"
HERE = Path(quotactor.actors.__file__).resolve().parent


def imports_within(package: str, directory: Path) -> dict[str, set[str]]:
    """Each module of the package (`__init__` for the package itself) and the modules of the
    same package it imports."""
    modules = {path.stem for path in directory.glob("*.py")}
    graph: dict[str, set[str]] = {}
    for path in directory.glob("*.py"):
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module == package:
                names = [f"{package}.{alias.name}" if alias.name in modules else package
                         for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            else:
                continue
            for name in names:
                if name == package:
                    found.add("__init__")
                elif name.startswith(package + "."):
                    module = name[len(package) + 1:].split(".")[0]
                    if module in modules:
                        found.add(module)
        found.discard(path.stem)
        graph[path.stem] = found
    return graph


def a_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of `graph` (its modules in order, the first again at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for imported in sorted(graph.get(module, ())):
            if state.get(imported) == 1:
                return [*path[path.index(imported):], imported]
            if imported not in state and (cycle := visit(imported)) is not None:
                return cycle
        path.pop()
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state and (cycle := visit(module)) is not None:
            return cycle
    return None


def test_the_actor_modules_import_each_other_without_a_cycle() -> None:
    graph = imports_within(PACKAGE, HERE)
    assert {"runtime", "messages", "manager", "user_tracker", "group_tracker"} <= set(graph)
    assert graph["runtime"] == set()
    assert a_cycle(graph) is None, a_cycle(graph)


def test_a_cycle_through_a_type_checking_import_is_found(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("from pkg.b import B\n")
    (tmp_path / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import A\n")
    (tmp_path / "c.py").write_text("import pkg.a\n")
    graph = imports_within("pkg", tmp_path)
    assert graph == {"a": {"b"}, "b": {"a"}, "c": {"a"}}
    assert a_cycle(graph) == ["a", "b", "a"]
    assert a_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None

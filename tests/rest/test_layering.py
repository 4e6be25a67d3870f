"""The dependency runs one way: the web layer imports the scheduler and the managers, never
the reverse (not even lazily inside a method)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import quotactor

ROOT = Path(quotactor.__file__).parent
BELOW_THE_WEB = [*sorted((ROOT / "scheduler").rglob("*.py")), ROOT / "ugm.py",
                 *sorted((ROOT / "core").glob("*.py")), *sorted((ROOT / "actors").glob("*.py"))]


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
    return names


@pytest.mark.parametrize("path", BELOW_THE_WEB, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_scheduler_and_the_managers_never_import_the_web_layer(path: Path) -> None:
    assert [n for n in _imports(path) if n == "quotactor.rest" or n.startswith(
        ("quotactor.rest.", "fastapi", "starlette", "uvicorn"))] == []


def test_serve_refuses_what_it_cannot_serve() -> None:
    from quotactor.rest import serve

    with pytest.raises(TypeError, match="Scheduler or a UserGroupManager"):
        serve({"default": None})  # type: ignore[arg-type]

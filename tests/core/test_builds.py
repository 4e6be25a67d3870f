"""The two builds of the core's hot modules: compiled by mypyc at install (where a C compiler is
present) or pure Python; the import reports which runs, takes the pure one when the compiled one
is stale or incomplete, and both pass the core and actor tests.
"""

from __future__ import annotations

import importlib.machinery
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from quotactor import core
from quotactor.core.native import COMPILED, MANIFEST, source_digest, why_not_compiled

CORE = Path(core.__file__).resolve().parent
REPO = Path(__file__).resolve().parents[2]


def test_the_build_that_runs_is_the_one_reported() -> None:
    files = [str(sys.modules[f"quotactor.core.{name}"].__file__) for name in COMPILED]
    extension = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    if core.compiled:
        assert all(f.endswith(extension) for f in files), files
        assert core.build_note == "compiled with mypyc"
    else:
        assert all(f.endswith(".py") for f in files), files
        assert core.build_note.startswith("pure Python: ")
    if os.environ.get("QUOTACTOR_PURE", "") not in ("", "0"):
        assert not core.compiled
        assert core.build_note == "pure Python: QUOTACTOR_PURE is set"


@pytest.fixture
def sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the compiled modules' sources, without a build."""
    monkeypatch.delenv("QUOTACTOR_PURE", raising=False)
    for name in COMPILED:
        (tmp_path / f"{name}.py").write_bytes((CORE / f"{name}.py").read_bytes())
    return tmp_path


def _build(directory: Path) -> None:
    """What the build leaves: the manifest and an extension module beside each source (empty
    files: the choice looks at the files, as the import system does, before importing)."""
    (directory / MANIFEST).write_text(json.dumps(
        {name: source_digest(directory / f"{name}.py") for name in COMPILED}))
    for name in COMPILED:
        (directory / f"{name}{importlib.machinery.EXTENSION_SUFFIXES[0]}").write_bytes(b"")


def test_without_a_build_the_sources_run(sources: Path) -> None:
    assert "not compiled at install" in str(why_not_compiled(sources))


def test_a_complete_fresh_build_is_taken(sources: Path) -> None:
    _build(sources)
    assert why_not_compiled(sources) is None


def test_a_module_missing_from_the_build_means_all_pure(sources: Path) -> None:
    _build(sources)
    next(sources.glob(f"{COMPILED[-1]}.*.so")).unlink()
    assert why_not_compiled(sources) == f"{COMPILED[-1]} was not compiled"


def test_an_edited_source_is_not_shadowed_by_its_stale_build(sources: Path) -> None:
    _build(sources)
    edited = sources / "queue_tracker.py"
    edited.write_text(edited.read_text() + "\n# edited after the build\n")
    assert "queue_tracker.py changed since it was compiled" in str(why_not_compiled(sources))


@pytest.mark.parametrize(("value", "pure"), [("", False), ("0", False), ("1", True),
                                             ("yes", True)])
def test_quotactor_pure_forces_the_sources(
    sources: Path, monkeypatch: pytest.MonkeyPatch, value: str, pure: bool,
) -> None:
    _build(sources)
    monkeypatch.setenv("QUOTACTOR_PURE", value)
    assert why_not_compiled(sources) == ("QUOTACTOR_PURE is set" if pure else None)


@pytest.mark.skipif(not core.compiled, reason="the pure build is the one this suite runs on")
@pytest.mark.timeout(600)
def test_the_pure_build_passes_the_core_and_actor_tests() -> None:
    """The suite runs on the compiled build; this runs the core and actor tests again on the
    pure one (as a user without a C compiler gets it), among them the fault-injection tests
    that need every core line to be Python (see tests/actors/test_faults.py)."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/core",
         "tests/actors", "tests/test_cli_entry.py"],
        cwd=REPO, env={**os.environ, "QUOTACTOR_PURE": "1"}, capture_output=True, text=True,
        timeout=580, check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]

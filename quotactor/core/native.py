"""Which build of the core's hot modules runs: the mypyc-compiled one, or the Python source.

`pip install` compiles the modules in `COMPILED` with mypyc when a C compiler and the Python
headers are present (see `setup.py`), and writes `_compiled.json` beside them: the SHA-256 of
each source it compiled. A compiled module is then a `.so` next to its `.py`, and Python's
import system would always take the `.so`, even after the `.py` was edited (an editable install
compiles in place). So `quotactor.core` imports these modules itself, before anything else can,
and takes the compiled ones only when all of them are there, import, and were built from the
sources that are there now; otherwise it executes every one of them from its `.py`, all or
nothing (compiled modules call each other directly, so a mix is never loaded). Setting
`QUOTACTOR_PURE=1` in the environment forces the Python source (and, at install, skips the
compilation). `quotactor --version` says which runs, and why.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import json
import os
import sys
from pathlib import Path

__all__ = ["COMPILED", "MANIFEST", "load_core", "pure_requested", "source_digest",
           "why_not_compiled"]

COMPILED = ("resources", "journal", "queue_path", "limits", "intake", "queue_tracker", "tracker",
            "routing", "reference")
"""The compiled modules, each after those it imports (the order they are loaded in)."""

MANIFEST = "_compiled.json"
"""Written by the build next to the compiled modules: {module: SHA-256 of its source}."""


def pure_requested() -> bool:
    """True when `QUOTACTOR_PURE` is set to anything but empty or 0."""
    return os.environ.get("QUOTACTOR_PURE", "") not in ("", "0")


def source_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_core(package: str, directory: Path) -> tuple[bool, str]:
    """Import the modules of `COMPILED` (in `directory`) into `sys.modules` as submodules of
    `package`, compiled or pure (see above).

    Returns (compiled, a one-line note saying which build runs and why).
    """
    reason = why_not_compiled(directory)
    if reason is None:
        try:
            for name in COMPILED:
                importlib.import_module(f"{package}.{name}")
        except ImportError as exc:
            reason = f"the compiled build does not import ({exc})"
            for name in COMPILED:
                sys.modules.pop(f"{package}.{name}", None)
        else:
            return True, "compiled with mypyc"
    for name in COMPILED:
        _exec_source(package, name, directory / f"{name}.py")
    return False, f"pure Python: {reason}"


def why_not_compiled(directory: Path) -> str | None:
    """Why the compiled build in `directory` must not run, or None when it may.

    Looks at the files only, as the import system would: an extension module beside a source
    file is what `import` takes.
    """
    if pure_requested():
        return "QUOTACTOR_PURE is set"
    try:
        built = json.loads((directory / MANIFEST).read_text())
    except FileNotFoundError:
        return "not compiled at install (no C compiler or Python headers, or QUOTACTOR_PURE)"
    except (OSError, ValueError) as exc:
        return f"{MANIFEST} unreadable ({exc})"
    for name in COMPILED:
        if not any((directory / f"{name}{suffix}").is_file()
                   for suffix in importlib.machinery.EXTENSION_SUFFIXES):
            return f"{name} was not compiled"
        if built.get(name) != source_digest(directory / f"{name}.py"):
            return (f"{name}.py changed since it was compiled (run `pip install -e .` again to"
                    " recompile)")
    return None


def _exec_source(package: str, name: str, source: Path) -> None:
    """Execute `source` as `package.name`, whatever compiled file lies beside it."""
    fullname = f"{package}.{name}"
    loader = importlib.machinery.SourceFileLoader(fullname, str(source))
    spec = importlib.util.spec_from_loader(fullname, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[fullname] = module
    try:
        loader.exec_module(module)
    except BaseException:
        del sys.modules[fullname]
        raise
    setattr(sys.modules[package], name, module)

"""Build hook: compile the core's hot modules with mypyc where a C compiler is present.

Everything else about the package is in `pyproject.toml`. When a build runs (a wheel, an
editable install), the modules listed in `quotactor/core/native.py` are compiled with mypyc if
a C compiler and the Python headers work and `QUOTACTOR_PURE` is not set; otherwise the package
installs as pure Python, silently (a line on the build log says why). Either way the `.py`
sources ship, and `quotactor.core` chooses at import (see `native.py`): a compiled build
records the digest of each source it compiled in `quotactor/core/_compiled.json`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from setuptools import setup

HERE = Path(__file__).resolve().parent
CORE = HERE / "quotactor" / "core"
BUILDS = {"build", "build_ext", "bdist_wheel", "editable_wheel", "develop", "install"}


def _native() -> Any:
    """`quotactor/core/native.py` on its own (the package's dependencies are not installed)."""
    spec = importlib.util.spec_from_file_location("_quotactor_native", CORE / "native.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _compiler_works() -> str | None:
    """None when the C compiler compiles a file that includes Python.h, else why not."""
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC")  # as setuptools picks it
    if not cc:
        return "no C compiler configured for this Python"
    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp, "probe.c")
        probe.write_text("#include <Python.h>\nint probe(void) { return 0; }\n")
        command = [*shlex.split(cc), f"-I{sysconfig.get_paths()['include']}", "-c", str(probe),
                   "-o", str(Path(tmp, "probe.o"))]
        try:
            done = subprocess.run(command, capture_output=True, timeout=120, check=False)
        except (OSError, subprocess.SubprocessError) as exc:
            return f"C compiler {cc!r} does not run ({exc})"
    if done.returncode != 0:
        return f"C compiler {cc!r} cannot compile against Python.h"
    return None


def _extensions() -> list[Any]:
    if not BUILDS & set(sys.argv[1:]):
        return []  # metadata only (egg_info, dist_info): nothing to compile
    native = _native()
    manifest = CORE / native.MANIFEST
    manifest.unlink(missing_ok=True)
    reason = "QUOTACTOR_PURE is set" if native.pure_requested() else _compiler_works()
    if reason is None:
        try:
            from mypyc.build import mypycify
        except ImportError:
            reason = "mypyc is not installed"
    if reason is not None:
        print(f"quotactor: installing the pure-Python core ({reason})", file=sys.stderr)
        return []
    sources = [CORE / f"{name}.py" for name in native.COMPILED]
    extensions: list[Any] = mypycify(
        # imported modules (the pure rest of the package, its dependencies) are read for their
        # types only: the build environment does not have the dependencies installed
        ["--follow-imports=silent", "--ignore-missing-imports",
         *(str(path.relative_to(HERE)) for path in sources)],
        opt_level="3", group_name="quotactor.core._mypyc",
    )
    for extension in extensions:
        # a compiler that compiles the probe but fails here (a linker missing, say) leaves the
        # build incomplete, with a warning, not the install failed: `native.py` then finds a
        # module missing and runs the sources
        extension.optional = True
    manifest.write_text(json.dumps(
        {name: native.source_digest(CORE / f"{name}.py") for name in native.COMPILED},
        indent=1,
    ) + "\n")
    return extensions


setup(ext_modules=_extensions())

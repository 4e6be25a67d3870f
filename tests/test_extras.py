"""The core install is the engine: the web stack, plotting, the HTTP client and Ray are extras,
and a command whose extra is missing says in one line which one to install."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from quotactor.cli import EXTRA_OF_MODULE

ROOT = Path(__file__).resolve().parent.parent

# A meta path finder that makes the named top-level modules (and their submodules) fail to
# import, as they would where their extra is not installed.
BLOCKER = textwrap.dedent("""
    import importlib.abc, sys
    BLOCKED = set(sys.argv[1].split(","))

    class Block(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, Block())
""")


def _python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=50, cwd=ROOT)


def test_the_engine_imports_no_web_plotting_or_client_module() -> None:
    code = textwrap.dedent("""
        import sys
        import quotactor, quotactor.scheduler, quotactor.elastic, quotactor.quotatree
        import quotactor.sim, quotactor.sweep, quotactor.kueue
        print(" ".join(sorted(m for m in sys.modules if m.partition(".")[0] in sys.argv[1:])))
    """)
    run = _python(code, *EXTRA_OF_MODULE)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == ""


def test_the_engine_runs_with_every_extra_missing() -> None:
    code = BLOCKER + textwrap.dedent("""
        from quotactor import UserGroup, UserGroupManager
        with UserGroupManager.start() as ugm:
            assert ugm.increase_tracked_resource("root.a", "app-1", {"vcore": 1000},
                                                 UserGroup("sue", ["dev"]))
        print("ok")
    """)
    run = _python(code, ",".join(EXTRA_OF_MODULE))
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "ok"


SERVE = "fastapi,uvicorn,starlette,pydantic,anyio"
SLOW = pytest.mark.slow  # a subprocess each: the fast loop keeps the first case only


@pytest.mark.parametrize(("blocked", "argv", "extra"), [
    (SERVE, ["serve", "--config", "queues.yaml"], "serve"),
    pytest.param(SERVE, ["serve", "--help"], "serve", marks=SLOW),
    pytest.param("matplotlib", ["demo", "--jobs", "10"], "sim", marks=SLOW),
    pytest.param("matplotlib", ["simulate", "--workload", "synthetic:jobs=5", "--nodes", "1",
                                "--node-vcore", "4", "--config", "queues.yaml"], "sim",
                 marks=SLOW),
    pytest.param("httpx", ["simulate", "--workload", "synthetic:jobs=5", "--nodes", "1",
                           "--node-vcore", "4", "--target", "http://127.0.0.1:9",
                           "--no-plots"], "client", marks=SLOW),
    pytest.param("httpx", ["import", "yunikorn", "http://127.0.0.1:9"], "client", marks=SLOW),
    pytest.param("ray", ["sweep", "nasa-sweep.yaml", "--ray", "--no-plots"], "ray", marks=SLOW),
])
def test_a_command_whose_extra_is_missing_names_it_in_one_line(
        blocked: str, argv: list[str], extra: str, tmp_path: Path) -> None:
    code = BLOCKER + "from quotactor.cli import main\nsys.exit(main(sys.argv[2:]))\n"
    run = subprocess.run([sys.executable, "-c", code, blocked, *argv], capture_output=True,
                         text=True, timeout=50, cwd=tmp_path)
    assert run.returncode == 2
    assert run.stdout == ""
    lines = run.stderr.splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith(f"quotactor {argv[0]}: needs ")
    assert lines[0].endswith(f"pip install 'quotactor[{extra}]'")


def test_importing_from_files_needs_no_client(tmp_path: Path) -> None:
    code = BLOCKER + "from quotactor.cli import main\nsys.exit(main(sys.argv[2:]))\n"
    run = subprocess.run([sys.executable, "-c", code, "httpx", "import", "pods", "--help"],
                         capture_output=True, text=True, timeout=50, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("usage: quotactor import pods")


@pytest.mark.slow
def test_a_command_needing_no_extra_runs_without_them(tmp_path: Path) -> None:
    code = BLOCKER + "from quotactor.cli import main\nsys.exit(main(sys.argv[2:]))\n"
    run = subprocess.run([sys.executable, "-c", code, ",".join(EXTRA_OF_MODULE), "demo",
                          "--jobs", "50", "--no-plots", "--out", str(tmp_path / "out")],
                         capture_output=True, text=True, timeout=50, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "nasa-ipsc-demo: 50 jobs" in run.stdout


def _project() -> dict[str, object]:
    with (ROOT / "pyproject.toml").open("rb") as file:
        project: dict[str, object] = tomllib.load(file)["project"]
    return project


def _names(requirements: object) -> set[str]:
    assert isinstance(requirements, list)
    return {str(r).split(";")[0].split("[")[0].split(">")[0].split("<")[0].split("=")[0]
            .strip().lower() for r in requirements}


def test_the_core_install_holds_no_extra_and_test_pulls_every_extra() -> None:
    project = _project()
    extras = project["optional-dependencies"]
    assert isinstance(extras, dict)
    optional = {"fastapi", "uvicorn", "matplotlib", "httpx", "ray"}
    assert _names(project["dependencies"]) == {"pyyaml", "structlog", "prometheus-client"}
    assert _names(extras["serve"]) == {"fastapi", "uvicorn"}
    assert _names(extras["sim"]) == {"matplotlib"}
    assert _names(extras["client"]) == {"httpx"}
    assert _names(extras["ray"]) == {"ray"}
    assert optional.isdisjoint(_names(project["dependencies"]))
    assert extras["all"] == ["quotactor[serve,sim,client,ray]"]
    assert "quotactor[all,docs]" in extras["test"]
    assert set(EXTRA_OF_MODULE.values()) <= set(extras)

"""The suite's leak check (`no_leaks_from_module` in tests/conftest.py) fails the module that
leaves threads or actors running, naming them, and passes one that stops what it started.

Each case runs a small test module in a pytest of its own (a subprocess, so that what it leaves
running is not left in this one) under a copy of the suite's conftest; where the leftovers never
end, the copy's settling wait is shortened, since the full wait would only make the test slow.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CONFTEST = Path(__file__).with_name("conftest.py")


def run_module(tmp_path: Path, body: str, settle: float | None = None
               ) -> subprocess.CompletedProcess[str]:
    """Run `body` as the only test module under the suite's conftest (whose leftovers get
    `settle` seconds to end, if given, instead of the suite's wait)."""
    conftest = CONFTEST.read_text(encoding="utf-8")
    if settle is not None:
        assert "\nSETTLE_SECONDS = " in conftest
        conftest = conftest.replace("\nSETTLE_SECONDS = ", f"\nSETTLE_SECONDS = {settle}  # ", 1)
    (tmp_path / "conftest.py").write_text(conftest, encoding="utf-8")
    (tmp_path / "test_module.py").write_text(body, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_module.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=50, check=False,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})  # no plugin is needed


def test_a_module_that_leaves_a_thread_running_fails_naming_the_thread(tmp_path: Path) -> None:
    ran = run_module(tmp_path, """
import threading

never = threading.Event()


def test_starts_a_thread_and_forgets_it() -> None:
    threading.Thread(target=never.wait, name="left-behind", daemon=True).start()


def test_another() -> None:
    pass
""", settle=0.5)
    assert ran.returncode != 0, ran.stdout
    assert "2 passed, 1 error" in ran.stdout
    assert "test_module.py left running after its tests: thread 'left-behind'" in ran.stdout


def test_a_module_that_leaves_a_manager_running_fails_naming_its_actors(tmp_path: Path) -> None:
    ran = run_module(tmp_path, """
from quotactor.ugm import UserGroupManager


def test_starts_a_manager_and_forgets_it() -> None:
    UserGroupManager.start(timeout=5.0)
""", settle=0.5)
    assert ran.returncode != 0, ran.stdout
    assert "1 live ManagerActor actor(s)" in ran.stdout
    assert "thread 'quotactor-manager-" in ran.stdout


def test_a_module_that_stops_what_it_started_passes(tmp_path: Path) -> None:
    ran = run_module(tmp_path, """
import threading
from concurrent.futures import ThreadPoolExecutor

from quotactor.ugm import UserGroupManager


def test_stops_its_manager() -> None:
    UserGroupManager.start(timeout=5.0).stop()


def test_lets_its_pool_end_without_waiting_for_it() -> None:
    pool = ThreadPoolExecutor(2)
    pool.submit(threading.Event().wait, 0.2)
    pool.shutdown(wait=False)
""")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "2 passed" in ran.stdout

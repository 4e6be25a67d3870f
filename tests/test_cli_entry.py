"""The bare `quotactor` command: help with no arguments, the installed version with --version
(and which build of the core runs)."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version

import pytest

from quotactor import core
from quotactor.cli import main


def test_no_arguments_prints_the_help_and_succeeds(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: quotactor")
    for command in ("demo", "simulate", "validate", "serve"):
        assert command in out


def test_version_comes_from_the_package_metadata(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == (
        f"quotactor {version('quotactor')} (core: {core.build_note})"
    )


def test_the_installed_entry_point_answers_as_a_user_sees_it() -> None:
    done = subprocess.run([sys.executable, "-m", "quotactor", "--version"], capture_output=True,
                          text=True, timeout=60, check=False)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.strip() == f"quotactor {version('quotactor')} (core: {core.build_note})"

"""A real Ctrl-C: SIGINT to the command's process group (as a terminal sends it to the command
and its pool workers) ends it with one line and exit 130, keeping the finished points."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import TINY

pytestmark = pytest.mark.timeout(120)

SLOW = TINY.replace("synthetic:jobs=40,", "synthetic:jobs=400,").replace(
    "values: [2, 0]", "values: [1, 2, 3, 4, 5, 6]")
"""16 valid points of a few seconds each: still running when the first one is in."""


def _as_foreground_job() -> None:
    """SIGINT as a terminal's foreground job has it. A test run started in the background of
    a non-interactive shell (a CI script's `cmd &`) inherits SIGINT ignored, and so would the
    command, which then rightly ignores the Ctrl-C this test sends it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.slow
def test_sigint_keeps_finished_points_and_exits_130(tmp_path: Path) -> None:
    sweep = tmp_path / "slow.yaml"
    sweep.write_text(SLOW, encoding="utf-8")
    out = tmp_path / "out"
    log = out / "points.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "quotactor", "sweep", str(sweep), "--out", str(out),
         "--workers", "2", "--no-plots"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        preexec_fn=_as_foreground_job)
    try:
        while not (log.is_file() and log.read_text(encoding="utf-8").strip()):
            try:
                proc.wait(timeout=0.1)
            except subprocess.TimeoutExpired:
                continue
            pytest.fail(f"the sweep ended before it was interrupted: {proc.stderr.read()}")
        os.killpg(proc.pid, signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr + stdout
    assert stderr.splitlines()[-1].startswith("quotactor sweep: interrupted; finished points")
    kept = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    rows = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    assert kept, "no finished point was kept"
    assert len(kept) < 16, "the sweep ran to its end despite SIGINT"
    assert len(rows) == len(kept)

"""The runtime's mailbox protocol, model-checked: `mailbox.pml` (Promela) beside this file models
an actor's inbox, claim and stop flag as the runtime changes them (invariants 1, 3, 4 and 8 of
docs/concurrency.md), and spin explores every interleaving of two senders and a stop.

Needs spin (Debian: `apt-get install spin`) and a C compiler; skipped without them.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

MODEL = Path(__file__).with_name("mailbox.pml")
SPIN, CC = shutil.which("spin"), shutil.which("cc") or shutil.which("gcc")
pytestmark = pytest.mark.skipif(SPIN is None or CC is None,
                                reason="needs spin and a C compiler")


def verified(model: str, directory: Path) -> str:
    """spin's report on `model`: every interleaving explored, assertions and end states
    checked."""
    assert SPIN is not None and CC is not None
    (directory / "model.pml").write_text(model)
    subprocess.run([SPIN, "-a", "model.pml"], cwd=directory, check=True, capture_output=True,
                   timeout=60)
    subprocess.run([CC, "-O2", "-DSAFETY", "-o", "pan", "pan.c"], cwd=directory, check=True,
                   capture_output=True, timeout=120)
    done = subprocess.run(["./pan"], cwd=directory, capture_output=True, text=True, timeout=60)
    return done.stdout


@pytest.mark.timeout(240)
def test_the_mailbox_keeps_one_holder_and_answers_every_message(tmp_path: Path) -> None:
    report = verified(MODEL.read_text(), tmp_path)
    assert "errors: 0" in report, report


@pytest.mark.timeout(240)
def test_a_release_apart_from_its_look_at_the_inbox_strands_a_message(tmp_path: Path) -> None:
    """The model has teeth: a holder that finds the inbox empty in one step and lets go in
    another (the race the mailbox lock closes) leaves a message with nobody to run it."""
    model = MODEL.read_text()
    looked = "       :: empty(inbox) -> claimed = false; got = false"
    let_go = "     :: else -> break\n     fi\n  od\n}"
    assert looked in model and let_go in model
    mutant = (model.replace(looked, "       :: empty(inbox) -> got = false")
              .replace(let_go, "     :: else -> claimed = false; break\n     fi\n  od\n}"))
    report = verified(mutant, tmp_path)
    assert "assertion violated" in report and "errors: 0" not in report, report

"""Small pieces of the reports: number formatting, percentiles, the progress bar, credits."""

from __future__ import annotations

import io

from quotactor.sim.citation import acknowledgement, credit_lines
from quotactor.sim.fmt import duration, quantity, render_table
from quotactor.sim.progress import Progress
from quotactor.sim.stats import percentile


def test_durations_and_quantities() -> None:
    assert [duration(s) for s in (None, 0, 59, 90, 7200, 3 * 86400)] == [
        "-", "0s", "59s", "1.5m", "2.0h", "3.0d"]
    assert quantity("vcore", 64000) == "64" and quantity("vcore", 500) == "0.5"
    assert quantity("memory", 2**31) == "2.0Gi" and quantity("gpu", 2) == "2"


def test_table_alignment() -> None:
    table = render_table(("NAME", "N"), [["a", "1"], ["long-name", "100"]])
    assert table.splitlines() == ["NAME         N", "a            1", "long-name  100"]


def test_nearest_rank_percentile() -> None:
    assert percentile([], 0.95) is None
    assert percentile([5.0], 0.95) == 5.0
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 0.95) == 95.0 and percentile(values, 0.5) == 50.0


def test_progress_bar_only_where_asked() -> None:
    quiet = io.StringIO()
    Progress(10, "x", stream=quiet).update(5, 0.0)  # StringIO is no terminal
    assert quiet.getvalue() == ""
    shown = io.StringIO()
    bar = Progress(10, "replay", stream=shown, enabled=True)
    bar.update(10, 86400.0)
    assert "replay [" in shown.getvalue() and "10/10 jobs ended, day 1.0" in shown.getvalue()
    bar.close()
    assert shown.getvalue().endswith("\r\033[K")


def test_trace_credit() -> None:
    header = {"Acknowledge": "Bill Nitzberg", "Computer": "Intel iPSC/860",
              "Installation": "NASA Ames Research Center"}
    lines = credit_lines(header, "/x/NASA-iPSC-1993-3.1-cln.swf.gz")
    assert lines[0].startswith("Trace: NASA-iPSC-1993-3.1-cln.swf.gz (Intel iPSC/860")
    assert lines[1] == ("Thanks to Bill Nitzberg (NASA Ames Research Center) for contributing "
                        "the log.")
    assert "Experience with using the Parallel Workloads Archive" in lines[2]
    assert credit_lines({}) == [] and acknowledgement({}) is None

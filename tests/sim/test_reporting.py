"""Small pieces of the reports: number formatting, percentiles, the progress bar, credits."""

from __future__ import annotations

import io

from quotactor.sim.fmt import (
    amount,
    axis_unit,
    duration,
    ordered,
    percent,
    quantity,
    render_table,
    short_name,
    unit_of,
)
from quotactor.sim.models.progress import Progress
from quotactor.sim.models.stats import percentile
from quotactor.sim.reports.citation import acknowledgement, credit_lines


def test_durations_and_quantities() -> None:
    assert [duration(s) for s in (None, 0, 59, 90, 7200, 3 * 86400)] == [
        "-", "0s", "59s", "1.5m", "2.0h", "3.0d"]
    assert quantity("vcore", 64000) == "64" and quantity("vcore", 500) == "0.5"
    assert quantity("memory", 2**31) == "2Gi" and quantity("gpu", 2) == "2"


def test_cores_have_at_most_one_decimal() -> None:
    assert quantity("vcore", 535_832) == "535.8"  # millicores inside
    assert [quantity("vcore", v) for v in (0, 49, 50, 1000, 128_000, 127_960.4)] == [
        "0", "0", "0.1", "1", "128", "128"]


def test_byte_resources_in_binary_units() -> None:
    assert quantity("memory", 641_758_308_335_616) == "583.7Ti"  # never the raw bytes
    assert [quantity("memory", v) for v in (512, 2**10, 300 * 2**20, 1.5 * 2**30, 2**50)] == [
        "512", "1Ki", "300Mi", "1.5Gi", "1Pi"]
    assert quantity("ephemeral-storage", 10 * 2**30) == "10Gi"
    assert quantity("hugepages-2Mi", 4 * 2**20) == "4Mi"


def test_gpus_and_other_counts_are_whole_numbers() -> None:
    assert quantity("nvidia.com/gpu", 8) == "8" and quantity("nvidia.com/gpu", 8.0) == "8"
    assert quantity("nvidia.com/gpu", None) == "-"
    assert amount("nvidia.com/gpu", 3) == "3 nvidia.com/gpu"
    assert amount("memory", 4 * 2**30) == "4Gi memory" and amount("vcore", 32000) == "32 vcore"


def test_units_names_and_order_of_resources() -> None:
    assert unit_of("vcore") == "millicores" and unit_of("memory") == "bytes"
    assert unit_of("nvidia.com/gpu") == "count"
    assert short_name("nvidia.com/gpu") == "gpu" and short_name("memory") == "memory"
    assert ordered(["nvidia.com/gpu", "memory", "pods", "vcore"]) == (
        "vcore", "memory", "nvidia.com/gpu", "pods")
    assert axis_unit("vcore", 128_000) == (1000.0, "cores")
    assert axis_unit("memory", 3 * 2**40) == (float(2**40), "memory (Ti)")
    assert axis_unit("memory", 200 * 2**30) == (float(2**30), "memory (Gi)")
    assert axis_unit("nvidia.com/gpu", 48) == (1.0, "gpu")


def test_percentages_keep_small_shares_visible() -> None:
    assert [percent(v) for v in (0.0, 0.47, 0.1, 0.025, 0.0004, 1.0)] == [
        "0%", "47%", "10%", "2.5%", "<0.1%", "100%"]


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

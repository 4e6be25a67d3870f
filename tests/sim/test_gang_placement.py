"""Placement `gang`: YuniKorn's gang scheduling in the replay.

Placeholders hold capacity until the gang is whole (the job then starts, its real asks in the
placeholders' places) or until the placeholder timeout passes (Soft: the job goes on task by
task; Hard: it is given up). Held placeholders show in the usage, never as a running job.
"""

from __future__ import annotations

import argparse
import csv
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from quotactor.core.errors import InvalidRequest
from quotactor.scheduler import Scheduler, SchedulerOptions, VirtualClock
from quotactor.scheduler.objects.gang import GangStyle
from quotactor.sim.cli import add_parser
from quotactor.sim.inputs.cluster import ClusterSpec, uniform_cluster
from quotactor.sim.inputs.jobfile import parse_jsonl
from quotactor.sim.inputs.jobs import Workload
from quotactor.sim.models.outcomes import JobOutcome, JobState
from quotactor.sim.models.packing import Packing
from quotactor.sim.models.replay import Placement, ReplayOptions, replay
from quotactor.sim.models.result import SimulationResult
from quotactor.sim.models.usage import Series
from quotactor.sim.reports.report import build_report, write_jobs_csv
from quotactor.sim.reports.summary import format_summary

OPEN = """\
partitions:
  - name: default
    placementrules:
      - name: fixed
        value: root.all
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: all
"""

PREEMPTING = """\
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        properties: {preemption.delay: 10s}
        queues:
          - name: gold
            resources: {guaranteed: {vcore: "2"}}
          - name: silver
"""

FOUR_UNITS = uniform_cluster(4, {"vcore": "1"})


def job(job_id: str, submit: float, duration: float, tasks: int,
        queue: str = "root.all", user: str = "sue") -> str:
    return (f'{{"job_id": "{job_id}", "user": "{user}", "queue": "{queue}", "submit": {submit},'
            f' "duration": {duration}, "tasks": {tasks}}}')


@contextmanager
def replaying(workload: Workload, cluster: ClusterSpec = FOUR_UNITS, config: str = OPEN,
              placement: Placement = "gang", style: GangStyle = "Soft",
              timeout: float = 900.0, packing: Packing = "dense", reservations: bool = True
              ) -> Iterator[tuple[SimulationResult, Scheduler]]:
    """The result, and the scheduler it ran on (still up, to read its books)."""
    with Scheduler.start(config, clock=VirtualClock(workload.jobs[0].submit),
                         options=SchedulerOptions(reservations=reservations)) as scheduler:
        result = replay(scheduler, workload, cluster, ReplayOptions(
            progress=False, placement=placement, gang_style=style, gang_timeout=timeout,
            packing=packing, reservations=reservations))
        yield result, scheduler


def outcome(result: SimulationResult, job_id: str) -> JobOutcome:
    return next(o for o in result.outcomes if o.job_id == job_id)


def vcore_at(series: Series, when: float) -> int:
    """The series' vcore (millicores) from `when` on, until its next change."""
    value = 0
    for time, usage in zip(series.times, series.values, strict=True):
        if time > when:
            break
        value = usage.get("vcore", 0)
    return value


def vcore_seconds(series: Series, until: float) -> float:
    """The integral of the series' vcore up to `until`, summed step by step."""
    ends = [*series.times[1:], until]
    return sum((usage["vcore"] * (end - start) if "vcore" in usage else 0.0
                for start, end, usage in zip(series.times, ends, series.values, strict=True)),
               0.0)


def run_vcore_seconds(result: SimulationResult) -> float:
    """Every run of every job: its length times the job's vcore."""
    totals: dict[str, int] = {j.job_id: j.total.get("vcore", 0) for j in result.workload.jobs}
    return sum(((end - start) * totals[o.job_id] for o in result.outcomes
                for start, end in o.runs), 0.0)


def assert_books_balance(result: SimulationResult, scheduler: Scheduler) -> None:
    assert result.leftover == {}
    assert scheduler.applications(state="active") == []
    assert all(q.allocated == {} for q in scheduler.queues())


WAITS_FOR_ROOM = parse_jsonl([job("first", 0, 100, 2), job("gang", 10, 50, 4)])


def test_placeholders_hold_capacity_until_the_gang_is_whole_then_it_starts() -> None:
    with replaying(WAITS_FOR_ROOM) as (result, scheduler):
        gang = outcome(result, "gang")
        assert gang.state is JobState.COMPLETED
        assert (gang.start, gang.end, gang.runs) == (100, 150, ((100, 150),))
        total = result.total_series
        assert vcore_at(total, 10) == 4000, "two placeholders held beside the first job"
        assert vcore_at(total, 100) == 4000 and vcore_at(total, 150) == 0
        # capacity held without work: the placeholders' 2 vcore from 10 to 100, nothing else
        reserved = vcore_seconds(total, result.end_time) - run_vcore_seconds(result)
        assert reserved == 2000 * 90
        assert gang.partly_placed == ((10, 100),)
        placed = [a for a in scheduler.application("gang").placeholder_data]
        assert [(p.count, p.replaced, p.timed_out) for p in placed] == [(4, 4, 0)]
        assert result.preemptions.victims == 0 and result.preemptions.restarted == 0
        assert_books_balance(result, scheduler)


def test_placed_whole_the_same_job_holds_nothing_while_it_waits() -> None:
    with replaying(WAITS_FOR_ROOM, placement="whole") as (result, _):
        assert outcome(result, "gang").start == 100
        assert vcore_at(result.total_series, 10) == 2000
        assert vcore_seconds(result.total_series, result.end_time) \
            == run_vcore_seconds(result)


def test_jobs_csv_starts_a_gang_at_its_real_start(tmp_path: Path) -> None:
    with replaying(WAITS_FOR_ROOM) as (result, _), \
            write_jobs_csv(result, tmp_path).open(encoding="utf-8") as handle:
        rows = {row["job_id"]: row for row in csv.DictReader(handle)}
    assert (rows["gang"]["first_start"], rows["gang"]["final_start"]) == ("100", "100")
    assert (rows["gang"]["wait"], rows["gang"]["runs"]) == ("90", "100-150")


def test_tasks_of_different_sizes_form_task_groups_of_their_own() -> None:
    # dense packing on 2-vcore nodes: 5 tasks are asks of 2, 2 and 1 vcore
    workload = parse_jsonl([job("first", 0, 100, 4), job("gang", 10, 50, 5)])
    with replaying(workload, uniform_cluster(4, {"vcore": "2"})) as (result, scheduler):
        data = scheduler.application("gang").placeholder_data
        assert sorted((p.count, dict(p.min_resource), p.replaced) for p in data) \
            == [(1, {"vcore": 1000}, 1), (2, {"vcore": 2000}, 2)]
        assert outcome(result, "gang").start == 100
        assert vcore_at(result.total_series, 10) == 8000
        assert vcore_seconds(result.total_series, result.end_time) \
            - run_vcore_seconds(result) == 4000 * 90
        assert_books_balance(result, scheduler)


NEVER_WHOLE_IN_TIME = parse_jsonl([job("first", 0, 1000, 2), job("gang", 10, 50, 4)])


def test_a_soft_gang_that_times_out_goes_on_task_by_task() -> None:
    with replaying(NEVER_WHOLE_IN_TIME, timeout=60) as (result, scheduler):
        gang = outcome(result, "gang")
        assert gang.state is JobState.COMPLETED and (gang.start, gang.end) == (1000, 1050)
        events = scheduler.events("gang")
        assert [e.time for e in events if e.kind == "placeholder-timeout"] == [70]
        real = sorted((e.time, e.message.split()[0]) for e in events
                      if e.kind == "allocated" and "-gang-" not in e.message)
        # two real tasks placed at the timeout on the free nodes, two when the first job ended
        assert [t for t, _ in real] == [70, 70, 1000, 1000]
        assert vcore_at(result.total_series, 70) == 4000
        assert result.preemptions.victims == 0
        assert_books_balance(result, scheduler)


def test_a_hard_gang_that_times_out_is_given_up_naming_its_timeout() -> None:
    with replaying(NEVER_WHOLE_IN_TIME, style="Hard", timeout=60) as (result, scheduler):
        gang = outcome(result, "gang")
        assert gang.state is JobState.NEVER_STARTED and gang.runs == ()
        assert "gang timeout" in gang.reason and "Hard" in gang.reason
        assert "1.0m placeholder timeout" in gang.reason and "2 vcore of 4 vcore" in gang.reason
        assert outcome(result, "first").end == 1000
        assert vcore_at(result.total_series, 10) == 4000
        assert vcore_at(result.total_series, 70) == 2000, "its placeholders let go"
        reserved = vcore_seconds(result.total_series, result.end_time) \
            - run_vcore_seconds(result)
        assert reserved == 2000 * 60
        assert result.preemptions.victims == 0
        assert_books_balance(result, scheduler)


THREE_QUEUES = """\
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
        queues:
          - name: qa
          - name: qb
          - name: qc
"""


def test_the_replay_wakes_for_a_timeout_when_nothing_else_happens() -> None:
    # when "first" ends, the fairer queue's gang b takes the room: each gang then holds two of
    # its three placeholders, nothing runs, and only a's timeout can move them
    workload = parse_jsonl([job("first", 0, 50, 2, queue="root.qc"),
                            job("a", 0, 10, 3, queue="root.qa"),
                            job("b", 10, 10, 3, queue="root.qb")])
    with replaying(workload, config=THREE_QUEUES, style="Hard", timeout=300) \
            as (result, scheduler):
        a, b = outcome(result, "a"), outcome(result, "b")
        assert vcore_at(result.total_series, 50) == 4000
        assert a.state is JobState.NEVER_STARTED and "gang timeout" in a.reason
        assert a.partly_placed == ((0, 300),)
        assert (b.start, b.end) == (300, 310), "b's gang is whole once a's placeholders go"
        assert not any("deadlock" in o.reason for o in result.outcomes)
        assert_books_balance(result, scheduler)


PREEMPTED = parse_jsonl([
    job("long", 0, 100, 4, queue="root.silver"),
    job("urgent", 20, 50, 2, queue="root.gold", user="bob"),
])


def test_replaced_placeholders_are_not_preemption_victims() -> None:
    with replaying(PREEMPTED, uniform_cluster(1, {"vcore": "4"}), PREEMPTING,
                   packing="none") as (result, scheduler):
        urgent, long = outcome(result, "urgent"), outcome(result, "long")
        assert urgent.start is not None and urgent.end is not None
        assert urgent.state is JobState.COMPLETED and 30 <= urgent.start <= 45
        assert long.restarts == 1 and long.end == urgent.end + 100
        stats = result.preemptions
        assert (stats.victims, stats.restarted, stats.killed) == (1, 1, 0)
        assert dict(stats.by_user) == {"sue": 1}
        assert_books_balance(result, scheduler)


def test_a_preempted_placeholder_is_a_victim_that_loses_no_work() -> None:
    # gold may take all four nodes, so urgent preempts in silver, where only the gang's two
    # placeholders are; without reservations a waiting placeholder holds no node back
    workload = parse_jsonl([
        job("blocker", 0, 1000, 2, queue="root.gold", user="bob"),
        job("gang", 5, 50, 4, queue="root.silver"),
        job("urgent", 20, 50, 2, queue="root.gold", user="bob"),
    ])
    config = PREEMPTING.replace('vcore: "2"', 'vcore: "4"')
    with replaying(workload, config=config, packing="none", reservations=False) \
            as (result, scheduler):
        urgent, gang = outcome(result, "urgent"), outcome(result, "gang")
        assert (urgent.start, urgent.end) == (30, 80)
        stats = result.preemptions
        assert stats.victims == 2 and dict(stats.by_user) == {"sue": 2}
        assert (stats.restarted, stats.killed, stats.work_lost_core_hours) == (0, 0, 0)
        assert vcore_at(result.total_series, 30) == 4000
        # two placeholders spent, the gang cannot be whole: its timeout (armed again when
        # it next held a placeholder, at 80) lets it go on task by task
        events = scheduler.events("gang")
        assert [e.time for e in events if e.kind == "placeholder-timeout"] == [980]
        assert gang.state is JobState.COMPLETED and (gang.start, gang.end) == (1000, 1050)
        assert_books_balance(result, scheduler)


rows = st.lists(st.tuples(st.integers(0, 60), st.integers(1, 50), st.integers(1, 6),
                          st.sampled_from(["u1", "u2"])), min_size=1, max_size=12)


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jobs=rows, style=st.sampled_from(["Soft", "Hard"]), timeout=st.integers(5, 120))
def test_gangs_never_hold_more_than_the_cluster_and_every_job_ends(
        jobs: list[tuple[int, int, int, str]], style: GangStyle, timeout: int) -> None:
    workload = parse_jsonl([job(f"j{i}", submit, duration, tasks, user=user)
                            for i, (submit, duration, tasks, user)
                            in enumerate(sorted(jobs, key=lambda r: r[0]))])
    with replaying(workload, uniform_cluster(6, {"vcore": "1"}), style=style,
                   timeout=timeout) as (result, scheduler):
        assert len(result.outcomes) == len(jobs)
        assert max(v.get("vcore", 0) for v in result.total_series.values) <= 6000
        for o in result.outcomes:
            assert o.state is not JobState.REJECTED
            if o.state is JobState.COMPLETED:
                assert o.start is not None and o.start >= o.submit
        assert vcore_seconds(result.total_series, result.end_time) \
            >= run_vcore_seconds(result)
        assert result.preemptions.victims == 0
        assert_books_balance(result, scheduler)


@pytest.mark.parametrize(("field", "options"), [
    ("gang_timeout", {"gang_timeout": 0.0}),
    ("gang_timeout", {"gang_timeout": float("inf")}),
    ("gang_style", {"gang_style": "Firm"}),
])
def test_bad_gang_options_are_refused_naming_the_field(field: str,
                                                       options: dict[str, object]) -> None:
    with pytest.raises(InvalidRequest, match=field):
        ReplayOptions(**options)  # type: ignore[arg-type]


def test_the_placement_is_named_with_its_gang_settings() -> None:
    assert ReplayOptions().placement_text == "whole"
    assert ReplayOptions(placement="gang", gang_style="Hard", gang_timeout=60).placement_text \
        == "gang (Hard, placeholders time out after 1.0m)"


def quotactor(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="quotactor")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(list(argv))
    code: int = args.func(args)
    return code


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[Path, Path]:
    config, workload = tmp_path / "queues.yaml", tmp_path / "jobs.jsonl"
    config.write_text(OPEN)
    workload.write_text("\n".join([job("first", 0, 1000, 2), job("gang", 10, 50, 4)]) + "\n")
    return config, workload


def test_the_command_line_replays_hard_gangs(tmp_path: Path, inputs: tuple[Path, Path],
                                              capsys: pytest.CaptureFixture[str]) -> None:
    config, workload = inputs
    out = tmp_path / "out"
    code = quotactor("simulate", "--config", str(config), "--workload", str(workload),
                     "--nodes", "4", "--placement", "gang", "--gang-style", "Hard",
                     "--gang-timeout", "60", "--no-plots", "--out", str(out))
    assert code == 0, capsys.readouterr().err
    report = json.loads((out / "report.json").read_text())
    [given_up] = report["notCompleted"]
    assert given_up["jobId"] == "gang" and "gang timeout" in given_up["reason"]
    assert report["leftoverUsage"] == {}


@pytest.mark.parametrize("argv", [("--gang-style", "Hard"), ("--gang-timeout", "60")])
def test_gang_options_need_the_gang_placement(inputs: tuple[Path, Path], argv: tuple[str, ...],
                                              capsys: pytest.CaptureFixture[str]) -> None:
    config, workload = inputs
    code = quotactor("simulate", "--config", str(config), "--workload", str(workload),
                     "--nodes", "4", *argv)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "need --placement gang" in err


def test_a_gang_timeout_of_zero_is_refused(inputs: tuple[Path, Path],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    config, workload = inputs
    with pytest.raises(SystemExit) as exited:
        quotactor("simulate", "--config", str(config), "--workload", str(workload),
                  "--nodes", "4", "--placement", "gang", "--gang-timeout", "0")
    assert exited.value.code == 2
    assert "--gang-timeout: must be more than 0 seconds" in capsys.readouterr().err


@pytest.mark.parametrize(("placement", "named"), [
    ("gang", "gang (Soft, placeholders time out after 15.0m)"), ("whole", "whole"),
    ("tasks", "tasks")])
def test_the_report_and_the_summary_name_the_placement(placement: Placement,
                                                       named: str) -> None:
    with replaying(WAITS_FOR_ROOM, placement=placement) as (result, _):
        assert build_report(result)["placement"] == named
        assert f"placement of parallel jobs: {named}\n" in format_summary(result)

"""Running sweeps: the same rows whatever the executor, resume from the output folder,
invalid combinations listed and skipped, Ctrl-C keeping what finished."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from quotactor.sweep import load_sweep, run_sweep
from quotactor.sweep import runner as runner_module
from quotactor.sweep.executors import Finished, serial_results
from quotactor.sweep.store import LOG_FILE

pytestmark = pytest.mark.timeout(240)


def _read(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def serial_rows(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, object]]:
    folder = tmp_path_factory.mktemp("serial")
    sweep = folder / "tiny.yaml"
    from .conftest import TINY

    sweep.write_text(TINY, encoding="utf-8")
    outcome = run_sweep(load_sweep(sweep), folder / "out", workers=1,
                        progress=_Sink())
    assert outcome.ran == 4 and outcome.failed == ()
    return list(outcome.rows)


class _Sink:
    """A stderr stand-in that keeps the progress lines."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def write(self, text: str) -> int:
        self.lines.extend(line for line in text.splitlines() if line)
        return len(text)

    def flush(self) -> None:
        pass


def test_rows_are_params_then_figures_in_grid_order(serial_rows: list[dict[str, object]]
                                                    ) -> None:
    assert [row["point"] for row in serial_rows] == [0, 2, 4, 6]
    first = list(serial_rows[0])
    assert first[:5] == ["point", "workload", "user_vcore", "queue_apps", "group_apps"]
    assert {"p95_wait", "never", "utilization", "fairness_users", "held_user"} <= set(first)
    assert all(row["jobs"] == 40 for row in serial_rows)
    # a looser user limit never adds time held by user limits
    by = {(row["user_vcore"], row["queue_apps"]): row for row in serial_rows}
    assert by[(16, 6)]["held_user"] <= by[(8, 6)]["held_user"]


@pytest.mark.slow
def test_the_process_pool_gives_identical_rows(tiny_sweep: Path,
                                               serial_rows: list[dict[str, object]]) -> None:
    outcome = run_sweep(load_sweep(tiny_sweep), tiny_sweep.parent / "out", workers=2,
                        progress=_Sink())
    assert list(outcome.rows) == serial_rows
    assert _read(tiny_sweep.parent / "out" / "results.jsonl") == serial_rows


@pytest.mark.slow
def test_ray_gives_identical_rows(local_ray: None, tiny_sweep: Path,
                                  serial_rows: list[dict[str, object]]) -> None:
    import ray

    assert ray.is_initialized()
    outcome = run_sweep(load_sweep(tiny_sweep), tiny_sweep.parent / "out", executor="ray",
                        progress=_Sink())
    assert outcome.ran == 4
    assert list(outcome.rows) == serial_rows
    assert ray.is_initialized()  # a Ray the caller started is left running


def test_invalid_combinations_are_listed_and_skipped(tiny_sweep: Path) -> None:
    sink = _Sink()
    outcome = run_sweep(load_sweep(tiny_sweep), tiny_sweep.parent / "out", workers=1,
                        progress=sink)
    assert [row["point"] for row in outcome.invalid] == [1, 3, 5, 7]
    assert all(row["group_apps"] == 0 for row in outcome.invalid)
    assert all("all resource limits are null" in str(row["reason"]) for row in outcome.invalid)
    assert _read(tiny_sweep.parent / "out" / "invalid.jsonl") == list(outcome.invalid)
    assert "4 invalid combinations skipped" in sink.lines[0]


def test_a_rerun_replays_only_what_the_folder_lacks(tiny_sweep: Path) -> None:
    out = tiny_sweep.parent / "out"
    spec = load_sweep(tiny_sweep)
    first = run_sweep(spec, out, workers=1, progress=_Sink())
    again = run_sweep(spec, out, workers=1, progress=_Sink())
    assert (again.ran, again.reused) == (0, 4)
    assert again.rows == first.rows
    log = out / LOG_FILE
    lines = log.read_text(encoding="utf-8").splitlines()
    # drop one finished point and cut another short, as a killed run would leave it
    log.write_text("\n".join([lines[0], lines[1], lines[2][:25]]) + "\n", encoding="utf-8")
    third = run_sweep(spec, out, workers=1, progress=_Sink())
    assert (third.ran, third.reused) == (2, 2)
    assert third.rows == first.rows


def test_a_changed_sweep_does_not_reuse_stale_results(tiny_sweep: Path) -> None:
    out = tiny_sweep.parent / "out"
    run_sweep(load_sweep(tiny_sweep), out, workers=1, progress=_Sink())
    tiny_sweep.write_text(tiny_sweep.read_text(encoding="utf-8").replace(
        'vcore: "16"}', 'vcore: "12"}'), encoding="utf-8")
    changed = run_sweep(load_sweep(tiny_sweep), out, workers=1, progress=_Sink())
    assert (changed.ran, changed.reused) == (4, 0)


def test_ctrl_c_keeps_what_finished(tiny_sweep: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*args: object, **kwargs: object) -> Iterator[Finished]:
        results = serial_results(*args, **kwargs)  # type: ignore[arg-type]
        yield next(results)
        yield next(results)
        raise KeyboardInterrupt

    monkeypatch.setattr(runner_module, "serial_results", interrupted)
    out = tiny_sweep.parent / "out"
    sink = _Sink()
    outcome = run_sweep(load_sweep(tiny_sweep), out, workers=1, progress=sink)
    assert outcome.interrupted and outcome.ran == 2
    assert [row["point"] for row in outcome.rows] == [0, 2]
    assert len((out / LOG_FILE).read_text(encoding="utf-8").splitlines()) == 2
    assert "interrupted after 2/4 points" in sink.lines[-1]
    monkeypatch.undo()
    rest = run_sweep(load_sweep(tiny_sweep), out, workers=1, progress=_Sink())
    assert (rest.ran, rest.reused) == (2, 2)


def test_progress_reports_rate_and_eta(tiny_sweep: Path) -> None:
    sink = _Sink()
    run_sweep(load_sweep(tiny_sweep), tiny_sweep.parent / "out", workers=1, progress=sink,
              progress_interval=0.0)
    assert sink.lines[0].startswith("sweep: 4 points to replay")
    assert any("points/min, ETA" in line for line in sink.lines[1:-1])
    assert sink.lines[-1].startswith("sweep: 4/4 points in")


def test_an_edited_trace_does_not_reuse_old_results(tmp_path: Path) -> None:
    from .conftest import TINY

    trace = tmp_path / "jobs.csv"
    trace.write_text("job_id,user,group,submit,duration,tasks\n"
                     "j1,u1,group-a,0,100,2\nj2,u2,group-b,10,50,4\n", encoding="utf-8")
    text = TINY.replace(
        "source: synthetic:jobs=40,users=4,groups=2,seed=3,max_tasks=8,interarrival=30,"
        "duration=300", "source: jobs.csv")
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text(text, encoding="utf-8")
    first = run_sweep(load_sweep(sweep), tmp_path / "out", workers=1, progress=_Sink())
    assert first.ran == 4 and first.failed == ()
    with trace.open("a", encoding="utf-8") as handle:
        handle.write("j3,u1,group-a,20,30,1\n")
    second = run_sweep(load_sweep(sweep), tmp_path / "out", workers=1, progress=_Sink())
    assert (second.ran, second.reused) == (4, 0)
    assert all(row["jobs"] == 3 for row in second.rows)


def test_every_point_runs_on_every_workload(tmp_path: Path) -> None:
    from .conftest import TINY

    text = TINY.replace("  - name: tiny\n", "  - name: busy\n    source: synthetic:jobs=30,"
                        "users=3,groups=2,seed=5,max_tasks=4,interarrival=10,duration=200\n"
                        "  - name: tiny\n")
    sweep = tmp_path / "two.yaml"
    sweep.write_text(text, encoding="utf-8")
    outcome = run_sweep(load_sweep(sweep), tmp_path / "out", workers=1, progress=_Sink())
    assert [(row["point"], row["workload"]) for row in outcome.rows] == [
        (0, "busy"), (2, "busy"), (4, "busy"), (6, "busy"),
        (8, "tiny"), (10, "tiny"), (12, "tiny"), (14, "tiny")]
    assert {row["jobs"] for row in outcome.rows} == {30, 40}
    assert len(outcome.invalid) == 8


@pytest.mark.slow
def test_ray_puts_each_workload_in_the_object_store_once(
        local_ray: None, tiny_sweep: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ray

    put = ray.put
    stored: list[object] = []

    def counting_put(value: object, **kwargs: object) -> object:
        stored.append(value)
        return put(value, **kwargs)

    monkeypatch.setattr(ray, "put", counting_put)
    outcome = run_sweep(load_sweep(tiny_sweep), tiny_sweep.parent / "out", executor="ray",
                        progress=_Sink())
    assert outcome.ran == 4
    # the shared setup and the one workload (packed), not one copy per task
    assert len(stored) == 2
    assert sum(isinstance(value, tuple) for value in stored) == 1

"""The sweep's replay options for preemption victims: restarted or killed, and the grace."""

from __future__ import annotations

from pathlib import Path

import pytest

from quotactor.sweep import SweepError, load_sweep, parse_sweep, run_sweep
from quotactor.sweep.grid import expand

pytestmark = pytest.mark.timeout(120)

SWEEP = """\
config:
  partitions:
    - name: default
      queues:
        - name: root
          submitacl: "*"
          properties: {preemption.delay: 10s}
          queues:
            - name: gold
              resources: {guaranteed: {vcore: "${gold}"}}
            - name: silver
workloads:
  - name: two
    source: jobs.jsonl
cluster: {nodes: 1, resources: {vcore: "4"}}
replay: {packing: none%s}
parameters:
  gold:
    template: gold
    values: [2]
"""
JOBS = (
    '{"job_id": "long", "user": "sue", "groups": ["lab"], "queue": "root.silver", "submit": 0,'
    ' "duration": 100, "tasks": 4}\n'
    '{"job_id": "urgent", "user": "bob", "groups": ["ops"], "queue": "root.gold",'
    ' "submit": 20, "duration": 50, "tasks": 2}\n')


class _Quiet:
    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


def _row(tmp_path: Path, extra: str) -> dict[str, object]:
    (tmp_path / "jobs.jsonl").write_text(JOBS, encoding="utf-8")
    sweep = tmp_path / f"sweep{len(extra)}.yaml"
    sweep.write_text(SWEEP % extra, encoding="utf-8")
    outcome = run_sweep(load_sweep(sweep), tmp_path / f"out{len(extra)}", workers=1,
                        progress=_Quiet())
    (row,) = outcome.rows
    return dict(row)


def test_killed_victims_never_finish_restarted_ones_do(tmp_path: Path) -> None:
    restarted = _row(tmp_path, "")
    killed = _row(tmp_path, ", kill_preempted: true")
    assert restarted["preemptions"] == killed["preemptions"] == 1
    assert (restarted["never"], killed["never"]) == (0, 1)
    assert killed["makespan"] < restarted["makespan"]


def test_the_options_change_a_points_identity_only_when_set(tmp_path: Path) -> None:
    def key(extra: str) -> str:
        return expand(parse_sweep(SWEEP % extra, folder=tmp_path)).points[0].key

    (tmp_path / "jobs.jsonl").write_text(JOBS, encoding="utf-8")
    plain = key("")
    assert key(", kill_preempted: false, preemption_grace: 0") == plain
    assert len({plain, key(", kill_preempted: true"), key(", preemption_grace: 5")}) == 3


@pytest.mark.parametrize(("extra", "message"), [
    (", kill_preempted: 1", "kill_preempted is true or false"),
    (", preemption_grace: -2", "preemption_grace is a number of seconds"),
    (", preemption_grace: soon", "preemption_grace is a number of seconds"),
])
def test_bad_options_are_named(tmp_path: Path, extra: str, message: str) -> None:
    with pytest.raises(SweepError, match=message):
        parse_sweep(SWEEP % extra, folder=tmp_path)


def test_other_models_take_kill_preempted_but_not_the_grace() -> None:
    from quotactor.sweep.spec import _replay

    assert _replay({"kill_preempted": True}, "elastic")["kill_preempted"] is True
    with pytest.raises(SweepError, match="preemption_grace is for the yunikorn model"):
        _replay({"preemption_grace": 3}, "quotatree")

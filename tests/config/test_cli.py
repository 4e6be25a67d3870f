"""`quotactor validate FILE...`: one verdict line per file, exit status 0 only when all pass."""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import pytest

from quotactor.config.cli import add_parser, run_validate


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="quotactor")
    add_parser(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(["validate", *argv])


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    good = tmp_path / "good.yaml"
    good.write_text("partitions:\n  - name: default\n    queues:\n      - name: root\n")
    bad = tmp_path / "bad.yaml"
    bad.write_text("partitions:\n  - name: default\n    queues:\n      - name: root\n"
                   "        queues:\n          - name: a\n            maxapplications: -1\n"
                   "            bogus: 1\n")
    return {"good": good, "bad": bad, "missing": tmp_path / "missing.yaml"}


def test_valid_files_print_ok_and_exit_zero(files: dict[str, Path]) -> None:
    out = io.StringIO()
    args = parse(str(files["good"]), str(files["good"]))
    assert args.func is run_validate
    assert args.func(args, out) == 0
    assert out.getvalue() == f"{files['good']}: ok\n" * 2


def test_each_problem_is_a_line_naming_file_location_and_reason(files: dict[str, Path]) -> None:
    out = io.StringIO()
    assert run_validate(parse(str(files["good"]), str(files["bad"])), out) == 1
    lines = out.getvalue().splitlines()
    assert lines[0] == f"{files['good']}: ok"
    assert lines[1].startswith(f"{files['bad']}: partitions[0].queues[0].queues[0]"
                               ".maxapplications (line 7): maxapplications must be a whole number")
    assert lines[2].startswith(f"{files['bad']}: partitions[0].queues[0].queues[0].bogus "
                               "(line 8): unknown key 'bogus'")
    assert len(lines) == 3


def test_an_unreadable_file_is_an_error_line(files: dict[str, Path]) -> None:
    out = io.StringIO()
    assert run_validate(parse(str(files["missing"])), out) == 1
    assert out.getvalue().startswith(f"{files['missing']}: cannot read")


def test_the_handler_prints_to_stdout_by_default(files: dict[str, Path],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert run_validate(parse(str(files["good"]))) == 0
    assert capsys.readouterr().out == f"{files['good']}: ok\n"


def test_at_least_one_file_is_required() -> None:
    with pytest.raises(SystemExit):
        parse()

"""One `simulate` or `demo` run end to end: configs in, results and files out.

Kept apart from the command line so tests and notebooks can run the same thing without
parsing arguments, and so `--serve` can keep a scheduler alive after its replay: the caller
decides when a scheduler stops.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from pathlib import Path

from quotactor.config import SchedulerConfig, load_config
from quotactor.scheduler import Scheduler, SchedulerOptions, VirtualClock
from quotactor.sim.inputs.cluster import ClusterSpec
from quotactor.sim.inputs.jobs import Workload
from quotactor.sim.models.replay import ReplayOptions, replay
from quotactor.sim.models.result import SimulationResult
from quotactor.sim.reports.compare import compare_json
from quotactor.sim.reports.report import write_jobs_csv, write_report

__all__ = ["ConfigRun", "InputError", "Outputs", "check_out_folder", "load_runs",
           "os_error_text", "run_config", "start_scheduler", "write_comparison",
           "write_outputs"]

COMPARISON_FILE = "comparison.json"


class InputError(ValueError):
    """An input file that cannot be used; the message names the file."""


def check_out_folder(directory: Path, option: str = "--out") -> None:
    """`InputError` unless results can be written into `directory` (created when missing):
    said before any work, in one line, instead of an error once a replay has run."""
    for folder in (directory, *directory.parents):
        if not folder.exists():
            continue
        if not folder.is_dir():
            where = "" if folder == directory else f" (a parent of {directory})"
            raise InputError(f"{option} {directory}: {folder}{where} is a file, not a folder")
        if not os.access(folder, os.W_OK | os.X_OK):
            raise InputError(f"{option} {directory}: {folder} is not writable")
        return


def os_error_text(exc: OSError) -> str:
    """An `OSError` in one line: the file, then why, without Python's `[Errno N]`."""
    reason = exc.strerror or str(exc)
    return reason if exc.filename is None else f"{exc.filename}: {reason}"


@dataclass(frozen=True, slots=True)
class ConfigRun:
    """A configuration to replay under, with the label its results carry."""

    label: str
    source: str
    config: SchedulerConfig


@dataclass(frozen=True, slots=True)
class Outputs:
    """The files one result was written to."""

    directory: Path
    report: Path
    jobs: Path
    plots: tuple[Path, ...]


def load_runs(paths: list[Path]) -> list[ConfigRun]:
    """Load each config (`InputError` naming the file if one is invalid); labels are the file
    stems, made unique."""
    runs: list[ConfigRun] = []
    for index, path in enumerate(paths):
        try:
            config = load_config(path)
        except ValueError as exc:
            message = str(exc)
            raise InputError(message if message.startswith(("cannot read", str(path)))
                             else f"{path}: {message}") from None
        if not config.partitions:
            raise InputError(f"{path}: the configuration has no partition")
        label = path.stem
        if any(r.label == label for r in runs):
            label = f"{label}-{index + 1}"
        runs.append(ConfigRun(label, str(path), config))
    return runs


def start_scheduler(run: ConfigRun, workload: Workload, *,
                    reservations: bool = True) -> Scheduler:
    """A scheduler for `run` on a virtual clock set to the first submission (with node
    reservations unless `reservations` is False)."""
    return Scheduler.start(run.config, clock=VirtualClock(workload.jobs[0].submit),
                           options=SchedulerOptions(reservations=reservations))


def run_config(run: ConfigRun, workload: Workload, cluster: ClusterSpec,
               options: ReplayOptions, scheduler: Scheduler | None = None) -> SimulationResult:
    """Replay under `run`; with `scheduler` given it is used (and left running), else one is
    started and stopped here."""
    options = replace(options, label=options.label or run.label, config_source=run.source,
                      partition=options.partition or run.config.partitions[0].name)
    if scheduler is not None:
        return replay(scheduler, workload, cluster, options)
    with start_scheduler(run, workload, reservations=options.reservations) as own:
        return replay(own, workload, cluster, options)


def write_outputs(result: SimulationResult, directory: Path, plots: bool = True,
                  top_users: int = 6) -> Outputs:
    """Report, per-job CSV and (unless `plots` is False) the PNG plots, into `directory`."""
    directory.mkdir(parents=True, exist_ok=True)
    report = write_report(result, directory)
    jobs = write_jobs_csv(result, directory)
    images: tuple[Path, ...] = ()
    if plots:
        from quotactor.sim.reports.plots import plot_all

        images = tuple(plot_all(result, directory, users=top_users))
    return Outputs(directory, report, jobs, images)


def write_comparison(a: SimulationResult, b: SimulationResult, directory: Path,
                     plots: bool = True) -> Path:
    """comparison.json and (unless `plots` is False) comparison.png, both runs overlaid."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / COMPARISON_FILE
    path.write_text(json.dumps(compare_json(a, b), indent=2) + "\n", encoding="utf-8")
    if plots:
        from quotactor.sim.reports.plots import plot_comparison

        plot_comparison(a, b, directory)
    return path

"""`quotactor sweep`: a what-if over a grid of limits, on local processes or a Ray cluster.

Exit codes: 0 when every point has a result, 1 when some replays failed (listed), 2 for an
unusable sweep file or option (one line naming the place), 130 after Ctrl-C (what finished is
kept, one line says so).
"""

from __future__ import annotations

import argparse
import os
import sys
from importlib.resources import files
from pathlib import Path

from quotactor.sim.session import InputError, check_out_folder, os_error_text
from quotactor.sweep.errors import SweepError
from quotactor.sweep.headline import Figure

__all__ = ["EXAMPLE_FILE", "add_parser", "run_sweep_command"]

DEFAULT_OUT = "quotactor-sweep-out"
EXAMPLE_FILE = "nasa-sweep.yaml"
_DEFAULT_PARETO = "mean_wait,fairness_users"


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sweep = subparsers.add_parser(
        "sweep",
        help="replay a workload under a grid of limits, in parallel (processes or Ray)",
        description="Replay workloads under every combination of parameter values bound into "
        "a base config (see README: sweep file), in parallel on a local process pool or as "
        "Ray tasks; write one row per point (results.csv, results.jsonl), a ranking "
        "(summary.txt) and plots. Points already in --out are not replayed again.",
    )
    sweep.add_argument("sweep_file", type=Path, nargs="?", metavar="SWEEP.yaml")
    sweep.add_argument("--example", action="store_true",
                       help=f"write the example sweep over the bundled NASA trace to SWEEP.yaml "
                       f"(default ./{EXAMPLE_FILE}) and exit")
    sweep.add_argument("--out", type=Path, default=Path(DEFAULT_OUT),
                       help=f"results folder, kept between runs (default ./{DEFAULT_OUT})")
    sweep.add_argument("--workers", type=int, metavar="N",
                       help="replays at a time (default: the cores; 1: in this process)")
    sweep.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                       help="run each replay as a Ray task: on a local Ray (no ADDRESS), or on "
                       "the cluster at ADDRESS (`auto`, or host:6379); needs quotactor[ray]")
    sweep.add_argument("--objective", default="p95_wait", metavar="[min:|max:]FIGURE",
                       help="figure to rank points by (default p95_wait)")
    sweep.add_argument("--constraint", action="append", default=[], metavar="EXPR",
                       help='a condition kept points meet, e.g. "never == 0" or '
                       '"p95_wait < 2h" (repeatable)')
    sweep.add_argument("--pareto", default=_DEFAULT_PARETO, metavar="X,Y",
                       help=f"two figures for the Pareto plot (default {_DEFAULT_PARETO})")
    sweep.add_argument("--top", type=int, default=10, metavar="N",
                       help="ranked points printed (default 10)")
    sweep.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    sweep.set_defaults(func=run_sweep_command)


def run_sweep_command(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except SweepError as exc:
        print(f"quotactor sweep: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("quotactor sweep: interrupted before any replay finished", file=sys.stderr)
        return 130
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):  # the reader left (`| head`): nothing more to say
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 0
        print(f"quotactor sweep: {os_error_text(exc)}", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace) -> int:
    if args.example:
        return _write_example(args.sweep_file or Path(EXAMPLE_FILE))
    if args.sweep_file is None:
        raise SweepError("give a sweep file (or --example to write one)")
    if args.workers is not None and args.workers < 1:
        raise SweepError("--workers must be at least 1")
    from quotactor.sweep.headline import figures_for
    from quotactor.sweep.ranking import parse_constraint, parse_objective, rank
    from quotactor.sweep.runner import run_sweep
    from quotactor.sweep.spec import load_sweep
    from quotactor.sweep.summary import format_summary

    try:
        check_out_folder(args.out)
    except InputError as exc:
        raise SweepError(str(exc)) from None
    spec = load_sweep(args.sweep_file)
    figures = figures_for(spec.model)
    names = [p.name for p in spec.parameters]
    objective = parse_objective(args.objective, figures)
    constraints = [parse_constraint(text, [*names, *(f.name for f in figures)])
                   for text in args.constraint]
    pareto = _pareto(args.pareto, figures)
    if args.ray is not None:
        _check_ray()
    outcome = run_sweep(spec, args.out, executor="ray" if args.ray is not None else "local",
                        workers=args.workers, ray_address=args.ray or None)
    ranking = rank(outcome.rows, objective, constraints)
    summary = format_summary(outcome, names, figures, ranking, args.top)
    (args.out / "summary.txt").write_text(summary + "\n", encoding="utf-8")
    print(summary)
    written = [*outcome.files, args.out / "summary.txt"]
    if not args.no_plots and outcome.rows:
        from quotactor.sweep.plots import plot_parameters, plot_pareto

        written += plot_parameters(outcome.rows, spec.parameters, figures, args.out)
        front = plot_pareto(outcome.rows, spec.parameters, *pareto, args.out)
        written += [front] if front is not None else []
    print()
    for path in written:
        print(f"wrote {path}")
    if outcome.interrupted:
        print("quotactor sweep: interrupted; finished points are kept in "
              f"{args.out}, rerun to continue", file=sys.stderr)
        return 130
    return 1 if outcome.failed else 0


def _pareto(text: str, figures: tuple[Figure, ...]) -> tuple[Figure, Figure]:
    known = {f.name: f for f in figures}
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2 or any(p not in known for p in parts) or parts[0] == parts[1]:
        raise SweepError(f"--pareto: two different figures X,Y from {', '.join(known)}")
    return known[parts[0]], known[parts[1]]


def _check_ray() -> None:
    try:
        import ray  # noqa: F401
    except ImportError:
        raise SweepError("--ray needs Ray: pip install 'quotactor[ray]'") from None


def _write_example(path: Path) -> int:
    if path.exists():
        raise SweepError(f"{path} exists; give another file name after --example")
    text = (files("quotactor.sweep") / "data" / EXAMPLE_FILE).read_text(encoding="utf-8")
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise SweepError(f"cannot write {path}: {exc.strerror or exc}") from None
    print(f"wrote {path}; run it with:\n  quotactor sweep {path} --out nasa-sweep-out")
    return 0

"""`quotactor validate FILE...`: check configs before they reach a running scheduler.

One line per problem, `FILE: LOCATION (line N): REASON`, so that editors and CI logs can jump to
it; `FILE: ok` for a valid file. The exit code is 0 only when every file is valid.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from quotactor.config.errors import ConfigError
from quotactor.config.loader import load_scheduler_config

__all__ = ["add_parser", "run_validate"]


def add_parser(subparsers: Any) -> None:
    """Register the `validate` subcommand on an `argparse` subparsers object."""
    parser = subparsers.add_parser(
        "validate",
        help="check YuniKorn scheduler configs (queues.yaml) as YuniKorn would",
        description="Load each FILE as a YuniKorn scheduler config and report every problem "
        "as FILE: LOCATION: REASON, or FILE: ok. Exit status 0 when all files are valid.",
    )
    parser.add_argument("files", nargs="+", metavar="FILE", help="a YAML config file")
    parser.set_defaults(func=run_validate)


def run_validate(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Validate `args.files`; print the verdicts to `out` (stdout); 0 if all are valid."""
    stream = out if out is not None else sys.stdout
    all_valid = True
    for name in args.files:
        try:
            load_scheduler_config(Path(name), pause_collector=True)
        except ConfigError as exc:
            all_valid = False
            for problem in exc.errors:
                stream.write(f"{name}: {problem}\n")
        else:
            stream.write(f"{name}: ok\n")
    return 0 if all_valid else 1

"""The `quotactor` command line."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version

from quotactor import core
from quotactor.config import cli as config_cli
from quotactor.elastic import cli as elastic_cli
from quotactor.kueue import cli as kueue_cli
from quotactor.logs import configure_logging
from quotactor.quotatree import cli as quotatree_cli
from quotactor.sim import cli as sim_cli
from quotactor.sim.inputs.importers import cli as import_cli
from quotactor.sweep import cli as sweep_cli

#: The extra (`pip install 'quotactor[EXTRA]'`) that brings each optional top-level module a
#: command may import; the core install has none of them.
EXTRA_OF_MODULE = {
    "fastapi": "serve",
    "uvicorn": "serve",
    "starlette": "serve",
    "pydantic": "serve",
    "anyio": "serve",
    "matplotlib": "sim",
    "httpx": "client",
    "ray": "ray",
}


def missing_extra(error: ImportError) -> str | None:
    """The extra that would have provided the module `error` failed to import, or None when
    that module is not an optional dependency (then the error is a real fault)."""
    return EXTRA_OF_MODULE.get((error.name or "").partition(".")[0])


def extra_hint(command: str, error: ImportError, extra: str) -> str:
    """The one line a command prints when an optional dependency is not installed."""
    return (f"quotactor {command}: needs {(error.name or '').partition('.')[0]}, "
            f"which the '{extra}' extra installs: pip install 'quotactor[{extra}]'")


def _add_serve(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    try:
        from quotactor.rest import cli as rest_cli
    except ImportError as error:
        _add_unavailable(sub, "serve", error)
        return
    rest_cli.add_parser(sub)


def _add_unavailable(sub: argparse._SubParsersAction[argparse.ArgumentParser], command: str,
                     error: ImportError) -> None:
    """Register `command` as one that only says which extra it needs, whatever its arguments
    (its own parser cannot be built without that extra). Re-raise `error` when it is not about
    an optional dependency."""
    extra = missing_extra(error)
    if extra is None:
        raise error
    hint = extra_hint(command, error, extra)
    # No prefix characters: every argument, options and --help included, is taken as is.
    stub = sub.add_parser(command, help=f"(needs quotactor[{extra}])", add_help=False,
                          prefix_chars="\0")
    stub.add_argument("arguments", nargs="*")
    stub.set_defaults(func=lambda _args: _fail(hint))


def _fail(line: str) -> int:
    print(line, file=sys.stderr)
    return 2


def _needed_modules(args: argparse.Namespace) -> list[str]:
    """The optional modules the parsed command will import, checked before it starts so that
    a long replay does not fail at its end for want of a plotting library."""
    needed = []
    if args.command in ("demo", "simulate", "sweep") and not args.no_plots:
        needed.append("matplotlib")
    if getattr(args, "target", None):
        needed.append("httpx")
    if getattr(args, "serve", False):
        needed.append("fastapi")
    if args.command == "sweep" and args.ray is not None:
        needed.append("ray")
    return needed


def _tour(args: argparse.Namespace) -> int:
    from quotactor.tour import run_tour

    json.dump(run_tour(), sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


def _version() -> str:
    """The installed distribution's version: one source of truth, `pyproject.toml`."""
    try:
        return version("quotactor")
    except PackageNotFoundError:  # imported from a source tree that was never installed
        return "unknown"


class _ShowVersion(argparse.Action):
    """`--version`: the version, then whether the core runs compiled (on one line, unwrapped,
    which argparse's own version action would not keep)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        print(f"{parser.prog} {_version()} (core: {core.build_note})")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="quotactor",
        description="Resource quota tracking and enforcement for cluster schedulers.",
    )
    parser.add_argument("--version", action=_ShowVersion, nargs=0,
                        help="show the version and which build of the core runs, and exit")
    parser.add_argument("--log-format", choices=("console", "json"), default="console")
    parser.add_argument("--log-level", default="warning",
                        choices=("debug", "info", "warning", "error"))
    sub = parser.add_subparsers(dest="command")
    tour = sub.add_parser("tour", help="track a few users under limits and print the state")
    tour.set_defaults(func=_tour)
    sim_cli.add_parser(sub)
    import_cli.add_parser(sub)
    sweep_cli.add_parser(sub)
    config_cli.add_parser(sub)
    quotatree_cli.add_parser(sub)
    elastic_cli.add_parser(sub)
    kueue_cli.add_parser(sub)
    _add_serve(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. Ctrl-C ends it with one line and exit 130 (a command that has results
    writes them as it goes); a reader that closes the pipe early (`| head`) ends it quietly
    with exit 141, as a shell reports SIGPIPE, instead of a traceback. A command that needs an
    optional dependency which is not installed says in one line which extra brings it, and
    exits 2."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:  # no command: show what there is to run, as `git` does
        parser.print_help()
        return 0
    configure_logging(args.log_format, args.log_level)
    try:
        for module in _needed_modules(args):
            importlib.import_module(module)
        code: int = args.func(args)
        sys.stdout.flush()
    except ImportError as error:
        extra = missing_extra(error)
        if extra is None:
            raise
        return _fail(extra_hint(args.command, error, extra))
    except KeyboardInterrupt:
        print(f"\nquotactor {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        _stdout_to_devnull()
        return 141
    return code


def _stdout_to_devnull() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":
    sys.exit(main())

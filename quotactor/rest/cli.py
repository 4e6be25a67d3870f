"""`quotactor serve`: the command-line entry to `Service` (registered by `quotactor.cli`).

The process runs until SIGINT or SIGTERM, then stops everything it started and exits 0. It
refuses to start (exit 2) on an invalid or unreadable config or token file, or a certificate
and key (`--tls-cert`, `--tls-key`: HTTPS) that do not load, each said in one line after
`quotactor serve:`, and exits 1 when it cannot listen on the address.
"""

from __future__ import annotations

import argparse
import os
import signal
import stat
import sys
import threading
from pathlib import Path
from types import FrameType

from quotactor.logs import get_logger
from quotactor.rest.scheduler.metrics import TenantSelection
from quotactor.rest.service import Service
from quotactor.rest.state import MIB

__all__ = ["SHIM_TOKEN_ENV", "TOKEN_ENV", "add_parser"]

TOKEN_ENV = "QUOTACTOR_ADMIN_TOKEN"
SHIM_TOKEN_ENV = "QUOTACTOR_SHIM_TOKEN"

log = get_logger()


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register `serve` on the `quotactor` command's subparsers."""
    serve = subparsers.add_parser(
        "serve",
        help="run a scheduler for a config file, with YuniKorn's REST API and a shim API",
        description="Run a scheduler over the partitions of CONFIG (scheduling in the "
        "background), serve YuniKorn's REST API and metrics (prefix /ws/v1) and, with a shim "
        "token, the shim API that feeds it nodes, applications and asks; reload CONFIG "
        "whenever it changes.",
    )
    serve.add_argument("--config", required=True, type=Path, help="scheduler config (YAML)")
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (default: loopback only)")
    serve.add_argument("--port", type=int, default=9080, help="port (default 9080; 0: any)")
    serve.add_argument("--admin-token-file", type=Path,
                       help=f"file holding the token that enables PUT /config (or ${TOKEN_ENV});"
                       " without one the config can only change through the file")
    serve.add_argument("--shim-token-file", type=Path,
                       help=f"file holding the token that enables the shim API (or "
                       f"${SHIM_TOKEN_ENV}); without one nothing can feed the scheduler")
    serve.add_argument("--scheduling-interval", type=float, default=0.1,
                       help="seconds between scheduling cycles (default 0.1)")
    serve.add_argument("--tenant-metrics", default="top=20", metavar="top=N|all|none",
                       help="which users and groups get their own metric labels: the top N by "
                       "usage (default 20), all of them (opt in: a label set each), or none")
    serve.add_argument("--no-access-log", action="store_true",
                       help="do not log a line per request (logged at level info)")
    serve.add_argument("--max-body-bytes", type=int, default=MIB,
                       help="largest request body accepted (default 1 MiB)")
    serve.add_argument("--watch-interval", type=float, default=2.0,
                       help="seconds between checks of the config file (0: do not watch)")
    serve.add_argument("--tls-cert", type=Path,
                       help="serve HTTPS with this certificate (PEM; with --tls-key)")
    serve.add_argument("--tls-key", type=Path,
                       help="the private key of --tls-cert (PEM)")
    serve.set_defaults(func=run)


def _token(path: Path | None, env: str) -> str | None:
    if path is None:
        return os.environ.get(env, "").strip() or None
    if path.stat().st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        log.warning("serve.token_file_readable_by_others", path=str(path))
    try:
        token = path.read_text(encoding="utf-8").strip()
    except UnicodeDecodeError:
        raise ValueError(f"{path}: the token file is not UTF-8 text") from None
    if not token:
        raise ValueError(f"{path}: the token file is empty")
    return token


def _os_error(exc: OSError) -> str:
    """An `OSError` about a file as one line: the file, then why (no `[Errno N]`)."""
    if exc.filename is None:
        return exc.strerror or str(exc)
    return f"{exc.filename}: {(exc.strerror or str(exc)).lower()}"


def _tenant_selection(text: str) -> TenantSelection:
    """`top=N`, `all` or `none` as a `TenantSelection`; ValueError with the reason if not."""
    if text == "all":
        return TenantSelection(mode="all")
    if text == "none":
        return TenantSelection(mode="none")
    name, _, count = text.partition("=")
    if name != "top" or not count.isdigit():
        raise ValueError(f"--tenant-metrics: expected top=N, all or none, got {text!r}")
    return TenantSelection(top=int(count))


def run(args: argparse.Namespace) -> int:
    """Serve until SIGINT/SIGTERM; the exit code of `quotactor serve`."""
    from quotactor.config import ConfigError

    try:
        token = _token(args.admin_token_file, TOKEN_ENV)
        shim_token = _token(args.shim_token_file, SHIM_TOKEN_ENV)
        tenants = _tenant_selection(args.tenant_metrics)
        if (args.tls_cert is None) != (args.tls_key is None):
            raise ValueError("--tls-cert and --tls-key go together")
    except OSError as exc:
        print(f"quotactor serve: {_os_error(exc)}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"quotactor serve: {exc}", file=sys.stderr)
        return 2
    if shim_token is None:
        print(f"quotactor serve: no shim token (--shim-token-file or ${SHIM_TOKEN_ENV}): the "
              "shim API is off, so nothing can feed the scheduler", file=sys.stderr)
    try:
        service = Service(args.config, host=args.host, port=args.port, admin_token=token,
                          shim_token=shim_token, watch_interval=args.watch_interval,
                          scheduling_interval=args.scheduling_interval,
                          max_body_bytes=args.max_body_bytes,
                          access_log=not args.no_access_log, tenants=tenants,
                          tls_cert=args.tls_cert, tls_key=args.tls_key)
    except ValueError as exc:
        print(f"quotactor serve: {exc}", file=sys.stderr)
        return 2
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            service.start()
        except ConfigError as exc:
            print(f"quotactor serve: {args.config}: {exc}", file=sys.stderr)
            return 2
        except ValueError as exc:  # an option out of range
            print(f"quotactor serve: {exc}", file=sys.stderr)
            return 2
        except OSError as exc:
            if exc.filename is not None:  # the config file, not the socket
                print(f"quotactor serve: {_os_error(exc)}", file=sys.stderr)
                return 2
            print(f"quotactor serve: cannot listen on {args.host}:{args.port}: {exc}",
                  file=sys.stderr)
            return 1
        print(f"quotactor serving {service.url}", flush=True)
        stop.wait()
        service.stop()
        return 0
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

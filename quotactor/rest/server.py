"""The REST server in a background thread, for embedding in a scheduler process.

uvicorn runs its own event loop in a daemon thread; the listening socket is bound here, on the
caller's thread, so a port in use fails the call itself and `port=0` yields the real port at
once. `start_rest_server` returns only when the server accepts requests. Given a certificate
and its key, it speaks HTTPS (TLS), so a shim on another host does not send its token in clear.
"""

from __future__ import annotations

import socket
import ssl
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import uvicorn
from fastapi import APIRouter
from prometheus_client.registry import Collector

from quotactor.logs import get_logger
from quotactor.rest.app import PREFIX, create_app
from quotactor.rest.http.protocol import with_header_timeout
from quotactor.rest.state import MIB, ConfigApplier, HealthChecks, RestSettings
from quotactor.ugm import UserGroupManager

__all__ = ["RestServer", "start_rest_server"]

log = get_logger()

_START_TIMEOUT = 15.0
_STOP_TIMEOUT = 15.0


class RestServer:
    """A running server: `url` (ends in `/ws/v1`), `port`, and an idempotent `stop()`."""

    def __init__(self, server: uvicorn.Server, sock: socket.socket, thread: threading.Thread,
                 tls: bool = False) -> None:
        self._server = server
        self._socket = sock
        self._thread = thread
        self._lock = threading.Lock()
        self._on_stop: list[Callable[[], None]] = []
        host, self.port = sock.getsockname()[:2]
        self.host: str = host
        shown = f"[{host}]" if ":" in host else host
        self.url = f"{'https' if tls else 'http'}://{shown}:{self.port}{PREFIX}"

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def on_stop(self, cleanup: Callable[[], None]) -> None:
        """Run `cleanup` once the server has stopped (what the server's routes hold)."""
        with self._lock:
            self._on_stop.append(cleanup)

    def stop(self) -> None:
        """Finish requests in flight (briefly), close the port and join the thread."""
        with self._lock:
            self._server.should_exit = True
            self._thread.join(_STOP_TIMEOUT)
            self._socket.close()
            cleanups, self._on_stop = self._on_stop, []
        for cleanup in cleanups:
            cleanup()
        if self._thread.is_alive():
            log.warning("rest.stop_timed_out", url=self.url)
        else:
            log.info("rest.stopped", url=self.url)

    def __enter__(self) -> RestServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


def _check_tls(cert: Path, key: Path) -> None:
    """Load the certificate and key as the server will, on the caller's thread: a bad file is
    this call's `ValueError`, not a server thread that never starts."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(cert, key)
    except FileNotFoundError as exc:
        raise ValueError(f"TLS: {exc.filename}: no such file") from None
    except OSError as exc:  # ssl.SSLError included
        reason = exc.strerror or getattr(exc, "reason", None) or str(exc)
        raise ValueError(f"TLS: cannot use certificate {cert} with key {key}: {reason}"
                         ) from None


def _bind(host: str, port: int, backlog: int) -> socket.socket:
    family, kind, proto, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(backlog)
    except OSError:
        sock.close()
        raise
    return sock


def start_rest_server(
    managers: Mapping[str, UserGroupManager],
    host: str = "127.0.0.1",
    port: int = 0,
    admin_token: str | None = None,
    max_body_bytes: int = MIB,
    *,
    apply_config: ConfigApplier | None = None,
    body_timeout: float = 10.0,
    header_timeout: float = 10.0,
    keep_alive_timeout: int = 5,
    limit_concurrency: int = 4096,
    connections_per_client: int = 256,
    worker_threads: int = 8,
    snapshot_interval: float = 0.05,
    backlog: int = 128,
    routers: Sequence[APIRouter] = (),
    shim_token: str | None = None,
    health_checks: HealthChecks | None = None,
    access_log: bool = True,
    collectors: Sequence[Collector] = (),
    tls_cert: str | Path | None = None,
    tls_key: str | Path | None = None,
) -> RestServer:
    """Serve `managers` (partition name -> manager) over HTTP from a daemon thread.

    Defaults are the safe ones: loopback only, bodies up to 1 MiB (413 beyond), `PUT /config`
    refused unless `admin_token` is given, at most `limit_concurrency` connections (503
    beyond; idle ones cost no worker, so this is a file-descriptor guard, not a throttle) and
    `connections_per_client` from one address (closed beyond, so one client hoarding idle
    connections cannot take the slots of others),
    `worker_threads` facade calls at a time, request heads and bodies that must arrive
    within `header_timeout` / `body_timeout` seconds, and full user/group lists and health
    reports taken at most once per `snapshot_interval` seconds per partition, shared by the
    requests waiting for them (each still taken after its request arrived). `managers` is read
    on every request: pass a `Partitions` to add or remove partitions while serving.
    `apply_config` replaces the config on `PUT /config` (default: applied to every served
    manager, all or none). `routers` add endpoints under `/ws/v1`; `shim_token` is what
    their shim writes require (see `serve_scheduler`); `health_checks` adds checks to the
    health report; `access_log=False` turns the per-request log line off; `collectors` add
    metric families to `/metrics`. `tls_cert` and `tls_key` (PEM files, both or neither) make
    it serve HTTPS; a certificate or key that does not load is a `ValueError` naming the file.
    """
    if (tls_cert is None) != (tls_key is None):
        raise ValueError("TLS needs both a certificate and its key (tls_cert and tls_key)")
    if tls_cert is not None and tls_key is not None:
        _check_tls(Path(tls_cert), Path(tls_key))
    for name, manager in managers.items():
        if manager.partition != name:
            raise ValueError(f"manager of partition {manager.partition!r} listed as {name!r}")
    settings = RestSettings(admin_token, max_body_bytes, body_timeout, worker_threads,
                            snapshot_interval, shim_token)
    app = create_app(managers, settings, apply_config, routers, health_checks, access_log,
                     collectors)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        loop="asyncio",
        http=with_header_timeout(header_timeout, connections_per_client),
        lifespan="on",
        log_config=None,
        access_log=False,
        server_header=False,
        proxy_headers=False,
        limit_concurrency=limit_concurrency,
        backlog=backlog,
        timeout_keep_alive=keep_alive_timeout,
        timeout_graceful_shutdown=5,
        h11_max_incomplete_event_size=16 * 1024,
        ssl_certfile=None if tls_cert is None else str(tls_cert),
        ssl_keyfile=None if tls_key is None else str(tls_key),
    )
    server = uvicorn.Server(config)
    sock = _bind(host, port, backlog)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]},
                              name=f"quotactor-rest-{sock.getsockname()[1]}", daemon=True)
    thread.start()
    deadline = time.monotonic() + _START_TIMEOUT
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            thread.join(_STOP_TIMEOUT)
            sock.close()
            raise RuntimeError(f"the REST server on {host}:{port} did not start")
        thread.join(0.01)
    rest = RestServer(server, sock, thread, tls=tls_cert is not None)
    log.info("rest.started", url=rest.url, partitions=sorted(managers))
    return rest

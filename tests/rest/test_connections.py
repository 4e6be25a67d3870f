"""Idle clients do not deny service, and every request leaves one access log line."""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Iterator
from contextlib import ExitStack
from urllib.parse import urlsplit

import httpx
import pytest

from quotactor.rest import RestServer, serve
from quotactor.scheduler import Scheduler


@pytest.fixture
def server() -> Iterator[RestServer]:
    with Scheduler.start() as scheduler:
        running: RestServer = serve(scheduler)
        try:
            yield running
        finally:
            running.stop()


IDLE_FOR = 3600.0
"""The header timeout of the servers below: idle connections are never closed for being
idle while a test runs, so a request answered at all was answered beside them."""
BOUND = 30.0
"""How long a test waits for an answer that should come at once."""


@pytest.mark.slow
def test_200_idle_connections_leave_a_normal_request_answered() -> None:
    with Scheduler.start() as scheduler, serve(scheduler, header_timeout=IDLE_FOR) as server:
        parts = urlsplit(server.url)
        with ExitStack() as stack:
            idle = [stack.enter_context(socket.create_connection((parts.hostname, parts.port)))
                    for _ in range(200)]
            # Half of them start a request and stall in the middle of its head (slowloris).
            for sock in idle[::2]:
                sock.sendall(b"GET /ws/v1/partitions HTTP/1.1\r\nHost: x\r\n")
            response = httpx.get(f"{server.url}/partitions", timeout=BOUND)
            assert response.status_code == 200, response.text
            health = httpx.get(f"{server.url}/scheduler/healthcheck", timeout=BOUND)
            assert health.status_code == 200


def test_a_client_hoarding_connections_cannot_take_the_others_slots() -> None:
    with Scheduler.start() as scheduler, serve(
            scheduler, connections_per_client=50, limit_concurrency=60,
            header_timeout=IDLE_FOR) as server:
        parts = urlsplit(server.url)
        with ExitStack() as stack:
            hoard = [stack.enter_context(socket.create_connection(
                (parts.hostname, parts.port), source_address=("127.0.0.1", 0)))
                for _ in range(80)]
            # The 51st and later are closed by the server as they arrive.
            extra = hoard[-1]
            extra.settimeout(BOUND)
            try:
                extra.sendall(b"GET /ws/v1/partitions HTTP/1.1\r\nHost: x\r\n\r\n")
                answer = extra.recv(100)
            except ConnectionResetError:
                answer = b""
            assert answer == b"", "a connection beyond the cap was served"
            # Another address still has its slots: 80 connections would be over the server's
            # 60 (a 503), had the cap let them all in.
            transport = httpx.HTTPTransport(local_address="127.0.0.2")
            with httpx.Client(transport=transport, timeout=BOUND) as other:
                response = other.get(f"{server.url}/partitions")
                assert response.status_code == 200, response.text


class _AccessLines(logging.Handler):
    """Collects `rest.request` events; the line is written just after the response is sent,
    so a test waits for the count it expects instead of reading at once."""

    def __init__(self, expected: int) -> None:
        super().__init__(logging.INFO)
        self.lines: list[dict[str, object]] = []
        self.expected = expected
        self.complete = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if isinstance(record.msg, dict) and record.msg.get("event") == "rest.request":
            self.lines.append(record.msg)
            if len(self.lines) >= self.expected:
                self.complete.set()


@pytest.fixture
def access_lines() -> Iterator[_AccessLines]:
    logger = logging.getLogger("quotactor")
    handler = _AccessLines(expected=2)
    level = logger.level
    logger.setLevel(logging.INFO)
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def test_every_request_is_logged_once(server, access_lines) -> None:
    httpx.get(f"{server.url}/partitions", timeout=5.0)
    httpx.get(f"{server.url}/partition/nope/nodes", timeout=5.0)
    assert access_lines.complete.wait(BOUND)
    lines = access_lines.lines
    assert [(line["method"], line["path"], line["status"]) for line in lines] == [
        ("GET", "/ws/v1/partitions", 200), ("GET", "/ws/v1/partition/nope/nodes", 404)]
    assert all(float(str(line["ms"])) >= 0 and str(line["client"]).startswith("127.0.0.1:")
               for line in lines)


def test_the_access_log_can_be_turned_off(caplog) -> None:
    caplog.set_level(logging.INFO, logger="quotactor")
    with Scheduler.start() as scheduler:
        quiet = serve(scheduler, access_log=False)
        try:
            httpx.get(f"{quiet.url}/partitions", timeout=5.0)
        finally:
            quiet.stop()
    assert not [r for r in caplog.records
                if isinstance(r.msg, dict) and r.msg.get("event") == "rest.request"]

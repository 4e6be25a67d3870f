"""Starting, stopping and protecting the embedded server."""

from __future__ import annotations

import logging
import socket
import threading
from typing import Any

import httpx
import pytest

from quotactor import rest
from quotactor.rest import start_rest_server
from quotactor.ugm import UserGroupManager

BOUND = 30.0
"""How long a test waits for what should happen at once (far above the milliseconds it takes,
far below the hour a wedged wait would last)."""


def _can_bind(host: str, port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return False
        return True


def _closed_by_server(conn: socket.socket, within: float) -> bool:
    """True when the server closes `conn` (EOF or reset) before `within` seconds pass."""
    conn.settimeout(within)
    try:
        while data := conn.recv(4096):
            assert not data.startswith(b"HTTP/1.1 2"), data
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True
    return True


def test_the_server_listens_on_loopback_and_stops_idempotently(ugm) -> None:
    server = start_rest_server({"default": ugm})
    try:
        assert server.url == f"http://127.0.0.1:{server.port}/ws/v1"
        assert server.port > 0
        assert httpx.get(f"{server.url}/partition/default/usage/users").json() == []
    finally:
        server.stop()
    server.stop()
    assert not server.running
    assert _can_bind("127.0.0.1", server.port), "the port is released"
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{server.url}/partition/default/usage/users")


def test_stopping_with_an_open_keep_alive_connection_does_not_wait_for_it(
        ugm, caplog: pytest.LogCaptureFixture) -> None:
    server = start_rest_server({"default": ugm}, keep_alive_timeout=3600)
    caplog.set_level(logging.INFO, logger="uvicorn.error")
    with httpx.Client(base_url=server.url) as client:
        assert client.get("/scheduler/healthcheck").status_code == 200
        server.stop()
        assert not server.running
    # uvicorn says so when its shutdown waits for a connection to close, or gives up on one.
    waited = [r.getMessage() for r in caplog.records if r.name == "uvicorn.error"
              and ("Waiting for connections" in r.getMessage()
                   or "graceful shutdown exceeded" in r.getMessage())]
    assert waited == []
    assert _can_bind("127.0.0.1", server.port)


def test_the_manager_stops_the_server_it_started(serve) -> None:
    manager = UserGroupManager.start(partition="default", timeout=20.0)
    server = rest.serve(manager, port=0)
    assert httpx.get(f"{server.url}/partition/default/usage/users").status_code == 200
    manager.stop()
    assert not server.running
    assert _can_bind("127.0.0.1", server.port)


def test_a_port_in_use_fails_the_call_itself(ugm, serve) -> None:
    first = serve({"default": ugm})
    with pytest.raises(OSError):
        start_rest_server({"default": ugm}, port=first.port)


@pytest.mark.parametrize(("options", "problem"), [
    ({"admin_token": ""}, "token"),
    ({"admin_token": "  "}, "token"),
    ({"max_body_bytes": 0}, "max_body_bytes"),
    ({"header_timeout": 0}, "header timeout"),
])
def test_bad_options_are_refused(ugm, options: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        start_rest_server({"default": ugm}, **options)


def test_a_manager_listed_under_another_name_is_refused(ugm) -> None:
    with pytest.raises(ValueError, match="listed as"):
        start_rest_server({"other": ugm})


def test_a_client_that_never_finishes_its_headers_is_disconnected(ugm, serve) -> None:
    server = serve({"default": ugm}, header_timeout=0.3)
    with socket.create_connection(("127.0.0.1", server.port)) as idle:
        assert _closed_by_server(idle, within=BOUND)
    with socket.create_connection(("127.0.0.1", server.port)) as slow:
        slow.sendall(b"GET /ws/v1/metrics HTTP/1.1\r\nHost: x\r\n")
        assert _closed_by_server(slow, within=BOUND)


def test_a_keep_alive_connection_may_send_several_requests(ugm, serve) -> None:
    server = serve({"default": ugm}, header_timeout=0.5)
    with httpx.Client(base_url=server.url) as client:
        for _ in range(5):
            assert client.get("/partition/default/usage/users").status_code == 200


def test_a_slow_facade_call_does_not_hold_up_the_event_loop(serve) -> None:
    """Other requests are answered while a facade call is held (held until they are: had it
    held the event loop up, they would time out before it let go)."""
    entered, gate = threading.Event(), threading.Event()

    class SlowManager(UserGroupManager):
        def users_usage(self) -> list[dict[str, Any]]:
            entered.set()
            gate.wait(BOUND)
            return super().users_usage()

    manager = SlowManager.start(partition="default", timeout=20.0)
    try:
        server = serve({"default": manager}, worker_threads=2)
        slow = threading.Thread(
            target=httpx.get, args=(f"{server.url}/partition/default/usage/users",),
            kwargs={"timeout": BOUND})
        slow.start()
        assert entered.wait(BOUND)
        assert httpx.get(f"{server.url}/openapi.json", timeout=BOUND).status_code == 200
        assert httpx.get(f"{server.url}/nothing", timeout=BOUND).status_code == 404
        assert slow.is_alive(), "the held call had already been answered"
        gate.set()
        slow.join(BOUND)
    finally:
        gate.set()
        manager.stop()

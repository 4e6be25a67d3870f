"""Starting, stopping and protecting the embedded server."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import httpx
import pytest

from quotactor import rest
from quotactor.rest import start_rest_server
from quotactor.ugm import UserGroupManager


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


def test_stopping_with_an_open_keep_alive_connection_is_prompt(ugm) -> None:
    server = start_rest_server({"default": ugm})
    with httpx.Client(base_url=server.url) as client:
        assert client.get("/scheduler/healthcheck").status_code == 200
        started = time.monotonic()
        server.stop()
        assert time.monotonic() - started < 3.0
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
        assert _closed_by_server(idle, within=5.0)
    with socket.create_connection(("127.0.0.1", server.port)) as slow:
        slow.sendall(b"GET /ws/v1/metrics HTTP/1.1\r\nHost: x\r\n")
        assert _closed_by_server(slow, within=5.0)


def test_a_keep_alive_connection_may_send_several_requests(ugm, serve) -> None:
    server = serve({"default": ugm}, header_timeout=0.5)
    with httpx.Client(base_url=server.url) as client:
        for _ in range(5):
            assert client.get("/partition/default/usage/users").status_code == 200


def test_a_slow_facade_call_does_not_hold_up_the_event_loop(serve) -> None:
    gate = threading.Event()

    class SlowManager(UserGroupManager):
        def users_usage(self) -> list[dict[str, Any]]:
            gate.wait(10.0)
            return super().users_usage()

    manager = SlowManager.start(partition="default", timeout=20.0)
    try:
        server = serve({"default": manager}, worker_threads=2)
        slow = threading.Thread(
            target=httpx.get, args=(f"{server.url}/partition/default/usage/users",),
            kwargs={"timeout": 15.0})
        slow.start()
        started = time.monotonic()
        assert httpx.get(f"{server.url}/openapi.json").status_code == 200
        assert httpx.get(f"{server.url}/nothing").status_code == 404
        assert time.monotonic() - started < 2.0
        gate.set()
        slow.join(15.0)
    finally:
        gate.set()
        manager.stop()

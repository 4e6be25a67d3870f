"""The service's edges: HTTPS with a certificate and key, requests framed twice, access log
lines of a bounded size, one answer for an empty config, and `quotactor serve`'s errors in one
prefixed line."""

from __future__ import annotations

import logging
import shutil
import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from quotactor.cli import main
from quotactor.rest import RestServer, serve
from quotactor.rest.http.access_log import MAX_FIELD
from quotactor.scheduler import Scheduler

CONFIG = """\
partitions:
  - name: default
    queues:
      - name: root
        submitacl: "*"
"""


@pytest.fixture
def server() -> Iterator[RestServer]:
    with Scheduler.start() as scheduler:
        running = serve(scheduler)
        try:
            yield running
        finally:
            running.stop()


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key, made by `openssl` for the test."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is not installed")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run([openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "1", "-subj", "/CN=127.0.0.1", "-addext",
                    "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True, timeout=60)
    return cert, key


def test_a_served_scheduler_speaks_tls_with_a_certificate_and_key(certificate) -> None:
    cert, key = certificate
    with Scheduler.start() as scheduler:
        secure = serve(scheduler, tls_cert=cert, tls_key=key)
        try:
            assert secure.url.startswith("https://127.0.0.1:")
            trusted = ssl.create_default_context(cafile=str(cert))
            assert httpx.get(f"{secure.url}/partitions", verify=trusted).status_code == 200
            with pytest.raises(httpx.HTTPError):  # no plain HTTP on that port
                httpx.get(secure.url.replace("https://", "http://") + "/partitions",
                          timeout=5.0)
        finally:
            secure.stop()


def test_a_certificate_that_does_not_load_is_refused_before_serving(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.pem"
    bogus.write_text("not a certificate\n")
    with Scheduler.start() as scheduler:
        with pytest.raises(ValueError, match=r"bogus\.pem"):
            serve(scheduler, tls_cert=bogus, tls_key=bogus)
        with pytest.raises(ValueError, match="both"):
            serve(scheduler, tls_cert=bogus)


def test_a_request_with_both_content_length_and_transfer_encoding_is_refused(server) -> None:
    host, port = server.host, server.port
    request = (b"POST /ws/v1/validate-conf HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n"
               b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
    with socket.create_connection((host, port), timeout=10) as conn:
        conn.sendall(request)
        answer = b""
        while chunk := conn.recv(65536):  # the server closes the connection
            answer += chunk
    head = answer.split(b"\r\n\r\n", 1)[0].lower()
    assert head.startswith(b"http/1.1 400")
    assert b"connection: close" in head
    assert b"content-length and transfer-encoding" in answer.lower()


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.paths: list[str] = []
        self.seen = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if isinstance(record.msg, dict) and record.msg.get("event") == "rest.request":
            self.paths.append(str(record.msg["path"]))
            self.seen.set()


def test_the_access_log_caps_what_a_client_chooses(server) -> None:
    logger = logging.getLogger("quotactor")
    lines, level, propagate = _Lines(), logger.level, logger.propagate
    logger.setLevel(logging.INFO)
    logger.addHandler(lines)
    logger.propagate = False  # the root's handlers (pytest's among them) keep their level
    try:
        httpx.get(f"{server.url}/{'x' * 12_000}", timeout=10.0)
        assert lines.seen.wait(10.0)
    finally:
        logger.removeHandler(lines)
        logger.setLevel(level)
        logger.propagate = propagate
    (path,) = lines.paths
    assert len(path) < MAX_FIELD + 100 and path.endswith("more characters)")


def test_validate_conf_refuses_an_empty_config_as_put_config_does(server) -> None:
    verdict = httpx.post(f"{server.url}/validate-conf", content=b"").json()
    assert verdict["allowed"] is False and "no partition" in verdict["reason"]
    assert httpx.post(f"{server.url}/validate-conf", content=CONFIG).json()["allowed"] is True


def _serve_errors(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    assert main(["serve", "--port", "0", *argv]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines and all(line.startswith("quotactor serve: ") for line in lines), lines
    assert not any("Errno" in line or "Traceback" in line for line in lines), lines
    return lines


def test_serve_errors_are_prefixed_one_line_each(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope.yaml"
    assert str(missing) in _serve_errors(capsys, "--config", str(missing))[-1]
    bad = tmp_path / "bad.yaml"
    bad.write_text("partitions: oops\n")
    assert str(bad) in _serve_errors(capsys, "--config", str(bad))[-1]
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    assert "no partition" in _serve_errors(capsys, "--config", str(empty))[-1]
    good = tmp_path / "queues.yaml"
    good.write_text(CONFIG)
    assert "--tls-key" in _serve_errors(capsys, "--config", str(good), "--tls-cert",
                                        str(good))[-1]
    lines = _serve_errors(capsys, "--config", str(good), "--tls-cert", str(good),
                          "--tls-key", str(tmp_path / "no-key.pem"))
    assert "no-key.pem" in lines[-1]
    token = tmp_path / "missing-token"
    assert str(token) in _serve_errors(capsys, "--config", str(good), "--shim-token-file",
                                       str(token))[-1]

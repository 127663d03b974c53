"""Stopping the processes, as an operator stops them: signals to real `serve` and `worker`."""

import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from sprintboard.db import Database
from tests.factories import TEST_SECRET_KEY, make_org_admin
from tests.servers import SPRINTBOARD, free_port


def start(database_url: str, log: Path, *args: str) -> subprocess.Popen[bytes]:
    with log.open("wb") as stderr:
        return subprocess.Popen(
            [str(SPRINTBOARD), *args],
            env={
                **os.environ,
                "SPRINTBOARD_DATABASE_URL": database_url,
                "SPRINTBOARD_SECRET_KEY": TEST_SECRET_KEY,
                "SPRINTBOARD_LOG_FORMAT": "text",
            },
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )


def wait_for(
    condition: str, check: Callable[[], bool], process: subprocess.Popen[bytes], log: Path
) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, f"exited with {process.returncode}:\n{log.read_text()}"
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"not {condition} within 60 s:\n{log.read_text()}")


def ready(base_url: str) -> bool:
    try:
        return httpx.get(f"{base_url}/readyz", timeout=1).status_code == 200
    except httpx.TransportError:
        return False


def test_serve_stops_at_once_and_quietly_with_an_event_stream_open(
    database_url: str, tmp_path: Path
) -> None:
    """A browser tab open on the board holds a stream; stopping the server once waited out
    its grace period, then logged two ERROR records with a traceback."""
    database = Database(database_url)
    try:
        key = make_org_admin(database)
    finally:
        database.dispose()
    port, log = free_port(), tmp_path / "serve.log"
    base_url = f"http://127.0.0.1:{port}"
    server = start(database_url, log, "serve", "--port", str(port))
    try:
        wait_for("ready", lambda: ready(base_url), server, log)
        workspace = httpx.post(
            f"{base_url}/api/v1/workspaces",
            json={"name": "Live"},
            headers={"Authorization": f"Bearer {key}"},
        ).json()["data"]["$id"]
        with socket.create_connection(("127.0.0.1", port), timeout=10) as stream:
            stream.sendall(
                f"GET /api/v1/events/stream?workspaceId={workspace} HTTP/1.1\r\n"
                f"Host: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n"
                "Accept: text/event-stream\r\n\r\n".encode()
            )
            received = b""
            while b": connected" not in received:
                chunk = stream.recv(4096)
                assert chunk, received
                received += chunk
            assert received.startswith(b"HTTP/1.1 200 ")
            stopped_at = time.monotonic()
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)
            took = time.monotonic() - stopped_at
            while stream.recv(4096):  # (the stream is closed, not left hanging)
                pass
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    output = log.read_text()
    assert "Shutting down" in output
    assert "ERROR" not in output, output
    assert "Traceback" not in output, output
    assert took < 4, (took, output)  # (the grace period for requests in flight is 5 s)


def test_worker_says_when_it_stops(database_url: str, tmp_path: Path) -> None:
    log = tmp_path / "worker.log"
    worker = start(database_url, log, "worker", "--poll-interval", "0.2")
    try:
        wait_for("delivering", lambda: "delivering webhook events" in log.read_text(), worker, log)
        worker.send_signal(signal.SIGINT)
        assert worker.wait(timeout=30) == 0
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
    lines = log.read_text().splitlines()
    assert any("SIGINT: finishing the deliveries in flight, then stopping" in x for x in lines)
    assert "worker stopped" in lines[-1], lines
    assert "Traceback" not in log.read_text()

"""Slow and abandoned clients (contract §14), through a real `serve` process and raw sockets
on the loopback: headers and bodies that come too slowly are cut off with a 408, requests past
the cap in progress are shed with a 503 at once, and a client that leaves is logged as such.
"""

import contextlib
import json
import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from sprintboard.db import Database
from tests.factories import make_org_admin
from tests.servers import Server, running_server

SOCKET_TIMEOUT = 15.0
"""How long a test waits for the server to act before it fails (a bound, not a speed check)."""


@contextlib.contextmanager
def connection(server: Server) -> Iterator[socket.socket]:
    host, port = server.base_url.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=SOCKET_TIMEOUT)
    try:
        yield sock
    finally:
        sock.close()


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection."""
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    return received


def envelope(answer: bytes) -> dict[str, object]:
    _, _, body = answer.partition(b"\r\n\r\n")
    error: dict[str, object] = json.loads(body)["error"]
    return error


def test_headers_that_come_too_slowly_are_cut_off_with_408(database_url: str) -> None:
    env = {"SPRINTBOARD_HEADER_TIMEOUT": "1", "SPRINTBOARD_DELIVER_EVENTS": "false"}
    with running_server(database_url, env=env) as server, contextlib.ExitStack() as sockets:
        # A client that drips header lines (each byte resets uvicorn's own keep-alive timer),
        # and one that connects and sends nothing.
        dripping = [sockets.enter_context(connection(server)) for _ in range(20)]
        silent = sockets.enter_context(connection(server))
        for sock in dripping:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        answers: list[bytes] = [b""] * len(dripping)
        deadline = time.monotonic() + SOCKET_TIMEOUT
        open_ones = set(range(len(dripping)))
        while open_ones and time.monotonic() < deadline:
            time.sleep(0.3)
            for index in list(open_ones):
                with contextlib.suppress(OSError):  # (closed by the server: read its answer)
                    dripping[index].sendall(b"X-Slow: y\r\n")
                dripping[index].settimeout(0.01)
                try:
                    chunk = dripping[index].recv(65536)
                except TimeoutError:
                    continue
                except OSError:
                    chunk = b""
                answers[index] += chunk
                if not chunk:
                    open_ones.discard(index)
        assert not open_ones, f"{len(open_ones)} slow clients still connected"
        for answer in answers:
            assert answer.startswith(b"HTTP/1.1 408 "), answer
            assert envelope(answer)["code"] == "REQUEST_TIMEOUT"
        assert read_until_closed(silent).startswith(b"HTTP/1.1 408 ")
        # A client that sends its headers in time is served as usual, twice on one connection.
        with httpx.Client(base_url=server.base_url) as client:
            assert client.get("/healthz").status_code == 200
            time.sleep(1.5)  # (longer than the deadline: it runs from the last response)
            assert client.get("/healthz").status_code == 200


def test_a_body_that_comes_too_slowly_is_cut_off_with_408(
    database_url: str, database: Database
) -> None:
    key = make_org_admin(database)
    env = {"SPRINTBOARD_BODY_TIMEOUT": "1", "SPRINTBOARD_DELIVER_EVENTS": "false"}
    with running_server(database_url, env=env) as server, connection(server) as sock:
        sock.sendall(
            b"POST /api/v1/workspaces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Authorization: Bearer " + key.encode() + b"\r\nContent-Length: 100\r\n\r\n"
            b'{"name": '
        )
        answer = read_until_closed(sock)
        assert answer.startswith(b"HTTP/1.1 408 "), answer
        assert envelope(answer)["code"] == "REQUEST_TIMEOUT"
        headers = httpx.Headers({"Authorization": f"Bearer {key}"})
        listed = httpx.get(f"{server.base_url}/api/v1/workspaces", headers=headers)
        assert listed.json()["data"]["total"] == 0
        assert "unhandled error" not in server.log()


def test_past_the_cap_of_requests_in_progress_requests_are_shed_at_once(
    database_url: str,
) -> None:
    env = {"SPRINTBOARD_MAX_REQUESTS_IN_PROGRESS": "2", "SPRINTBOARD_DELIVER_EVENTS": "false"}
    with running_server(database_url, env=env) as server:
        with contextlib.ExitStack() as sockets:
            for _ in range(2):  # two requests in progress, waiting for their bodies
                sock = sockets.enter_context(connection(server))
                sock.sendall(
                    b"POST /api/v1/workspaces HTTP/1.1\r\nHost: x\r\n"
                    b"Content-Type: application/json\r\nContent-Length: 50\r\n\r\n"
                )
            shed = None
            deadline = time.monotonic() + SOCKET_TIMEOUT
            while time.monotonic() < deadline:
                shed = httpx.get(f"{server.base_url}/api/v1/me", timeout=SOCKET_TIMEOUT)
                if shed.status_code == 503:
                    break
                time.sleep(0.1)
            assert shed is not None
            assert shed.status_code == 503, shed.text
            error = shed.json()["error"]
            assert error["code"] == "UNAVAILABLE"
            assert int(shed.headers["Retry-After"]) == error["details"]["retryAfter"] > 0
            assert shed.headers["X-Request-Id"]
            assert httpx.get(f"{server.base_url}/healthz").status_code == 200  # never shed
        # The two clients left: their places are free again.
        deadline = time.monotonic() + SOCKET_TIMEOUT
        while time.monotonic() < deadline:
            again = httpx.get(f"{server.base_url}/api/v1/me")
            if again.status_code != 503:
                break
            time.sleep(0.1)
        assert again.status_code == 401


@pytest.mark.parametrize("sent", [b"", b'{"name": '])
def test_a_client_that_leaves_mid_request_is_logged_as_such(
    database_url: str, database: Database, sent: bytes
) -> None:
    key = make_org_admin(database)
    env = {"SPRINTBOARD_DELIVER_EVENTS": "false"}
    with running_server(database_url, env=env) as server:
        with connection(server) as sock:
            sock.sendall(
                b"POST /api/v1/workspaces HTTP/1.1\r\nHost: x\r\n"
                b"Content-Type: application/json\r\nAuthorization: Bearer " + key.encode() + b"\r\n"
                b"Content-Length: 100\r\n\r\n" + sent
            )
            time.sleep(0.3)
        deadline = time.monotonic() + SOCKET_TIMEOUT
        while "client disconnected" not in server.log() and time.monotonic() < deadline:
            time.sleep(0.1)
        lines = [json.loads(line) for line in server.log().splitlines() if line.startswith("{")]
    assert any(line["message"] == "client disconnected mid-request" for line in lines), lines
    assert not any(line["level"] == "ERROR" for line in lines), lines
    access = [line for line in lines if line["logger"] == "sprintboard.access"]
    assert [line["status"] for line in access if line["method"] == "POST"] == [499]

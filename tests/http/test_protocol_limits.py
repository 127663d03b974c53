"""Limits at the protocol layer, through a real `sprintboard serve` process (issue 26): request
headers past their size or count are refused with 431, a request the parser cannot read
with 400; both in the usual envelope with an `X-Request-Id`, then the connection closes."""

import httpx

from sprintboard.server import MAX_HEADER_BYTES, MAX_HEADERS
from tests.http.test_slow_clients import (
    SOCKET_TIMEOUT,
    connection,
    envelope,
    read_until_closed,
)
from tests.servers import running_server

ENV = {"SPRINTBOARD_DELIVER_EVENTS": "false"}


def test_oversized_or_too_many_headers_and_bad_requests_get_the_envelope(
    database_url: str,
) -> None:
    with running_server(database_url, env=ENV) as server:
        with connection(server) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
            filler = b"X-Big: " + b"a" * 8000 + b"\r\n"
            answer = b""
            for _ in range(4 * MAX_HEADER_BYTES // len(filler)):
                sock.sendall(filler)
                sock.settimeout(0.3)  # (stop sending once it answers: no reset)
                try:
                    answer = sock.recv(65536)
                except TimeoutError:
                    continue
                break
            sock.settimeout(SOCKET_TIMEOUT)
            answer += read_until_closed(sock)
        assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
        assert envelope(answer)["code"] == "HEADERS_TOO_LARGE"
        assert b"\r\nx-request-id: " in answer.partition(b"\r\n\r\n")[0]

        with connection(server) as sock:
            many = b"".join(b"X-N%d: y\r\n" % n for n in range(MAX_HEADERS + 1))
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + many + b"\r\n")
            answer = read_until_closed(sock)
        assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]

        with connection(server) as sock:
            sock.sendall(b"NOT HTTP AT ALL\r\n\r\n")
            answer = read_until_closed(sock)
        assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]
        assert envelope(answer)["code"] == "INVALID_REQUEST"
        assert b"\r\nx-request-id: " in answer.partition(b"\r\n\r\n")[0]

        # Within the limits, as usual: many headers, and a body past the header limit.
        headers = {f"X-N{n}": "y" for n in range(MAX_HEADERS - 10)}
        with httpx.Client(base_url=server.base_url) as client:
            assert client.get("/healthz", headers=headers).status_code == 200
            big = client.post(
                "/api/v1/tasks",
                content=b"{" + b" " * 200_000 + b"}",
                headers={"Content-Type": "application/json"},
            )
            assert big.status_code == 401  # (read whole, then refused for want of a key)

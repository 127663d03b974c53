"""uvicorn's HTTP protocol with a deadline for request headers (used by `sprintboard serve`).

uvicorn 0.54 bounds nothing before a request's headers are complete: its keep-alive timer
is reset by every byte, and a connection that never sends anything has no timer at all, so a
client dripping a header line every few seconds holds a socket for ever (the audit kept 500
of them open for 32 s and more). Here a connection has `SPRINTBOARD_HEADER_TIMEOUT` seconds
(default 10) from its start, or from the end of its last response, to complete a request's
headers; past that it is answered 408 in the usual envelope and closed. A request whose
headers are in is the app's business (its body deadline: `clients.BodyTimeoutMiddleware`).

Nor does it bound their size: one connection sent 64 MB of headers and got a 200 (httptools
keeps a header in memory until it ends). Here a request's headers are cut off past
`MAX_HEADER_BYTES` or `MAX_HEADERS` with 431, and a request the parser refuses is 400; both
in the usual envelope with an `X-Request-Id` (uvicorn answers plain text), then closed.
"""

import asyncio
import functools
from typing import Any

import orjson

try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as _Protocol
except ImportError:  # (httptools comes with uvicorn[standard], the pinned dependency)
    from uvicorn.protocols.http.h11_impl import H11Protocol as _Protocol  # type: ignore[assignment]

from sprintboard.config import Settings
from sprintboard.http.middleware import new_request_id

MAX_HEADER_BYTES = 64 * 1024
"""A request line and headers, in all (nginx's default buffers hold 32 KiB; a browser's
cookies and a bearer key fit many times over)."""
MAX_HEADERS = 100
"""Header fields in one request (Apache's `LimitRequestFields`)."""


@functools.cache
def header_timeout() -> float:
    """Read once per process (worker processes inherit the environment)."""
    return Settings().header_timeout


def _timeout_response() -> bytes:
    body = orjson.dumps(
        {
            "error": {
                "code": "REQUEST_TIMEOUT",
                "message": "The request's headers did not arrive in time.",
                "details": {},
            }
        }
    )
    head = (
        "HTTP/1.1 408 Request Timeout\r\n"
        "content-type: application/json\r\n"
        f"content-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode() + body


TIMEOUT_RESPONSE = _timeout_response()


def _refusal(status: int, reason: str, code: str, message: str) -> bytes:
    """A protocol-level refusal in the envelope, with a request id of its own."""
    request_id = new_request_id()
    body = orjson.dumps({"error": {"code": code, "message": message, "details": {}}})
    head = (
        f"HTTP/1.1 {status} {reason}\r\n"
        "content-type: application/json\r\n"
        f"content-length: {len(body)}\r\n"
        f"x-request-id: {request_id}\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode() + body


class _TooManyHeaders(Exception):
    """Raised from the parser's callback: the parser stops and reports an error."""


class HeaderTimeoutProtocol(_Protocol):
    _header_timer: asyncio.TimerHandle | None = None
    _header_bytes = 0
    """Bytes received since the current request began, while its headers are not all in."""
    _header_count = 0
    _headers_done = False

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._await_headers()

    def data_received(self, data: bytes) -> None:
        awaiting = not self._in_progress()
        self._headers_done = False
        super().data_received(data)
        if self.transport.is_closing():
            return
        if self._headers_done or not awaiting:
            self._header_bytes = 0
        else:
            self._header_bytes += len(data)
            if self._header_bytes > MAX_HEADER_BYTES:
                self._refuse_headers()
                return
        if self._header_timer is not None and self._in_progress():
            self._header_timer.cancel()
            self._header_timer = None

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._header_count = 0

    def on_header(self, name: bytes, value: bytes) -> None:
        self._header_count += 1
        if self._header_count > MAX_HEADERS:
            raise _TooManyHeaders
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self._headers_done = True
        super().on_headers_complete()

    def send_400_response(self, msg: str) -> None:
        if self._header_count > MAX_HEADERS:
            self._refuse_headers()
            return
        self.transport.write(
            _refusal(400, "Bad Request", "INVALID_REQUEST", "The request is not valid HTTP.")
        )
        self.transport.close()

    def _refuse_headers(self) -> None:
        self.logger.warning("Request headers over the limit: connection closed.")
        self.transport.write(
            _refusal(
                431,
                "Request Header Fields Too Large",
                "HEADERS_TOO_LARGE",
                f"Request headers are limited to {MAX_HEADER_BYTES} bytes and "
                f"{MAX_HEADERS} fields.",
            )
        )
        self.transport.close()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._await_headers()

    def shutdown(self) -> None:
        if self._streaming():
            self.transport.close()  # (connection_lost follows: the app sees a disconnect)
            return
        super().shutdown()

    def _streaming(self) -> bool:
        """Whether a response is being streamed: started with no length, not finished. Every
        other response has a length (JSON, files) and is left to finish in the grace period."""
        cycle = self.cycle
        return (
            cycle is not None
            and cycle.response_started
            and not cycle.response_complete
            and bool(getattr(cycle, "chunked_encoding", False))
        )

    def connection_lost(self, exc: Exception | None) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        super().connection_lost(exc)

    def _in_progress(self) -> bool:
        """Whether a request's headers are in and its response is not yet complete."""
        return self.cycle is not None and not self.cycle.response_complete

    def _await_headers(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
        self._header_timer = self.loop.call_later(header_timeout(), self._headers_too_slow)

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if self.transport.is_closing() or self._in_progress():
            return
        self.transport.write(TIMEOUT_RESPONSE)
        self.transport.close()

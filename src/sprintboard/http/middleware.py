"""The middleware every request passes (`middleware_stack`), and its outermost layer,
`RequestContextMiddleware`."""

import itertools
import logging
import os
import secrets
import time

from fastapi import FastAPI
from starlette.middleware.cors import CORSMiddleware
from starlette.middleware.exceptions import ExceptionMiddleware
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sprintboard.addresses import ClientAddresses
from sprintboard.config import Settings
from sprintboard.db import is_unavailable
from sprintboard.errors import Unavailable, app_error_response, error_response
from sprintboard.http.authentication import Authentication
from sprintboard.http.clients import BodyTimeoutMiddleware, LoadShedMiddleware
from sprintboard.http.framework import exception_telemetry
from sprintboard.http.guards import BodyGuardMiddleware
from sprintboard.http.idempotency import IdempotencyMiddleware
from sprintboard.http.ratelimit import RateLimitMiddleware, shown_headers
from sprintboard.logs import log_access

logger = logging.getLogger("sprintboard.http")


class _RequestIds:
    """32 hex digits, unique across processes: this process's random half, then a counter
    (a quarter of the cost of a random UUID, on every request). A forked child (a server
    that forks its workers after importing the app) draws its own half.
    """

    def __init__(self) -> None:
        self.restart()
        os.register_at_fork(after_in_child=self.restart)

    def restart(self) -> None:
        self.prefix = secrets.token_hex(8)
        self.numbers = itertools.count(1)

    def new(self) -> str:
        return f"{self.prefix}{next(self.numbers):016x}"


new_request_id = _RequestIds().new


CLIENT_CLOSED_REQUEST = 499
"""The access line's status for a request its client abandoned (nginx's convention)."""
DATABASE_UNAVAILABLE = "The database cannot be reached; retry shortly."
DATABASE_RETRY = 2
"""Seconds a client is asked to wait (`Retry-After`) while the database cannot be reached."""

_SECURITY_HEADERS = [
    (b"cache-control", b"no-store"),
    (b"x-content-type-options", b"nosniff"),
]


def _header_unless_cached(
    header: list[tuple[bytes, bytes]], sent: list[tuple[bytes, bytes]]
) -> list[tuple[bytes, bytes]]:
    if any(name == b"cache-control" for name, _ in sent):
        return [(name, value) for name, value in header if name != b"cache-control"]
    return header


class RequestContextMiddleware:
    """The outermost layer: gives every request an id (`X-Request-Id`) and the security
    headers, turns any unexpected exception into the 500 envelope (no stack trace leaves the
    process, only the request id), and writes the request's access line.
    """

    def __init__(self, app: ASGIApp, *, addresses: ClientAddresses) -> None:
        self.app = app
        self.addresses = addresses

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        self.addresses.resolve(scope)  # (the one place: every layer inside sees the client)
        request_id = new_request_id()
        scope.setdefault("state", {})["request_id"] = request_id
        header = [(b"x-request-id", request_id.encode()), *_SECURITY_HEADERS]
        status = 0

        async def send_with_headers(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                # (The board's pages and files say how they may be cached.)
                extra = (
                    header
                    if scope["path"].startswith("/api/") or status >= 400
                    else (_header_unless_cached(header, message.get("headers", [])))
                )
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        except ClientDisconnect:
            # The client went away before its request was in: nobody to answer, and nothing
            # went wrong here. (`status` stays 0 unless an answer had begun.)
            logger.info("client disconnected mid-request", extra={"request_id": request_id})
            status = status or CLIENT_CLOSED_REQUEST
        except Exception as error:
            if is_unavailable(error):
                # Expected while the database restarts or is out of reach: no stack trace.
                logger.warning(
                    "database unavailable: %s",
                    str(error).strip().splitlines()[0] if str(error).strip() else repr(error),
                    extra={"request_id": request_id},
                )
                response = app_error_response(Unavailable(DATABASE_UNAVAILABLE, DATABASE_RETRY))
            else:
                logger.exception("unhandled error", extra={"request_id": request_id})
                response = error_response(
                    500, "INTERNAL", "An unexpected error occurred.", {"requestId": request_id}
                )
            if status:
                raise
            response.raw_headers += shown_headers(scope)
            await response(scope, receive, send_with_headers)
        finally:
            log_access(scope, status or 500, started, request_id)


def middleware_stack(
    app: FastAPI, settings: Settings, *, authentication: Authentication, inner: ASGIApp
) -> ASGIApp:
    """The layers every request passes, outermost first: request id, security headers, 500s
    and the access log; load shedding (503 past the requests-in-progress cap); the body's
    deadline (408); CORS (only when origins are configured); the rate limits; the body
    guard (413, 415); idempotency; the exception handlers; the board's pages; the routes.
    Cheap refusals come before expensive work: a request over its budget is refused before
    its body is read or a database session is opened.

    Built here rather than by Starlette, which adds two outer layers of its own (a plain-text
    500, which `RequestContextMiddleware` makes unreachable, and FastAPI's exception
    telemetry, kept when OpenTelemetry is on) and FastAPI's exit stack around every request:
    only the routes FastAPI's request handler serves need that, and `RouteIndex` gives it to
    them. Each layer cost every request a few microseconds. Middleware goes in here:
    `app.add_middleware` would be ignored, so it is refused.
    """
    if app.user_middleware:
        raise RuntimeError("add middleware in sprintboard.http.middleware.middleware_stack")
    handlers = {
        key: handler
        for key, handler in app.exception_handlers.items()
        if key not in (500, Exception)
    }
    stack: ASGIApp = ExceptionMiddleware(inner, handlers=handlers, debug=app.debug)
    stack = IdempotencyMiddleware(stack, authentication=authentication)
    stack = BodyGuardMiddleware(stack)
    stack = RateLimitMiddleware(stack, settings=settings, authentication=authentication)
    if settings.cors_origins:
        stack = CORSMiddleware(
            stack,
            allow_origins=settings.cors_origins,
            allow_methods=["GET", "POST", "PATCH", "DELETE"],
            allow_headers=[
                "Authorization",
                "Content-Type",
                "Idempotency-Key",
                "If-Match",
                "Last-Event-ID",
            ],
            allow_credentials=True,  # (a board served from an allowed origin uses its session)
            expose_headers=[
                "ETag",
                "Retry-After",
                "RateLimit-Limit",
                "RateLimit-Remaining",
                "RateLimit-Reset",
                "X-Request-Id",
                "Idempotent-Replayed",
            ],
            max_age=600,
        )
    if settings.opentelemetry:
        stack = exception_telemetry(stack)
    stack = BodyTimeoutMiddleware(stack, timeout=settings.body_timeout)
    stack = LoadShedMiddleware(stack, max_in_progress=settings.max_requests_in_progress)
    return RequestContextMiddleware(stack, addresses=ClientAddresses(settings.trusted_proxies))

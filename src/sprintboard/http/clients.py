"""Slow and abandoned clients (contract §14): what one process holds for them is bounded.

- `LoadShedMiddleware`: past `SPRINTBOARD_MAX_REQUESTS_IN_PROGRESS` requests in progress
  (default 256), a request is answered 503 UNAVAILABLE with `Retry-After` at once, in the
  usual envelope, instead of queueing without end (the audit's 500 busy connections waited
  up to 9.8 s, p99, and nothing was shed). uvicorn's own `limit_concurrency` answers a bare
  text 503 and counts idle connections too. `/healthz` is never shed: the process is up.
- `BodyTimeoutMiddleware`: once its headers are in, a request has `SPRINTBOARD_BODY_TIMEOUT`
  seconds (default 30) to deliver its body; past that it is answered 408 and the connection
  closed. (Headers have their own deadline in the server's protocol, `server.py`.)

A client that goes away mid-request surfaces as Starlette's `ClientDisconnect`, which
`app.RequestContextMiddleware` logs as a disconnect (status 499 in the access line), not as
a 500.
"""

import asyncio
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sprintboard.errors import AppError, Unavailable, app_error_response

OVERLOAD_RETRY = 1
"""Seconds a shed request is asked to wait (`Retry-After`)."""
NEVER_SHED = frozenset({"/healthz"})


class RequestTimeout(AppError):
    status = 408
    code = "REQUEST_TIMEOUT"


class BodyTooSlow(Exception):
    """The request's body did not arrive within its deadline."""


class LoadShedMiddleware:
    def __init__(self, app: ASGIApp, *, max_in_progress: int) -> None:
        self.app = app
        self.max_in_progress = max_in_progress
        self.in_progress = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in NEVER_SHED:
            await self.app(scope, receive, send)
            return
        if self.in_progress >= self.max_in_progress:
            busy = Unavailable("This server is at capacity; retry shortly.", OVERLOAD_RETRY)
            await app_error_response(busy)(scope, receive, send)
            return
        self.in_progress += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_progress -= 1


class BodyTimeoutMiddleware:
    def __init__(self, app: ASGIApp, *, timeout: float) -> None:
        self.app = app
        self.timeout = timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        deadline = time.monotonic() + self.timeout
        body_done = False
        started = False

        async def timed_receive() -> Message:
            nonlocal body_done
            if body_done:
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), deadline - time.monotonic())
            except TimeoutError:
                raise BodyTooSlow() from None
            if message["type"] != "http.request" or not message.get("more_body", False):
                body_done = True
            return message

        async def watched_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, timed_receive, watched_send)
        except BodyTooSlow:
            if started:
                raise
            response = app_error_response(
                RequestTimeout("The request's body did not arrive in time.")
            )
            response.headers["connection"] = "close"  # (the rest of it will not be read)
            await response(scope, receive, send)

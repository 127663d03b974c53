"""Requests refused before parsing: bodies too large (413) or not JSON (415), and parameters
holding U+0000 (400), which PostgreSQL cannot store or compare (in a path, it stands for an id
that cannot exist).

A body declared larger than `MAX_BODY_BYTES` by `Content-Length` is refused unread. A body
without a length (chunked) is read here, counting, and refused as soon as it passes the limit;
the bytes read are then handed on, so the route reads the same body (it would buffer it whole
anyway). Deeply nested JSON cannot exhaust anything either: the parser refuses nesting past
Python's recursion limit, which the error handler turns into a 400 `invalid_json`.
"""

import re

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sprintboard.errors import (
    AppError,
    InvalidRequest,
    PayloadTooLarge,
    UnsupportedMediaType,
    error_response,
)

MAX_BODY_BYTES = 1024 * 1024
MAX_HOOK_BYTES = 5 * 1024 * 1024
"""A forge's webhook (`POST /api/v1/integrations/{id}/hooks`, contract §20) may be larger."""
_HOOK_PATH = re.compile(r"^/api/v1/integrations/[^/]+/hooks$")
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


class BodyGuardMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and "\x00" in scope["path"]:
            # PostgreSQL text cannot hold U+0000, so no id holds it: the path goes on with
            # U+FFFD in its place, to be answered like any other id that is not there (404,
            # after the key is checked).
            scope = {**scope, "path": scope["path"].replace("\x00", "\ufffd")}
        if scope["type"] == "http" and b"%00" in scope["query_string"]:
            # A filter must not reach the database with it: refused, as in bodies.
            error = InvalidRequest("query", "invalid_value", "Parameters must not contain U+0000.")
            await _refuse(error, scope, receive, send)
            return
        if scope["type"] != "http" or scope["method"] not in BODY_METHODS:
            await self.app(scope, receive, send)
            return
        length: int | None = None
        chunked = False
        content_type = b""
        for name, value in scope["headers"]:
            if name == b"content-length":
                length = int(value) if value.isdigit() else None
            elif name == b"transfer-encoding":
                chunked = b"chunked" in value.lower()
            elif name == b"content-type":
                content_type = value
        limit = MAX_HOOK_BYTES if _HOOK_PATH.match(scope["path"]) else MAX_BODY_BYTES
        if length is not None and length > limit:
            await _refuse(PayloadTooLarge(_too_large(limit)), scope, receive, send)
            return
        if length is None and chunked:
            messages = await _read_counting(receive, limit)
            if messages is None:
                await _refuse(PayloadTooLarge(_too_large(limit)), scope, receive, send)
                return
            receive = _replay(messages, receive)
            length = sum(len(m.get("body", b"")) for m in messages)
        if length and not _is_json(content_type) and not _is_sign_in_form(scope, content_type):
            unsupported = UnsupportedMediaType("The request body must be `application/json`.")
            await _refuse(unsupported, scope, receive, send)
            return
        await self.app(scope, receive, send)


def _too_large(limit: int) -> str:
    return f"The request body is larger than {limit} bytes."


def _is_json(content_type: bytes) -> bool:
    media_type = content_type.split(b";", 1)[0].strip().lower()
    return media_type == b"application/json"


def _is_sign_in_form(scope: Scope, content_type: bytes) -> bool:
    """The board's HTML sign-in form, which works before any script runs (contract §13)."""
    media_type = content_type.split(b";", 1)[0].strip().lower()
    return media_type == b"application/x-www-form-urlencoded" and scope["path"] == SIGN_IN_PATH


SIGN_IN_PATH = "/api/v1/sessions"


async def _read_counting(receive: Receive, limit: int) -> list[Message] | None:
    """Every message of the body, or None once it grows past the limit."""
    messages: list[Message] = []
    size = 0
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            return messages
        size += len(message.get("body", b""))
        if size > limit:
            return None
        if not message.get("more_body", False):
            return messages


def _replay(messages: list[Message], receive: Receive) -> Receive:
    pending = list(messages)

    async def replayed() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replayed


async def _refuse(error: AppError, scope: Scope, receive: Receive, send: Send) -> None:
    response = error_response(error.status, error.code, error.message, error.details)
    await response(scope, receive, send)

"""Structured logs: one JSON object per line on standard error, and one line per request.

`configure_logging(level)` is called by the CLI and by `create_app` (for servers started some
other way); calling it again only changes the level. The access line holds the method, the
path (never the query string), the status, the duration and the request id: no headers are
logged, so neither `Authorization` nor any other secret can reach the logs.
"""

import logging
import sys
import time
from datetime import UTC, datetime
from typing import Any

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

access_logger = logging.getLogger("sprintboard.access")

_RESERVED = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {
    "message",
    "asctime",
    "color_message",  # uvicorn's copy of the message with terminal colours
}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name, value in record.__dict__.items():
            if name not in _RESERVED and not name.startswith("_"):
                entry[name] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(entry, default=str).decode()


class _JsonHandler(logging.Handler):
    """Writes to the current `sys.stderr` (test runners swap it); its class marks the handler
    this module installed, so that a second `configure_logging` does not add another.
    """

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
        except Exception:
            self.handleError(record)


def configure_logging(level: str = "INFO") -> None:
    root = logging.getLogger()
    root.setLevel(level.upper())
    if not any(isinstance(handler, _JsonHandler) for handler in root.handlers):
        handler = _JsonHandler()
        handler.setFormatter(JsonFormatter())
        root.addHandler(handler)


class AccessLogMiddleware:
    """Logs every HTTP request once it is answered (or has failed)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def send_and_note(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_and_note)
        finally:
            if access_logger.isEnabledFor(logging.INFO):
                access_logger.info(
                    "%s %s %s",
                    scope["method"],
                    scope["path"],
                    status,
                    extra={
                        "method": scope["method"],
                        "path": scope["path"],
                        "status": status,
                        "duration_ms": round((time.perf_counter() - started) * 1000, 2),
                        "request_id": scope.get("state", {}).get("request_id"),
                    },
                )

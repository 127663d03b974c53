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
from starlette.types import Scope

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
    # Alembic's set-up chatter (a line per plugin it loads) on every start and CLI command;
    # the migrations it runs are still logged.
    logging.getLogger("alembic.runtime.plugins").setLevel(logging.WARNING)
    # httpx logs each request's full URL at INFO: a webhook's URL is the workspace's to see
    # (in its deliveries), not the log's.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    if not any(isinstance(handler, _JsonHandler) for handler in root.handlers):
        handler = _JsonHandler()
        handler.setFormatter(JsonFormatter())
        root.addHandler(handler)


def log_access(scope: Scope, status: int, started: float, request_id: str) -> None:
    """The access line of an answered (or failed) request; `started` is its `perf_counter`."""
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
                "request_id": request_id,
                "client": client[0] if (client := scope.get("client")) else None,
            },
        )

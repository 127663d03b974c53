"""Logs on standard error: one JSON object per line (for collectors) or one readable line
per record (on a terminal), and one line per request.

`configure_logging(level, log_format)` is called by the CLI and by `create_app` (for servers
started some other way); calling it again only changes the level and the format. The access
line holds the method, the path (never the query string), the status, the duration and the
request id: no headers are logged, so neither `Authorization` nor any other secret can reach
the logs.
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


class TextFormatter(logging.Formatter):
    """`21:05:44.263 INFO  sprintboard.access: GET /api/v1/tasks 200 duration_ms=1.2 ...`"""

    def format(self, record: logging.LogRecord) -> str:
        moment = datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")
        extra = " ".join(
            f"{name}={value}"
            for name, value in record.__dict__.items()
            if name not in _RESERVED and not name.startswith("_") and name not in _SHOWN
        )
        line = f"{moment[:23]}Z {record.levelname:<7} {record.name}: {record.getMessage()}"
        line = f"{line}  {extra}" if extra else line
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


_SHOWN = frozenset({"method", "path", "status"})
"""Extra fields the access line's message already shows."""


class _QuietAlembicSetUp(logging.Filter):
    """Drops the two lines Alembic logs on every run ("Context impl SQLiteImpl.", "Will
    assume non-transactional DDL."); the migrations it runs are still logged."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(("Context impl ", "Will assume "))


class _JsonHandler(logging.Handler):
    """Writes to the current `sys.stderr` (test runners swap it); its class marks the handler
    this module installed, so that a second `configure_logging` does not add another.
    """

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
        except Exception:
            self.handleError(record)


def configure_logging(level: str = "INFO", log_format: str | None = None) -> None:
    """`log_format`: `text`, `json`, or None for text on a terminal and JSON otherwise."""
    root = logging.getLogger()
    root.setLevel(level.upper())
    # Alembic's set-up chatter (a line per plugin it loads, the database's traits) on every
    # start and CLI command; the migrations it runs are still logged.
    logging.getLogger("alembic.runtime.plugins").setLevel(logging.WARNING)
    # httpx logs each request's full URL at INFO: a webhook's URL is the workspace's to see
    # (in its deliveries), not the log's.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    migration = logging.getLogger("alembic.runtime.migration")
    if not any(isinstance(f, _QuietAlembicSetUp) for f in migration.filters):
        migration.addFilter(_QuietAlembicSetUp())
    if log_format is None:
        log_format = "text" if sys.stderr.isatty() else "json"
    handler = next((h for h in root.handlers if isinstance(h, _JsonHandler)), None)
    if handler is None:
        handler = _JsonHandler()
        root.addHandler(handler)
    handler.setFormatter(TextFormatter() if log_format == "text" else JsonFormatter())


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

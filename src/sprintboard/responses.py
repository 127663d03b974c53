"""JSON responses in the contract's envelopes, serialized once with orjson."""

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import orjson
from starlette.responses import JSONResponse as StarletteJSONResponse


class JSONResponse(StarletteJSONResponse):
    def render(self, content: Any) -> bytes:
        return orjson.dumps(content)


def iso(value: datetime | None) -> str | None:
    """`2026-11-22T09:30:00.000Z`: UTC, milliseconds, `Z`."""
    if value is None:
        return None
    return value.astimezone(UTC).isoformat(timespec="milliseconds")[:23] + "Z"  # less "+00:00"


def one(
    record: dict[str, Any], *, status: int = 200, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse({"data": record}, status_code=status, headers=headers)


def many(documents: Sequence[dict[str, Any]], total: int) -> JSONResponse:
    return JSONResponse({"data": {"documents": list(documents), "total": total}})


def deleted(record_id: str) -> JSONResponse:
    return JSONResponse({"data": {"$id": record_id, "deleted": True}})

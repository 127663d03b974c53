"""JSON responses in the contract's envelopes, serialized once with orjson; every single record
goes out with its `ETag`.
"""

from collections.abc import Mapping, Sequence
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


def etag(record_id: str, version: int) -> str:
    return f'"{record_id}.{version}"'


def stamp_version(updated_at: datetime) -> int:
    """The version of a record without a counter: its `$updatedAt`, in milliseconds."""
    return int(updated_at.timestamp() * 1000)


def record_etag(record: Mapping[str, Any]) -> str:
    """The ETag of a record as shown, from its `$id` and `$updatedAt` (what `etag` and
    `stamp_version` give for the stored record).
    """
    return etag(record["$id"], stamp_version(datetime.fromisoformat(record["$updatedAt"])))


def one(
    record: dict[str, Any], *, status: int = 200, headers: dict[str, str] | None = None
) -> JSONResponse:
    """A single record; its `ETag` is `record_etag` unless `headers` give one (a record with a
    version counter)."""
    if record.get("$id") and record.get("$updatedAt") and "ETag" not in (headers or {}):
        headers = {**(headers or {}), "ETag": record_etag(record)}
    return JSONResponse({"data": record}, status_code=status, headers=headers)


def many(
    documents: Sequence[dict[str, Any]],
    total: int,
    *,
    next_cursor: str | None = None,
    status: int = 200,
    total_capped: bool | None = None,
) -> JSONResponse:
    """A list page and its `nextCursor` (none for a list that is not paged, as a bulk
    update's answer); `totalCapped` for a list whose count stops at a cap."""
    page_data: dict[str, Any] = {
        "documents": list(documents),
        "total": total,
        "nextCursor": next_cursor,
    }
    if total_capped is not None:
        page_data["totalCapped"] = total_capped
    return JSONResponse({"data": page_data}, status_code=status)


def deleted(record_id: str) -> JSONResponse:
    return JSONResponse({"data": {"$id": record_id, "deleted": True}})

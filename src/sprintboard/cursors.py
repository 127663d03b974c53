"""Opaque list cursors: where the next page of a list starts, tied to the query that made it.

A cursor is URL-safe base64 of `[fingerprint, position]`: the fingerprint is a hash of the
list's filters and order (everything but the paging itself), so a cursor sent with other
filters or another order is refused (400 `invalid_value` on `cursor`) instead of continuing
some other list from an unrelated place. The position is the list's own business: the sort
keys of the last item shown (keyset paging, `GET /tasks`) or the number of records shown so
far. Clients never parse it.
"""

import base64
import binascii
import hashlib
from datetime import date, datetime
from typing import Any

import orjson

from sprintboard.errors import InvalidRequest

_FIELD = "cursor"


def fingerprint(query: dict[str, Any]) -> str:
    """A short hash of a list's filters and order (`query`: JSON-able values)."""
    return hashlib.blake2b(
        orjson.dumps(query, option=orjson.OPT_SORT_KEYS), digest_size=8
    ).hexdigest()


def encode(query_fingerprint: str, position: Any) -> str:
    payload = orjson.dumps([query_fingerprint, _tagged(position)])
    return base64.urlsafe_b64encode(payload).rstrip(b"=").decode()


def decode(cursor: str, query_fingerprint: str) -> Any:
    """The position a cursor holds; 400 `invalid_value` for one that is not ours or was made
    by a list with other filters or order."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        made_for, position = orjson.loads(base64.urlsafe_b64decode(padded.encode()))
    except (ValueError, TypeError, binascii.Error):
        raise InvalidRequest(
            _FIELD, "invalid_value", "cursor: not a cursor of this list."
        ) from None
    if made_for != query_fingerprint:
        raise InvalidRequest(
            _FIELD,
            "invalid_value",
            "cursor: made for other filters or another order; send the same ones.",
        )
    return _untagged(position)


def _tagged(value: Any) -> Any:
    """Dates and date-times (PostgreSQL's sort keys) as `{"dt": ...}` / `{"d": ...}`."""
    if isinstance(value, list | tuple):
        return [_tagged(v) for v in value]
    if isinstance(value, datetime):
        return {"dt": value.isoformat()}
    if isinstance(value, date):
        return {"d": value.isoformat()}
    return value


def _untagged(value: Any) -> Any:
    if isinstance(value, list):
        return [_untagged(v) for v in value]
    if isinstance(value, dict):
        try:
            if "dt" in value:
                return datetime.fromisoformat(value["dt"])
            if "d" in value:
                return date.fromisoformat(value["d"])
        except (TypeError, ValueError):
            pass
        raise InvalidRequest(_FIELD, "invalid_value", "cursor: not a cursor of this list.")
    return value

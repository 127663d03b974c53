"""Optimistic concurrency: `ETag` from a record's version, checked against `If-Match`."""

from datetime import datetime
from typing import Annotated

from fastapi import Header

from sprintboard.errors import PreconditionFailed


def etag(record_id: str, version: int) -> str:
    return f'"{record_id}.{version}"'


def stamp_version(updated_at: datetime) -> int:
    """The version of a record without a counter: its `$updatedAt`, in milliseconds."""
    return int(updated_at.timestamp() * 1000)


def check_if_match(if_match: str | None, record_id: str, version: int) -> None:
    """412 unless `If-Match` is absent, `*`, or names the record's current ETag."""
    if if_match is None or if_match.strip() == "*":
        return
    current = etag(record_id, version)
    candidates = {tag.strip().removeprefix("W/") for tag in if_match.split(",")}
    if current not in candidates:
        raise PreconditionFailed(
            "The record changed since it was read (If-Match does not match its ETag).",
            {"etag": current},
        )


IfMatch = Annotated[
    str | None,
    Header(
        alias="If-Match",
        description="Apply only if the record's current `ETag` is one of these.",
    ),
]

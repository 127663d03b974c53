"""Optimistic concurrency: `ETag` from a record's version (see `responses`), checked against
`If-Match`.
"""

from collections.abc import Mapping
from typing import Annotated, Any

from fastapi import Header

from sprintboard.errors import PreconditionFailed
from sprintboard.responses import etag, record_etag, stamp_version

__all__ = ["IfMatch", "check_if_match", "check_record_if_match", "etag", "stamp_version"]


def check_if_match(if_match: str | None, record_id: str, version: int) -> None:
    """412 unless `If-Match` is absent, `*`, or names the record's current ETag."""
    _check(if_match, etag(record_id, version))


def check_record_if_match(if_match: str | None, record: Mapping[str, Any]) -> None:
    """As `check_if_match`, for a record without a version counter, as the API shows it."""
    _check(if_match, record_etag(record))


def _check(if_match: str | None, current: str) -> None:
    if if_match is None or if_match.strip() == "*":
        return
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

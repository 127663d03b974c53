"""Optimistic concurrency: `ETag` from a record's version (see `responses`), checked against
`If-Match`.
"""

from typing import Annotated

from fastapi import Header

from sprintboard.errors import PreconditionFailed
from sprintboard.responses import etag, stamp_version

__all__ = ["IfMatch", "check_if_match", "etag", "stamp_version"]


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

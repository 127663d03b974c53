"""One error type, one envelope: `{"error": {"code", "message", "details"}}`."""

import re
from collections.abc import Sequence
from typing import Any

from starlette.responses import Response

from sprintboard.responses import JSONResponse


class AppError(Exception):
    status = 500
    code = "INTERNAL"

    def __init__(
        self,
        message: str,
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.details = details or {}
        self.headers = headers


class InvalidRequest(AppError):
    status = 400
    code = "INVALID_REQUEST"

    def __init__(self, field: str, reason: str, message: str, **details: Any) -> None:
        super().__init__(message, {"field": field, "reason": reason, **details})


class Unauthenticated(AppError):
    status = 401
    code = "UNAUTHENTICATED"

    def __init__(self, message: str = "A valid API key is required.") -> None:
        super().__init__(message, headers={"WWW-Authenticate": "Bearer"})


class Forbidden(AppError):
    status = 403
    code = "FORBIDDEN"

    def __init__(self, permission: str) -> None:
        super().__init__(
            f"This call needs the {permission} permission.", {"permission": permission}
        )


class NotAuthor(AppError):
    """A change only the author of a record may make (editing a comment)."""

    status = 403
    code = "FORBIDDEN"

    def __init__(self, what: str) -> None:
        super().__init__(f"Only the author may change this {what}.", {"reason": "not_author"})


class CrossSiteRefused(AppError):
    """A state-changing request authenticated by the browser-session cookie from an origin
    that is neither the service's own nor allowed (`SPRINTBOARD_CORS_ORIGINS`)."""

    status = 403
    code = "FORBIDDEN"

    def __init__(self, origin: str | None) -> None:
        super().__init__(
            "A change made with a browser session must come from this service's own pages"
            " (the Origin header)."
            if origin is None
            else f"Origin {origin} may not make changes with a browser session.",
            {"reason": "csrf"},
        )


class NotFound(AppError):
    status = 404
    code = "NOT_FOUND"

    def __init__(self, what: str = "Resource") -> None:
        super().__init__(f"{what} not found.")


class Conflict(AppError):
    status = 409
    code = "CONFLICT"

    def __init__(self, reason: str, message: str, **details: Any) -> None:
        super().__init__(message, {"reason": reason, **details})


class PreconditionFailed(AppError):
    status = 412
    code = "PRECONDITION_FAILED"


class PayloadTooLarge(AppError):
    status = 413
    code = "PAYLOAD_TOO_LARGE"


class UnsupportedMediaType(AppError):
    status = 415
    code = "UNSUPPORTED_MEDIA_TYPE"


class RateLimited(AppError):
    status = 429
    code = "RATE_LIMITED"

    def __init__(self, retry_after: int) -> None:
        super().__init__(
            "Too many requests; try again later.",
            {"retryAfter": retry_after},
            headers={"Retry-After": str(retry_after)},
        )


class Unavailable(AppError):
    status = 503
    code = "UNAVAILABLE"

    def __init__(self, message: str, retry_after: int = 1) -> None:
        super().__init__(
            message, {"retryAfter": retry_after}, headers={"Retry-After": str(retry_after)}
        )


STATUS_CODES = {
    400: "INVALID_REQUEST",
    401: "UNAUTHENTICATED",
    403: "FORBIDDEN",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    409: "CONFLICT",
    412: "PRECONDITION_FAILED",
    413: "PAYLOAD_TOO_LARGE",
    408: "REQUEST_TIMEOUT",
    415: "UNSUPPORTED_MEDIA_TYPE",
    429: "RATE_LIMITED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


def app_error_response(error: AppError) -> Response:
    return error_response(error.status, error.code, error.message, error.details, error.headers)


def error_response(
    status: int,
    code: str,
    message: str,
    details: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> Response:
    body = {"error": {"code": code, "message": message, "details": details or {}}}
    return JSONResponse(body, status_code=status, headers=headers)


# Pydantic error types, mapped to the contract's `details.reason` values.
_REASONS = {
    "missing": "required",
    "extra_forbidden": "unknown_field",
    "string_too_short": "too_short",
    "too_short": "too_short",
    "string_too_long": "too_long",
    "too_long": "too_long",
    "greater_than": "out_of_range",
    "greater_than_equal": "out_of_range",
    "less_than": "out_of_range",
    "less_than_equal": "out_of_range",
    "finite_number": "out_of_range",
    "literal_error": "invalid_value",
    "enum": "invalid_value",
    "json_invalid": "invalid_json",
    "string_pattern_mismatch": "invalid_format",
    "date_parsing": "invalid_format",
    "date_from_datetime_parsing": "invalid_format",
    "datetime_parsing": "invalid_format",
    "datetime_from_date_parsing": "invalid_format",
}
_OWN_REASONS = {
    "required",
    "invalid_type",
    "invalid_value",
    "invalid_format",
    "too_long",
    "too_short",
    "out_of_range",
    "unknown_field",
    "read_only",
    "immutable",
    "invalid_json",
    "not_found",
    "mixed_workspaces",
}


READ_ONLY_FIELDS = frozenset(
    {
        "$id",
        "$createdAt",
        "$updatedAt",
        "key",
        "prefix",
        "lastUsedAt",
        "revokedAt",
        "completedAt",
        "commentCount",
        "loggedHours",
        "workItemCount",
        "totalPoints",
        "completedPoints",
        "movedItemCount",
        "project",
        "assignees",
        "comments",
        "timeLogs",
        "workItems",
        "childCount",
        "statusCategory",
        "parent",
        "progress",
        "relations",
        "blocked",
        "isOrgAdmin",
        "secret",
        "authorId",
        "userId",
        "workItemId",
        "deleted",
    }
)
"""Server-owned fields: sending one is `read_only`, not `unknown_field`."""

IMMUTABLE_FIELDS = frozenset({"projectId", "workspaceId"})
"""Fields fixed at creation: where an update model lacks them, sending one is `immutable`."""


_BULK_ENTRY = re.compile(r"^tasks\[\d+\]\.([^.\[]+)")
_BULK_ENTRY_ITSELF = re.compile(r"^tasks\[\d+\]$")


def _field_path(loc: Sequence[int | str]) -> str:
    parts = list(loc[1:]) if loc and loc[0] in ("body", "query", "path", "header") else list(loc)
    path = ""
    for part in parts:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path or (str(loc[0]) if loc else "body")


def validation_error_details(
    errors: Sequence[Any], *, is_update: bool = False
) -> tuple[str, dict[str, Any]]:
    """The message and details of a 400 for a list of Pydantic errors (the first one leads).

    `is_update`: the body is a PATCH, where fixed-at-creation fields are `immutable`.
    """
    first = errors[0]
    loc = tuple(first.get("loc", ()))
    kind = first.get("type", "")
    reason = kind if kind in _OWN_REASONS else _REASONS.get(kind)
    if reason is None:
        reason = "invalid_type" if kind.endswith(("_type", "_parsing")) else "invalid_value"
    if kind in ("literal_error", "enum") and not isinstance(first.get("input"), str):
        reason = "invalid_type"  # (null or a number where one of some strings is wanted)
    path = _field_path(loc)
    field = path.split(".")[0].split("[")[0]
    # An entry of a bulk request is named with its field, `tasks[3].name` (contract §10).
    entry = _BULK_ENTRY.match(path)
    if entry:
        field = entry.group(0)
    named = (first.get("ctx") or {}).get("field")
    if field == "body" and isinstance(named, str):  # a whole-body check that names its field
        path = field = named
    elif entry is None and isinstance(named, str) and _BULK_ENTRY_ITSELF.match(path):
        path = field = f"{path}.{named}"  # (a check of a whole entry that names its field)
    if reason == "unknown_field" and path == field:
        own = entry.group(1) if entry else field
        reason = "read_only" if own in READ_ONLY_FIELDS else reason
        reason = "immutable" if is_update and own in IMMUTABLE_FIELDS else reason
    if kind == "missing" and field == "body":
        reason = "required"
    if reason == "invalid_json":
        # Pydantic locates a decode error by character offset; the field is the whole body.
        path = field = "body"
    text = str(first.get("msg", "invalid value"))
    # (A check that names its field in its own message, as whole-body checks do, is not
    # prefixed twice: `sprintId: must not contain U+0000.`)
    message = text if text.startswith(f"{path}: ") else f"{path}: {text}"
    details: dict[str, Any] = {"field": field, "reason": reason}
    if path != field:
        details["path"] = path
    if len(errors) > 1:
        details["errors"] = [
            {"field": _field_path(tuple(e.get("loc", ()))), "message": e.get("msg", "")}
            for e in errors
        ]
    return message, details

"""Building blocks shared by every domain's schemas: strict request models, dates, envelopes."""

import re
from collections.abc import Collection
from datetime import UTC, date, datetime, time
from typing import Annotated, Any, ClassVar, Generic, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    WithJsonSchema,
    model_validator,
)
from pydantic_core import PydanticCustomError

from sprintboard import cursors
from sprintboard.errors import InvalidRequest

T = TypeVar("T")


WHITE_SPACE = r"\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
"""Unicode's White_Space, which trimming removes (as a regular expression class's body)."""
HAS_NUL = {"pattern": "\\u0000"}
BLANK = {"pattern": f"^[{WHITE_SPACE}]*$"}


def _state_string_rules(schema: dict[str, Any]) -> None:
    """Writes into a body's JSON schema the two rules every string of a body follows: no
    U+0000, and, where a string may not be empty, not only white space either (strings are
    trimmed first). A string with fixed values of its own keeps them. (As `not` rather than
    one `pattern`: a pattern's generators took seconds per string of 65,536 characters.)
    """
    for node in schema.get("properties", {}).values():
        state_string_rules_of(node)


def state_string_rules_of(node: Any) -> None:
    if not isinstance(node, dict):
        return
    if node.get("type") == "string" and not {"enum", "const"} & set(node):
        node["not"] = {"anyOf": [HAS_NUL, BLANK]} if node.get("minLength", 0) >= 1 else HAS_NUL
    for key in ("anyOf", "oneOf", "allOf"):
        for option in node.get(key, ()):
            state_string_rules_of(option)
    state_string_rules_of(node.get("items"))


class RequestModel(BaseModel):
    """A request body: strict types, trimmed strings, unknown fields rejected."""

    model_config = ConfigDict(
        extra="forbid",
        str_strip_whitespace=True,
        strict=True,
        populate_by_name=True,
        json_schema_extra=_state_string_rules,
    )

    server_owned: ClassVar[frozenset[str]] = frozenset()
    """Fields of the record this body makes or changes that the server sets (its workspace,
    taken from the path; a member's name): sending one is `read_only`, not `unknown_field`.
    The fields every record has (`$id`, `$createdAt`...) are `errors.READ_ONLY_FIELDS`.
    """

    def sent(self, field: str) -> bool:
        """Whether the client sent this field (a PATCH distinguishes absent from null)."""
        return field in self.model_fields_set

    @model_validator(mode="before")
    @classmethod
    def _no_server_owned_fields_or_nul_characters(cls, data: Any) -> Any:
        """Refuses server-owned fields, and U+0000 anywhere: PostgreSQL text cannot hold it,
        so no stored string may contain it (SQLite would take it: refusing it everywhere keeps
        the two databases alike).
        """
        if isinstance(data, dict):
            for name, value in data.items():
                if name in cls.server_owned:
                    raise PydanticCustomError(
                        "read_only", "{field}: set by the server.", {"field": name}
                    )
                if _contains_nul(value):
                    raise PydanticCustomError(
                        "invalid_value", "{field}: must not contain U+0000.", {"field": name}
                    )
        return data


def _contains_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, list):
        return any(_contains_nul(item) for item in value)
    if isinstance(value, dict):
        return any(_contains_nul(k) or _contains_nul(v) for k, v in value.items())
    return False


_DAY = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)
"""A calendar date, the only form taken (Python's parser also takes week dates, `2026-W09-1`)."""


def _parse_date(value: Any) -> Any:
    if isinstance(value, date) and not isinstance(value, datetime):
        return value
    if not isinstance(value, str):
        raise PydanticCustomError("invalid_type", "Expected a date string (YYYY-MM-DD).")
    value = value.strip()  # (strings are trimmed, dates too)
    try:
        if not _DAY.fullmatch(value):
            raise ValueError(value)
        return date.fromisoformat(value)
    except ValueError:
        raise PydanticCustomError("invalid_format", "Expected a date (YYYY-MM-DD).") from None


def _parse_datetime(value: Any) -> Any:
    """A date-time with offset (UTC if none), or a date meaning 00:00:00Z of that day."""
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str):
        raise PydanticCustomError("invalid_type", "Expected an ISO 8601 date or date-time string.")
    value = value.strip()
    try:
        if not _DAY.match(value) or value[10:11] not in ("", "T", "t", " "):
            raise ValueError(value)
        if len(value) == 10:
            return datetime.combine(date.fromisoformat(value), time(), UTC)
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise PydanticCustomError(
            "invalid_format", "Expected an ISO 8601 date (YYYY-MM-DD) or date-time."
        ) from None
    parsed = parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    try:
        parsed = parsed.astimezone(UTC)
    except OverflowError:
        raise PydanticCustomError("out_of_range", "The date-time is out of range in UTC.") from None
    return parsed.replace(microsecond=parsed.microsecond // 1000 * 1000)


DateIn = Annotated[
    date,
    BeforeValidator(_parse_date),
    WithJsonSchema({"type": "string", "format": "date"}),
]
DateTimeIn = Annotated[
    datetime,
    BeforeValidator(_parse_datetime),
    WithJsonSchema(
        {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "string", "format": "date"}]}
    ),
]


def at_most(limit: int) -> BeforeValidator:
    """The length limit, applied to the string as sent: trimming comes after it, so that a
    string the document calls too long (`maxLength`) is refused even if trimming would save it.
    """

    def check(value: Any) -> Any:
        if isinstance(value, str) and len(value) > limit:
            raise PydanticCustomError(
                "string_too_long",
                "String should have at most {max_length} characters",
                {"max_length": limit},
            )
        return value

    return BeforeValidator(check)


Name = Annotated[str, Field(min_length=1, max_length=255), at_most(255)]
LongText = Annotated[str, Field(max_length=65_536), at_most(65_536)]


class One(BaseModel, Generic[T]):
    """`{"data": record}`"""

    data: T


class Page(BaseModel, Generic[T]):
    documents: list[T]
    total: int = Field(description="Every match, not just this page.")
    next_cursor: str | None = Field(
        alias="nextCursor",
        description="Send as `cursor` for the next page (same filters and order); null on "
        "the last page.",
    )


class Many(BaseModel, Generic[T]):
    """`{"data": {"documents": [...], "total": N}}`"""

    data: Page[T]


class CappedPage(Page[T], Generic[T]):
    total: int = Field(
        description="Every match, not just this page; counted up to 10,000 when filters "
        "apply (`totalCapped` then says more match)."
    )
    total_capped: bool = Field(
        alias="totalCapped",
        description="True when more than 10,000 items match: `total` is then 10,000, a "
        "floor. Always false for an unfiltered list, whose count is kept exact.",
    )


class ManyCapped(BaseModel, Generic[T]):
    """`{"data": {"documents": [...], "total": N, "totalCapped": false}}`"""

    data: CappedPage[T]


class DeletedRecord(BaseModel):
    id: str = Field(alias="$id")
    deleted: bool


class ErrorDetail(BaseModel):
    code: str
    message: str
    details: dict[str, Any]


class ErrorBody(BaseModel):
    error: ErrorDetail


class Timestamps(BaseModel):
    created_at: str = Field(alias="$createdAt", json_schema_extra={"format": "date-time"})
    updated_at: str = Field(alias="$updatedAt", json_schema_extra={"format": "date-time"})


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI entries for the error responses an operation can give."""
    descriptions = {
        400: "Invalid request (see `details.field` and `details.reason`)",
        401: "Missing or invalid API key",
        403: "The caller lacks the permission named in `details.permission`",
        404: "Not found, or not in one of the caller's workspaces",
        409: "A state rule blocks the change (see `details.reason`)",
        412: "`If-Match` does not match the current `ETag`",
        413: "Body or batch too large",
        415: "Body is not `application/json`",
        429: "Rate limit exceeded",
    }
    return {
        status: {"model": ErrorBody, "description": descriptions[status]} for status in statuses
    }


class QueryModel(BaseModel):
    """A route's query parameters as one model. A `TransactionalRoute` validates it in one
    call from the query string (FastAPI validates parameter by parameter, several
    microseconds each) and documents every field as a query parameter. The route refuses
    any other parameter (`deps._refuse_unknown_query`).
    """

    model_config = ConfigDict(frozen=True)
    PARAMETER_PREFIXES: ClassVar[tuple[str, ...]] = ()
    """Prefixes of parameters it takes besides its fields (`fields.<key>`), kept as extras."""

    def listed(self, name: str, allowed: Collection[str] | None = None) -> list[str]:
        """The values of the comma-separated parameter `name`; one outside `allowed` is a 400."""
        field = type(self).model_fields[name].alias or name
        values = [v.strip() for v in (getattr(self, name) or "").split(",") if v.strip()]
        if allowed is not None and (bad := [v for v in values if v not in allowed]):
            raise InvalidRequest(field, "invalid_value", f"{field}: unknown value(s) {bad}.")
        return values

    @classmethod
    def openapi_parameters(cls) -> list[dict[str, Any]]:
        schema = cls.model_json_schema(by_alias=True)
        if "$defs" in schema:
            raise TypeError(f"{cls.__name__}: a query parameter must be a scalar, not a model")
        required = set(schema.get("required", ()))
        parameters = []
        for name, field_schema in schema["properties"].items():
            parameter = {"name": name, "in": "query", "required": name in required}
            if "description" in field_schema:
                parameter["description"] = field_schema["description"]
            parameters.append({**parameter, "schema": field_schema})
        # A route's own parameters first, then paging (which a subclass inherits).
        return sorted(parameters, key=lambda p: p["name"] in PageQuery.model_fields)


_PAGING = frozenset({"limit", "offset", "cursor"})


class PageQuery(QueryModel):
    """`limit`, `offset` and `cursor`, as `PageDep` takes them, for a route with a
    `QueryModel`. Every list pages by its sort keys (`cursors.Window`)."""

    limit: int = Field(50, ge=1, le=500, description="Page size (at most 500).")
    offset: int = Field(0, ge=0, le=10_000_000, description="Records to skip.")
    cursor: str | None = Field(
        None,
        max_length=4_000,
        description="A previous page's `nextCursor`: the page after it, with the same filters "
        "and order (then `offset` counts from there).",
    )

    def fingerprint(self, scope: tuple[Any, ...] = ()) -> str:
        """What a cursor of this list is tied to: its filters and order, and `scope` (the
        list's name and the filters it takes outside this model: path, other parameters)."""
        query = self.model_dump(mode="json", exclude=set(_PAGING))
        return cursors.fingerprint({**query, "scope": list(scope)} if scope else query)

    def window(self, *scope: Any) -> cursors.Window:
        """The page asked for; 400 `invalid_value` on `cursor` for one made by another list
        or with other filters (see `fingerprint` for `scope`)."""
        query_fingerprint = self.fingerprint(scope)
        after = None if self.cursor is None else cursors.decode(self.cursor, query_fingerprint)
        return cursors.Window(self.limit, self.offset, after, query_fingerprint)

    def resume_after(self) -> Any:
        """The sort keys a cursor holds (None without a cursor)."""
        return None if self.cursor is None else cursors.decode(self.cursor, self.fingerprint())

    def next_keyset_cursor(self, last_keys: list[Any] | None) -> str | None:
        """The cursor of the page after one whose last item had these sort keys."""
        return None if last_keys is None else cursors.encode(self.fingerprint(), last_keys)

"""Running a query (contract §18) for a caller in a workspace: what `GET /tasks?q=`, a saved
view's items and the agents' search share."""

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.orm import Session

from sprintboard.access import Caller
from sprintboard.customfields.service import Definition, read_definitions
from sprintboard.errors import InvalidRequest
from sprintboard.queries.compiler import Compiled, Context, compile_query
from sprintboard.queries.syntax import Query, QueryError, parse
from sprintboard.sql import raw
from sprintboard.workitems.ordering import Order, parse_sort


def parsed(text: str, *, field: str = "q") -> Query:
    """A query's tree; 400 `invalid_query` (or `too_long`) on `field` when it does not
    parse, with the offset of the problem in `details.position`."""
    try:
        return parse(text)
    except QueryError as error:
        raise _refused(error, field) from None


def check(session: Session, *, caller: Caller, workspace_id: str, text: str, field: str) -> None:
    """Refuse a query that could not run (a view's, when it is saved)."""
    compiled(session, caller=caller, workspace_id=workspace_id, text=text, field=field)


def compiled(
    session: Session,
    *,
    caller: Caller,
    workspace_id: str,
    text: str,
    field: str = "q",
    custom: Mapping[str, Definition] | None = None,
) -> Compiled:
    """`custom`: the workspace's custom fields, if read already (else read here when the
    query may name one)."""
    context = Context(
        workspace_id=workspace_id,
        user_id=caller.user_id,
        now=datetime.now(UTC),
        sqlite=raw(session).codec.sqlite,
        custom=_named_fields(session, workspace_id, text, custom) or {},
    )
    try:
        return compile_query(parsed(text, field=field), context)
    except QueryError as error:
        raise _refused(error, field) from None


def list_order(
    session: Session,
    *,
    caller: Caller,
    workspace_id: str,
    text: str | None,
    sort: str | None,
    field: str = "q",
    custom: Mapping[str, Definition] | None = None,
) -> tuple[Any, Order]:
    """A list's condition (None without a query) and order: the query's `ORDER BY`
    replaces `sort=`, so sending both is 400 `invalid_value` on `sort`. `custom`: the
    workspace's custom fields, which either order may name."""
    sqlite = raw(session).codec.sqlite
    if not text:
        return None, parse_sort(sort, sqlite=sqlite, custom=custom)
    custom = _named_fields(session, workspace_id, text, custom)
    query = compiled(
        session, caller=caller, workspace_id=workspace_id, text=text, field=field, custom=custom
    )
    if query.sort is not None and sort is not None:
        raise InvalidRequest(
            "sort",
            "invalid_value",
            "sort: the query's ORDER BY sets the order; send one of them, not both.",
        )
    return query.condition, parse_sort(query.sort or sort, sqlite=sqlite, custom=custom)


def _named_fields(
    session: Session, workspace_id: str, text: str, custom: Mapping[str, Definition] | None
) -> Mapping[str, Definition] | None:
    """`custom` if read already, else the workspace's custom fields when `text` may name one
    (`fields.<key>`), else None: a query that names none costs no read."""
    if custom is None and "fields." in text.lower():
        return read_definitions(raw(session), workspace_id)
    return custom


def _refused(error: QueryError, field: str) -> InvalidRequest:
    return InvalidRequest(
        field,
        error.reason,
        f"{field}: {error.message} (at character {error.position})",
        position=error.position,
    )

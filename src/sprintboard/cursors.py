"""Opaque list cursors: where the next page of a list starts, tied to the query that made it.

A cursor is URL-safe base64 of `[fingerprint, position]`: the fingerprint is a hash of the
list's filters and order (everything but the paging itself), so a cursor sent with other
filters or another order is refused (400 `invalid_value` on `cursor`) instead of continuing
some other list from an unrelated place. The position is the sort keys of the last item
shown: every list has a total order ending in a unique key, and the next page is the items
strictly after that one (keyset paging), so items created or deleted meanwhile never make a
page repeat or skip one. Clients never parse it.
"""

import base64
import binascii
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, NamedTuple

import orjson
from sqlalchemy import ColumnElement, Select, and_, false, func, literal, or_, select
from sqlalchemy.orm import QueryableAttribute, Session
from sqlalchemy.sql import operators
from sqlalchemy.sql.elements import UnaryExpression

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
        raise not_ours() from None
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
        raise not_ours()
    return value


class ListPage(NamedTuple):
    items: list[Any]
    total: int
    """Every match, not only this page's."""
    next_cursor: str | None


SortKey = ColumnElement[Any] | QueryableAttribute[Any]
"""A column or expression to sort by; `.desc()` of one for descending."""


@dataclass(frozen=True)
class Window:
    """The page a list request asks for: `limit` items, `offset` more skipped, after the item
    whose sort keys are `after` (a cursor's position; None on the first page)."""

    limit: int
    offset: int
    after: Any
    query_fingerprint: str

    def next_cursor(self, last_keys: Sequence[Any] | None) -> str | None:
        """The cursor of the page after one whose last item had these sort keys (None: it was
        the last page)."""
        return None if last_keys is None else encode(self.query_fingerprint, list(last_keys))

    def page(
        self,
        session: Session,
        query: Select[*tuple[Any, ...]],
        *order: SortKey,
        count: Select[int] | None = None,
    ) -> ListPage:
        """This page of `query` in `order` (columns, `.desc()` for descending, the last one
        unique), how many rows `query` has (or `count` says, a cheaper query of the same
        number), and the next page's cursor. Items are single entities or, for a query of
        several columns, its rows, read by name (`row.Sprint`, `row.item_count`: label the
        columns; the sort keys ride along after them as `sort0_`...). A nullable key needs an
        `IS NULL` key before it: "after" a row whose key is NULL means equal on it.
        """
        keys = [_key(expression) for expression in order]
        paged = query if self.after is None else query.where(_after(keys, self.after))
        width = len(paged.column_descriptions)  # (entities and columns, as rows hold them)
        sort_keys = [key.label(f"sort{i}_") for i, (key, _) in enumerate(keys)]
        paged = paged.add_columns(*sort_keys).order_by(*order)
        rows = session.execute(paged.limit(self.limit + 1).offset(self.offset)).all()
        if self.after is None and self.offset == 0 and len(rows) <= self.limit:
            total = len(rows)  # (a first page that shows everything counts it)
        else:
            if count is None:
                count = select(func.count()).select_from(query.subquery())
            total = session.scalar(count) or 0
        shown = rows[: self.limit]
        items = [row[0] if width == 1 else row for row in shown]
        last_keys = shown[-1][width:] if len(rows) > self.limit else None
        return ListPage(items, total, self.next_cursor(last_keys))


def not_ours() -> InvalidRequest:
    """The error for a cursor that no list of ours made (or one edited by hand)."""
    return InvalidRequest(_FIELD, "invalid_value", "cursor: not a cursor of this list.")


def fits(value: Any, kind: type, *, sqlite: bool = False) -> bool:
    """Whether a cursor's value can stand for a sort key of `kind` (the Python type of its
    column): a cursor is not signed, and one made by hand must be a 400, not a statement the
    database (or a column's type) refuses. SQLite compares any plain value with any other."""
    if value is None:
        return True
    if isinstance(value, str):
        return "\x00" not in value and (sqlite or kind is str)
    if sqlite and isinstance(value, int | float):
        return True
    if kind is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63
    return isinstance(value, kind)


def _key(expression: SortKey) -> tuple[SortKey, bool]:
    """A sort expression as (the key, descending)."""
    if isinstance(expression, UnaryExpression) and expression.modifier is operators.desc_op:
        return expression.element, True
    return expression, False


def _kind(key: SortKey) -> type:
    """The Python type of a sort key's values (`object`: any)."""
    try:
        kind: type = key.type.python_type
    except NotImplementedError:
        return object
    return kind


def _after(keys: list[tuple[SortKey, bool]], values: Any) -> ColumnElement[bool]:
    """Rows strictly after the one with these key values: equal on every earlier key and
    after on this one, for some key."""
    if (
        not isinstance(values, list)
        or len(values) != len(keys)
        or not all(fits(value, _kind(key)) for (key, _), value in zip(keys, values, strict=True))
    ):
        raise not_ours()
    alternatives: list[ColumnElement[bool]] = []
    equal: list[ColumnElement[bool]] = []
    for (key, descending), value in zip(keys, values, strict=True):
        if value is None:
            equal.append(key.is_(None))
            continue
        if isinstance(value, bool):  # (an `IS NULL` key's: SQLAlchemy compares those with `is_`)
            value = literal(value)
        alternatives.append(and_(*equal, key < value if descending else key > value))
        equal.append(key == value)
    return or_(false(), *alternatives)

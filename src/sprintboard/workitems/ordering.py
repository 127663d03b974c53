"""The order of `GET /tasks` (`sort=`) and keyset paging over it (`cursor=`).

An order is a list of sort keys, each an SQL expression and a direction, ending in `$id`
so that every item has one place. A cursor holds the last shown item's values of those
keys; the next page is the items strictly after it in that order, so items created or
deleted meanwhile never make a page repeat or skip one.

Empty values (no due date, no points) come last in either direction: each nullable field
sorts first by "is empty" (always ascending), then by its value.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sprintboard.cursors import fits, not_ours
from sprintboard.customfields.service import Definition
from sprintboard.customfields.values import sort_key
from sprintboard.errors import InvalidRequest
from sprintboard.workitems import fields

_SORTED = {f.sort: f for f in fields.FIELDS if f.sort is not None}
SORT_FIELDS = ("position", "key", *(name for name in _SORTED if name != "position"), "title")
"""What `sort=` takes: the registry's sortable fields (`fields.ItemField.sort`), and the
key and the title, which sort by more than their column."""


def _rank(f: fields.ItemField) -> str:
    """A field of fixed values, as the rank of its value in their order."""
    if f.nullable:  # (empty: NULL, which sorts last as any empty value does)
        ranks = " ".join(f"WHEN '{value}' THEN {rank}" for rank, value in enumerate(f.enum))
        return f"CASE wi.{f.column} {ranks} END"
    *first, _ = f.enum
    ranks = " ".join(f"WHEN '{value}' THEN {rank}" for rank, value in enumerate(first))
    return f"CASE wi.{f.column} {ranks} ELSE {len(first)} END"


def _expressions(field: str, sqlite: bool) -> tuple[list[tuple[str, type]], bool]:
    """A field's SQL sort expressions with the Python type PostgreSQL gives each, and whether
    it may be empty."""
    if field == "key":  # the project's key, then the number, as numbers (PROJ-9 < PROJ-10)
        return [("p.key", str), ("wi.number", int)], False
    if field == "title":  # case folded alike on both databases, then by code point
        return [
            ("unicode_lower(wi.title)" if sqlite else 'LOWER(wi.title) COLLATE "C"', str)
        ], False
    f = _SORTED[field]
    if f.enum:
        return [(_rank(f), int)], f.nullable
    return [(f"wi.{f.column}", f.python)], f.nullable


@dataclass(frozen=True)
class SortKey:
    sql: str
    kind: type
    """What a cursor's value for this key must be (`cursors.fits`)."""
    descending: bool = False


@dataclass(frozen=True)
class Order:
    keys: tuple[SortKey, ...]
    joins: str = ""
    """What the keys read besides the item and its project (a custom field's values)."""
    params: dict[str, Any] = field(default_factory=dict)
    """The parameters of the keys and their joins."""
    by_value: str | None = None
    """When the order starts with a custom field whose values an index keeps in order, its
    join's alias: the items that have a value come first, and are read in that index's order
    (`reads.list_items` reads them, then those without, apart)."""

    def order_by_value(self) -> str:
        """The order among the items that have the value (its "is empty" key left out)."""
        return _listed(self.keys[1:])

    def order_without_value(self) -> str:
        """The order among the items without it (its two keys left out)."""
        return _listed(self.keys[2:])

    def order_by(self, names: Sequence[str] | None = None) -> str:
        """The `ORDER BY` list: of the keys' expressions, or of the columns `names` that
        hold them (`columns`)."""
        sql = names or [k.sql for k in self.keys]
        return ", ".join(
            f"{s} DESC" if k.descending else s for k, s in zip(self.keys, sql, strict=True)
        )

    def columns(self, names: Sequence[str]) -> str:
        """The keys as extra selected columns named `names`: a cursor is made of the last
        row's."""
        return ", ".join(f"{k.sql} AS {name}" for k, name in zip(self.keys, names, strict=True))

    def after(self, values: Sequence[Any], *, sqlite: bool) -> tuple[str, dict[str, Any]]:
        """The condition "strictly after the row with these key values", and its parameters.

        Row by row: equal on every earlier key and after on this one. A key whose value was
        empty (NULL) has nothing after it among the empties (the "is empty" key before it has
        put the non-empty ones first).
        """
        if (
            not isinstance(values, list | tuple)
            or len(values) != len(self.keys)
            or not all(
                fits(v, k.kind, sqlite=sqlite) for v, k in zip(values, self.keys, strict=True)
            )
        ):
            raise not_ours()
        params = {f"after{i}": value for i, value in enumerate(values)}
        # Every alternative below is on or past the first key's value: said alone, it lets
        # the index start there rather than filter every row before it.
        first, start = self.keys[0], values[0]
        bound = (
            f"{first.sql} IS NULL"
            if start is None
            else f"{first.sql} {'<=' if first.descending else '>='} :after0"
        )
        alternatives: list[str] = []
        equal: list[str] = []
        for i, (key, value) in enumerate(zip(self.keys, values, strict=True)):
            if value is not None:
                operator = "<" if key.descending else ">"
                alternatives.append(" AND ".join([*equal, f"{key.sql} {operator} :after{i}"]))
                equal.append(f"{key.sql} = :after{i}")
            else:
                equal.append(f"{key.sql} IS NULL")
        return f"{bound} AND ({' OR '.join(alternatives) or '1 = 0'})", params


def _listed(keys: Sequence[SortKey]) -> str:
    return ", ".join(f"{k.sql} DESC" if k.descending else k.sql for k in keys)


def parse_sort(
    sort: str | None, *, sqlite: bool, custom: Mapping[str, Definition] | None = None
) -> Order:
    """`sort=` (comma-separated fields, `-` for descending) as an `Order`; ties go to
    `position`, then `$id`. `fields.<key>` sorts by the custom field `custom[key]`, empty
    values last both ways. 400 `invalid_value` on `sort` for anything else."""
    requested: list[tuple[str, bool]] = []
    # (Exactly as the document's pattern says: no blanks, no empty parts, `sort=` included.)
    for part in ("position" if sort is None else sort).split(","):
        name = part.removeprefix("-")
        known = name in SORT_FIELDS or name.removeprefix("fields.") in (custom or {})
        if not known or any(name == seen for seen, _ in requested):
            raise InvalidRequest(
                "sort",
                "invalid_value",
                f"sort: {part!r} is not a sort field (one of {', '.join(SORT_FIELDS)} or "
                "fields.<key> of a custom field; `-` for descending, each once).",
            )
        requested.append((name, part.startswith("-")))
    if all(name != "position" for name, _ in requested):
        requested.append(("position", False))
    keys: list[SortKey] = []
    joins, params = "", dict[str, Any]()
    by_value = None
    for name, descending in requested:
        if name.startswith("fields.") and custom is not None:
            alias = f"sf{len(params)}_"
            by = sort_key(custom[name.removeprefix("fields.")], alias)
            if not keys and by.indexed:
                by_value = alias
            joins, params = joins + by.join, {**params, **by.params}
            keys.append(SortKey(f"({by.sql} IS NULL)", bool))
            keys.append(SortKey(by.sql, by.kind, descending))
            continue
        expressions, nullable = _expressions(name, sqlite)
        if nullable:  # empties last, both ways
            keys.append(SortKey(f"({expressions[0][0]} IS NULL)", bool))
        keys.extend(SortKey(sql, kind, descending) for sql, kind in expressions)
    keys.append(SortKey("wi.id", str))
    return Order(tuple(keys), joins, params, by_value)

"""Reading work items for responses: the hot path, in plain SQL (see `sprintboard.sql`).

Every work item a response shows comes through here: one statement for the items with their
project, one for all their assignees, whatever the page size. Changes are `store.py`'s and
creates `service.py`'s; after a write the response re-reads the item from here.
"""

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import orjson
from sqlalchemy.orm import Session

from sprintboard.access import (
    Caller,
    WorkspaceAccess,
    is_work_item_key,
    lock_sprints_moved_to,
    membership_join_sql,
    row_lock,
    visible_item_sql,
    workspace_access,
)
from sprintboard.concurrency import etag
from sprintboard.cursors import Window
from sprintboard.customfields.service import Definition, read_definitions
from sprintboard.customfields.values import FieldMatch, condition, count_alone, parse_match
from sprintboard.errors import InvalidRequest, NotFound
from sprintboard.sql import Codec, Columns, Getter, Raw, in_list, raw, render
from sprintboard.workflows.service import BUILT_IN
from sprintboard.workitems import fields
from sprintboard.workitems.ordering import Order, SortKey

ITEM_FIELDS: tuple[tuple[str, str], ...] = tuple((f.name, f.column) for f in fields.FIELDS)
"""A work item's own fields as the API shows them (in this order) and their columns, from the
registry (`fields.FIELDS`). `item_columns` selects them, `item_from_row` reads them by name."""
_JSON = frozenset(f.column for f in fields.FIELDS if f.kind in ("list", "map"))
_REAL = frozenset(f.column for f in fields.FIELDS if f.kind == "real")
_STAMP = frozenset(f.column for f in fields.FIELDS if f.kind == "stamp")
_DAY = frozenset(f.column for f in fields.FIELDS if f.kind == "day")
_LISTS = tuple(f.name for f in fields.FIELDS if f.kind in ("list", "map"))
_BOOLS = tuple(f.name for f in fields.FIELDS if f.kind == "bool")


def item_columns(
    codec: Codec,
    *,
    of: str = "wi.",
    project: tuple[str, str] = ("p.name", "p.key"),
    real: Callable[[str], str] = str,
    children: str = "(SELECT count(*) FROM work_items c_ WHERE c_.parent_id = wi.id)",
) -> str:
    """The columns `item_from_row` reads, each named as in `ITEM_FIELDS`: the item's (`of`
    qualifies them), its version, its project's name and key (`project`), and how many
    children it has (`children`, counted through the parent index: one probe per item,
    cheaper than a counter every child's move would have to lock); `real` wraps the
    floating-point ones."""
    columns = []
    for _, column in ITEM_FIELDS:
        expression = f"{of}{column}"
        if column in _JSON:
            expression = codec.json_column(expression)
        elif column in _REAL:
            expression = real(expression)
        elif column in _STAMP:
            expression = codec.timestamp_column(expression)
        elif column in _DAY:
            expression = codec.day_column(expression)
        columns.append(f"{expression} AS {column}")
    columns.append(f"{of}version AS version")
    columns.append(f"{project[0]} AS project_name, {project[1]} AS project_key")
    columns.append(f"{children} AS child_count")
    return ", ".join(columns)


ITEM_COLUMNS = {dialect: item_columns(Codec(dialect)) for dialect in ("sqlite", "postgresql")}
"""What `item_from_row` reads, per dialect."""
_ITEM_AND_PROJECT = " FROM work_items wi JOIN projects p ON p.id = wi.project_id"
_ITEMS = {
    dialect: f"SELECT {columns}{_ITEM_AND_PROJECT}" for dialect, columns in ITEM_COLUMNS.items()
}
ITEM_RETURNING = {
    dialect: "RETURNING "
    + item_columns(
        Codec(dialect),
        of="",
        project=(":project_name", ":project_key"),
        real=(lambda column: f"CAST({column} AS REAL)") if dialect == "sqlite" else str,
        children="0",
    )
    for dialect in ("sqlite", "postgresql")
}
"""An `INSERT` into or `UPDATE` of `work_items` that ends in this answers the rows
`item_from_row` reads (SQLite names no alias in `RETURNING`, hence unqualified columns); it
takes the project's name and key as the parameters `project_name` and `project_key`, and
answers no children (a new item has none).
SQLite's `RETURNING` gives the values as sent, before the column's type applies: its
floating-point columns are cast, so that `2` is answered as a read answers it, `2.0`.
"""
ITEM_ROW = Columns(
    [column for _, column in ITEM_FIELDS]
    + ["version", "project_name", "project_key", "child_count"]
)
"""The columns of a row that starts with `ITEM_COLUMNS` (or is `ITEM_RETURNING`'s), for rows
read without `Raw.fetch`; what follows them is read by name through `Raw.fetch`."""
_ASSIGNEES = {
    "sqlite": "NULL AS assignees_",
    "postgresql": "(SELECT coalesce(json_agg(json_build_object("
    "'$id', u.id, 'name', u.name, 'email', u.email)), '[]')::text"
    " FROM users u WHERE u.id IN (SELECT jsonb_array_elements_text(wi.assignee_ids)))"
    " AS assignees_",
}
"""A column of one item's read: on PostgreSQL its assignees as a JSON array of users as the
API shows them (`{$id, name, email}`, by name), since a second statement would be a second
round trip (and ~50 µs of psycopg's CPU); on SQLite NULL, "read them apart", since its JSON
functions cost more than a second statement (7% more instructions per `GET /tasks/{id}`,
measured with callgrind)."""
_DETAIL = {
    dialect: f"SELECT {columns}, {_ASSIGNEES[dialect]}" for dialect, columns in ITEM_COLUMNS.items()
}
"""An item's columns and, after them, its assignees (`_ASSIGNEES`)."""
_API_NAMES = tuple(field for field, _ in ITEM_FIELDS)


def item_decoder(columns: Columns) -> Callable[[Sequence[Any]], dict[str, Any]]:
    """What makes a record of a row with these columns (made once per statement)."""
    own = columns.getter(*(column for _, column in ITEM_FIELDS))
    rest = columns.getter("child_count", "project_name", "project_key")
    names = _API_NAMES

    def decode(row: Sequence[Any]) -> dict[str, Any]:
        item = dict(zip(names, own(row), strict=True))
        for name in _LISTS:
            item[name] = _loads(item[name])
        for name in _BOOLS:
            item[name] = bool(item[name])
        item["childCount"], name, key = rest(row)
        item["project"] = {"$id": item["projectId"], "name": name, "key": key}
        return item

    return decode


def item_from_row(row: Sequence[Any], columns: Columns = ITEM_ROW) -> dict[str, Any]:
    """A work item as the API shows it, less `assignees` (see `attach_assignees`), from a
    row with the columns of `ITEM_COLUMNS` (by name: `columns`, by default `ITEM_ROW`): JSON
    comes as text, timestamps and the due date as the API shows them, on both databases.
    For many rows, `columns.made(item_decoder)` once and call it.
    """
    return columns.made(item_decoder)(row)


_loads = orjson.loads


def attach_assignees(db: Raw, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Embed `assignees` ({$id, name, email}) in every item, in one statement (none if no
    item has an assignee).
    """
    assigned = _assignees_of(items)
    if assigned is None:
        return _with_assignees(items, [])
    where, params = assigned
    rows, columns = db.fetch(f"SELECT id, name, email FROM users {where}", params)
    return _with_assignees(items, users_from_rows(rows, columns))


def users_from_rows(rows: Sequence[Sequence[Any]], columns: Columns) -> list[dict[str, Any]]:
    """Users as an item's `assignees` shows them, from rows with `id`, `name`, `email`."""
    read = columns.made(_user_reader)
    return [dict(zip(_USER_KEYS, read(row), strict=True)) for row in rows]


_USER_KEYS = ("$id", "name", "email")


def _assignees_of(items: list[dict[str, Any]]) -> tuple[str, dict[str, Any]] | None:
    """The condition on `users` that selects the users assigned to `items`, if any are."""
    user_ids = sorted({user_id for item in items for user_id in item["assigneeIds"]})
    if not user_ids:
        return None
    placeholders, params = in_list("u", user_ids)
    return f"WHERE id IN {placeholders}", params


def _with_assignees(
    items: list[dict[str, Any]], assignees: Iterable[dict[str, Any]]
) -> list[dict[str, Any]]:
    """`items`, each with its `assignees` (users as the API shows them) in `assigneeIds` order."""
    users = {user["$id"]: user for user in assignees}
    for item in items:
        item["assignees"] = [users[u] for u in item["assigneeIds"] if u in users]
    return items


@dataclass(frozen=True)
class VisibleItem:
    """A work item the caller may see, as the API shows it."""

    record: dict[str, Any]
    etag: str
    access: WorkspaceAccess
    version: int


def read_visible_item(
    session: Session,
    caller: Caller,
    ref: str,
    *,
    workspace_id: str | None = None,
    for_change: bool = False,
    moving_to: Sequence[str] = (),
) -> VisibleItem:
    """A work item by `$id` or key (`access.visible_item_sql`'s rule, as every lookup of
    one), with comments and time logs; 404 unless visible. `for_change`: locked for a change
    (`access.row_lock`; after the sprints in `moving_to`, see `lock_sprints_moved_to`),
    with neither its history nor its hierarchy read (`service.update_work_item` reads them
    after the change).
    """
    db = raw(session)
    lock_sprints_moved_to(session, caller, moving_to)
    where, params = visible_item_sql(caller, ref, workspace_id=workspace_id)
    lock = row_lock(session, "wi") if for_change else ""
    related = "" if for_change else _RELATED[db.dialect]
    row, columns = db.fetch_one(
        f"{_DETAIL[db.dialect]}{related}, member_.role AS role_{_ITEM_AND_PROJECT}{where}{lock}",
        params,
    )
    if row is None:
        raise NotFound("Work item")
    assignees = _assignee_rows(row[columns["assignees_"]])
    record = _detail(db, row, assignees, history=not for_change, columns=columns)
    if not for_change:
        record = with_hierarchy(db, record, _related_of(row, columns))
    version = row[columns["version"]]
    access = workspace_access(caller, record["workspaceId"], row[columns["role_"]])
    return VisibleItem(record, etag(record["$id"], version), access, version)


MAX_DEPTH = 10
"""Levels a tree may have, its root being level 1 (see `hierarchy`)."""


def children_of(walk: str, dialect: str) -> str:
    """The `FROM` of a recursive walk down a tree's step: the walk's rows (`t`) and their
    children (`w`, with `id`, `status` and `story_points`), one probe of the parent index
    per row. PostgreSQL, which estimates a parent's children from the average over parents
    (tens), hashed the whole table at every level instead once its statistics were up to
    date (an epic of 1,000 in a workspace of 120,000: 400 ms); a `LATERAL` subquery it may
    not flatten (`OFFSET 0`) keeps the probes."""
    if dialect == "sqlite":
        return f"FROM work_items w JOIN {walk} t ON w.parent_id = t.id"
    return (
        f"FROM {walk} t CROSS JOIN LATERAL (SELECT id, status_category, story_points"
        " FROM work_items"
        " WHERE parent_id = t.id OFFSET 0) w"
    )


_TREE = {
    dialect: f"""
WITH RECURSIVE tree_(id, status, points, level) AS (
    SELECT id, status_category, story_points, 1 FROM work_items WHERE parent_id = :id
    UNION ALL
    SELECT w.id, w.status_category, w.story_points, t.level + 1
    {children_of("tree_", dialect)} WHERE t.level < {MAX_DEPTH}
)
SELECT 'g' AS kind_, NULL AS id, NULL AS task_id, NULL AS key, NULL AS title, NULL AS status,
    NULL AS category, NULL AS created_at, NULL AS type, count(*) AS items,
    sum(CASE WHEN status = 'DONE' THEN 1 ELSE 0 END) AS done_items, sum(points) AS points,
    sum(CASE WHEN status = 'DONE' THEN points END) AS done_points
FROM tree_
"""
    for dialect in ("sqlite", "postgresql")
}
"""Progress over every descendant: walked down the parent index one level at a time (the
level bound keeps even damaged data from looping), in rows of `_HIERARCHY_ROW`'s shape."""
_PARENT = (
    "SELECT 'p' AS kind_, NULL AS id, id AS task_id, key, title, status,"
    " status_category AS category, NULL AS created_at,"
    " type, NULL AS items, NULL AS done_items, NULL AS points, NULL AS done_points"
    " FROM work_items WHERE id = {parent}"
)
"""The item's parent (`parent`: its `$id`), in a row of `_HIERARCHY_ROW`'s shape."""
_HIERARCHY_ROW = (
    "kind_, id, task_id, key, title, status, category, created_at, type, items, done_items,"
    " points,"
    " done_points"
)
"""The columns of the rows `with_hierarchy` reads: its kind (`g` progress, `p` parent, `o`
and `i` relations), then what each kind fills (the others NULL)."""
_HIERARCHY_NAMES = _HIERARCHY_ROW.split(", ")
_HIERARCHY_COLUMNS = Columns(_HIERARCHY_NAMES)


def _relations_sql(codec: Codec, item: str = ":id") -> str:
    """An item's relations (the item being `item`), both ways, as rows of `_HIERARCHY_ROW`'s
    shape: `o` where it is the source, `i` where it is the target."""
    created = codec.timestamp_column("r.created_at")
    return " UNION ALL ".join(
        f"SELECT '{kind}' AS kind_, r.id AS id, o.id AS task_id, o.key AS key, o.title AS title,"
        f" o.status AS status, o.status_category AS category, {created} AS created_at,"
        " r.type AS type, NULL AS items,"
        " NULL AS done_items, NULL AS points, NULL AS done_points FROM work_item_relations r"
        f" JOIN work_items o ON o.id = r.{other} WHERE r.{me} = {item}"
        for kind, me, other in (("o", "source_id", "target_id"), ("i", "target_id", "source_id"))
    )


_RELATIONS = {dialect: _relations_sql(Codec(dialect)) for dialect in ("sqlite", "postgresql")}
_RELATED = {
    "sqlite": "",
    "postgresql": ", (SELECT coalesce(json_agg(h_), '[]')::text FROM ("
    f"{_relations_sql(Codec('postgresql'), 'wi.id')}"
    f" UNION ALL {_PARENT.format(parent='wi.parent_id')}"
    ") h_) AS related_",
}
"""A column of one item's read: on PostgreSQL its parent and relations as a JSON array of
`_HIERARCHY_ROW` objects, which saves `with_hierarchy` its statement (a round trip) unless
the item has children; on SQLite nothing (as `_ASSIGNEES`: a statement costs it less than
JSON functions do)."""
SEEN_FROM_TARGET = {"blocks": "blocked_by", "duplicates": "duplicated_by"}
"""A stored relation's type as its target sees it (`relates_to` reads the same both ways)."""
_HIERARCHY_ORDER = " ORDER BY kind_, created_at, id"


def _relation_reader(columns: Columns) -> Callable[[Sequence[Any]], dict[str, Any]]:
    get = columns.getter("kind_", "id", "task_id", "key", "title", "status", "created_at", "type")

    def relation(row: Sequence[Any]) -> dict[str, Any]:
        kind, relation_id, task_id, key, title, status, created_at, type_ = get(row)
        seen = type_ if kind == "o" else SEEN_FROM_TARGET.get(type_, type_)
        task = {"$id": task_id, "key": key, "title": title, "status": status}
        return {"$id": relation_id, "type": seen, "task": task, "$createdAt": created_at}

    return relation


def relation_from_row(row: Sequence[Any], columns: Columns) -> dict[str, Any]:
    """A relation as the item it is read through sees it, from a row of `_RELATIONS`."""
    return columns.made(_relation_reader)(row)


def read_relations(db: Raw, item_id: str) -> list[dict[str, Any]]:
    """An item's relations, as it sees them, oldest first."""
    rows, columns = db.fetch(f"{_RELATIONS[db.dialect]}{_HIERARCHY_ORDER}", {"id": item_id})
    relations = map(columns.made(_relation_reader), rows)
    return sorted(relations, key=lambda r: (r["$createdAt"], r["$id"]))


def _progress_reader(columns: Columns) -> Getter:
    return columns.getter("items", "done_items", "points", "done_points")


def _parent_reader(columns: Columns) -> Getter:
    return columns.getter("task_id", "key", "title", "type", "status")


def with_new_hierarchy(db: Raw, item: dict[str, Any]) -> dict[str, Any]:
    """`with_hierarchy` for an item just made: no children, no relations; only its parent
    is read, if it has one."""
    if item["parentId"] is not None:
        return with_hierarchy(db, item)
    item["parent"] = None
    item["progress"] = {"items": 0, "doneItems": 0, "points": 0, "donePoints": 0}
    item["relations"], item["blocked"] = [], False
    return item


def with_hierarchy(db: Raw, item: dict[str, Any], related: str | None = None) -> dict[str, Any]:
    """`item` with `parent`, `progress` (over all its descendants), `relations` and
    `blocked`: one statement, whose parts run only where they can find something; none but
    the progress's if the parent and relations were read with the item (`related`, the
    `related_` column of `_RELATED`)."""
    rows: list[Sequence[Any]]
    if related is None:
        parts, params = [_RELATIONS[db.dialect]], {"id": item["$id"]}
        if item["parentId"] is not None:
            parts.append(_PARENT.format(parent=":parent_id"))
            params["parent_id"] = item["parentId"]
        sql = " UNION ALL ".join(parts)
        if item["childCount"]:
            sql = f"{_TREE[db.dialect]} UNION ALL {sql}"
        rows, columns = db.fetch(f"{sql}{_HIERARCHY_ORDER}", params)
    else:
        columns = _HIERARCHY_COLUMNS
        rows = [tuple(map(part.get, _HIERARCHY_NAMES)) for part in _loads(related)]
        if item["childCount"]:
            rows += db.rows(_TREE[db.dialect], {"id": item["$id"]})
    parent, relations = None, []
    progress = {"items": 0, "doneItems": 0, "points": 0, "donePoints": 0}
    kind_of, category_of, blocked = columns.getter("kind_"), columns.getter("category"), False
    for row in rows:
        kind = kind_of(row)
        if kind == "g":
            items, done_items, points, done_points = columns.made(_progress_reader)(row)
            progress = {
                "items": int(items),
                "doneItems": int(done_items or 0),
                "points": points or 0,
                "donePoints": done_points or 0,
            }
        elif kind == "p":
            task_id, key, title, type_, status = columns.made(_parent_reader)(row)
            parent = {"$id": task_id, "key": key, "title": title, "type": type_, "status": status}
        else:
            relation = columns.made(_relation_reader)(row)
            relations.append(relation)
            # (Blocked by an item whose status is not of category DONE.)
            blocked = blocked or (relation["type"] == "blocked_by" and category_of(row) != "DONE")
    relations.sort(key=lambda r: (r["$createdAt"], r["$id"]))
    item["parent"], item["progress"], item["relations"] = parent, progress, relations
    item["blocked"] = blocked
    return item


def read_item(
    session: Session, item_id: str, *, history: bool = True
) -> tuple[dict[str, Any], str]:
    """A work item the caller has already been given access to (after a write), and its ETag.

    `history=False` skips reading comments and time logs: a new item has none.
    """
    db = raw(session)
    related = _RELATED[db.dialect] if history else ""
    row, columns = db.fetch_one(
        f"{_DETAIL[db.dialect]}{related}{_ITEM_AND_PROJECT} WHERE wi.id = :id", {"id": item_id}
    )
    if row is None:
        raise NotFound("Work item")
    assignees = _assignee_rows(row[columns["assignees_"]])
    record, tag = from_row(db, row, assignees, history=history, columns=columns)
    if history:
        record = with_hierarchy(db, record, _related_of(row, columns))
    return record, tag


def read_items(session: Session, item_ids: Sequence[str]) -> list[dict[str, Any]]:
    """Work items the caller has already been given access to, with their assignees, in
    the order of their `$id`s (which is the order they were made in)."""
    db = raw(session)
    records: list[dict[str, Any]] = []
    for start in range(0, len(item_ids), 500):
        placeholders, params = in_list("i", item_ids[start : start + 500])
        rows, columns = db.fetch(f"{_ITEMS[db.dialect]} WHERE wi.id IN {placeholders}", params)
        records += map(columns.made(item_decoder), rows)
    records.sort(key=lambda record: str(record["$id"]))
    return attach_assignees(db, records)


def read_items_in_order(session: Session, item_ids: Sequence[str]) -> list[dict[str, Any]]:
    """`read_items`, in the order of `item_ids`."""
    by_id = {record["$id"]: record for record in read_items(session, item_ids)}
    return [by_id[item_id] for item_id in item_ids]


def from_row(
    db: Raw,
    row: Sequence[Any],
    assignees: Sequence[dict[str, Any]] | None,
    *,
    history: bool = True,
    columns: Columns = ITEM_ROW,
) -> tuple[dict[str, Any], str]:
    """`read_item` for a row already read (`ITEM_COLUMNS`, or `ITEM_RETURNING` of a write)
    and the item's assignees (`users_from_rows`), or None to read them now."""
    record = _detail(db, row, assignees, history=history, columns=columns)
    return record, etag(record["$id"], row[columns["version"]])


def _related_of(row: Sequence[Any], columns: Columns) -> str | None:
    """The `related_` column of a row read with `_RELATED`, if it was (on PostgreSQL)."""
    return row[columns["related_"]] if "related_" in columns else None


def _assignee_rows(column: str | None) -> list[dict[str, Any]] | None:
    """The users an `_ASSIGNEES` column holds; None if they are to be read apart."""
    users: list[dict[str, Any]] | None = _loads(column) if column is not None else None
    return users


def event_form(record: dict[str, Any]) -> dict[str, Any]:
    """The form events carry: the item's own fields, without embedded records."""
    return {k: v for k, v in record.items() if k not in _EMBEDDED}


_EMBEDDED = frozenset(
    {"project", "assignees", "comments", "timeLogs", "childCount", *("parent", "progress")}
    | {"relations", "blocked"}
)
"""Embedded records, and what is derived from other items (`childCount`, `progress`...):
they change without an event about this item, so its events do not carry them."""


def _detail(
    db: Raw,
    row: Sequence[Any],
    assignees: Sequence[dict[str, Any]] | None,
    *,
    history: bool = True,
    columns: Columns = ITEM_ROW,
) -> dict[str, Any]:
    """The item with its assignees (the users if already read, else read now) and, with
    `history`, its comments and time logs: read in one statement (`_HISTORY`) when it has any.
    """
    item = item_from_row(row, columns)
    if history and _has_history(item):
        _with_history(db, item, with_assignees=assignees is None)
    else:
        item["comments"], item["timeLogs"] = [], []
        if assignees is None:
            attach_assignees(db, [item])
    if assignees is not None:
        _with_assignees([item], assignees)
    return item


def with_history(db: Raw, record: dict[str, Any]) -> dict[str, Any]:
    """`record` (as `read_item(..., history=False)` gave it) with its comments and time logs
    read now: what a write that has just read its item answers, without reading it twice.
    """
    return _with_history(db, record, with_assignees=False) if _has_history(record) else record


def _has_history(item: dict[str, Any]) -> bool:
    """Whether the item has comments or time logs: the count of comments is exact, and time
    logs have positive hours and go only with their item, so no hours means no time logs.
    """
    return bool(item["commentCount"] or item["loggedHours"])


def _with_history(db: Raw, item: dict[str, Any], *, with_assignees: bool) -> dict[str, Any]:
    sql, params = _HISTORY, {"id": item["$id"]}
    if with_assignees and (assigned := _assignees_of([item])):
        where, user_params = assigned
        sql += f"{_HISTORY_USERS} {where}"
        params.update(user_params)
    codec = db.codec
    comments: list[dict[str, Any]] = []
    time_logs: list[dict[str, Any]] = []
    users: list[dict[str, Any]] = []
    rows, columns = db.fetch(sql + " ORDER BY kind_, created_at, id", params)
    kind_of = columns.getter("kind_")
    for row in rows:
        kind = kind_of(row)
        if kind == "c":
            comments.append(_comment(row, codec, columns))
        elif kind == "t":
            time_logs.append(_time_log(row, codec, columns))
        else:
            users.append(dict(zip(_USER_KEYS, columns.made(_user_reader)(row), strict=True)))
    item["comments"], item["timeLogs"] = comments, time_logs
    return _with_assignees([item], users)[0] if with_assignees else item


def _user_reader(columns: Columns) -> Getter:
    return columns.getter("id", "name", "email")


# A work item's comments (`c`), time logs (`t`) and assignees (`u`) as rows of one shape, in
# one statement, each filling its own columns; ordered by kind, then creation, then id.
_HISTORY = (
    "SELECT 'c' AS kind_, id, work_item_id, author_id, body, NULL AS user_id, NULL AS hours,"
    " NULL AS day, NULL AS note, created_at, updated_at, NULL AS name, NULL AS email"
    " FROM comments WHERE work_item_id = :id"
    " UNION ALL"
    " SELECT 't', id, work_item_id, NULL, NULL, user_id, hours, day, note, created_at,"
    " updated_at, NULL, NULL FROM time_logs WHERE work_item_id = :id"
)
_HISTORY_USERS = (
    " UNION ALL SELECT 'u', id, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, name, email"
    " FROM users"
)


def read_visible_items(
    session: Session, caller: Caller, refs: Sequence[str], *, moving_to: Sequence[str] = ()
) -> tuple[dict[str, dict[str, Any]], list[str], WorkspaceAccess]:
    """Several work items by `$id` or key, all in one workspace (a bulk update's rule),
    locked for the change, and the sprints in `moving_to` (of the caller's workspaces)
    locked for share; returns the records by `$id`, the `$id` of each ref in order, and
    the caller's standing. A key found in several of the caller's workspaces means the
    newest item, as for one item (`access.access_work_item`).

    Any item the caller cannot see makes the whole request "not found"; visible items in more
    than one workspace are a 400 `mixed_workspaces`; one item named twice is a 400.
    Records come without `assignees`.
    """
    db = raw(session)
    join, params = membership_join_sql(caller, "wi.workspace_id")
    lock_sprints_moved_to(session, caller, moving_to)
    keys = sorted({ref for ref in refs if is_work_item_key(ref)})
    ids = sorted({ref for ref in refs if not is_work_item_key(ref)})
    wheres = []
    for column, values, prefix in (("wi.key", keys, "k"), ("wi.id", ids, "i")):
        if values:
            placeholders, names = in_list(prefix, values)
            wheres.append(f"{column} IN {placeholders}")
            params.update(names)
    # Locked for the change (`access.row_lock`), in `$id` order.
    rows, columns = db.fetch(
        f"SELECT {ITEM_COLUMNS[db.dialect]}, member_.role AS role_{_ITEM_AND_PROJECT}{join}"
        f" WHERE ({' OR '.join(wheres)}) ORDER BY wi.id{row_lock(session, 'wi')}",
        params,
    )
    decode, role_at = columns.made(item_decoder), columns["role_"]
    found = sorted(((decode(row), row[role_at]) for row in rows), key=_by_creation)
    by_ref: dict[str, tuple[dict[str, Any], str]] = {}
    for record, role in found:  # (oldest first: newest wins)
        by_ref[record["$id"]] = by_ref[record["key"]] = record, role
    if any(ref not in by_ref for ref in refs):
        raise NotFound("Work item")
    chosen = [by_ref[ref] for ref in refs]
    item_ids = [record["$id"] for record, _ in chosen]
    if len(set(item_ids)) != len(item_ids):
        raise InvalidRequest("tasks", "invalid_value", "tasks: a work item appears twice.")
    roles = {record["workspaceId"]: role for record, role in chosen}
    if len(roles) > 1:
        raise InvalidRequest(
            "tasks", "mixed_workspaces", "tasks: all work items must be in one workspace."
        )
    ((workspace_id, role),) = roles.items()
    records = {record["$id"]: record for record, _ in chosen}
    return records, item_ids, workspace_access(caller, workspace_id=workspace_id, role=role)


def _by_creation(found: tuple[dict[str, Any], str]) -> str:
    return str(found[0]["$createdAt"])


_COMMENT_COLUMNS = ("id", "work_item_id", "author_id", "body", "created_at", "updated_at")
_COMMENTS = f"SELECT {', '.join(_COMMENT_COLUMNS)} FROM comments"
_COMMENT_ROW = Columns(_COMMENT_COLUMNS)
_TIME_LOG_COLUMNS = (
    "id",
    "work_item_id",
    "user_id",
    "hours",
    "day",
    "note",
    "created_at",
    "updated_at",
)
_TIME_LOGS = f"SELECT {', '.join(_TIME_LOG_COLUMNS)} FROM time_logs"
_TIME_LOG_ROW = Columns(_TIME_LOG_COLUMNS)
_BY_CREATION = Order((SortKey("created_at", datetime), SortKey("id", str)))


def read_comments(
    db: Raw, item_id: str, window: Window
) -> tuple[list[dict[str, Any]], int, str | None]:
    """A page of a work item's comments, oldest first, how many it has, the next cursor."""
    return _page_of(db, _COMMENTS, "comments", _comment, item_id, window)


def read_comment(db: Raw, comment_id: str) -> dict[str, Any]:
    return _one_of(db, _COMMENTS, _comment, comment_id, "Comment")


def read_time_logs(
    db: Raw, item_id: str, window: Window
) -> tuple[list[dict[str, Any]], int, str | None]:
    """A page of a work item's time logs, oldest first, how many it has, the next cursor."""
    return _page_of(db, _TIME_LOGS, "time_logs", _time_log, item_id, window)


def read_time_log(db: Raw, log_id: str) -> dict[str, Any]:
    return _one_of(db, _TIME_LOGS, _time_log, log_id, "Time log")


def _one_of(
    db: Raw,
    select: str,
    to_record: Callable[[Sequence[Any], Codec], dict[str, Any]],
    record_id: str,
    name: str,
) -> dict[str, Any]:
    """One comment or time log by `$id` (already known to be visible), as the API shows it."""
    row = db.row(f"{select} WHERE id = :id", {"id": record_id})
    if row is None:
        raise NotFound(name)
    return to_record(row, db.codec)


def _page_of(
    db: Raw,
    select: str,
    table: str,
    to_record: Callable[[Sequence[Any], Codec], dict[str, Any]],
    item_id: str,
    window: Window,
) -> tuple[list[dict[str, Any]], int, str | None]:
    """A page of a work item's comments or time logs, their total (counted only when the
    page does not already show it), and the next page's cursor."""
    after, params = (
        ("1 = 1", {})
        if window.after is None
        else _BY_CREATION.after(window.after, sqlite=db.codec.sqlite)
    )
    rows, columns = db.fetch(
        f"{select} WHERE work_item_id = :id AND {after} ORDER BY {_BY_CREATION.order_by()}"
        " LIMIT :limit OFFSET :offset",
        {**params, "id": item_id, "limit": window.limit + 1, "offset": window.offset},
    )
    shown = rows[: window.limit]
    records = [to_record(row, db.codec) for row in shown]
    sort_keys = columns.getter("created_at", "id")
    last_keys = list(sort_keys(shown[-1])) if len(rows) > window.limit else None
    next_cursor = window.next_cursor(last_keys)
    if window.after is None and window.offset == 0 and next_cursor is None:
        return records, len(records), None
    total = db.row(f"SELECT count(*) FROM {table} WHERE work_item_id = :id", {"id": item_id})
    return records, int(total[0]) if total else 0, next_cursor


def _comment(row: Sequence[Any], codec: Codec, columns: Columns | None = None) -> dict[str, Any]:
    """A comment as the API shows it, from a row with the columns of `_COMMENTS` (by name:
    `columns`, by default those of `_COMMENTS` itself)."""
    comment_id, item_id, author_id, body, created_at, updated_at = (columns or _COMMENT_ROW).made(
        _comment_reader
    )(row)
    return {
        "$id": comment_id,
        "workItemId": item_id,
        "authorId": author_id,
        "body": body,
        "$createdAt": codec.timestamp(created_at),
        "$updatedAt": codec.timestamp(updated_at),
    }


def _comment_reader(columns: Columns) -> Getter:
    return columns.getter(*_COMMENT_COLUMNS)


def _time_log(row: Sequence[Any], codec: Codec, columns: Columns | None = None) -> dict[str, Any]:
    """A time log as the API shows it, from a row with the columns of `_TIME_LOGS` (by
    name: `columns`, by default those of `_TIME_LOGS` itself)."""
    log_id, item_id, user_id, hours, day, note, created_at, updated_at = (
        columns or _TIME_LOG_ROW
    ).made(_time_log_reader)(row)
    return {
        "$id": log_id,
        "workItemId": item_id,
        "userId": user_id,
        "hours": hours,
        "date": codec.day(day),
        "note": note,
        "$createdAt": codec.timestamp(created_at),
        "$updatedAt": codec.timestamp(updated_at),
    }


def _time_log_reader(columns: Columns) -> Getter:
    return columns.getter(*_TIME_LOG_COLUMNS)


def read_sprint_items(session: Session, sprint_id: str) -> list[dict[str, Any]]:
    """Every work item of a sprint, in board order, with their embeds."""
    db = raw(session)
    rows = db.rows(
        f"{_ITEMS[db.dialect]} WHERE wi.sprint_id = :sprint ORDER BY wi.position, wi.id",
        {"sprint": sprint_id},
    )
    return attach_assignees(db, [item_from_row(row) for row in rows])


@dataclass(frozen=True)
class TaskFilters:
    project_id: str | None = None
    sprint_id: str | None = None
    """A sprint's `$id`, or `none` for the backlog."""
    matches: Sequence[fields.Match] = ()
    """The registry's filters (status, priority, due dates...)."""
    assignee_id: str | None = None
    labels: Sequence[str] = ()
    search: str | None = None
    """Case-insensitive, in the title, key and description."""
    parent: str | None = None
    """The parent's `$id` or key (its direct children), or `none` (items without a parent)."""
    ancestor: str | None = None
    """An item's `$id` or key: every item below it, at any depth."""
    custom: Sequence[FieldMatch] = ()
    """`fields.<key>=...`: custom fields' values (`customfields.values.condition`)."""
    condition: Any = None
    """A query's condition (`GET /tasks?q=`): a SQLAlchemy expression on the items as `wi`
    (`queries.compiler`), its values bound parameters."""

    def narrows_within_projects(self) -> bool:
        """Whether any filter beyond `project_id` applies."""
        return bool(
            self.matches
            or self.custom
            or self.sprint_id
            or self.assignee_id
            or self.labels
            or self.search
            or self.parent
            or self.ancestor
            or self.condition is not None
        )


_PROJECT = re.compile(r"\bp\.")
"""An order that reads the project (`sort=key`) finds the page with it joined."""
TOTAL_CAP = 10_000
"""A filtered list counts its matches up to this many (`ItemPage.total_capped` past it): a
count costs every match it counts, and a page must not cost the workspace."""


@dataclass(frozen=True)
class ItemPage:
    items: list[dict[str, Any]]
    total: int
    """Every match (not only those after the cursor), or `TOTAL_CAP` when more match."""
    last_keys: list[Any] | None
    """The last item's sort keys when more items follow (what the next cursor holds)."""
    total_capped: bool = False
    """More than `TOTAL_CAP` items match: `total` is a floor."""


def list_items(
    session: Session,
    *,
    workspace_id: str,
    filters: TaskFilters,
    limit: int,
    offset: int,
    order: Order,
    after: Sequence[Any] | None = None,
) -> ItemPage:
    """A page of a workspace's work items in `order` (after the item whose sort keys are
    `after`, then `offset` more), and how many match in all (up to `TOTAL_CAP`).

    The page is found first, as `$id`s and sort keys in an index's order (`ordering.py`,
    migrations 0013 and 0019); only its rows are then read whole, with their project and
    children: an `offset` skips ids, not embeds.
    """
    db = raw(session)
    _check_status_names(db, workspace_id, filters)
    below, source, where, params = _where(db, workspace_id, filters)
    total_sql = _total_query(filters, source, where)
    page_where = where
    if after is not None:
        resume, resume_params = order.after(after, sqlite=db.codec.sqlite)
        page_where, params = f"{where} AND {resume}", {**params, **resume_params}
    # The sort keys and the total ride along as named columns (the total computed once): one
    # statement, not two; one row more than the page says whether another page follows.
    sort_keys = [f"sort{i}_" for i in range(len(order.keys))]
    if order.by_value is None:
        by_project = (
            " JOIN projects p ON p.id = wi.project_id" if _PROJECT.search(order.order_by()) else ""
        )
        rows, columns = db.fetch(
            f"{below}SELECT {ITEM_COLUMNS[db.dialect]}, page_.*, ({total_sql}) AS total_"
            f" FROM (SELECT {order.columns(sort_keys)} FROM {source}{by_project}{order.joins}"
            f" WHERE {page_where} ORDER BY {order.order_by()} LIMIT :limit OFFSET :offset) page_"
            f" JOIN work_items wi ON wi.id = page_.{sort_keys[-1]}"
            " JOIN projects p ON p.id = wi.project_id"
            f" ORDER BY {order.order_by(sort_keys)}",
            {**params, **order.params, "limit": limit + 1, "offset": offset},
        )
    else:
        select = (
            f"{below}SELECT {ITEM_COLUMNS[db.dialect]}, {order.columns(sort_keys)},"
            f" ({total_sql}) AS total_ FROM {source} JOIN projects p ON p.id = wi.project_id"
        )
        rows, columns = _by_value(
            db,
            order,
            select,
            (below, source),
            page_where,
            {**params, **order.params},
            limit + 1,
            offset,
        )
    if rows:
        counted = rows[-1][columns["total_"]]
    else:
        counted = (db.row(f"{below}{total_sql}", params) or (None,))[0]
    total = int(counted) if counted is not None else 0
    capped = filters.narrows_within_projects() and total > TOTAL_CAP
    more, rows = len(rows) > limit, rows[:limit]
    last_keys = [rows[-1][columns[key]] for key in sort_keys] if more and rows else None
    decode = columns.made(item_decoder)
    items = attach_assignees(db, [decode(row) for row in rows])
    return ItemPage(items, TOTAL_CAP if capped else total, last_keys, capped)


def _by_value(
    db: Raw,
    order: Order,
    select: str,
    rows_read: tuple[str, str],
    where: str,
    params: dict[str, Any],
    wanted: int,
    offset: int,
) -> tuple[list[Sequence[Any]], Columns]:
    """A page in an order that starts with a custom field's value (`Order.by_value`), as
    two reads that each follow an index: the items that have a value, in the value index's
    order (joined to their items), then, if the page is not full, those without one, in
    board order. (One statement over both would join and sort every item of the workspace.)
    `rows_read`: the list's `WITH` prefix and what it selects from."""
    alias, (below, source) = order.by_value, rows_read
    outer = f" LEFT JOIN work_item_field_values {alias} ON"
    inner = order.joins.replace(outer, f" JOIN work_item_field_values {alias} ON", 1)
    rows, columns = db.fetch(
        f"{select}{inner} WHERE {where} ORDER BY {order.order_by_value()}"
        " LIMIT :limit OFFSET :offset",
        {**params, "limit": wanted, "offset": offset},
    )
    if len(rows) >= wanted:
        return list(rows), columns
    skipped = 0
    if offset and not rows:  # (the page starts among those without: how many had one?)
        counted = db.row(f"{below}SELECT count(*) FROM {source}{inner} WHERE {where}", params)
        skipped = int(counted[0]) if counted else 0
    rest, columns = db.fetch(
        f"{select}{order.joins} WHERE {where} AND {alias}.item_id IS NULL"
        f" ORDER BY {order.order_without_value()} LIMIT :limit OFFSET :offset",
        {**params, "limit": wanted - len(rows), "offset": 0 if rows else offset - skipped},
    )
    return [*rows, *rest], columns


BUILT_IN_NAMES = frozenset(name for name, _ in BUILT_IN)


def custom_query(
    db: Raw,
    workspace_id: str,
    wanted: dict[str, list[str]],
    sort: str | None,
    query: str | None = None,
) -> tuple[list[FieldMatch], dict[str, Definition]]:
    """`GET /tasks`' custom field filters (`fields.<key>` and their values) checked against
    the workspace's fields: 400 `unknown_field` naming the parameter for a key it lacks,
    `invalid_value` for a value the field cannot hold. Also answers the fields, for `sort`
    (read only when a filter, the sort or the query `q` may name one)."""
    if not wanted and "fields." not in (sort or "") and "fields." not in (query or "").lower():
        return [], {}
    definitions = read_definitions(db, workspace_id)
    matches = []
    for key, values in wanted.items():
        param = f"fields.{key}"
        if key not in definitions:
            raise InvalidRequest(param, "unknown_field", f"{param}: no such custom field here.")
        if values:
            matches.append(parse_match(definitions[key], param, values))
    return matches, definitions


def _check_status_names(db: Raw, workspace_id: str, filters: TaskFilters) -> None:
    """`status=` takes the built-in names and those of statuses the workspace's projects
    have: any other is 400 `invalid_value`, as a fixed set's unknown value is."""
    for match in filters.matches:
        if match.field.name != "status" or set(match.value) <= BUILT_IN_NAMES:
            continue  # (a built-in name is always one a list may ask for: no statement)
        placeholders, params = in_list("n", sorted(set(match.value)))
        rows = db.rows(
            "SELECT DISTINCT s.name FROM project_statuses s JOIN projects p"
            f" ON p.id = s.project_id WHERE p.workspace_id = :w AND s.name IN {placeholders}",
            {**params, "w": workspace_id},
        )
        if unknown := sorted(set(match.value) - {row[0] for row in rows}):
            raise InvalidRequest(
                "status", "invalid_value", f"status: no project here has {unknown}."
            )


def _total_query(filters: TaskFilters, source: str, where: str) -> str:
    """How to count the matches: an unfiltered board reads the projects' maintained counts
    (constant time at any size); anything else counts the rows, up to one past `TOTAL_CAP`.
    """
    if not filters.narrows_within_projects():
        project = " AND id = :project_id" if filters.project_id is not None else ""
        return f"SELECT sum(item_count) FROM projects WHERE workspace_id = :workspace_id{project}"
    others = replace(filters, custom=())
    if (
        len(filters.custom) == 1
        and filters.project_id is None
        and not others.narrows_within_projects()
    ):
        alone = count_alone(filters.custom[0], "cf0_")
        if alone is not None:  # (one custom field's values, and nothing else: its index)
            return alone
    return (
        f"SELECT count(*) FROM (SELECT 1 FROM {source} WHERE {where}"
        f" LIMIT {TOTAL_CAP + 1}) counted_"
    )


def _where(db: Raw, workspace_id: str, f: TaskFilters) -> tuple[str, str, str, dict[str, Any]]:
    """The rows a list reads (`wi`) and the condition they must meet: `WITH` to put before
    the statement, what to select `FROM`, the `WHERE` condition and its parameters.

    With `ancestorId` the rows are the ancestor's descendants alone, walked down from it
    through the parent index and joined to their items by `$id`: a thousand descendants
    are a thousand probes for the page and as many for the total, whatever the size of the
    workspace (read as a condition on the workspace's items, SQLite walked the whole
    workspace in board order). SQLite keeps a `CROSS JOIN`'s left side outermost.
    """
    clauses = ["wi.workspace_id = :workspace_id"]
    params: dict[str, Any] = {"workspace_id": workspace_id}

    def one_of(column: str, name: str, values: Sequence[Any]) -> None:
        placeholders, names = in_list(name, values)
        params.update(names)
        clauses.append(f"{column} IN {placeholders}")

    if f.project_id is not None:
        clauses.append("wi.project_id = :project_id")
        params["project_id"] = f.project_id
    if f.sprint_id == "none":
        clauses.append("wi.sprint_id IS NULL")
    elif f.sprint_id is not None:
        clauses.append("wi.sprint_id = :sprint_id")
        params["sprint_id"] = f.sprint_id
    for match in f.matches:
        column, name = f"wi.{match.field.column}", match.filter.attr
        if match.filter.operator == "in":
            one_of(column, name, match.value)
        else:
            clauses.append(f"{column} {match.filter.operator} :{name}")
            params[name] = match.field.param(db.codec, match.value)
    for index, custom in enumerate(f.custom):
        clause, custom_params = condition(custom, f"cf{index}_")
        clauses.append(clause)
        params.update(custom_params)
    assigned_to = [f.assignee_id] if f.assignee_id and f.assignee_id != "none" else []
    if f.assignee_id == "none":
        length = "json_array_length" if db.codec.sqlite else "jsonb_array_length"
        clauses.append(f"{length}(wi.assignee_ids) = 0")
    contains = [("wi.assignee_ids", "assignee", assigned_to)]
    contains.append(("wi.labels", "label", list(f.labels)))
    for column, name, values in contains:
        if not values:
            continue
        if db.codec.sqlite:
            for i, value in enumerate(values):
                clauses.append(
                    f"EXISTS (SELECT 1 FROM json_each({column}) WHERE value = :{name}{i})"
                )
                params[f"{name}{i}"] = value
        else:
            clauses.append(f"{column} @> CAST(:{name}s AS jsonb)")
            params[f"{name}s"] = orjson.dumps(values).decode()
    if f.parent == "none":
        clauses.append("wi.parent_id IS NULL")
    elif f.parent is not None:
        # (`IN`, not `=`: SQLite walked the whole workspace for a scalar subquery's value.)
        clauses.append(f"wi.parent_id IN ({_item_by_ref('parent_ref', f.parent)})")
        params["parent_ref"] = f.parent
    below, source = "", "work_items wi"
    if f.parent not in (None, "none") and db.codec.sqlite:
        # A parent's children through the parent index, then sorted: without statistics
        # SQLite walked the whole project in board order to avoid that sort.
        source = "work_items wi INDEXED BY ix_work_items_parent"
    if f.ancestor is not None:
        below = (
            "WITH RECURSIVE below_(id, level) AS ("
            " SELECT id, 1 FROM work_items"
            f" WHERE parent_id = ({_item_by_ref('ancestor_ref', f.ancestor)})"
            f" UNION ALL SELECT w.id, t.level + 1 {children_of('below_', db.dialect)}"
            f" WHERE t.level < {MAX_DEPTH}) "
        )
        source = "below_ CROSS JOIN work_items wi"
        if not db.codec.sqlite:  # (PostgreSQL: as in `children_of`)
            source = (
                "below_ CROSS JOIN LATERAL"
                " (SELECT * FROM work_items WHERE id = below_.id OFFSET 0) wi"
            )
        clauses.append("wi.id = below_.id")
        params["ancestor_ref"] = f.ancestor
    if f.search:
        escaped = f.search.replace("!", "!!").replace("%", "!%").replace("_", "!_")
        # Both sides folded by the same function: SQLite's own LOWER folds ASCII only, so
        # there it is `unicode_lower`, Python's (see db.py).
        lower = "unicode_lower" if db.codec.sqlite else "LOWER"
        clauses.append(
            f"({lower}(wi.title) LIKE {lower}(:search) ESCAPE '!'"
            f" OR {lower}(wi.key) LIKE {lower}(:search) ESCAPE '!'"
            f" OR {lower}(wi.description) LIKE {lower}(:search) ESCAPE '!')"
        )
        params["search"] = f"%{escaped}%"
    if f.condition is not None:
        query_clause, query_params = render(f.condition, db.dialect, "q_")
        clauses.append(f"({query_clause})")
        params.update(query_params)
    return below, source, " AND ".join(clauses), params


def _item_by_ref(param: str, ref: str) -> str:
    """A subquery for the `$id` of the workspace's item whose `$id` or key (`ref`) is in the
    parameter `param`: none, so nothing matches, if there is no such item."""
    column = "key" if is_work_item_key(ref) else "id"
    return f"SELECT id FROM work_items WHERE workspace_id = :workspace_id AND {column} = :{param}"


SPRINT_ITEMS = (
    "SELECT sprint_id, id, key, story_points, status_category = 'DONE' AS done"
    " FROM work_items WHERE sprint_id = :sprint_id"
)
"""The items a sprint holds, with what its history keeps of each (`sprints/history.py`)."""

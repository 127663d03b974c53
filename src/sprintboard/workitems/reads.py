"""Reading work items for responses: the hot path, in plain SQL (see `sprintboard.sql`).

Every work item a response shows comes through `ItemRows`: one statement for the items with
their project, one for all their assignees, whatever the page size. Writes stay in
`service.py` (SQLAlchemy); after a write the response re-reads the item from here.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import orjson
from sqlalchemy.orm import Session

from sprintboard.access import (
    Caller,
    WorkspaceAccess,
    is_work_item_key,
    lock_sprints_moved_to,
    membership_join_sql,
    workspace_access,
)
from sprintboard.concurrency import etag
from sprintboard.cursors import Window
from sprintboard.errors import InvalidRequest, NotFound
from sprintboard.sql import Codec, Raw, in_list, raw
from sprintboard.workitems.ordering import Order, SortKey


def _item_columns(
    codec: Codec,
    *,
    of: str = "wi.",
    project: str = "p.name, p.key",
    real: Callable[[str], str] = str,
    children: str = "(SELECT count(*) FROM work_items c_ WHERE c_.parent_id = wi.id)",
) -> str:
    """The columns `item_from_row` reads: of the item (`of` qualifies them), its project,
    its parent and how many children it has (`children`, counted through the parent index:
    one probe per item, cheaper than a counter every child's move would have to lock);
    `real` wraps the floating-point ones."""
    json, stamp, day = codec.json_column, codec.timestamp_column, codec.day_column
    return f"""
{of}id, {of}key, {of}title, {of}type, {of}status, {of}priority, {of}description,
{json(f"{of}assignee_ids")}, {json(f"{of}labels")}, {day(f"{of}due_date")},
{real(f"{of}estimated_hours")}, {real(f"{of}story_points")}, {of}flagged, {of}sprint_id,
{of}project_id, {of}workspace_id, {real(f"{of}position")}, {of}comment_count,
{real(f"{of}logged_hours")}, {stamp(f"{of}created_at")}, {stamp(f"{of}updated_at")},
{of}version, {project}, {of}parent_id, {children}
"""


ITEM_COLUMNS = {dialect: _item_columns(Codec(dialect)) for dialect in ("sqlite", "postgresql")}
"""What `item_from_row` reads, per dialect."""
_ITEM_AND_PROJECT = " FROM work_items wi JOIN projects p ON p.id = wi.project_id"
_ITEMS = {
    dialect: f"SELECT {columns}{_ITEM_AND_PROJECT}" for dialect, columns in ITEM_COLUMNS.items()
}
ITEM_RETURNING = {
    dialect: "RETURNING "
    + _item_columns(
        Codec(dialect),
        of="",
        project=":project_name, :project_key",
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
_VERSION = 21  # position of wi.version in ITEM_COLUMNS
_ASSIGNEES = {
    "sqlite": "NULL",
    "postgresql": "(SELECT coalesce(json_agg(json_build_array(u.id, u.name, u.email)), '[]')::text"
    " FROM users u WHERE u.id IN (SELECT jsonb_array_elements_text(wi.assignee_ids)))",
}
"""A column of one item's read: on PostgreSQL its assignees as a JSON array of `[$id, name,
email]`, since a second statement would be a second round trip (and ~50 µs of psycopg's CPU);
on SQLite NULL, "read them apart", since its JSON functions cost more than a second statement
(7% more instructions per `GET /tasks/{id}`, measured with callgrind)."""
_DETAIL = {
    dialect: f"SELECT {columns}, {_ASSIGNEES[dialect]}" for dialect, columns in ITEM_COLUMNS.items()
}
"""An item's columns and, after them, its assignees (`_ASSIGNEES`)."""
_ASSIGNEES_AT = 26  # after the columns of ITEM_COLUMNS


def item_from_row(row: Sequence[Any]) -> dict[str, Any]:
    """A work item as the API shows it, less `assignees` (see `attach_assignees`), from a
    row of `ITEM_COLUMNS`: JSON comes as text, timestamps and the due date as the API shows
    them, on both databases (a list builds fifty of these).
    """
    return {
        "$id": row[0],
        "key": row[1],
        "title": row[2],
        "type": row[3],
        "status": row[4],
        "priority": row[5],
        "description": row[6],
        "assigneeIds": _loads(row[7]),
        "labels": _loads(row[8]),
        "dueDate": row[9],
        "estimatedHours": row[10],
        "storyPoints": row[11],
        "flagged": bool(row[12]),
        "sprintId": row[13],
        "projectId": row[14],
        "workspaceId": row[15],
        "position": row[16],
        "commentCount": row[17],
        "loggedHours": row[18],
        "$createdAt": row[19],
        "$updatedAt": row[20],
        "parentId": row[24],
        "childCount": row[25],
        "project": {"$id": row[14], "name": row[22], "key": row[23]},
    }


_loads = orjson.loads


def attach_assignees(db: Raw, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Embed `assignees` ({$id, name, email}) in every item, in one statement (none if no
    item has an assignee).
    """
    assigned = _assignees_of(items)
    if assigned is None:
        return _with_assignees(items, [])
    where, params = assigned
    return _with_assignees(items, db.rows(f"SELECT id, name, email FROM users {where}", params))


def _assignees_of(items: list[dict[str, Any]]) -> tuple[str, dict[str, Any]] | None:
    """The condition on `users` that selects the users assigned to `items`, if any are."""
    user_ids = sorted({user_id for item in items for user_id in item["assigneeIds"]})
    if not user_ids:
        return None
    placeholders, params = in_list("u", user_ids)
    return f"WHERE id IN {placeholders}", params


def _with_assignees(
    items: list[dict[str, Any]], user_rows: Sequence[Sequence[Any]]
) -> list[dict[str, Any]]:
    users = {row[0]: {"$id": row[0], "name": row[1], "email": row[2]} for row in user_rows}
    for item in items:
        item["assignees"] = [users[u] for u in item["assigneeIds"] if u in users]
    return items


@dataclass(frozen=True)
class VisibleItem:
    """A work item the caller may see, as the API shows it."""

    record: dict[str, Any]
    etag: str
    access: WorkspaceAccess


def read_visible_item(
    session: Session, caller: Caller, ref: str, *, workspace_id: str | None = None
) -> VisibleItem:
    """A work item by `$id` or key, with comments and time logs; 404 unless visible.

    As `access.access_work_item`: a key found in several of the caller's workspaces means
    the one in `workspace_id`, or else the newest.
    """
    db = raw(session)
    join, params = membership_join_sql(caller, "wi.workspace_id")
    column = "wi.key" if is_work_item_key(ref) else "wi.id"
    where = f"{column} = :ref"
    if workspace_id is not None:
        where += " AND wi.workspace_id = :workspace_id"
        params["workspace_id"] = workspace_id
    row = db.row(
        f"{_DETAIL[db.dialect]}, member_.role{_ITEM_AND_PROJECT}{join} WHERE {where}"
        " ORDER BY wi.created_at DESC LIMIT 1",
        {**params, "ref": ref},
    )
    if row is None:
        raise NotFound("Work item")
    record = with_hierarchy(db, _detail(db, row, _assignee_rows(row[_ASSIGNEES_AT])))
    return VisibleItem(
        record, etag(row[0], row[_VERSION]), workspace_access(caller, row[15], row[-1])
    )


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
        f"FROM {walk} t CROSS JOIN LATERAL (SELECT id, status, story_points FROM work_items"
        " WHERE parent_id = t.id OFFSET 0) w"
    )


_TREE = {
    dialect: f"""
WITH RECURSIVE tree_(id, status, points, level) AS (
    SELECT id, status, story_points, 1 FROM work_items WHERE parent_id = :id
    UNION ALL
    SELECT w.id, w.status, w.story_points, t.level + 1
    {children_of("tree_", dialect)} WHERE t.level < {MAX_DEPTH}
)
SELECT 'g', NULL, NULL, NULL, NULL, NULL, NULL, NULL, count(*),
    sum(CASE WHEN status = 'DONE' THEN 1 ELSE 0 END), sum(points),
    sum(CASE WHEN status = 'DONE' THEN points END)
FROM tree_
"""
    for dialect in ("sqlite", "postgresql")
}
"""Progress over every descendant: walked down the parent index one level at a time (the
level bound keeps even damaged data from looping), in rows of `_HIERARCHY_ROW`'s shape."""
_PARENT = (
    "SELECT 'p', id, key, title, type, status, NULL, NULL, NULL, NULL, NULL, NULL"
    " FROM work_items WHERE id = :parent_id"
)


def _relations_sql(codec: Codec) -> str:
    """An item's relations, both ways, as rows of `_HIERARCHY_ROW`'s shape: `o` where it is
    the source, `i` where it is the target."""
    created = codec.timestamp_column("r.created_at")
    return " UNION ALL ".join(
        f"SELECT '{kind}', r.id, o.id, o.key, o.title, o.status, {created}, r.type,"
        " NULL, NULL, NULL, NULL FROM work_item_relations r"
        f" JOIN work_items o ON o.id = r.{other} WHERE r.{me} = :id"
        for kind, me, other in (("o", "source_id", "target_id"), ("i", "target_id", "source_id"))
    )


_RELATIONS = {dialect: _relations_sql(Codec(dialect)) for dialect in ("sqlite", "postgresql")}
SEEN_FROM_TARGET = {"blocks": "blocked_by", "duplicates": "duplicated_by"}
"""A stored relation's type as its target sees it (`relates_to` reads the same both ways)."""


def relation_from_row(row: Sequence[Any]) -> dict[str, Any]:
    """A relation as the item it is read through sees it, from a row of `_RELATIONS`."""
    seen = row[7] if row[0] == "o" else SEEN_FROM_TARGET.get(row[7], row[7])
    task = {"$id": row[2], "key": row[3], "title": row[4], "status": row[5]}
    return {"$id": row[1], "type": seen, "task": task, "$createdAt": row[6]}


def read_relations(db: Raw, item_id: str) -> list[dict[str, Any]]:
    """An item's relations, as it sees them, oldest first."""
    rows = db.rows(f"{_RELATIONS[db.dialect]} ORDER BY 7, 2", {"id": item_id})
    return sorted(map(relation_from_row, rows), key=lambda r: (r["$createdAt"], r["$id"]))


def with_new_hierarchy(db: Raw, item: dict[str, Any]) -> dict[str, Any]:
    """`with_hierarchy` for an item just made: no children, no relations; only its parent
    is read, if it has one."""
    if item["parentId"] is not None:
        return with_hierarchy(db, item)
    item["parent"] = None
    item["progress"] = {"items": 0, "doneItems": 0, "points": 0, "donePoints": 0}
    item["relations"], item["blocked"] = [], False
    return item


def with_hierarchy(db: Raw, item: dict[str, Any]) -> dict[str, Any]:
    """`item` with `parent`, `progress` (over all its descendants), `relations` and
    `blocked`: one statement, whose parts run only where they can find something."""
    parts, params = [_RELATIONS[db.dialect]], {"id": item["$id"]}
    if item["parentId"] is not None:
        parts.append(_PARENT)
        params["parent_id"] = item["parentId"]
    sql = " UNION ALL ".join(parts)
    if item["childCount"]:
        sql = f"{_TREE[db.dialect]} UNION ALL {sql}"
    parent, relations = None, []
    progress = {"items": 0, "doneItems": 0, "points": 0, "donePoints": 0}
    for row in db.rows(f"{sql} ORDER BY 1, 7, 2", params):
        kind = row[0]
        if kind == "g":
            progress = {
                "items": int(row[8]),
                "doneItems": int(row[9] or 0),
                "points": row[10] or 0,
                "donePoints": row[11] or 0,
            }
        elif kind == "p":
            parent = {"$id": row[1], "key": row[2], "title": row[3], "type": row[4]}
            parent["status"] = row[5]
        else:
            relations.append(relation_from_row(row))
    relations.sort(key=lambda r: (r["$createdAt"], r["$id"]))
    item["parent"], item["progress"], item["relations"] = parent, progress, relations
    item["blocked"] = any(
        r["type"] == "blocked_by" and r["task"]["status"] != "DONE" for r in relations
    )
    return item


def read_item(
    session: Session, item_id: str, *, history: bool = True
) -> tuple[dict[str, Any], str]:
    """A work item the caller has already been given access to (after a write), and its ETag.

    `history=False` skips reading comments and time logs: a new item has none.
    """
    db = raw(session)
    row = db.row(f"{_DETAIL[db.dialect]}{_ITEM_AND_PROJECT} WHERE wi.id = :id", {"id": item_id})
    if row is None:
        raise NotFound("Work item")
    record, tag = from_row(db, row, _assignee_rows(row[_ASSIGNEES_AT]), history=history)
    return (with_hierarchy(db, record) if history else record), tag


def read_items(session: Session, item_ids: Sequence[str]) -> list[dict[str, Any]]:
    """Work items the caller has already been given access to, with their assignees, in
    the order of their `$id`s (which is the order they were made in)."""
    db = raw(session)
    records: list[dict[str, Any]] = []
    for start in range(0, len(item_ids), 500):
        placeholders, params = in_list("i", item_ids[start : start + 500])
        rows = db.rows(f"{_ITEMS[db.dialect]} WHERE wi.id IN {placeholders}", params)
        records += (item_from_row(row) for row in rows)
    records.sort(key=lambda record: str(record["$id"]))
    return attach_assignees(db, records)


def read_items_in_order(session: Session, item_ids: Sequence[str]) -> list[dict[str, Any]]:
    """`read_items`, in the order of `item_ids`."""
    by_id = {record["$id"]: record for record in read_items(session, item_ids)}
    return [by_id[item_id] for item_id in item_ids]


def from_row(
    db: Raw,
    row: Sequence[Any],
    assignees: Sequence[Sequence[Any]] | None,
    *,
    history: bool = True,
) -> tuple[dict[str, Any], str]:
    """`read_item` for a row already read (`ITEM_COLUMNS`, or `ITEM_RETURNING` of a write)
    and the rows (`$id`, name, email) of the item's assignees, or None to read them now."""
    return _detail(db, row, assignees, history=history), etag(row[0], row[_VERSION])


def _assignee_rows(column: str | None) -> list[list[str]] | None:
    """The rows an `_ASSIGNEES` column holds; None if they are to be read apart."""
    rows: list[list[str]] | None = _loads(column) if column is not None else None
    return rows


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
    assignees: Sequence[Sequence[Any]] | None,
    *,
    history: bool = True,
) -> dict[str, Any]:
    """The item with its assignees (their rows if already read, else read now) and, with
    `history`, its comments and time logs: read in one statement (`_HISTORY`) when it has any.
    """
    item = item_from_row(row)
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
    users: list[tuple[str, str, str]] = []
    for kind, record_id, item_id, who, text, hours, day, created, updated in db.rows(
        sql + " ORDER BY 1, 8, 2", params
    ):
        if kind == "c":
            comments.append(_comment((record_id, item_id, who, text, created, updated), codec))
        elif kind == "t":
            log = (record_id, item_id, who, hours, day, text, created, updated)
            time_logs.append(_time_log(log, codec))
        else:
            users.append((record_id, who, text))
    item["comments"], item["timeLogs"] = comments, time_logs
    return _with_assignees([item], users)[0] if with_assignees else item


# A work item's comments (`c`), time logs (`t`) and assignees (`u`) as rows of one shape, in
# one statement: (kind, id, work item, author or user or name, body or note or email, hours,
# day, created, updated); ordered by kind, then creation, then id.
_HISTORY = (
    "SELECT 'c', id, work_item_id, author_id, body, NULL, NULL, created_at, updated_at"
    " FROM comments WHERE work_item_id = :id"
    " UNION ALL"
    " SELECT 't', id, work_item_id, user_id, note, hours, day, created_at, updated_at"
    " FROM time_logs WHERE work_item_id = :id"
)
_HISTORY_USERS = " UNION ALL SELECT 'u', id, NULL, name, email, NULL, NULL, NULL, NULL FROM users"


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
    # Locked for the change on PostgreSQL (see `access.for_change`), in `$id` order: two bulk
    # updates of the same items lock them in the same order, never in a ring.
    lock = "" if db.codec.sqlite else " ORDER BY wi.id FOR NO KEY UPDATE OF wi"
    rows = db.rows(
        f"SELECT {ITEM_COLUMNS[db.dialect]}, member_.role{_ITEM_AND_PROJECT}{join}"
        f" WHERE ({' OR '.join(wheres)}){lock}",
        params,
    )
    by_ref: dict[str, Sequence[Any]] = {}
    for row in sorted(rows, key=lambda row: str(row[19])):  # (oldest first: newest wins)
        by_ref[row[0]] = row
        by_ref[row[1]] = row
    if any(ref not in by_ref for ref in refs):
        raise NotFound("Work item")
    chosen = [by_ref[ref] for ref in refs]
    item_ids = [row[0] for row in chosen]
    if len(set(item_ids)) != len(item_ids):
        raise InvalidRequest("tasks", "invalid_value", "tasks: a work item appears twice.")
    roles = {row[15]: row[-1] for row in chosen}
    if len(roles) > 1:
        raise InvalidRequest(
            "tasks", "mixed_workspaces", "tasks: all work items must be in one workspace."
        )
    ((workspace_id, role),) = roles.items()
    records = {row[0]: item_from_row(row) for row in chosen}
    return records, item_ids, workspace_access(caller, workspace_id=workspace_id, role=role)


_COMMENTS = "SELECT id, work_item_id, author_id, body, created_at, updated_at FROM comments"
_TIME_LOGS = (
    "SELECT id, work_item_id, user_id, hours, day, note, created_at, updated_at FROM time_logs"
)
_BY_CREATION = Order((SortKey("created_at"), SortKey("id")))


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
    after, params = ("1 = 1", {}) if window.after is None else _BY_CREATION.after(window.after)
    rows = db.rows(
        f"{select} WHERE work_item_id = :id AND {after} ORDER BY {_BY_CREATION.order_by()}"
        " LIMIT :limit OFFSET :offset",
        {**params, "id": item_id, "limit": window.limit + 1, "offset": window.offset},
    )
    shown = rows[: window.limit]
    records = [to_record(row, db.codec) for row in shown]
    # (Both selects begin with `id` and end with `created_at, updated_at`.)
    last_keys = [shown[-1][-2], shown[-1][0]] if len(rows) > window.limit else None
    next_cursor = window.next_cursor(last_keys)
    if window.after is None and window.offset == 0 and next_cursor is None:
        return records, len(records), None
    total = db.row(f"SELECT count(*) FROM {table} WHERE work_item_id = :id", {"id": item_id})
    return records, int(total[0]) if total else 0, next_cursor


def _comment(row: Sequence[Any], codec: Codec) -> dict[str, Any]:
    comment_id, item_id, author_id, body, created_at, updated_at = row
    return {
        "$id": comment_id,
        "workItemId": item_id,
        "authorId": author_id,
        "body": body,
        "$createdAt": codec.timestamp(created_at),
        "$updatedAt": codec.timestamp(updated_at),
    }


def _time_log(row: Sequence[Any], codec: Codec) -> dict[str, Any]:
    log_id, item_id, user_id, hours, day, note, created_at, updated_at = row
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


def read_sprint_items(session: Session, sprint_id: str) -> list[dict[str, Any]]:
    """Every work item of a sprint, in board order, with their embeds."""
    db = raw(session)
    rows = db.rows(
        f"{_ITEMS[db.dialect]} WHERE wi.sprint_id = :sprint"
        " ORDER BY wi.position, wi.created_at, wi.id",
        {"sprint": sprint_id},
    )
    return attach_assignees(db, [item_from_row(row) for row in rows])


@dataclass(frozen=True)
class TaskFilters:
    project_id: str | None = None
    sprint_id: str | None = None
    """A sprint's `$id`, or `none` for the backlog."""
    statuses: Sequence[str] = ()
    priorities: Sequence[str] = ()
    types: Sequence[str] = ()
    assignee_id: str | None = None
    labels: Sequence[str] = ()
    due_date: date | None = None
    due_before: date | None = None
    due_after: date | None = None
    flagged: bool | None = None
    search: str | None = None
    """Case-insensitive, in the title, key and description."""
    updated_since: datetime | None = None
    parent: str | None = None
    """The parent's `$id` or key (its direct children), or `none` (items without a parent)."""
    ancestor: str | None = None
    """An item's `$id` or key: every item below it, at any depth."""

    def narrows_within_projects(self) -> bool:
        """Whether any filter beyond `project_id` applies."""
        return bool(
            self.sprint_id
            or self.statuses
            or self.priorities
            or self.types
            or self.assignee_id
            or self.labels
            or self.due_date
            or self.due_before
            or self.due_after
            or self.flagged is not None
            or self.search
            or self.parent
            or self.ancestor
            or self.updated_since
        )


@dataclass(frozen=True)
class ItemPage:
    items: list[dict[str, Any]]
    total: int
    """Every match (not only those after the cursor)."""
    last_keys: list[Any] | None
    """The last item's sort keys when more items follow (what the next cursor holds)."""


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
    `after`, then `offset` more), and how many match in all."""
    db = raw(session)
    below, source, where, params = _where(db, workspace_id, filters)
    total_sql = _total_query(filters, source, where)
    page_where = where
    if after is not None:
        resume, resume_params = order.after(after)
        page_where, params = f"{where} AND {resume}", {**params, **resume_params}
    # The sort keys and the total ride along as last columns (the total computed once): one
    # statement, not two; one row more than the page says whether another page follows.
    rows = db.rows(
        f"{below}SELECT {ITEM_COLUMNS[db.dialect]}, {order.columns()}, ({total_sql})"
        f" FROM {source} JOIN projects p ON p.id = wi.project_id WHERE {page_where}"
        f" ORDER BY {order.order_by()} LIMIT :limit OFFSET :offset",
        {**params, "limit": limit + 1, "offset": offset},
    )
    counted = rows[-1][-1] if rows else (db.row(f"{below}{total_sql}", params) or (None,))[0]
    total = int(counted) if counted is not None else 0
    more, rows = len(rows) > limit, rows[:limit]
    last_keys = list(rows[-1][-1 - len(order.keys) : -1]) if more and rows else None
    items = attach_assignees(db, [item_from_row(row) for row in rows])
    return ItemPage(items, total, last_keys)


def _total_query(filters: TaskFilters, source: str, where: str) -> str:
    """How to count the matches: an unfiltered board reads the projects' maintained counts
    (constant time at any size); anything else counts the rows.
    """
    if not filters.narrows_within_projects():
        project = " AND id = :project_id" if filters.project_id is not None else ""
        return f"SELECT sum(item_count) FROM projects WHERE workspace_id = :workspace_id{project}"
    return f"SELECT count(*) FROM {source} WHERE {where}"


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
    if f.statuses:
        one_of("wi.status", "status", f.statuses)
    if f.priorities:
        one_of("wi.priority", "priority", f.priorities)
    if f.types:
        one_of("wi.type", "type", f.types)
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
    for operator, name, day in (
        ("=", "due_date", f.due_date),
        ("<", "due_before", f.due_before),
        (">", "due_after", f.due_after),
    ):
        if day is not None:
            clauses.append(f"wi.due_date {operator} :{name}")
            params[name] = day.isoformat() if db.codec.sqlite else day
    if f.flagged is not None:
        clauses.append("wi.flagged = :flagged")
        params["flagged"] = f.flagged
    if f.parent == "none":
        clauses.append("wi.parent_id IS NULL")
    elif f.parent is not None:
        clauses.append(f"wi.parent_id = ({_item_by_ref('parent_ref', f.parent)})")
        params["parent_ref"] = f.parent
    below, source = "", "work_items wi"
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
    if f.updated_since is not None:
        clauses.append("wi.updated_at >= :updated_since")
        params["updated_since"] = db.codec.param(f.updated_since)
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
    return below, source, " AND ".join(clauses), params


def _item_by_ref(param: str, ref: str) -> str:
    """A subquery for the `$id` of the workspace's item whose `$id` or key (`ref`) is in the
    parameter `param`: none, so nothing matches, if there is no such item."""
    column = "key" if is_work_item_key(ref) else "id"
    return f"SELECT id FROM work_items WHERE workspace_id = :workspace_id AND {column} = :{param}"

"""Changing work items: the one place that locks items for a change (`lock_items`), checks the
sprint an item moves to (`check_open_sprint`, on what `access.open_sprints` reads) and
applies a change (`change_items`: the version, `$updatedAt`, the change's diff and its
`task.updated` event, from which notifications, webhooks and sprint histories follow, see
`events.service` and `sprints.history`; `move_sprint_items`, the same for all of a sprint's
items at once). PATCH, bulk update, and a sprint's completion or deletion all go through here;
`reads` reads the items (and is how this module reads them).
"""

from collections.abc import Sequence
from operator import itemgetter
from typing import Any

from sqlalchemy.orm import Session

from sprintboard.access import lock_clause, row_lock
from sprintboard.errors import InvalidRequest
from sprintboard.events import service as events
from sprintboard.models import utcnow
from sprintboard.responses import iso
from sprintboard.sql import Codec, Raw, raw
from sprintboard.workitems import fields, reads

CHANGEABLE = {f.column: f.name for f in fields.SETTABLE}
"""Column → API field, for every field a client may change (`fields.SETTABLE`)."""
_COLUMN = {f.name: f.column for f in fields.FIELDS}
"""API field → column, for every field a change writes (a status's category with it)."""


def lock_items(
    session: Session, condition: str, params: dict[str, Any], *, project: bool = False
) -> list[dict[str, Any]]:
    """The work items that match `condition` (SQL on `work_items wi`), as `reads` shows them
    (without `assignees`), locked for a change in `$id` order (`access.row_lock`).

    Without `project`, their `project` and `childCount` are left out (not read): what a
    change's event carries leaves them out anyway.
    """
    db = raw(session)
    if project:
        select = f"SELECT {reads.ITEM_COLUMNS[db.dialect]} FROM work_items wi"
        select += " JOIN projects p ON p.id = wi.project_id"
    else:
        select = f"SELECT {_BARE[db.dialect]} FROM work_items wi"
    rows, columns = db.fetch(
        f"{select} WHERE {condition} ORDER BY wi.id{row_lock(session, 'wi')}", params
    )
    return list(map(columns.made(reads.item_decoder), rows))


_BARE = {
    dialect: reads.item_columns(Codec(dialect), project=("NULL", "NULL"), children="0")
    for dialect in ("sqlite", "postgresql")
}


def change_items(
    session: Session,
    *,
    actor_id: str | None,
    changes: Sequence[tuple[dict[str, Any], dict[str, Any]]],
) -> list[dict[str, Any]]:
    """Apply each change: to a record as it stands (from `lock_items` or
    `reads.read_visible_item(..., for_change=True)`), the API fields it wants, as the API
    shows them. Fields whose value differs are written, with the item's version and
    `$updatedAt`, and one `task.updated` event carries the item and the diff
    (`{field: {"from", "to"}}`). The records are brought up to date in place; returns those
    that changed.

    The rows are written one statement per set of changed fields: one `UPDATE` for all the
    items when they change to the same values (a sprint's items moving out), else the same
    statement run for each (pipelined on PostgreSQL).
    """
    db = raw(session)
    now = utcnow()
    stamp, shown = db.codec.param(now), iso(now)
    writes: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    changed: list[dict[str, Any]] = []
    to_record: list[dict[str, Any]] = []
    for record, wanted in changes:
        diff = {
            field: {"from": record[field], "to": value}
            for field, value in wanted.items()
            if record[field] != value
        }
        if not diff:
            continue
        params: dict[str, Any] = {"id": record["$id"]}
        for field, change in diff.items():
            record[field] = change["to"]
            params[_COLUMN[field]] = _param(db.codec, field, change["to"])
        record["$updatedAt"] = shown
        writes.setdefault(tuple(diff), []).append(params)
        changed.append(record)
        shown_diff = _shown(diff)
        to_record.append(_updated(record, shown_diff, actor_id))
    for names, rows in writes.items():
        _write(db, [_COLUMN[field] for field in names], rows, stamp)
    events.record_many(session, to_record)
    return changed


def _shown(diff: dict[str, Any]) -> dict[str, Any]:
    """A diff as its event shows it: without derived fields, and custom fields one key
    each (`fields.<key>`), as if each were a field of its own."""
    shown = {f: change for f, change in diff.items() if f not in fields.DERIVED}
    if (custom := shown.pop("fields", None)) is not None:
        before, after = custom["from"], custom["to"]
        for key in sorted(before.keys() | after.keys()):
            if before.get(key) != after.get(key):
                shown[f"fields.{key}"] = {"from": before.get(key), "to": after.get(key)}
    return shown


def move_sprint_items(
    session: Session,
    *,
    sprint_id: str,
    to_sprint_id: str | None,
    only_unfinished: bool,
    actor_id: str | None,
) -> int:
    """`change_items` for every item of the sprint `sprint_id` (those not DONE, with
    `only_unfinished`) moving to the sprint `to_sprint_id` (another one) or the backlog, in
    one statement: its items are locked in `$id` order (`access.row_lock`), written (their
    version and `$updatedAt`) and answered as they now stand (`lock_items` without
    `project`) by one `UPDATE ... RETURNING`, instead of a read, then a write, of thousands
    of rows. Each gets its `task.updated` event, as `change_items` records it (in `$id`
    order); returns how many moved.
    """
    db = raw(session)
    unfinished = " AND status_category <> 'DONE'" if only_unfinished else ""
    params = {
        "sprint_id": sprint_id,
        "to_": to_sprint_id,
        "now_": db.codec.param(utcnow()),
    }
    rows, columns = db.fetch(_MOVE[db.dialect].format(unfinished=unfinished), params)
    items = sorted(map(columns.made(reads.item_decoder), rows), key=_BY_ID)
    del rows
    # One diff for all: events are only read once recorded (and written as JSON).
    diff = {"sprintId": {"from": sprint_id, "to": to_sprint_id}}
    to_record = []
    for item in items:
        # The item is its event's `workItem`: `reads.event_form` less the copy (of what that
        # leaves out, these rows carry only these two).
        del item["project"], item["childCount"]
        to_record.append(_updated(item, diff, actor_id, form=item))
    events.record_many(session, to_record)
    return len(items)


_BY_ID = itemgetter("$id")
_BUMP = "version = version + 1, updated_at = :now_"
"""What every change of an item writes besides its fields."""
_MOVE = {
    "sqlite": f"UPDATE work_items SET sprint_id = :to_, {_BUMP}"
    " WHERE sprint_id = :sprint_id{unfinished} RETURNING "
    + reads.item_columns(
        Codec("sqlite"),
        of="",
        project=("NULL", "NULL"),
        real=lambda column: f"CAST({column} AS REAL)",
        children="0",
    ),
    # The rows are locked first, in `$id` order, by the materialized CTE.
    "postgresql": "WITH locked AS MATERIALIZED (SELECT wi.id FROM work_items wi"
    " WHERE wi.sprint_id = :sprint_id{unfinished} ORDER BY wi.id"
    f"{lock_clause('postgresql', of='wi')})"
    f" UPDATE work_items wi SET sprint_id = :to_, {_BUMP.replace('version + 1', 'wi.version + 1')}"
    " FROM locked WHERE wi.id = locked.id RETURNING "
    + reads.item_columns(Codec("postgresql"), project=("NULL", "NULL"), children="0"),
}
"""`move_sprint_items`' statement (`{unfinished}` to fill in). SQLite needs no lock (its one
writer holds the database) and names no alias in `RETURNING`; its floating-point columns are
cast as `reads.ITEM_RETURNING` casts them."""


def _updated(
    record: dict[str, Any],
    diff: dict[str, Any],
    actor_id: str | None,
    *,
    form: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The `task.updated` event of a change (`events.record_many`'s form); `form`, the
    record's `reads.event_form` if already made."""
    return {
        "workspace_id": record["workspaceId"],
        "type": "task.updated",
        "subject_id": record["$id"],
        "actor_id": actor_id,
        "payload": {
            "workItem": reads.event_form(record) if form is None else form,
            "changes": diff,
        },
    }


def _write(db: Raw, columns: list[str], rows: list[dict[str, Any]], stamp: Any) -> None:
    sets = ", ".join(f"{column} = :{column}" for column in columns)
    sets += f", {_BUMP}"
    first = {column: rows[0][column] for column in columns}
    if len(rows) > 1 and all(row[column] == first[column] for row in rows for column in columns):
        ids = [row["id"] for row in rows]
        # (One parameter, whatever the count: a JSON array on SQLite, an array on PostgreSQL.)
        among = "IN (SELECT value FROM json_each(:ids_))" if db.codec.sqlite else "= ANY(:ids_)"
        ids_param: Any = db.codec.json_param(ids) if db.codec.sqlite else ids
        db.execute(
            f"UPDATE work_items SET {sets} WHERE id {among}",
            {**first, "now_": stamp, "ids_": ids_param},
        )
        return
    statement = f"UPDATE work_items SET {sets} WHERE id = :id"
    if len(rows) == 1:
        db.execute(statement, {**rows[0], "now_": stamp})
    else:
        db.execute_many(statement, [{**row, "now_": stamp} for row in rows])


def _param(codec: Codec, field: str, value: Any) -> Any:
    """A field's API value as the parameter its column takes."""
    return fields.BY_NAME[field].param(codec, value)


def check_open_sprint(
    sprint: tuple[str, str] | None,
    project_id: str,
    *,
    field: str = "sprintId",
    path: str | None = None,
    message: str = "not an open sprint of this item's project.",
) -> None:
    """The rule for the sprint an item goes to: a sprint of the workspace (else 400
    `not_found`, on `field`, the message naming `path`), of the item's project and not
    COMPLETED (else 400 `invalid_value` with `message`)."""
    path = path or field
    extra = {"path": path} if path != field else {}
    if sprint is None:
        raise InvalidRequest(field, "not_found", f"{path}: no such sprint.", **extra)
    sprint_project, status = sprint
    if sprint_project != project_id or status == "COMPLETED":
        raise InvalidRequest(field, "invalid_value", f"{path}: {message}", **extra)


CHILDREN_ELSEWHERE = (
    "parent_id IN (SELECT id FROM work_items WHERE project_id = :project_id)"
    " AND project_id <> :project_id"
)
"""(For `service.detach_children`.) The items of other projects whose parent is in the
project `:project_id`."""


def delete_project_items(session: Session, project_id: str) -> list[dict[str, Any]]:
    """Deletes the project's items; answers them as they were, in the order they were created
    (for their `task.deleted` events)."""
    db = raw(session)
    rows = db.rows(
        f"DELETE FROM work_items WHERE project_id = :project_id {reads.ITEM_RETURNING[db.dialect]}",
        {"project_id": project_id, "project_name": None, "project_key": None},
    )
    return sorted((reads.item_from_row(row) for row in rows), key=_key_number)


def _key_number(item: dict[str, Any]) -> int:
    """`42` of `WEB-42`."""
    return int(item["key"].rpartition("-")[2])


def forget_field(session: Session, *, field_id: str, key: str) -> None:
    """A custom field's delete: its items no longer carry its key (their version moves on,
    so an `If-Match` of before fails; no event: the field, not the item, was changed). Run
    before the field's typed values go, which name the items."""
    db = raw(session)
    removed = "custom_fields - :key" if not db.codec.sqlite else "json_remove(custom_fields, :path)"
    db.execute(
        f"UPDATE work_items SET custom_fields = {removed}, version = version + 1"
        " WHERE id IN (SELECT item_id FROM work_item_field_values WHERE field_id = :field_id)",
        {"key": key, "path": f"$.{key}", "field_id": field_id},
    )

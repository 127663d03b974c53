"""Work items: creation with collision-free keys, updates that record what changed, filtered
lists with a fixed number of queries, Kanban bulk updates, comments and time logs.
"""

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace
from dataclasses import field as dataclass_field
from datetime import date
from typing import Any, NamedTuple

import orjson
from sqlalchemy import (
    ColumnElement,
    Float,
    Numeric,
    cast,
    func,
    update,
)
from sqlalchemy.orm import Session

from sprintboard.access import WorkspaceAccess, lock_clause, open_sprints, row_lock
from sprintboard.concurrency import etag
from sprintboard.customfields.service import Definitions, read_definitions
from sprintboard.customfields.values import checked, merged, write_values
from sprintboard.errors import InvalidRequest, NotAuthor
from sprintboard.events import service as events
from sprintboard.models import (
    Comment,
    TimeLog,
    WorkItem,
    new_id,
    touched,
    utcnow,
)
from sprintboard.responses import iso
from sprintboard.sql import Codec, Columns, Getter, Raw, in_list, raw
from sprintboard.workflows.service import Workflow, read_workflows
from sprintboard.workitems import fields, hierarchy, reads, relations, store
from sprintboard.workitems.schemas import BulkEntry, TaskCreate, TaskUpdate
from sprintboard.workspaces.service import is_known_type

BOARD_TOP = """(SELECT position FROM work_items
WHERE workspace_id = :workspace_id AND project_id = :project_id ORDER BY position DESC LIMIT 1)"""
"""The board's last item: one probe of the board-order index. It sees what was committed when
its statement began; the creates that committed while this one waited for the counter are
in the row's `board_end`, which the waiting statement reads once it holds the row."""


def _next_number(dialect: str, *, active_sprint: bool) -> tuple[str, str]:
    """The counter bump that numbers one new item, and places it: with the project's key,
    name and board end, and (`active_sprint`) the project's active sprint, read first and,
    on PostgreSQL, locked for share, so that a completion under way is waited for (and then
    the sprint is no longer active). One statement: the counter is taken last, and no read
    of the board happens under it. Answers its `WITH` list (maybe empty) and its `UPDATE`."""
    postgresql = dialect == "postgresql"
    real, greatest = ("double precision", "greatest") if postgresql else ("REAL", "max")
    sprint, with_sprint, from_sprint = "NULL", "", ""
    if active_sprint and postgresql:
        # (`FROM sprint` joins its one row: the sprint is locked before the counter is.)
        with_sprint = (
            "sprint AS MATERIALIZED (SELECT max(id) AS id FROM (SELECT id FROM sprints"
            " WHERE project_id = :project_id AND status = 'ACTIVE'"
            f"{lock_clause(dialect, 'SHARE')}) active)"
        )
        from_sprint, sprint = " FROM sprint", "sprint.id"
    elif active_sprint:  # (SQLite: BEGIN IMMEDIATE made this the only writer)
        sprint = "(SELECT id FROM sprints WHERE project_id = :project_id AND status = 'ACTIVE')"
    return (
        with_sprint,
        f"""
UPDATE projects SET last_item_number = last_item_number + 1, item_count = item_count + 1,
    board_end = CASE WHEN CAST(:position AS {real}) IS NULL
        THEN {greatest}(board_end, coalesce({BOARD_TOP}, 0)) + 1
        ELSE {greatest}(board_end, :position) END{from_sprint}
WHERE projects.id = :project_id AND projects.workspace_id = :workspace_id
RETURNING last_item_number, projects.key AS project_key, projects.name AS project_name,
    board_end, {sprint} AS sprint_id
""",
    )


def _numbering(dialect: str, *, active_sprint: bool) -> str:
    with_sprint, update = _next_number(dialect, active_sprint=active_sprint)
    return f"WITH {with_sprint} {update}" if with_sprint else update


_NEXT_NUMBER = {
    (dialect, active): _numbering(dialect, active_sprint=active)
    for dialect in ("sqlite", "postgresql")
    for active in (False, True)
}


def _create(*, active_sprint: bool) -> str:
    """PostgreSQL, an item without a parent: the counter's bump (`_next_number`), the insert
    and the assignees' check in one statement, one round trip, after which the counter is
    held only for the events and the commit. Answers the counter's row and the assignees
    found (`assignees_`: `[[$id, name, email]]`, JSON, `Assignee`'s fields in its order); none
    if there is no such project (nothing is inserted then). A `None` parameter is untyped to
    PostgreSQL, hence the casts."""
    with_sprint, update = _next_number("postgresql", active_sprint=active_sprint)
    sprint = "coalesce(CAST(:sprint_id AS text), c.sprint_id)"
    values = {
        **{column: f":{column}" for column in ITEM_COLUMNS},
        "sprint_id": sprint,
        "number": "c.last_item_number",
        "key": "c.project_key || '-' || c.last_item_number",
        "status": f"coalesce(CAST(:status AS text),"
        f" CASE WHEN {sprint} IS NULL THEN CAST(:backlog_status AS text)"
        " ELSE CAST(:todo_status AS text) END)",
        "status_category": f"coalesce(CAST(:status_category AS text),"
        f" CASE WHEN {sprint} IS NULL THEN CAST(:backlog_category AS text)"
        " ELSE CAST(:todo_category AS text) END)",
        "due_date": "CAST(:due_date AS date)",
        "estimated_hours": "CAST(:estimated_hours AS double precision)",
        "story_points": "CAST(:story_points AS double precision)",
        "position": "coalesce(CAST(:position AS double precision), c.board_end)",
        "parent_id": "NULL",
    }
    ctes = [
        *([with_sprint] if with_sprint else []),
        f"counter AS ({update})",
        f"item AS (INSERT INTO work_items ({', '.join(ITEM_COLUMNS)})"
        f" SELECT {', '.join(values[column] for column in ITEM_COLUMNS)} FROM counter c)",
    ]
    members = (
        "SELECT coalesce(json_agg(json_build_array(u.id, u.name, u.email)), '[]')::text"
        " FROM workspace_members m JOIN users u ON u.id = m.user_id"
        " WHERE m.workspace_id = :workspace_id AND m.user_id = ANY(CAST(:assignees AS text[]))"
    )
    return f"WITH {', '.join(ctes)} SELECT c.*, ({members}) AS assignees_ FROM counter c"


ITEM_COLUMNS = fields.CREATE_COLUMNS
_API_NAMES = tuple(f.name for f in fields.FIELDS)
"""The columns a create writes, in the order of `item_values`."""
_INSERT_ITEM = (
    f"INSERT INTO work_items ({', '.join(ITEM_COLUMNS)})"
    f" VALUES ({', '.join(':' + column for column in ITEM_COLUMNS)})"
)
_CREATE = {active: _create(active_sprint=active) for active in (False, True)}


class Assignee(NamedTuple):
    """A user an item is assigned to, as found for a create: what its `assignees` shows."""

    id: str
    name: str
    email: str

    def shown(self) -> dict[str, str]:
        return {"$id": self.id, "name": self.name, "email": self.email}


def assignee_reader(columns: Columns) -> Callable[[Sequence[Any]], Assignee]:
    """What makes an `Assignee` of a row with the columns `id`, `name` and `email`."""
    fields = columns.getter("id", "name", "email")
    return lambda row: Assignee._make(fields(row))


def _counter_reader(columns: Columns) -> Getter:
    """What reads a create's numbering (`_next_number`'s `RETURNING`) from its row."""
    return columns.getter(
        "last_item_number", "project_key", "project_name", "board_end", "sprint_id"
    )


@dataclass(slots=True)
class NewItem:
    """What a create writes of one item, less what its entry says: the values the database
    gave it (number, position, sprint) and those of the request."""

    item_id: str
    number: int
    project: tuple[str, str, str]
    """The project's `$id`, key and name."""
    sprint_id: str | None
    position: float | None
    """None until the database has placed it (`_create`)."""
    title: str
    assignees: list[Assignee]
    """Its assignees, in `assigneeIds` order."""
    parent_id: str | None = None
    status: str | None = None
    """Its status and the status's category: None until known (`_create` knows them from
    the sprint it joins)."""
    category: str | None = None
    fields: dict[str, Any] = dataclass_field(default_factory=dict)
    """Its custom fields' values, checked (`custom_values`)."""


def placed(new: NewItem, data: TaskCreate, workflow: Workflow) -> NewItem:
    """`new` with its status: the one asked for, else its project's default for where it
    is (in a sprint or not)."""
    if data.status is not None:
        return replace(new, status=data.status, category=workflow.category(data.status))
    status = workflow.default(in_sprint=new.sprint_id is not None)
    return replace(new, status=status.name, category=status.category)


def item_values(
    codec: Codec,
    data: TaskCreate,
    new: NewItem,
    created_by: str | None,
    now: Any,
    json: Callable[[Any], Any] | None = None,
) -> tuple[Any, ...]:
    """The row of `ITEM_COLUMNS` a create inserts (`now` as `codec.param` gives it; JSON as
    `json` makes it, by default `codec.json_param`)."""
    json = json or codec.json_param
    project_id, project_key, _ = new.project
    row = {f.column: f.param(codec, getattr(data, f.column)) for f in fields.PLAIN}
    row.update(
        id=new.item_id,
        workspace_id=data.workspace_id,
        project_id=project_id,
        sprint_id=new.sprint_id,
        number=new.number,
        key=f"{project_key}-{new.number}",
        title=new.title,
        type=data.type,
        status=new.status,
        status_category=new.category,
        assignee_ids=json(_unique(data.assignee_ids)),
        labels=json(_unique(data.labels)),
        position=new.position,
        comment_count=0,
        logged_hours=0,
        created_by=created_by,
        version=1,
        created_at=now,
        updated_at=now,
        parent_id=new.parent_id,
        custom_fields=json(new.fields),
    )
    return tuple(map(row.__getitem__, ITEM_COLUMNS))


def new_record(
    data: TaskCreate, new: NewItem, *, created_at: str, detail: bool = False
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The item just inserted as a read shows it (`reads.item_from_row` and its assignees;
    with `detail`, its comments and time logs: none), built from what was written instead
    of read back; and its own fields, the form its event carries (`reads.event_form`)."""
    project_id, project_key, project_name = new.project
    own = dict.fromkeys(_API_NAMES)  # (in the order the API shows them)
    own.update({f.name: f.shown(getattr(data, f.column)) for f in fields.PLAIN})
    own.update(
        {
            "$id": new.item_id,
            "key": f"{project_key}-{new.number}",
            "title": new.title,
            "type": data.type,
            "status": new.status,
            "statusCategory": new.category,
            "assigneeIds": [assignee.id for assignee in new.assignees],
            "labels": _unique(data.labels),
            "sprintId": new.sprint_id,
            "projectId": project_id,
            "workspaceId": data.workspace_id,
            "position": float(new.position or 0),
            "commentCount": 0,
            "loggedHours": 0.0,
            "$createdAt": created_at,
            "$updatedAt": created_at,
            "parentId": new.parent_id,
            "fields": new.fields,
        }
    )
    record = {
        **own,
        "childCount": 0,
        "project": {"$id": project_id, "name": project_name, "key": project_key},
        **({"comments": [], "timeLogs": []} if detail else {}),
        "assignees": [assignee.shown() for assignee in new.assignees],
    }
    return record, own


def _assigned(user_ids: list[str], members: Sequence[Assignee]) -> list[Assignee]:
    """The users `user_ids`, in that order, found among `members` (those of them who are
    members of the workspace); 400 `not_found` if one is not."""
    by_id = {member.id: member for member in members}
    if missing := [u for u in user_ids if u not in by_id]:
        raise InvalidRequest(
            "assigneeIds", "not_found", f"assigneeIds: not members of the workspace: {missing}"
        )
    return [by_id[user_id] for user_id in user_ids]


def _unique(values: list[str]) -> list[str]:
    return values if len(values) < 2 else unique(values)


def create_work_item(
    session: Session, *, access: WorkspaceAccess, data: TaskCreate
) -> tuple[dict[str, Any], str]:
    """Create a work item; returns it as the API shows it, and its ETag.

    The hot write path, in plain SQL: the checks that only read; its sprint if it names one
    (locked for share); then one statement locks the project's counter for its number (and,
    by default, its active sprint first, for share) and moves the end of the board; then the
    parent's checks, if any, and the insert. On PostgreSQL an item without a parent is one
    statement from the counter on (`_create`). The answer is built from the values written.
    (In this order, a create holding the counter waits for nothing but its parent: a
    completion holds its sprint, then its items, and a delete an item, then the counter.)
    """
    title = title_of(data.name, data.title)
    if title is None:
        raise InvalidRequest("name", "required", "name: a title is required.")
    check_type(session, access.workspace_id, data.type)
    db = raw(session)
    workflows = read_workflows(db, [data.project_id], workspace_id=access.workspace_id)
    workflow = workflows.get(data.project_id)  # (none: no such project, said below)
    if workflow is not None and data.status is not None:
        workflow.category(data.status)
    definitions, values = custom_values(db, access.workspace_id, data)
    one_statement = not db.codec.sqlite and data.parent_id is None
    assignee_ids = unique(data.assignee_ids)
    assignees: list[Assignee] = []
    if data.sent("sprint_id") or not one_statement:  # (assignees are the first thing to say)
        assignees = _check_assignees(session, access.workspace_id, assignee_ids)
    # The counter row lock (PostgreSQL) or the database write lock (SQLite, BEGIN IMMEDIATE)
    # serializes creates within a project, so keys are consecutive and never collide.
    project = {"project_id": data.project_id, "workspace_id": access.workspace_id}
    sprint_id = None
    if data.sent("sprint_id"):
        try:
            sprint_id = check_sprint(session, data.project_id, access.workspace_id, data.sprint_id)
        except InvalidRequest:
            _check_project(db, project)  # (a missing project is the first thing to say)
            raise
    new = NewItem(
        item_id=new_id(),
        number=0,
        project=(data.project_id, "", ""),
        sprint_id=sprint_id,
        position=data.position,
        title=title,
        assignees=assignees,
        fields=values,
    )
    moment, created_by = utcnow(), access.caller.user_id
    now = db.codec.param(moment)
    active = not data.sent("sprint_id")
    if one_statement:
        row = item_values(db.codec, data, new, created_by, now)
        params = dict(zip(ITEM_COLUMNS, row, strict=True))
        params.update(status=data.status, assignees=assignee_ids, **_statuses(data, workflow))
        counter, columns = db.fetch_one(_CREATE[active], {**params, **project})
    else:
        counter, columns = db.fetch_one(
            _NEXT_NUMBER[db.dialect, active], {**project, "position": data.position}
        )
    if counter is None or workflow is None:
        _check_assignees(session, access.workspace_id, assignee_ids)
        raise no_project()
    number, project_key, project_name, board_end, active_id = columns.made(_counter_reader)(counter)
    if one_statement:
        found = orjson.loads(counter[columns["assignees_"]])
        assignees = _assigned(assignee_ids, [Assignee._make(fields) for fields in found])
    new = replace(
        new,
        number=int(number),
        project=(data.project_id, project_key, project_name),
        sprint_id=sprint_id if data.sent("sprint_id") else active_id,
        position=data.position if data.position is not None else board_end,
        assignees=assignees,
    )
    new = placed(new, data, workflow)
    if not one_statement:
        if data.parent_id is not None:
            parent_id = _parent(db, access.workspace_id, data.parent_id, "parentId")
            hierarchy.lock_hierarchy(db, access.workspace_id)
            levels = hierarchy.ancestry(db, [parent_id])[parent_id]
            hierarchy.check_depth(len(levels) + 1, "parentId")
            new = replace(new, parent_id=parent_id)
        row = item_values(db.codec, data, new, created_by, now)
        db.execute(_INSERT_ITEM, dict(zip(ITEM_COLUMNS, row, strict=True)))
    if values:
        write_values(db, definitions, [(new.item_id, values)], new=True)
    record, own = new_record(data, new, created_at=str(iso(moment)), detail=True)
    reads.with_new_hierarchy(db, record)
    events.record(
        session,
        workspace_id=access.workspace_id,
        type="task.created",
        subject_id=new.item_id,
        actor_id=created_by,
        payload={"workItem": own},
    )
    return record, etag(new.item_id, 1)


def custom_values(
    db: Raw, workspace_id: str, data: TaskCreate, definitions: Definitions | None = None
) -> tuple[Definitions, dict[str, Any]]:
    """A create's custom field values, checked (`customfields.values.checked`), without the
    ones it leaves unset; and the workspace's fields (`definitions`, else read when it sends
    some)."""
    if not data.custom_fields:
        return definitions or {}, {}
    if definitions is None:
        definitions = read_definitions(db, workspace_id)
    found = checked(db, workspace_id, definitions, data.custom_fields)
    return definitions, {key: value for key, value in found.items() if value is not None}


_STATUS_PARAMS = (
    "status_category",
    "todo_status",
    "todo_category",
    "backlog_status",
    "backlog_category",
)


def _statuses(data: TaskCreate, workflow: Workflow | None) -> dict[str, Any]:
    """`_create`'s parameters for the status: the one asked for (and its category), and the
    project's defaults in a sprint and outside one, which the statement chooses between."""
    if workflow is None:
        return dict.fromkeys(_STATUS_PARAMS)
    todo, backlog = workflow.default(in_sprint=True), workflow.default(in_sprint=False)
    return {
        "status_category": workflow.category(data.status) if data.status else None,
        "todo_status": todo.name,
        "todo_category": todo.category,
        "backlog_status": backlog.name,
        "backlog_category": backlog.category,
    }


def update_work_item(
    session: Session, *, item: reads.VisibleItem, data: TaskUpdate
) -> tuple[dict[str, Any], str]:
    """PATCH: a partial update of an item found for the change
    (`reads.read_visible_item(..., for_change=True)`); returns the item as it now stands, and
    its ETag. Nothing to change writes nothing.
    """
    record = item.record
    before = list(record["assigneeIds"])
    changed = change_work_item(session, access=item.access, record=record, data=data)
    db = raw(session)
    if record["assigneeIds"] != before:
        reads.attach_assignees(db, [record])
    reads.with_hierarchy(db, reads.with_history(db, record))
    return record, etag(record["$id"], item.version + 1 if changed else item.version)


def change_work_item(
    session: Session,
    *,
    access: WorkspaceAccess,
    record: dict[str, Any],
    data: TaskUpdate,
    workflows: dict[str, Workflow] | None = None,
    definitions: dict[str, Definitions] | None = None,
) -> bool:
    """Check the fields `data` sends against the item (`record`, locked for the change) as
    PATCH checks them, and apply them (`store.change_items`); returns whether anything
    changed. `record` is brought up to date, less its embeds. (`workflows` and
    `definitions`, the custom fields by workspace, are read once per request into these.)"""
    sent = data.model_fields_set
    wanted: dict[str, Any] = {}
    if sent & {"name", "title"}:
        wanted["title"] = title_of(data.name if "name" in sent else None, data.title)
    for attr, field in store.CHANGEABLE.items():
        if attr != "title" and attr in sent:
            wanted[field] = getattr(data, attr)
    workspace_id = record["workspaceId"]
    if "type" in wanted and wanted["type"] != record["type"]:
        check_type(session, workspace_id, wanted["type"])
    if "assigneeIds" in wanted:
        wanted["assigneeIds"] = unique(wanted["assigneeIds"] or [])
        # Only those added must be members: one who has left the workspace since stays
        # assigned until removed, and resending the list as it is changes nothing.
        added = [u for u in wanted["assigneeIds"] if u not in record["assigneeIds"]]
        _check_assignees(session, workspace_id, added)
    if "labels" in wanted:
        wanted["labels"] = unique(wanted["labels"] or [])
    if "status" in wanted and wanted["status"] != record["status"]:
        workflows = workflows if workflows is not None else {}
        _check_statuses(raw(session), [(record, wanted)], workflows)
    if "sprintId" in wanted and wanted["sprintId"] != record["sprintId"]:
        check_sprint(session, record["projectId"], workspace_id, wanted["sprintId"])
    if wanted.get("parentId") is not None:
        wanted["parentId"] = _moved_under(session, record, wanted["parentId"], "parentId")
    custom: Definitions = {}
    if "fields" in wanted:
        known = definitions if definitions is not None else {}
        if workspace_id not in known:
            known[workspace_id] = read_definitions(raw(session), workspace_id)
        custom = known[workspace_id]
        sent_values = checked(raw(session), workspace_id, custom, wanted["fields"])
        wanted["fields"] = merged(record["fields"], sent_values)
    for f in fields.PLAIN:
        if f.name in wanted:
            wanted[f.name] = f.shown(wanted[f.name])
    before = record["fields"]
    changes = [(record, wanted)]
    changed = bool(store.change_items(session, actor_id=access.caller.user_id, changes=changes))
    if record["fields"] != before:
        write_values(raw(session), custom, [(record["$id"], record["fields"])])
    return changed


def _moved_under(session: Session, record: dict[str, Any], ref: str, field: str) -> str:
    """The `$id` of the parent `ref` names for the item, checked (`hierarchy.check_move`)
    under the workspace's hierarchy lock, unless it is already the item's parent."""
    db = raw(session)
    parent_id = _parent(db, record["workspaceId"], ref, field)
    if parent_id != record["parentId"]:
        hierarchy.lock_hierarchy(db, record["workspaceId"])
        hierarchy.check_move(db, item_id=record["$id"], parent_id=parent_id, field=field)
    return parent_id


def _parent(db: Raw, workspace_id: str, ref: str, field: str) -> str:
    """The `$id` of the workspace's item `ref` names, locked for key share; 400 otherwise."""
    found = hierarchy.resolve_parents(db, workspace_id, [ref], lock=True).get(ref)
    if found is None:
        raise InvalidRequest(field, "not_found", f"{field}: no such work item here.")
    return found


def delete_work_item(session: Session, *, access: WorkspaceAccess, item: WorkItem) -> None:
    """Deletes the item; its comments, time logs and relations go with it (each relation
    with a `relation.deleted` event). Its children stay, without a parent, each with a
    `task.updated` event.

    On PostgreSQL the item is locked for update first, which a new child's key share lock
    waits for: a child being added under it now is found below, or its request finds no
    parent once this commits.
    """
    lock = row_lock(session, strength="UPDATE")
    if lock:
        raw(session).rows(f"SELECT id FROM work_items WHERE id = :id{lock}", {"id": item.id})
    detach_children(
        session,
        workspace_id=access.workspace_id,
        actor_id=access.caller.user_id,
        condition="parent_id = :parent_id",
        parent_id=item.id,
    )
    relations.delete_relations_of(
        session,
        workspace_id=access.workspace_id,
        actor_id=access.caller.user_id,
        condition="id = :item_id",
        item_id=item.id,
    )
    _record(session, "task.deleted", access, item)
    raw(session).execute(
        "UPDATE projects SET item_count = item_count - 1 WHERE id = :id", {"id": item.project_id}
    )
    session.delete(item)


def detach_children(
    session: Session, *, workspace_id: str, actor_id: str | None, condition: str, **params: Any
) -> None:
    """The items that match `condition` (SQL on `work_items`, naming their parents) lose
    their parent, each with a `task.updated` event (`changes.parentId`), as any change to
    items is made (`store.change_items`)."""
    children = store.lock_items(session, condition, params)
    changes = [(child, {"parentId": None}) for child in children]
    store.change_items(session, actor_id=actor_id, changes=changes)


def _record(
    session: Session,
    type: str,
    access: WorkspaceAccess,
    item: WorkItem,
    changes: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], str]:
    """One event about an item, carrying it as the API shows it now (read through `reads`,
    so events and responses share one serializer); returns that record and its ETag."""
    session.flush()
    record, tag = reads.read_item(session, item.id, history=False)
    payload: dict[str, Any] = {"workItem": reads.event_form(record)}
    if changes is not None:
        payload["changes"] = changes
    events.record(
        session,
        workspace_id=item.workspace_id,
        type=type,
        subject_id=item.id,
        actor_id=access.caller.user_id,
        payload=payload,
    )
    return record, tag


_BULK_FIELDS = (("status", "status"), ("position", "position"), ("sprint_id", "sprintId"))


def bulk_update(
    session: Session,
    *,
    access: WorkspaceAccess,
    records: dict[str, dict[str, Any]],
    ids: Sequence[str],
    entries: Sequence[BulkEntry],
) -> list[dict[str, Any]]:
    """Apply the entries to items of one workspace (`ids[i]` is the item of `entries[i]`,
    `records` the items as `reads.read_visible_items` found and locked them), all or nothing;
    returns the items as they now stand, in the order of `entries`.

    Board moves (status, position, sprint: a board drags up to 500 cards at once) are
    checked and applied together; any other entry is checked and applied as one PATCH, in
    order (after the entries before it).
    """
    if all(entry.is_kanban_move() for entry in entries):
        return _bulk_move(session, access=access, records=records, ids=ids, entries=entries)
    workflows: dict[str, Workflow] = {}
    definitions: dict[str, Definitions] = {}
    for index, (item_id, data) in enumerate(zip(ids, entries, strict=True)):
        with entry(index):
            change_work_item(
                session,
                access=access,
                record=records[item_id],
                data=data,
                workflows=workflows,
                definitions=definitions,
            )
    return reads.read_items_in_order(session, ids)


@contextmanager
def entry(index: int) -> Iterator[None]:
    """An error about one entry's field, renamed to name the entry: `tasks[3].name`."""
    try:
        yield
    except InvalidRequest as error:
        raise entry_error(index, error) from None


def entry_error(index: int, error: InvalidRequest) -> InvalidRequest:
    details = dict(error.details)
    field, reason = f"tasks[{index}].{details.pop('field')}", details.pop("reason")
    return InvalidRequest(field, reason, f"tasks[{index}].{error.message}", **details)


def _bulk_move(
    session: Session,
    *,
    access: WorkspaceAccess,
    records: dict[str, dict[str, Any]],
    ids: Sequence[str],
    entries: Sequence[BulkEntry],
) -> list[dict[str, Any]]:
    """Board moves: every entry checked, then all applied in one `store.change_items`."""
    targets = [sprint_id for entry in entries for sprint_id in entry.moving_to]
    sprints = open_sprints(session, access.workspace_id, targets)
    changes = []
    workflows: dict[str, Workflow] = {}
    for index, (item_id, entry) in enumerate(zip(ids, entries, strict=True)):
        record, sent = records[item_id], entry.model_fields_set
        wanted = {field: getattr(entry, attr) for attr, field in _BULK_FIELDS if attr in sent}
        target = wanted.get("sprintId")
        if target is not None and target != record["sprintId"]:
            store.check_open_sprint(
                sprints.get(target),
                record["projectId"],
                field=f"tasks[{index}].sprintId",
                message="not an open sprint of the item's project.",
            )
        changes.append((record, wanted))
    _check_statuses(raw(session), changes, workflows, in_bulk=True)
    store.change_items(session, actor_id=access.caller.user_id, changes=changes)
    return reads.attach_assignees(raw(session), [records[item_id] for item_id in ids])


def _check_statuses(
    db: Raw,
    changes: Sequence[tuple[dict[str, Any], dict[str, Any]]],
    workflows: dict[str, Workflow],
    *,
    in_bulk: bool = False,
) -> None:
    """Each change of status checked against its item's project (its workflows read once,
    into `workflows`): a status of the project (400 `invalid_value`, `tasks[i].status` in
    bulk) that the transition rules allow (409 `invalid_transition`); the change then also
    sets the status's category."""
    moving = [(r, w) for r, w in changes if "status" in w and w["status"] != r["status"]]
    missing = {r["projectId"] for r, _ in moving} - set(workflows)
    if missing:
        workflows.update(read_workflows(db, missing))
    for index, (record, wanted) in enumerate(changes):
        if "status" not in wanted or wanted["status"] == record["status"]:
            continue
        workflow = workflows[record["projectId"]]
        with entry(index) if in_bulk else nullcontext():
            wanted["statusCategory"] = workflow.category(wanted["status"])
        workflow.check_transition(record["status"], wanted["status"])


def move_status_items(
    session: Session, *, project_id: str, status: str, to: str, category: str, actor_id: str | None
) -> int:
    """A status's delete: its items move to the status `to` (of category `category`), each
    with its `task.updated` event; returns how many moved. Not a transition."""
    records = store.lock_items(
        session,
        "wi.project_id = :project_id AND wi.status = :status",
        {"project_id": project_id, "status": status},
    )
    changes = [(record, {"status": to, "statusCategory": category}) for record in records]
    return len(store.change_items(session, actor_id=actor_id, changes=changes))


def add_comment(
    session: Session, *, access: WorkspaceAccess, item: WorkItem, body: str
) -> dict[str, Any]:
    """Add a comment; returns it as the API shows it. Its event notifies the item's assignees
    and the members it mentions as `@<their email>` (never its author)."""
    comment = Comment(
        work_item_id=item.id,
        workspace_id=item.workspace_id,
        author_id=access.caller.user_id,
        body=body,
    )
    session.add(comment)
    session.execute(
        update(WorkItem)
        .where(WorkItem.id == item.id)
        .values(comment_count=WorkItem.comment_count + 1),
        execution_options={"synchronize_session": False},
    )
    session.flush()
    record = reads.read_comment(raw(session), comment.id)
    _record_comment(
        session,
        "comment.created",
        access,
        item,
        record,
        mentionedUserIds=_mentioned(session, item.workspace_id, body),
    )
    return record


def update_comment(
    session: Session, *, access: WorkspaceAccess, comment: Comment, body: str
) -> dict[str, Any]:
    """Change a comment's body (its author only); returns it as the API shows it. The same
    body changes nothing: no event, `$updatedAt` stays."""
    if comment.author_id is None or comment.author_id != access.caller.user_id:
        raise NotAuthor("comment")
    if comment.body != body:
        changes = {"body": {"from": comment.body, "to": body}}
        comment.body = body
        comment.updated_at = touched(comment.updated_at)
        session.flush()
        record = reads.read_comment(raw(session), comment.id)
        item = session.get_one(WorkItem, comment.work_item_id)
        _record_comment(session, "comment.updated", access, item, record, changes=changes)
        return record
    return reads.read_comment(raw(session), comment.id)


def delete_comment(session: Session, *, access: WorkspaceAccess, comment: Comment) -> None:
    record = reads.read_comment(raw(session), comment.id)
    item = session.get_one(WorkItem, comment.work_item_id)
    _record_comment(session, "comment.deleted", access, item, record)
    session.execute(
        update(WorkItem)
        .where(WorkItem.id == comment.work_item_id)
        .values(comment_count=WorkItem.comment_count - 1),
        execution_options={"synchronize_session": False},
    )
    session.delete(comment)


def _record_comment(
    session: Session,
    type: str,
    access: WorkspaceAccess,
    item: WorkItem,
    comment: dict[str, Any],
    **extra: Any,
) -> None:
    """A comment event: about the work item (its `subjectId`, so that it is part of the
    item's activity and its webhook order), carrying the comment and the item's summary."""
    work_item = {
        "$id": item.id,
        "key": item.key,
        "title": item.title,
        "assigneeIds": list(item.assignee_ids),
    }
    events.record(
        session,
        workspace_id=item.workspace_id,
        type=type,
        subject_id=item.id,
        actor_id=access.caller.user_id,
        payload={"comment": comment, "workItem": work_item, **extra},
    )


_MENTION = re.compile(r"@([^\s@]+@[^\s@]+)")
_AFTER_MENTION = ".,;:!?)]}>'\""
"""What may follow a mention without being part of the address (`(@ann@example.com).`)."""


def _mentioned(session: Session, workspace_id: str, body: str) -> list[str]:
    """The members of the workspace that `body` mentions as `@<their email>`."""
    emails = sorted({m.group(1).rstrip(_AFTER_MENTION).lower() for m in _MENTION.finditer(body)})
    if not emails:
        return []
    placeholders, names = in_list("e", emails)
    rows = raw(session).rows(
        "SELECT u.id FROM workspace_members m JOIN users u ON u.id = m.user_id"
        f" WHERE m.workspace_id = :workspace_id AND u.email_normalized IN {placeholders}"
        " ORDER BY u.id",
        {"workspace_id": workspace_id, **names},
    )
    return [row[0] for row in rows]


def add_time_log(
    session: Session,
    *,
    access: WorkspaceAccess,
    item: WorkItem,
    hours: float,
    day: date | None,
    note: str | None,
) -> dict[str, Any]:
    """Log time on the item; returns the time log as the API shows it."""
    log = TimeLog(
        work_item_id=item.id,
        workspace_id=item.workspace_id,
        user_id=access.caller.user_id,
        hours=hours,
        day=day or utcnow().date(),
        note=note,
    )
    session.add(log)
    session.execute(
        update(WorkItem)
        .where(WorkItem.id == item.id)
        .values(logged_hours=_hours_sum(WorkItem.logged_hours + hours)),
        execution_options={"synchronize_session": False},
    )
    session.flush()
    return reads.read_time_log(raw(session), log.id)


def title_of(name: str | None, title: str | None) -> str | None:
    if name is not None and title is not None and name != title:
        raise InvalidRequest("title", "invalid_value", "title: differs from name; send one.")
    return name if name is not None else title


def check_type(session: Session, workspace_id: str, type_name: str) -> None:
    if not is_known_type(session, workspace_id=workspace_id, name=type_name):
        raise InvalidRequest("type", "invalid_value", f"type: {type_name} is not a known type.")


def _check_assignees(session: Session, workspace_id: str, user_ids: list[str]) -> list[Assignee]:
    """400 `not_found` unless every one is a member of the workspace; returns them in
    `user_ids` order, for the answer's `assignees`.
    """
    if not user_ids:
        return []
    return _assigned(user_ids, read_members(raw(session), workspace_id, user_ids))


def read_members(db: Raw, workspace_id: str, user_ids: Sequence[str]) -> list[Assignee]:
    """Those of the users `user_ids` who are members of the workspace (in no set order)."""
    placeholders, names = in_list("u", user_ids)
    rows, columns = db.fetch(
        "SELECT u.id, u.name, u.email FROM workspace_members m JOIN users u ON u.id = m.user_id"
        f" WHERE m.workspace_id = :workspace_id AND m.user_id IN {placeholders}",
        {"workspace_id": workspace_id, **names},
    )
    return list(map(columns.made(assignee_reader), rows))


def _check_project(db: Raw, project: dict[str, str]) -> None:
    sql = "SELECT 1 FROM projects WHERE id = :project_id AND workspace_id = :workspace_id"
    if db.row(sql, project) is None:
        raise no_project()


def no_project() -> InvalidRequest:
    return InvalidRequest("projectId", "not_found", "projectId: no such project here.")


def check_sprint(
    session: Session, project_id: str, workspace_id: str, sprint_id: str | None
) -> str | None:
    """`sprint_id` if it names an open sprint of the project (`store.check_open_sprint`),
    locked for share; None for none."""
    if sprint_id is None:
        return None
    sprints = open_sprints(session, workspace_id, [sprint_id])
    store.check_open_sprint(sprints.get(sprint_id), project_id)
    return sprint_id


def _hours_sum(total: ColumnElement[float]) -> ColumnElement[float]:
    """`total`, rounded to 6 decimals: binary floats would show 0.1 + 0.2 h as
    0.30000000000000004 h, and the contract wants `loggedHours` exact."""
    return cast(func.round(cast(total, Numeric), 6), Float)


def unique(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))

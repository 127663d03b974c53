"""Work items: creation with collision-free keys, updates that record what changed, filtered
lists with a fixed number of queries, Kanban bulk updates, comments and time logs.
"""

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import date
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Float,
    Numeric,
    cast,
    func,
    update,
)
from sqlalchemy.orm import Session

from sprintboard.access import WorkspaceAccess
from sprintboard.concurrency import etag
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
from sprintboard.sql import Raw, in_list, raw
from sprintboard.workitems import hierarchy, reads, relations, store
from sprintboard.workitems.schemas import BulkEntry, TaskCreate, TaskUpdate
from sprintboard.workspaces.service import is_known_type

_NEXT_NUMBER = """
UPDATE projects SET last_item_number = last_item_number + 1, item_count = item_count + 1
WHERE id = :project_id AND workspace_id = :workspace_id
RETURNING last_item_number, key, name
"""

_ACTIVE_SPRINT = """
SELECT id FROM sprints WHERE project_id = :project_id AND status = 'ACTIVE'{share}
"""
"""The project's active sprint; on PostgreSQL locked for share, so a completion under way is
waited for (and then the sprint is no longer active)."""

_BOARD_END = """
SELECT max(position) FROM work_items WHERE workspace_id = :workspace_id AND project_id = :project_id
"""
"""The end of the project's board, read after the counter's lock: a statement sees what was
committed when it began, and the creates this one waited for must count."""

_INSERT_ITEM = """
INSERT INTO work_items (
    id, workspace_id, project_id, sprint_id, number, key, title, type, status, priority,
    description, assignee_ids, labels, due_date, estimated_hours, story_points, flagged,
    position, comment_count, logged_hours, created_by, version, created_at, updated_at,
    parent_id
) VALUES (
    :id, :workspace_id, :project_id, :sprint_id, :number, :key, :title, :type, :status,
    :priority, :description, :assignee_ids, :labels, :due_date, :estimated_hours,
    :story_points, :flagged, :position, 0, 0, :created_by, 1, :now, :now, :parent_id
)
"""


def create_work_item(
    session: Session, *, access: WorkspaceAccess, data: TaskCreate
) -> tuple[dict[str, Any], str]:
    """Create a work item; returns it as the API shows it, and its ETag.

    The hot write path, in plain SQL. Its sprint first (the active one by default), locked
    for share; then the next number from the project's counter, with the project's key and
    name; under that row's lock, the end of the board; then the insert, which answers the item
    as a read would. (In this order, a create holding the counter waits for nothing: a
    completion holds its sprint, then its items, and a delete an item, then the counter.)
    """
    title = title_of(data.name, data.title)
    if title is None:
        raise InvalidRequest("name", "required", "name: a title is required.")
    check_type(session, access.workspace_id, data.type)
    assignee_ids = unique(data.assignee_ids)
    assignees = _check_assignees(session, access.workspace_id, assignee_ids)
    db = raw(session)
    # The counter row lock (PostgreSQL) or the database write lock (SQLite, BEGIN IMMEDIATE)
    # serializes creates within a project, so keys are consecutive and never collide.
    project = {"project_id": data.project_id, "workspace_id": access.workspace_id}
    if data.sent("sprint_id"):
        try:
            sprint_id = check_sprint(session, data.project_id, access.workspace_id, data.sprint_id)
        except InvalidRequest:
            _check_project(db, project)  # (a missing project is the first thing to say)
            raise
    else:
        share = "" if db.codec.sqlite else " FOR SHARE"
        active = db.row(_ACTIVE_SPRINT.format(share=share), project)
        sprint_id = active[0] if active else None
    counter = db.row(_NEXT_NUMBER, project)
    if counter is None:
        raise no_project()
    number, project_key, project_name = counter
    last_position = (db.row(_BOARD_END, project) or (None,))[0]
    parent_id = None
    if data.parent_id is not None:
        parent_id = _parent(db, access.workspace_id, data.parent_id, "parentId")
        hierarchy.lock_hierarchy(db, access.workspace_id)
        hierarchy.check_depth(len(hierarchy.ancestry(db, [parent_id])[parent_id]) + 1, "parentId")
    item_id, codec = new_id(), db.codec
    inserted = db.row(
        f"{_INSERT_ITEM} {reads.ITEM_RETURNING[db.dialect]}",
        {
            "id": item_id,
            "workspace_id": access.workspace_id,
            "project_id": data.project_id,
            "sprint_id": sprint_id,
            "number": number,
            "key": f"{project_key}-{number}",
            "title": title,
            "type": data.type,
            "status": data.status or ("TODO" if sprint_id else "BACKLOG"),
            "priority": data.priority,
            "description": data.description,
            "assignee_ids": codec.json_param(assignee_ids),
            "labels": codec.json_param(unique(data.labels)),
            "due_date": codec.day_param(data.due_date),
            "estimated_hours": data.estimated_hours,
            "story_points": data.story_points,
            "flagged": data.flagged,
            "position": data.position if data.position is not None else (last_position or 0) + 1,
            "created_by": access.caller.user_id,
            "now": codec.param(utcnow()),
            "project_name": project_name,
            "project_key": project_key,
            "parent_id": parent_id,
        },
    )
    if inserted is None:  # (an INSERT ... RETURNING answers its row)
        raise RuntimeError("the work item insert returned no row")
    record, tag = reads.from_row(db, inserted, assignees, history=False)
    reads.with_new_hierarchy(db, record)
    events.record(
        session,
        workspace_id=access.workspace_id,
        type="task.created",
        subject_id=item_id,
        actor_id=access.caller.user_id,
        payload={"workItem": reads.event_form(record)},
    )
    return record, tag


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
    session: Session, *, access: WorkspaceAccess, record: dict[str, Any], data: TaskUpdate
) -> bool:
    """Check the fields `data` sends against the item (`record`, locked for the change) as
    PATCH checks them, and apply them (`store.change_items`); returns whether anything
    changed. `record` is brought up to date, less its embeds."""
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
    if "sprintId" in wanted and wanted["sprintId"] != record["sprintId"]:
        check_sprint(session, record["projectId"], workspace_id, wanted["sprintId"])
    if wanted.get("parentId") is not None:
        wanted["parentId"] = _moved_under(session, record, wanted["parentId"], "parentId")
    if wanted.get("dueDate") is not None:
        wanted["dueDate"] = wanted["dueDate"].isoformat()
    changes = [(record, wanted)]
    return bool(store.change_items(session, actor_id=access.caller.user_id, changes=changes))


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
    db = raw(session)
    if not db.codec.sqlite:
        db.rows("SELECT id FROM work_items WHERE id = :id FOR UPDATE", {"id": item.id})
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
    for index, (item_id, data) in enumerate(zip(ids, entries, strict=True)):
        with entry(index):
            change_work_item(session, access=access, record=records[item_id], data=data)
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
    targets = [e.sprint_id for e in entries if e.sent("sprint_id") and e.sprint_id]
    sprints = store.open_sprints(session, access.workspace_id, targets)
    changes = []
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
    store.change_items(session, actor_id=access.caller.user_id, changes=changes)
    return reads.attach_assignees(raw(session), [records[item_id] for item_id in ids])


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


def _check_assignees(
    session: Session, workspace_id: str, user_ids: list[str]
) -> list[Sequence[Any]]:
    """400 `not_found` unless every one is a member of the workspace; returns their rows
    (`$id`, name, email) for the answer's `assignees`.
    """
    if not user_ids:
        return []
    placeholders, names = in_list("u", user_ids)
    rows = raw(session).rows(
        "SELECT u.id, u.name, u.email FROM workspace_members m JOIN users u ON u.id = m.user_id"
        f" WHERE m.workspace_id = :workspace_id AND m.user_id IN {placeholders}",
        {"workspace_id": workspace_id, **names},
    )
    members = {row[0] for row in rows}
    if missing := [u for u in user_ids if u not in members]:
        raise InvalidRequest(
            "assigneeIds", "not_found", f"assigneeIds: not members of the workspace: {missing}"
        )
    return rows


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
    sprints = store.open_sprints(session, workspace_id, [sprint_id])
    store.check_open_sprint(sprints.get(sprint_id), project_id)
    return sprint_id


def _hours_sum(total: ColumnElement[float]) -> ColumnElement[float]:
    """`total`, rounded to 6 decimals: binary floats would show 0.1 + 0.2 h as
    0.30000000000000004 h, and the contract wants `loggedHours` exact."""
    return cast(func.round(cast(total, Numeric), 6), Float)


def unique(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))

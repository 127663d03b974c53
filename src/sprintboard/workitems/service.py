"""Work items: creation with collision-free keys, updates that record what changed, filtered
lists with a fixed number of queries, Kanban bulk updates, comments and time logs.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Float,
    Numeric,
    Row,
    and_,
    cast,
    exists,
    func,
    literal,
    or_,
    select,
    update,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Session

from sprintboard.access import WorkspaceAccess
from sprintboard.errors import InvalidRequest
from sprintboard.events import service as events
from sprintboard.models import (
    Comment,
    Project,
    Sprint,
    TimeLog,
    User,
    WorkItem,
    WorkspaceMember,
    new_id,
    utcnow,
)
from sprintboard.responses import iso, iso_date
from sprintboard.workitems.schemas import BulkEntry, TaskCreate, TaskUpdate
from sprintboard.workspaces.service import is_known_type

# Model attribute → API field, for every field a client may change.
API_FIELDS = {
    "title": "title",
    "type": "type",
    "status": "status",
    "priority": "priority",
    "description": "description",
    "assignee_ids": "assigneeIds",
    "labels": "labels",
    "due_date": "dueDate",
    "estimated_hours": "estimatedHours",
    "story_points": "storyPoints",
    "flagged": "flagged",
    "sprint_id": "sprintId",
    "position": "position",
}


def item_json(item: WorkItem | Row[Any]) -> dict[str, Any]:
    """A work item's own fields, without embedded records (the form events carry).

    Takes a loaded item or a row of the work_items table (bulk moves read rows).
    """
    return {
        "$id": item.id,
        "key": item.key,
        "title": item.title,
        "type": item.type,
        "status": item.status,
        "priority": item.priority,
        "description": item.description,
        "assigneeIds": item.assignee_ids,
        "labels": item.labels,
        "dueDate": iso_date(item.due_date),
        "estimatedHours": item.estimated_hours,
        "storyPoints": item.story_points,
        "flagged": item.flagged,
        "sprintId": item.sprint_id,
        "projectId": item.project_id,
        "workspaceId": item.workspace_id,
        "position": item.position,
        "commentCount": item.comment_count,
        "loggedHours": item.logged_hours,
        "$createdAt": iso(item.created_at),
        "$updatedAt": iso(item.updated_at),
    }


@dataclass(frozen=True)
class Embeds:
    """The projects and users that a page of work items refers to, loaded in two queries."""

    projects: dict[str, dict[str, Any]]
    users: dict[str, dict[str, Any]]

    def item(self, item: WorkItem) -> dict[str, Any]:
        return {
            **item_json(item),
            "project": self.projects[item.project_id],
            "assignees": [self.users[u] for u in item.assignee_ids if u in self.users],
        }


def load_embeds(session: Session, items: Sequence[WorkItem]) -> Embeds:
    project_ids = {item.project_id for item in items}
    user_ids = {user_id for item in items for user_id in item.assignee_ids}
    projects = (
        {
            row.id: {"$id": row.id, "name": row.name, "key": row.key}
            for row in session.execute(
                select(Project.id, Project.name, Project.key).where(Project.id.in_(project_ids))
            )
        }
        if project_ids
        else {}
    )
    users = (
        {
            row.id: {"$id": row.id, "name": row.name, "email": row.email}
            for row in session.execute(
                select(User.id, User.name, User.email).where(User.id.in_(user_ids))
            )
        }
        if user_ids
        else {}
    )
    return Embeds(projects, users)


def active_sprint_id(session: Session, project_id: str) -> str | None:
    return session.scalar(
        select(Sprint.id).where(Sprint.project_id == project_id, Sprint.status == "ACTIVE")
    )


def create_work_item(session: Session, *, access: WorkspaceAccess, data: TaskCreate) -> WorkItem:
    title = _title(data.name, data.title)
    if title is None:
        raise InvalidRequest("name", "required", "name: a title is required.")
    project = session.scalar(
        select(Project).where(
            Project.id == data.project_id, Project.workspace_id == access.workspace_id
        )
    )
    if project is None:
        raise InvalidRequest("projectId", "not_found", "projectId: no such project here.")
    _check_type(session, access.workspace_id, data.type)
    assignee_ids = _check_assignees(session, access.workspace_id, data.assignee_ids)
    if data.sent("sprint_id"):
        sprint_id = _check_sprint(session, project.id, access.workspace_id, data.sprint_id)
    else:
        sprint_id = active_sprint_id(session, project.id)

    # The counter row lock (PostgreSQL) or the database write lock (SQLite, BEGIN IMMEDIATE)
    # serializes creates within a project, so keys are consecutive and never collide.
    number = session.execute(
        update(Project)
        .where(Project.id == project.id)
        .values(last_item_number=Project.last_item_number + 1)
        .returning(Project.last_item_number),
        execution_options={"synchronize_session": False},
    ).scalar_one()
    position = data.position
    if position is None:
        last = session.scalar(
            select(func.max(WorkItem.position)).where(WorkItem.project_id == project.id)
        )
        position = (last or 0.0) + 1.0
    now = utcnow()
    item = WorkItem(
        id=new_id(),
        workspace_id=access.workspace_id,
        project_id=project.id,
        sprint_id=sprint_id,
        number=number,
        key=f"{project.key}-{number}",
        title=title,
        type=data.type,
        status=data.status or ("TODO" if sprint_id else "BACKLOG"),
        priority=data.priority,
        description=data.description,
        assignee_ids=assignee_ids,
        labels=_unique(data.labels),
        due_date=data.due_date,
        estimated_hours=data.estimated_hours,
        story_points=data.story_points,
        flagged=data.flagged,
        position=position,
        comment_count=0,
        logged_hours=0.0,
        created_by=access.caller.user_id,
        version=1,
        created_at=now,
        updated_at=now,
    )
    session.add(item)
    events.record(
        session,
        workspace_id=item.workspace_id,
        type="task.created",
        subject_id=item.id,
        actor_id=access.caller.user_id,
        payload={"workItem": item_json(item)},
    )
    return item


def update_work_item(
    session: Session, *, access: WorkspaceAccess, item: WorkItem, data: TaskUpdate
) -> dict[str, Any]:
    """Apply a partial update; returns the changes (empty, and nothing written, if none)."""
    sent = data.model_fields_set
    wanted: dict[str, Any] = {}
    if sent & {"name", "title"}:
        wanted["title"] = _title(data.name if "name" in sent else None, data.title)
    for attr in API_FIELDS.keys() - {"title"}:
        if attr in sent:
            wanted[attr] = getattr(data, attr)
    if wanted.get("labels") is None and "labels" in wanted:
        wanted["labels"] = []
    if wanted.get("assignee_ids") is None and "assignee_ids" in wanted:
        wanted["assignee_ids"] = []
    if "type" in wanted and wanted["type"] != item.type:
        _check_type(session, item.workspace_id, wanted["type"])
    if "assignee_ids" in wanted:
        wanted["assignee_ids"] = _check_assignees(
            session, item.workspace_id, wanted["assignee_ids"]
        )
    if "labels" in wanted:
        wanted["labels"] = _unique(wanted["labels"])
    if "sprint_id" in wanted and wanted["sprint_id"] != item.sprint_id:
        _check_sprint(session, item.project_id, item.workspace_id, wanted["sprint_id"])
    changes = apply_changes(item, wanted)
    if changes:
        record_updates(session, [(item, changes)], actor_id=access.caller.user_id)
    return changes


def apply_changes(item: WorkItem, wanted: dict[str, Any]) -> dict[str, Any]:
    """Set the wanted values that differ; returns `{apiField: {"from", "to"}}`."""
    changes: dict[str, Any] = {}
    for attr, value in wanted.items():
        old = getattr(item, attr)
        if old != value:
            changes[API_FIELDS[attr]] = {"from": _api_value(old), "to": _api_value(value)}
            setattr(item, attr, value)
    if changes:
        item.version += 1
        item.updated_at = utcnow()
    return changes


def record_updates(
    session: Session, updates: Iterable[tuple[WorkItem, dict[str, Any]]], *, actor_id: str
) -> None:
    events.record_many(
        session,
        [
            {
                "workspace_id": item.workspace_id,
                "type": "task.updated",
                "subject_id": item.id,
                "actor_id": actor_id,
                "payload": {"workItem": item_json(item), "changes": changes},
            }
            for item, changes in updates
        ],
    )


def delete_work_item(session: Session, *, access: WorkspaceAccess, item: WorkItem) -> None:
    """Deletes the item; its comments and time logs go with it (foreign keys cascade)."""
    events.record(
        session,
        workspace_id=item.workspace_id,
        type="task.deleted",
        subject_id=item.id,
        actor_id=access.caller.user_id,
        payload={"workItem": item_json(item)},
    )
    session.delete(item)


@dataclass(frozen=True)
class TaskFilters:
    project_id: str | None = None
    sprint_id: str | None = None
    """A sprint's `$id`, or `none` for the backlog."""
    statuses: list[str] = field(default_factory=list)
    priorities: list[str] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    assignee_id: str | None = None
    labels: list[str] = field(default_factory=list)
    due_date: date | None = None
    due_before: date | None = None
    due_after: date | None = None
    flagged: bool | None = None
    search: str | None = None


def list_work_items(
    session: Session, *, workspace_id: str, filters: TaskFilters, limit: int, offset: int
) -> tuple[list[WorkItem], int]:
    criteria = _criteria(session, workspace_id, filters)
    items = list(
        session.scalars(
            select(WorkItem)
            .where(*criteria)
            .order_by(WorkItem.position, WorkItem.created_at, WorkItem.id)
            .limit(limit)
            .offset(offset)
        )
    )
    total = session.scalar(select(func.count()).select_from(WorkItem).where(*criteria)) or 0
    return items, total


def _criteria(session: Session, workspace_id: str, f: TaskFilters) -> list[ColumnElement[bool]]:
    criteria: list[ColumnElement[bool]] = [WorkItem.workspace_id == workspace_id]
    if f.project_id is not None:
        criteria.append(WorkItem.project_id == f.project_id)
    if f.sprint_id == "none":
        criteria.append(WorkItem.sprint_id.is_(None))
    elif f.sprint_id is not None:
        criteria.append(WorkItem.sprint_id == f.sprint_id)
    if f.statuses:
        criteria.append(WorkItem.status.in_(f.statuses))
    if f.priorities:
        criteria.append(WorkItem.priority.in_(f.priorities))
    if f.types:
        criteria.append(WorkItem.type.in_(f.types))
    dialect = session.get_bind().dialect.name
    if f.assignee_id is not None:
        criteria.append(_json_array_contains(WorkItem.assignee_ids, [f.assignee_id], dialect))
    if f.labels:
        criteria.append(_json_array_contains(WorkItem.labels, f.labels, dialect))
    if f.due_date is not None:
        criteria.append(WorkItem.due_date == f.due_date)
    if f.due_before is not None:
        criteria.append(WorkItem.due_date < f.due_before)
    if f.due_after is not None:
        criteria.append(WorkItem.due_date > f.due_after)
    if f.flagged is not None:
        criteria.append(WorkItem.flagged.is_(f.flagged))
    if f.search:
        criteria.append(
            or_(
                WorkItem.title.icontains(f.search, autoescape=True),
                WorkItem.key.icontains(f.search, autoescape=True),
            )
        )
    return criteria


def _json_array_contains(column: Any, values: list[str], dialect: str) -> ColumnElement[bool]:
    """The JSON array in `column` holds every one of `values`."""
    if dialect == "postgresql":
        return cast(column, JSONB).op("@>", is_comparison=True)(literal(values, JSONB))
    each = func.json_each(column).table_valued("value")
    return and_(*(exists(select(1).select_from(each).where(each.c.value == v)) for v in values))


def bulk_update(
    session: Session,
    *,
    access: WorkspaceAccess,
    items: dict[str, WorkItem],
    entries: Sequence[BulkEntry],
) -> list[WorkItem]:
    """Apply Kanban moves to items of one workspace, all or nothing."""
    sprint_ids = {e.sprint_id for e in entries if e.sent("sprint_id") and e.sprint_id}
    valid = {}
    if sprint_ids:
        valid = {
            row.id: row
            for row in session.execute(
                select(Sprint.id, Sprint.project_id, Sprint.status).where(
                    Sprint.id.in_(sprint_ids), Sprint.workspace_id == access.workspace_id
                )
            )
        }
    updates: list[tuple[WorkItem, dict[str, Any]]] = []
    for index, entry in enumerate(entries):
        item = items[entry.id]
        wanted: dict[str, Any] = {}
        for attr in ("status", "position", "sprint_id"):
            if entry.sent(attr):
                wanted[attr] = getattr(entry, attr)
        target = wanted.get("sprint_id")
        if target is not None and target != item.sprint_id:
            sprint = valid.get(target)
            if sprint is None:
                raise InvalidRequest(
                    "tasks",
                    "not_found",
                    f"tasks[{index}].sprintId: no such sprint.",
                    path=f"tasks[{index}].sprintId",
                )
            if sprint.project_id != item.project_id or sprint.status == "COMPLETED":
                raise InvalidRequest(
                    "tasks",
                    "invalid_value",
                    f"tasks[{index}].sprintId: not an open sprint of the item's project.",
                    path=f"tasks[{index}].sprintId",
                )
        changes = apply_changes(item, wanted)
        if changes:
            updates.append((item, changes))
    record_updates(session, updates, actor_id=access.caller.user_id)
    return [items[e.id] for e in entries]


def detail_json(session: Session, item: WorkItem) -> dict[str, Any]:
    """The single-item form: the list form plus `comments` and `timeLogs`."""
    comments = session.scalars(
        select(Comment)
        .where(Comment.work_item_id == item.id)
        .order_by(Comment.created_at, Comment.id)
    ).all()
    time_logs = session.scalars(
        select(TimeLog)
        .where(TimeLog.work_item_id == item.id)
        .order_by(TimeLog.created_at, TimeLog.id)
    ).all()
    return {
        **load_embeds(session, [item]).item(item),
        "comments": [comment_json(c) for c in comments],
        "timeLogs": [time_log_json(t) for t in time_logs],
    }


def add_comment(session: Session, *, access: WorkspaceAccess, item: WorkItem, body: str) -> Comment:
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
    return comment


def list_comments(
    session: Session, *, item: WorkItem, limit: int, offset: int
) -> tuple[Sequence[Comment], int]:
    comments = session.scalars(
        select(Comment)
        .where(Comment.work_item_id == item.id)
        .order_by(Comment.created_at, Comment.id)
        .limit(limit)
        .offset(offset)
    ).all()
    total = session.scalar(select(func.count()).where(Comment.work_item_id == item.id)) or 0
    return comments, total


def delete_comment(session: Session, *, comment: Comment) -> None:
    session.execute(
        update(WorkItem)
        .where(WorkItem.id == comment.work_item_id)
        .values(comment_count=WorkItem.comment_count - 1),
        execution_options={"synchronize_session": False},
    )
    session.delete(comment)


def add_time_log(
    session: Session,
    *,
    access: WorkspaceAccess,
    item: WorkItem,
    hours: float,
    day: date | None,
    note: str | None,
) -> TimeLog:
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
    return log


def list_time_logs(
    session: Session, *, item: WorkItem, limit: int, offset: int
) -> tuple[Sequence[TimeLog], int]:
    logs = session.scalars(
        select(TimeLog)
        .where(TimeLog.work_item_id == item.id)
        .order_by(TimeLog.created_at, TimeLog.id)
        .limit(limit)
        .offset(offset)
    ).all()
    total = session.scalar(select(func.count()).where(TimeLog.work_item_id == item.id)) or 0
    return logs, total


def comment_json(comment: Comment) -> dict[str, Any]:
    return {
        "$id": comment.id,
        "workItemId": comment.work_item_id,
        "authorId": comment.author_id,
        "body": comment.body,
        "$createdAt": iso(comment.created_at),
        "$updatedAt": iso(comment.updated_at),
    }


def time_log_json(log: TimeLog) -> dict[str, Any]:
    return {
        "$id": log.id,
        "workItemId": log.work_item_id,
        "userId": log.user_id,
        "hours": log.hours,
        "date": iso_date(log.day),
        "note": log.note,
        "$createdAt": iso(log.created_at),
        "$updatedAt": iso(log.updated_at),
    }


def _title(name: str | None, title: str | None) -> str | None:
    if name is not None and title is not None and name != title:
        raise InvalidRequest("title", "invalid_value", "title: differs from name; send one.")
    return name if name is not None else title


def _check_type(session: Session, workspace_id: str, type_name: str) -> None:
    if not is_known_type(session, workspace_id=workspace_id, name=type_name):
        raise InvalidRequest("type", "invalid_value", f"type: {type_name} is not a known type.")


def _check_assignees(session: Session, workspace_id: str, user_ids: list[str]) -> list[str]:
    user_ids = _unique(user_ids)
    if not user_ids:
        return user_ids
    members = set(
        session.scalars(
            select(WorkspaceMember.user_id).where(
                WorkspaceMember.workspace_id == workspace_id,
                WorkspaceMember.user_id.in_(user_ids),
            )
        )
    )
    if missing := [u for u in user_ids if u not in members]:
        raise InvalidRequest(
            "assigneeIds", "not_found", f"assigneeIds: not members of the workspace: {missing}"
        )
    return user_ids


def _check_sprint(
    session: Session, project_id: str, workspace_id: str, sprint_id: str | None
) -> str | None:
    if sprint_id is None:
        return None
    sprint = session.get(Sprint, sprint_id)
    if sprint is None or sprint.workspace_id != workspace_id:
        raise InvalidRequest("sprintId", "not_found", "sprintId: no such sprint.")
    if sprint.project_id != project_id or sprint.status == "COMPLETED":
        raise InvalidRequest(
            "sprintId", "invalid_value", "sprintId: not an open sprint of this item's project."
        )
    return sprint.id


def _hours_sum(total: ColumnElement[float]) -> ColumnElement[float]:
    """`total`, rounded to 6 decimals: binary floats would show 0.1 + 0.2 h as
    0.30000000000000004 h, and the contract wants `loggedHours` exact."""
    return cast(func.round(cast(total, Numeric), 6), Float)


def _unique(values: list[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _api_value(value: Any) -> Any:
    return value.isoformat() if isinstance(value, date) else value

"""Sprints: planning, the PLANNED → ACTIVE → COMPLETED state machine, completion that moves
unfinished work, deletion that keeps it, reordering, and the three figures of a sprint.
"""

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from sprintboard.access import Caller, Permission, WorkspaceAccess, open_sprints
from sprintboard.concurrency import etag
from sprintboard.cursors import ListPage, Window
from sprintboard.errors import Conflict, InvalidRequest
from sprintboard.events import service as events
from sprintboard.models import Project, Sprint, utcnow
from sprintboard.responses import iso
from sprintboard.sprints import history, reports
from sprintboard.sprints import store as sprint_store
from sprintboard.sprints.schemas import (
    MoveToSprint,
    ReorderEntry,
    SprintComplete,
    SprintCreate,
    SprintQuery,
    SprintUpdate,
    sprint_json,
)
from sprintboard.workitems import store
from sprintboard.workitems.reads import read_sprint_items

API_FIELDS = {
    "name": "name",
    "start_date": "startDate",
    "end_date": "endDate",
    "goal": "goal",
    "position": "position",
}


def with_figures(sprint: Sprint, figures: sprint_store.Figures) -> dict[str, Any]:
    """A sprint as the API shows it, with its figures."""
    return {
        **sprint_json(sprint),
        "workItemCount": figures.item_count,
        "totalPoints": reports.number(figures.total_points),
        "completedPoints": reports.number(figures.completed_points),
    }


def sprint_record(
    session: Session, sprint: Sprint, *, with_items: bool = False, moved: int | None = None
) -> tuple[dict[str, Any], str]:
    """A sprint as the API shows it, with its figures (and its work items, `with_items`;
    `movedItemCount`, `moved`, after an update), and its ETag."""
    session.flush()
    record = with_figures(sprint, sprint_store.figures_of(session, sprint.id))
    if moved is not None:
        record["movedItemCount"] = moved
    if with_items:
        record["workItems"] = read_sprint_items(session, sprint.id)
    return record, etag(sprint.id, sprint.version)


def list_sprints(
    session: Session,
    *,
    workspace_id: str,
    project: Project | None,
    sent_workspace_id: str | None,
    statuses: Sequence[str],
    window: Window,
) -> ListPage:
    """The sprints of `project`, or else of the workspace, in `position` order, each with
    its figures. With a project, a `workspaceId` sent must be the project's."""
    if project is not None and sent_workspace_id not in (None, project.workspace_id):
        raise InvalidRequest("workspaceId", "invalid_value", "workspaceId: not the project's.")
    project_id = project.id if project is not None else None
    page = sprint_store.page(
        session, workspace_id=workspace_id, project_id=project_id, statuses=statuses, window=window
    )
    return _documents(page)


def _documents(page: ListPage) -> ListPage:
    """A page of `sprint_store.page` as the API shows it."""
    return page._replace(items=[with_figures(*pair) for pair in page.items])


def create_sprint(session: Session, *, access: WorkspaceAccess, data: SprintCreate) -> Sprint:
    project = sprint_store.project_for_create(
        session, workspace_id=access.workspace_id, project_id=data.project_id
    )
    if project is None:
        raise InvalidRequest("projectId", "not_found", "projectId: no such project here.")
    _check_dates(data.start_date, data.end_date)
    sprint = sprint_store.create(
        session,
        project=project,
        name=data.name,
        goal=data.goal,
        start_date=data.start_date,
        end_date=data.end_date,
    )
    _record(session, sprint, "sprint.created", access.caller)
    return sprint


def update_sprint(
    session: Session, *, access: WorkspaceAccess, sprint: Sprint, data: SprintUpdate
) -> int | None:
    """Apply a partial update and any status transition (`require_for_update` checked);
    returns the moved item count when the update completed the sprint.
    """
    sent = data.model_fields_set
    if "unfinished_details" in sent and data.status != "COMPLETED":
        raise InvalidRequest(
            "unfinishedDetails", "invalid_value", "unfinishedDetails: only with status COMPLETED."
        )
    for attr, field in (("workspace_id", "workspaceId"), ("project_id", "projectId")):
        if attr in sent and data.status != "COMPLETED":
            raise InvalidRequest(field, "immutable", f"{field}: a sprint's {field} cannot change.")
    check_own_ids(sprint, workspace_id=data.workspace_id, project_id=data.project_id)
    wanted = {attr: getattr(data, attr) for attr in API_FIELDS if attr in sent}
    if "end_date" in wanted or "start_date" in wanted:
        # (only then: a sprint started late may end before its start, and stays editable)
        _check_dates(
            wanted.get("start_date", sprint.start_date),
            wanted.get("end_date", sprint.end_date),
            blamed="endDate" if "end_date" in wanted else "startDate",
        )
    changes: dict[str, Any] = {}
    for attr, value in wanted.items():
        old = getattr(sprint, attr)
        if old != value:
            changes[API_FIELDS[attr]] = {"from": _api_value(old), "to": _api_value(value)}
            setattr(sprint, attr, value)
    if changes:
        _touch(sprint)
        _record(session, sprint, "sprint.updated", access.caller, changes=changes)
    if "status" in sent and data.status != sprint.status:
        if (sprint.status, data.status) == ("PLANNED", "ACTIVE"):
            start_sprint(session, access=access, sprint=sprint)
        elif (sprint.status, data.status) == ("ACTIVE", "COMPLETED"):
            move_to = data.unfinished_details.move_to if data.unfinished_details else "backlog"
            target = move_to.sprint_id if isinstance(move_to, MoveToSprint) else None
            return complete_sprint(session, access=access, sprint=sprint, move_to=target)
        else:
            raise _invalid_transition(sprint.status, data.status)
    return None


def require_for_update(access: WorkspaceAccess, data: SprintUpdate) -> None:
    """The permissions a PATCH needs: SPRINT_CREATE for its fields, and the one of the
    status it moves to."""
    if data.model_fields_set - {"status", "unfinished_details", "workspace_id", "project_id"}:
        access.require(Permission.SPRINT_CREATE)
    if "status" in data.model_fields_set:
        access.require(_STATUS_PERMISSIONS[data.status])


_STATUS_PERMISSIONS = {
    "PLANNED": Permission.SPRINT_CREATE,  # (planning; PLANNED is never a transition's target)
    "ACTIVE": Permission.SPRINT_START,
    "COMPLETED": Permission.SPRINT_COMPLETE,
}


def complete_as_asked(
    session: Session, *, access: WorkspaceAccess, sprint: Sprint, body: SprintComplete
) -> int:
    """`POST /sprints/{id}/complete`: its `workspaceId` and `projectId`, if sent, are the
    sprint's own; unfinished items go where `unfinishedDetails` says (the backlog by
    default). Returns how many moved."""
    check_own_ids(sprint, workspace_id=body.workspace_id, project_id=body.project_id)
    move_to = body.unfinished_details.move_to if body.unfinished_details else "backlog"
    target = move_to.sprint_id if isinstance(move_to, MoveToSprint) else None
    return complete_sprint(session, access=access, sprint=sprint, move_to=target)


def check_own_ids(sprint: Sprint, *, workspace_id: str | None, project_id: str | None) -> None:
    """The `workspaceId` and `projectId` a completion may carry: when sent, the sprint's own."""
    for field, value, own in (
        ("workspaceId", workspace_id, sprint.workspace_id),
        ("projectId", project_id, sprint.project_id),
    ):
        if value is not None and value != own:
            raise InvalidRequest(field, "invalid_value", f"{field}: not the sprint's own.")


def start_sprint(session: Session, *, access: WorkspaceAccess, sprint: Sprint) -> None:
    """PLANNED → ACTIVE. One ACTIVE sprint per project: checked here, and enforced by a
    partial unique index so that two concurrent starts cannot both win.
    """
    if sprint_store.other_active(session, sprint) is not None:
        raise _active_sprint_exists()
    sprint.status = "ACTIVE"
    sprint.started_at = utcnow()
    if sprint.start_date is None:
        sprint.start_date = sprint.started_at
    _touch(sprint)
    try:
        with session.begin_nested():
            session.flush()
    except IntegrityError:
        raise _active_sprint_exists() from None
    _record(session, sprint, "sprint.started", access.caller)


def complete_sprint(
    session: Session, *, access: WorkspaceAccess, sprint: Sprint, move_to: str | None
) -> int:
    """ACTIVE → COMPLETED: every item not DONE moves to `move_to` (a sprint id) or to the
    backlog; DONE items stay. Returns how many moved. Completing a completed sprint is a no-op.
    """
    if sprint.status == "COMPLETED":
        return 0
    if sprint.status != "ACTIVE":
        raise _invalid_transition(sprint.status, "COMPLETED")
    if move_to is not None:
        _check_move_target(session, sprint, move_to)
    moved = move_items(
        session, sprint=sprint, to_sprint_id=move_to, only_unfinished=True, caller=access.caller
    )
    sprint.status = "COMPLETED"
    sprint.completed_at = utcnow()
    _touch(sprint)
    reports.freeze(session, sprint, carried_to=move_to)
    _record(session, sprint, "sprint.completed", access.caller, moved_item_count=moved)
    return moved


def delete_sprint(session: Session, *, access: WorkspaceAccess, sprint: Sprint) -> None:
    """Every item of the sprint goes to the backlog; then the sprint goes. Nothing else."""
    move_items(
        session, sprint=sprint, to_sprint_id=None, only_unfinished=False, caller=access.caller
    )
    _record(session, sprint, "sprint.deleted", access.caller)
    history.forget(session, scope="id", record_id=sprint.id)
    session.delete(sprint)


def move_items(
    session: Session,
    *,
    sprint: Sprint,
    to_sprint_id: str | None,
    only_unfinished: bool,
    caller: Caller,
) -> int:
    """Move a sprint's items (those not DONE, with `only_unfinished`) to another sprint or
    the backlog, as any change to items is made (`store.move_sprint_items`: one statement,
    one `task.updated` event per item); returns how many moved."""
    return store.move_sprint_items(
        session,
        sprint_id=sprint.id,
        to_sprint_id=to_sprint_id,
        only_unfinished=only_unfinished,
        actor_id=caller.user_id,
    )


def reorder_sprints(
    session: Session,
    *,
    access: WorkspaceAccess,
    sprints: dict[str, Sprint],
    entries: Sequence[ReorderEntry],
) -> tuple[list[dict[str, Any]], int]:
    """Set new positions for sprints of one project (`entries`, in order: `sprints` holds
    each, locked, `access.access_sprints`); returns that project's sprints in their new
    order, and how many it has."""
    for entry in entries:
        sprint, position = sprints[entry.id], entry.position
        if sprint.position != position:
            changes = {"position": {"from": sprint.position, "to": position}}
            sprint.position = position
            _touch(sprint)
            _record(session, sprint, "sprint.updated", access.caller, changes=changes)
    project_id = next(iter(sprints.values())).project_id
    session.flush()
    window = SprintQuery(limit=500).window()
    page = sprint_store.page(
        session, workspace_id=access.workspace_id, project_id=project_id, statuses=(), window=window
    )
    documents, total, _ = _documents(page)
    return documents, total


def _check_move_target(session: Session, sprint: Sprint, target_id: str) -> None:
    """The sprint a completion moves unfinished items to: an open sprint of the project
    (`store.check_open_sprint`, locked for share as an item's sprint is), not this one."""
    target = open_sprints(session, sprint.workspace_id, [target_id]).get(target_id)
    if target_id == sprint.id:
        target = (sprint.project_id, "COMPLETED")  # (about to be)
    store.check_open_sprint(
        target,
        sprint.project_id,
        field="unfinishedDetails",
        path="unfinishedDetails.moveTo.sprintId",
        message="must be another PLANNED or ACTIVE sprint of the same project.",
    )


def _check_dates(start: datetime | None, end: datetime | None, *, blamed: str = "endDate") -> None:
    if start is not None and end is not None and end < start:
        message = {
            "endDate": "endDate: before startDate.",
            "startDate": "startDate: after endDate.",
        }
        raise InvalidRequest(blamed, "invalid_value", message[blamed])


def _touch(sprint: Sprint) -> None:
    sprint.version += 1
    sprint.updated_at = utcnow()


def _record(session: Session, sprint: Sprint, type: str, caller: Caller, **extra: Any) -> None:
    payload: dict[str, Any] = {"sprint": sprint_json(sprint)}
    if "changes" in extra:
        payload["changes"] = extra["changes"]
    if "moved_item_count" in extra:
        payload["movedItemCount"] = extra["moved_item_count"]
    events.record(
        session,
        workspace_id=sprint.workspace_id,
        type=type,
        subject_id=sprint.id,
        actor_id=caller.user_id,
        payload=payload,
    )


def _invalid_transition(current: str, wanted: str | None) -> Conflict:
    return Conflict(
        "invalid_transition",
        f"A {current} sprint cannot become {wanted}.",
        **{"from": current, "to": wanted},
    )


def _active_sprint_exists() -> Conflict:
    return Conflict("active_sprint_exists", "The project already has an ACTIVE sprint.")


def _api_value(value: Any) -> Any:
    return iso(value) if isinstance(value, datetime) else value

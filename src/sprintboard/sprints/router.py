from typing import Annotated, get_args

from fastapi import Body, Path
from starlette.responses import Response

from sprintboard.access import (
    Permission,
    access_list_scope,
    access_project,
    access_sprint,
    access_sprints,
    access_workspace_id,
)
from sprintboard.concurrency import IfMatch, check_if_match
from sprintboard.http.deps import CallerDep, SessionDep, api_router
from sprintboard.models import Sprint
from sprintboard.responses import deleted, many, one
from sprintboard.schemas import DeletedRecord, Many, One, error_responses
from sprintboard.sprints import reports, service
from sprintboard.sprints.schemas import (
    SprintComplete,
    SprintCompleted,
    SprintCreate,
    SprintDetail,
    SprintQuery,
    SprintRead,
    SprintReorder,
    SprintReportRead,
    SprintStatus,
    SprintUpdate,
    VelocityQuery,
    VelocityRead,
)

router = api_router(tags=["sprints"])

SprintId = Annotated[str, Path(alias="sprintId")]
ProjectId = Annotated[str, Path(alias="projectId")]


def _sprint(
    session: SessionDep, sprint: Sprint, *, status: int = 200, moved: int | None = None
) -> Response:
    record, tag = service.sprint_record(session, sprint, moved=moved)
    return one(record, status=status, headers={"ETag": tag})


@router.get(
    "/sprints",
    response_model=Many[SprintRead],
    responses=error_responses(400, 404),
    summary="List sprints of a project or workspace",
)
async def list_sprints(query: SprintQuery, session: SessionDep, caller: CallerDep) -> Response:
    """Ordered by `position`, with `workItemCount`, `totalPoints` and `completedPoints`.

    Rules the document cannot state: `workspaceId` or `projectId` is required (with both,
    the project must be in that workspace); `status` (comma-separated) takes only PLANNED,
    ACTIVE and COMPLETED.
    """
    workspace_id, project = access_list_scope(
        session,
        caller,
        workspace_id=query.workspace_id,
        project_id=query.project_id,
        project_first=True,
    )
    sprints, total, next_cursor = service.list_sprints(
        session,
        workspace_id=workspace_id,
        project=project,
        sent_workspace_id=query.workspace_id,
        statuses=query.listed("status", get_args(SprintStatus)),
        window=query.window(),
    )
    return many(sprints, total, next_cursor=next_cursor)


@router.post(
    "/sprints",
    status_code=201,
    response_model=One[SprintRead],
    responses=error_responses(400, 403, 404),
    summary="Create a sprint (SPRINT_CREATE)",
)
async def create_sprint(body: SprintCreate, session: SessionDep, caller: CallerDep) -> Response:
    access = access_workspace_id(session, caller, body.workspace_id)
    access.require(Permission.SPRINT_CREATE)
    sprint = service.create_sprint(session, access=access, data=body)
    return _sprint(session, sprint, status=201)


@router.post(
    "/sprints/reorder",
    response_model=Many[SprintRead],
    responses=error_responses(400, 403, 404),
    summary="Reorder sprints of one project (SPRINT_CREATE)",
)
async def reorder_sprints(body: SprintReorder, session: SessionDep, caller: CallerDep) -> Response:
    """Returns the project's sprints in their new order.

    Rules the document cannot state: `sprints` names each sprint once, all of one project.
    """
    sprints, access = access_sprints(session, caller, [entry.id for entry in body.sprints])
    access.require(Permission.SPRINT_CREATE)
    documents, total = service.reorder_sprints(
        session, access=access, sprints=sprints, entries=body.sprints
    )
    return many(documents, total)


@router.get(
    "/sprints/{sprintId}",
    response_model=One[SprintDetail],
    responses=error_responses(404),
    summary="Get a sprint with its work items",
)
async def get_sprint(sprint_id: SprintId, session: SessionDep, caller: CallerDep) -> Response:
    sprint, _ = access_sprint(session, caller, sprint_id)
    record, tag = service.sprint_record(session, sprint, with_items=True)
    return one(record, headers={"ETag": tag})


@router.patch(
    "/sprints/{sprintId}",
    response_model=One[SprintCompleted],
    responses=error_responses(400, 403, 404, 409, 412),
    summary="Update, start or complete a sprint",
)
async def update_sprint(
    sprint_id: SprintId,
    body: SprintUpdate,
    session: SessionDep,
    caller: CallerDep,
    if_match: IfMatch = None,
) -> Response:
    """`status` ACTIVE needs SPRINT_START, COMPLETED needs SPRINT_COMPLETE (unfinished items
    go to the backlog); other fields need SPRINT_CREATE. `movedItemCount` is 0 unless the
    sprint was completed by this call.
    """
    sprint, access = access_sprint(session, caller, sprint_id)
    service.require_for_update(access, body)
    check_if_match(if_match, sprint.id, sprint.version)
    moved = service.update_sprint(session, access=access, sprint=sprint, data=body)
    return _sprint(session, sprint, moved=moved or 0)


@router.post(
    "/sprints/{sprintId}/complete",
    response_model=One[SprintCompleted],
    responses=error_responses(400, 403, 404, 409),
    summary="Complete a sprint, moving unfinished items (SPRINT_COMPLETE)",
)
async def complete_sprint(
    sprint_id: SprintId,
    session: SessionDep,
    caller: CallerDep,
    body: Annotated[SprintComplete | None, Body()] = None,
) -> Response:
    """Items not DONE move to the backlog, or to `unfinishedDetails.moveTo.sprintId`."""
    sprint, access = access_sprint(session, caller, sprint_id)
    access.require(Permission.SPRINT_COMPLETE)
    moved = service.complete_as_asked(
        session, access=access, sprint=sprint, body=body or SprintComplete()
    )
    return _sprint(session, sprint, moved=moved)


@router.delete(
    "/sprints/{sprintId}",
    response_model=One[DeletedRecord],
    responses=error_responses(403, 404, 412),
    summary="Delete a sprint; its items go to the backlog (SPRINT_DELETE)",
)
async def delete_sprint(
    sprint_id: SprintId, session: SessionDep, caller: CallerDep, if_match: IfMatch = None
) -> Response:
    sprint, access = access_sprint(session, caller, sprint_id)
    access.require(Permission.SPRINT_DELETE)
    check_if_match(if_match, sprint.id, sprint.version)
    service.delete_sprint(session, access=access, sprint=sprint)
    return deleted(sprint.id)


@router.get(
    "/sprints/{sprintId}/report",
    response_model=One[SprintReportRead],
    responses=error_responses(404, 409),
    summary="Get a sprint's report: scope, burndown, carry-over",
)
async def get_sprint_report(
    sprint_id: SprintId, session: SessionDep, caller: CallerDep
) -> Response:
    """Computed from the sprint's change history; frozen when it completes (the same answer,
    byte for byte, whatever happens to its items later). A PLANNED sprint is 409
    `not_started`. Points are `storyPoints` (none counts 0). One burndown entry per UTC day
    from the start to the completion (today while ACTIVE), each the state at the day's end.
    """
    sprint, _ = access_sprint(session, caller, sprint_id)
    body = reports.report_json(session, sprint)
    return Response(b'{"data":' + body + b"}", media_type="application/json")


@router.get(
    "/projects/{projectId}/velocity",
    response_model=One[VelocityRead],
    responses=error_responses(400, 404),
    summary="Velocity: the project's last completed sprints, newest first",
)
async def get_velocity(
    project_id: ProjectId, query: VelocityQuery, session: SessionDep, caller: CallerDep
) -> Response:
    """Committed and completed points of the last `limit` completed sprints (from their frozen
    reports), and the average completed points over them (null when there are none)."""
    project, _ = access_project(session, caller, project_id)
    return one(reports.velocity(session, project_id=project.id, limit=query.limit))

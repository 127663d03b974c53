from typing import Annotated

from fastapi import Path
from starlette.responses import Response

from sprintboard.access import Permission, access_project
from sprintboard.http.deps import CallerDep, SessionDep, api_router
from sprintboard.responses import deleted, many, one
from sprintboard.schemas import DeletedRecord, Many, One, error_responses
from sprintboard.workflows import service
from sprintboard.workflows.schemas import (
    StatusCreate,
    StatusDeleteQuery,
    StatusName,
    StatusRead,
    StatusUpdate,
    WorkflowRead,
    WorkflowUpdate,
)
from sprintboard.workitems.service import move_status_items

router = api_router(tags=["workflows"])

ProjectId = Annotated[str, Path(alias="id", description="The project's `$id`.")]
Name = Annotated[StatusName, Path(alias="name", description="The status's name.")]


@router.get(
    "/projects/{id}/statuses",
    response_model=Many[StatusRead],
    responses=error_responses(404),
    summary="List a project's statuses",
)
async def list_statuses(project_id: ProjectId, session: SessionDep, caller: CallerDep) -> Response:
    """In `position` order."""
    access_project(session, caller, project_id)
    statuses = service.read_workflow(session, project_id).statuses
    return many([s.shown() for s in statuses], len(statuses))


@router.post(
    "/projects/{id}/statuses",
    status_code=201,
    response_model=One[StatusRead],
    responses=error_responses(400, 403, 404, 409),
    summary="Add a status to a project",
)
async def create_status(
    project_id: ProjectId, body: StatusCreate, session: SessionDep, caller: CallerDep
) -> Response:
    """Rules the document cannot state: a name the project has is 409 `duplicate_status`; a
    project has at most 30 statuses (409 `status_limit`)."""
    _, access = access_project(session, caller, project_id)
    access.require(Permission.PROJECT_MANAGE)
    made = service.create_status(
        session,
        project_id=project_id,
        name=body.name,
        category=body.category,
        label=body.label,
        position=body.position,
    )
    return one(made.shown(), status=201)


@router.patch(
    "/projects/{id}/statuses/{name}",
    response_model=One[StatusRead],
    responses=error_responses(400, 403, 404),
    summary="Rename or move a status",
)
async def update_status(
    project_id: ProjectId, name: Name, body: StatusUpdate, session: SessionDep, caller: CallerDep
) -> Response:
    _, access = access_project(session, caller, project_id)
    access.require(Permission.PROJECT_MANAGE)
    changed = service.update_status(
        session, project_id=project_id, name=name, label=body.label, position=body.position
    )
    return one(changed.shown())


@router.delete(
    "/projects/{id}/statuses/{name}",
    response_model=One[DeletedRecord],
    responses=error_responses(400, 403, 404, 409),
    summary="Remove a status",
)
async def delete_status(
    project_id: ProjectId,
    name: Name,
    query: StatusDeleteQuery,
    session: SessionDep,
    caller: CallerDep,
) -> Response:
    """Its items move to `moveTo`, each with a `task.updated` event; the answer's `$id` is
    the status's name.

    Rules the document cannot state: `moveTo` is another status of the project, required
    while items hold this one (409 `status_in_use`); the last status of a category cannot go
    (409 `last_in_category`)."""
    _, access = access_project(session, caller, project_id)
    access.require(Permission.PROJECT_MANAGE)
    workflow, held = service.delete_status(
        session, project_id=project_id, name=name, move_to=query.move_to
    )
    if held and query.move_to is not None:
        move_status_items(
            session,
            project_id=project_id,
            status=name,
            to=query.move_to,
            category=workflow.category(query.move_to),
            actor_id=access.caller.user_id,
        )
    service.remove_status(session, project_id=project_id, workflow=workflow, name=name)
    return deleted(name)


@router.get(
    "/projects/{id}/workflow",
    response_model=One[WorkflowRead],
    responses=error_responses(404),
    summary="Read a project's transition rules",
)
async def get_workflow(project_id: ProjectId, session: SessionDep, caller: CallerDep) -> Response:
    access_project(session, caller, project_id)
    return one({"transitions": service.read_workflow(session, project_id).transitions})


@router.put(
    "/projects/{id}/workflow",
    response_model=One[WorkflowRead],
    responses=error_responses(400, 403, 404),
    summary="Set a project's transition rules",
)
async def set_workflow(
    project_id: ProjectId, body: WorkflowUpdate, session: SessionDep, caller: CallerDep
) -> Response:
    """`{"transitions": null}` clears them: any status may then change to any.

    Rules the document cannot state: every name in `transitions` is a status of the project."""
    _, access = access_project(session, caller, project_id)
    access.require(Permission.PROJECT_MANAGE)
    rules = service.set_transitions(session, project_id=project_id, transitions=body.transitions)
    return one({"transitions": rules})

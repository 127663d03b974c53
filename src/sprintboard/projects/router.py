from functools import partial
from typing import Annotated

from fastapi import Path
from starlette.responses import Response

from sprintboard.access import (
    Permission,
    WorkspaceAccess,
    access_project,
    access_project_for_delete,
    access_workspace_id,
)
from sprintboard.concurrency import etag, stamp_version
from sprintboard.http.deps import CallerDep, PageDep, SessionDep, api_router, guarded, permitted
from sprintboard.models import Project
from sprintboard.projects import service
from sprintboard.projects.schemas import ProjectCreate, ProjectRead, ProjectUpdate, project_json
from sprintboard.responses import deleted, many, one
from sprintboard.schemas import DeletedRecord, Many, One, error_responses

router = api_router(tags=["projects"])

WorkspaceId = Annotated[str, Path(alias="id", description="The workspace's `$id`.")]
ProjectId = Annotated[str, Path(alias="id", description="The project's `$id`.")]


def _version(project: Project) -> tuple[str, int]:
    return project.id, stamp_version(project.updated_at)


def _tag(project: Project) -> dict[str, str]:
    return {"ETag": etag(*_version(project))}


ManagedProject = Annotated[
    Project,
    guarded(access_project, ProjectId, permission=Permission.PROJECT_MANAGE, version=_version),
]
"""The project of the path, for PROJECT_MANAGE, as `If-Match` names it (404, 403, 412)."""
ProjectToDelete = Annotated[
    Project, guarded(access_project_for_delete, ProjectId, version=_version)
]
"""The same, with all it holds locked (`access_project_for_delete`, which checks the permission)."""
AddingProjects = Annotated[
    WorkspaceAccess,
    permitted(partial(access_workspace_id, adding=True), WorkspaceId, Permission.PROJECT_MANAGE),
]


@router.get(
    "/workspaces/{id}/projects",
    response_model=Many[ProjectRead],
    responses=error_responses(400, 404),
)
async def list_projects(
    workspace_id: WorkspaceId, session: SessionDep, caller: CallerDep, page: PageDep
) -> Response:
    access_workspace_id(session, caller, workspace_id)
    projects, total, next_cursor = service.list_projects(
        session, workspace_id=workspace_id, window=page.window("projects", workspace_id)
    )
    return many([project_json(p) for p in projects], total, next_cursor=next_cursor)


@router.post(
    "/workspaces/{id}/projects",
    status_code=201,
    response_model=One[ProjectRead],
    responses=error_responses(400, 403, 404, 409),
)
async def create_project(
    access: AddingProjects, body: ProjectCreate, session: SessionDep
) -> Response:
    project = service.create_project(
        session,
        workspace_id=access.workspace_id,
        name=body.name,
        key=body.key,
        description=body.description,
        actor=access.caller,
    )
    return one(project_json(project), status=201)


@router.get("/projects/{id}", response_model=One[ProjectRead], responses=error_responses(404))
async def get_project(project_id: ProjectId, session: SessionDep, caller: CallerDep) -> Response:
    project, _ = access_project(session, caller, project_id)
    return one(project_json(project), headers=_tag(project))


@router.patch(
    "/projects/{id}",
    response_model=One[ProjectRead],
    responses=error_responses(400, 403, 404, 412),
)
async def update_project(project: ManagedProject, body: ProjectUpdate) -> Response:
    service.update_project(
        project, name=body.name, description=body.description, fields=body.model_fields_set
    )
    return one(project_json(project), headers=_tag(project))


@router.delete(
    "/projects/{id}",
    response_model=One[DeletedRecord],
    responses=error_responses(403, 404, 412),
)
async def delete_project(
    project: ProjectToDelete, session: SessionDep, caller: CallerDep
) -> Response:
    """Deletes the project with its sprints and work items."""
    service.delete_project(session, project, caller=caller)
    return deleted(project.id)

from typing import Annotated

from fastapi import Path
from starlette.responses import Response

from sprintboard.access import Permission, access_workspace, access_workspace_id
from sprintboard.concurrency import IfMatch, check_if_match, etag, stamp_version
from sprintboard.http.deps import CallerDep, PageDep, SessionDep, api_router
from sprintboard.models import Workspace
from sprintboard.responses import deleted, many, one
from sprintboard.schemas import DeletedRecord, Many, One, error_responses
from sprintboard.workspaces import service
from sprintboard.workspaces.schemas import (
    MemberCreate,
    MemberRead,
    MemberUpdate,
    WorkItemTypeCreate,
    WorkItemTypeRead,
    WorkspaceCreate,
    WorkspaceRead,
    WorkspaceUpdate,
    member_json,
    work_item_type_json,
    workspace_json,
)

router = api_router(tags=["workspaces"])

WorkspaceId = Annotated[str, Path(alias="id", description="The workspace's `$id`.")]
UserId = Annotated[str, Path(alias="userId")]


def _tag(workspace: Workspace) -> dict[str, str]:
    return {"ETag": etag(workspace.id, stamp_version(workspace.updated_at))}


@router.get("/workspaces", response_model=Many[WorkspaceRead], responses=error_responses(400))
async def list_workspaces(session: SessionDep, caller: CallerDep, page: PageDep) -> Response:
    """The caller's workspaces."""
    workspaces, total, next_cursor = service.list_workspaces(
        session, caller=caller, window=page.window("workspaces")
    )
    return many([workspace_json(w) for w in workspaces], total, next_cursor=next_cursor)


@router.post(
    "/workspaces",
    status_code=201,
    response_model=One[WorkspaceRead],
    responses=error_responses(400),
)
async def create_workspace(
    body: WorkspaceCreate, session: SessionDep, caller: CallerDep
) -> Response:
    """Creates a workspace; the caller becomes its ADMIN."""
    workspace = service.create_workspace(
        session, caller=caller, name=body.name, description=body.description
    )
    return one(workspace_json(workspace), status=201)


@router.get("/workspaces/{id}", response_model=One[WorkspaceRead], responses=error_responses(404))
async def get_workspace(
    workspace_id: WorkspaceId, session: SessionDep, caller: CallerDep
) -> Response:
    workspace, _ = access_workspace(session, caller, workspace_id)
    return one(workspace_json(workspace), headers=_tag(workspace))


@router.patch(
    "/workspaces/{id}",
    response_model=One[WorkspaceRead],
    responses=error_responses(400, 403, 404, 412),
)
async def update_workspace(
    workspace_id: WorkspaceId,
    body: WorkspaceUpdate,
    session: SessionDep,
    caller: CallerDep,
    if_match: IfMatch = None,
) -> Response:
    workspace, access = access_workspace(session, caller, workspace_id)
    access.require(Permission.WORKSPACE_MANAGE)
    check_if_match(if_match, workspace.id, stamp_version(workspace.updated_at))
    service.update_workspace(
        workspace, name=body.name, description=body.description, fields=body.model_fields_set
    )
    return one(workspace_json(workspace), headers=_tag(workspace))


@router.delete(
    "/workspaces/{id}",
    response_model=One[DeletedRecord],
    responses=error_responses(403, 404, 412),
)
async def delete_workspace(
    workspace_id: WorkspaceId, session: SessionDep, caller: CallerDep, if_match: IfMatch = None
) -> Response:
    """Deletes the workspace and everything in it."""
    workspace, access = access_workspace(session, caller, workspace_id)
    access.require(Permission.WORKSPACE_MANAGE)
    check_if_match(if_match, workspace.id, stamp_version(workspace.updated_at))
    service.delete_workspace(session, workspace)
    return deleted(workspace.id)


@router.get(
    "/workspaces/{id}/members",
    response_model=Many[MemberRead],
    responses=error_responses(400, 404),
)
async def list_members(
    workspace_id: WorkspaceId, session: SessionDep, caller: CallerDep, page: PageDep
) -> Response:
    access_workspace_id(session, caller, workspace_id)
    rows, total, next_cursor = service.list_members(
        session, workspace_id=workspace_id, window=page.window("members", workspace_id)
    )
    members = [member_json(row.WorkspaceMember, row.User) for row in rows]
    return many(members, total, next_cursor=next_cursor)


@router.post(
    "/workspaces/{id}/members",
    status_code=201,
    response_model=One[MemberRead],
    responses=error_responses(400, 403, 404, 409),
)
async def add_member(
    workspace_id: WorkspaceId, body: MemberCreate, session: SessionDep, caller: CallerDep
) -> Response:
    access = access_workspace_id(session, caller, workspace_id, adding=True)
    access.require(Permission.WORKSPACE_MANAGE)
    member, user = service.add_member(
        session, workspace_id=workspace_id, user_id=body.user_id, role=body.role
    )
    return one(member_json(member, user), status=201)


@router.patch(
    "/workspaces/{id}/members/{userId}",
    response_model=One[MemberRead],
    responses=error_responses(400, 403, 404, 409, 412),
)
async def change_member_role(
    workspace_id: WorkspaceId,
    user_id: UserId,
    body: MemberUpdate,
    session: SessionDep,
    caller: CallerDep,
    if_match: IfMatch = None,
) -> Response:
    access = access_workspace_id(session, caller, workspace_id)
    access.require(Permission.WORKSPACE_MANAGE)
    member, user = service.change_member_role(
        session, workspace_id=workspace_id, user_id=user_id, role=body.role, if_match=if_match
    )
    return one(member_json(member, user))


@router.delete(
    "/workspaces/{id}/members/{userId}",
    response_model=One[DeletedRecord],
    responses=error_responses(403, 404, 409, 412),
)
async def remove_member(
    workspace_id: WorkspaceId,
    user_id: UserId,
    session: SessionDep,
    caller: CallerDep,
    if_match: IfMatch = None,
) -> Response:
    access = access_workspace_id(session, caller, workspace_id)
    access.require(Permission.WORKSPACE_MANAGE)
    member = service.remove_member(
        session, workspace_id=workspace_id, user_id=user_id, if_match=if_match
    )
    return deleted(member.id)


@router.get(
    "/workspaces/{id}/work-item-types",
    response_model=Many[WorkItemTypeRead],
    responses=error_responses(400, 404),
)
async def list_work_item_types(
    workspace_id: WorkspaceId, session: SessionDep, caller: CallerDep, page: PageDep
) -> Response:
    """The workspace's custom types (TASK, BUG, STORY and EPIC always exist besides)."""
    access_workspace_id(session, caller, workspace_id)
    types, total, next_cursor = service.list_work_item_types(
        session, workspace_id=workspace_id, window=page.window("types", workspace_id)
    )
    return many([work_item_type_json(t) for t in types], total, next_cursor=next_cursor)


@router.post(
    "/workspaces/{id}/work-item-types",
    status_code=201,
    response_model=One[WorkItemTypeRead],
    responses=error_responses(400, 403, 404, 409),
)
async def create_work_item_type(
    workspace_id: WorkspaceId, body: WorkItemTypeCreate, session: SessionDep, caller: CallerDep
) -> Response:
    access = access_workspace_id(session, caller, workspace_id, adding=True)
    access.require(Permission.PROJECT_MANAGE)
    item_type = service.create_work_item_type(
        session, access=access, name=body.name, description=body.description
    )
    return one(work_item_type_json(item_type), status=201)


@router.delete(
    "/workspaces/{id}/work-item-types/{name}",
    response_model=One[DeletedRecord],
    responses=error_responses(403, 404, 409),
)
async def delete_work_item_type(
    workspace_id: WorkspaceId,
    name: Annotated[str, Path(description="The custom type's name.")],
    session: SessionDep,
    caller: CallerDep,
) -> Response:
    """PROJECT_MANAGE. 409 `type_in_use` while an item has the type, `builtin_type` for TASK,
    BUG, STORY and EPIC; 404 for a type the workspace does not have."""
    access = access_workspace_id(session, caller, workspace_id)
    access.require(Permission.PROJECT_MANAGE)
    return deleted(service.delete_work_item_type(session, access=access, name=name))

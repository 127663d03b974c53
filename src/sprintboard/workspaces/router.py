from functools import partial
from typing import Annotated

from fastapi import Path
from starlette.responses import Response

from sprintboard.access import (
    Permission,
    WorkspaceAccess,
    access_workspace,
    access_workspace_id,
)
from sprintboard.concurrency import IfMatch, etag, stamp_version
from sprintboard.http.deps import CallerDep, PageDep, SessionDep, api_router, guarded, permitted
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


def _version(workspace: Workspace) -> tuple[str, int]:
    return workspace.id, stamp_version(workspace.updated_at)


def _tag(workspace: Workspace) -> dict[str, str]:
    return {"ETag": etag(*_version(workspace))}


_adding = partial(access_workspace_id, adding=True)

ManagedWorkspace = Annotated[
    Workspace,
    guarded(
        access_workspace, WorkspaceId, permission=Permission.WORKSPACE_MANAGE, version=_version
    ),
]
"""The workspace of the path, for WORKSPACE_MANAGE, as `If-Match` names it (404, 403, 412)."""
Managing = Annotated[
    WorkspaceAccess, permitted(access_workspace_id, WorkspaceId, Permission.WORKSPACE_MANAGE)
]
AddingMembers = Annotated[
    WorkspaceAccess, permitted(_adding, WorkspaceId, Permission.WORKSPACE_MANAGE)
]
AddingTypes = Annotated[WorkspaceAccess, permitted(_adding, WorkspaceId, Permission.PROJECT_MANAGE)]
ManagingTypes = Annotated[
    WorkspaceAccess, permitted(access_workspace_id, WorkspaceId, Permission.PROJECT_MANAGE)
]


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
async def update_workspace(workspace: ManagedWorkspace, body: WorkspaceUpdate) -> Response:
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
    workspace: ManagedWorkspace, session: SessionDep, caller: CallerDep
) -> Response:
    """Deletes the workspace and everything in it."""
    service.delete_workspace(session, workspace, actor=caller)
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
async def add_member(access: AddingMembers, body: MemberCreate, session: SessionDep) -> Response:
    member, user = service.add_member(
        session,
        workspace_id=access.workspace_id,
        user_id=body.user_id,
        role=body.role,
        actor=access.caller,
    )
    return one(member_json(member, user), status=201)


@router.patch(
    "/workspaces/{id}/members/{userId}",
    response_model=One[MemberRead],
    responses=error_responses(400, 403, 404, 409, 412),
)
async def change_member_role(
    access: Managing,
    user_id: UserId,
    body: MemberUpdate,
    session: SessionDep,
    if_match: IfMatch = None,
) -> Response:
    member, user = service.change_member_role(
        session,
        workspace_id=access.workspace_id,
        user_id=user_id,
        role=body.role,
        actor=access.caller,
        if_match=if_match,
    )
    return one(member_json(member, user))


@router.delete(
    "/workspaces/{id}/members/{userId}",
    response_model=One[DeletedRecord],
    responses=error_responses(403, 404, 409, 412),
)
async def remove_member(
    access: Managing, user_id: UserId, session: SessionDep, if_match: IfMatch = None
) -> Response:
    member = service.remove_member(
        session,
        workspace_id=access.workspace_id,
        user_id=user_id,
        actor=access.caller,
        if_match=if_match,
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
    access: AddingTypes, body: WorkItemTypeCreate, session: SessionDep
) -> Response:
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
    access: ManagingTypes,
    name: Annotated[str, Path(description="The custom type's name.")],
    session: SessionDep,
) -> Response:
    """PROJECT_MANAGE. 409 `type_in_use` while an item has the type, `builtin_type` for TASK,
    BUG, STORY and EPIC; 404 for a type the workspace does not have."""
    return deleted(service.delete_work_item_type(session, access=access, name=name))

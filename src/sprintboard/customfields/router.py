from typing import Annotated

from fastapi import Path
from starlette.responses import Response

from sprintboard.access import Permission, access_field, access_workspace_id
from sprintboard.customfields import service
from sprintboard.customfields.schemas import FieldCreate, FieldRead, FieldUpdate
from sprintboard.http.deps import CallerDep, SessionDep, api_router
from sprintboard.responses import deleted, many, one
from sprintboard.schemas import DeletedRecord, Many, One, error_responses
from sprintboard.workitems.store import forget_field

router = api_router(tags=["custom fields"])

WorkspaceId = Annotated[str, Path(alias="id", description="The workspace's `$id`.")]
FieldId = Annotated[str, Path(alias="id", description="The field's `$id`.")]


@router.get(
    "/workspaces/{id}/fields",
    response_model=Many[FieldRead],
    responses=error_responses(404),
    summary="List a workspace's custom fields",
)
async def list_fields(
    workspace_id: WorkspaceId, session: SessionDep, caller: CallerDep
) -> Response:
    """In the order they were made."""
    access_workspace_id(session, caller, workspace_id)
    found = service.list_fields(session, workspace_id)
    return many([service.field_json(f) for f in found], len(found))


@router.post(
    "/workspaces/{id}/fields",
    status_code=201,
    response_model=One[FieldRead],
    responses=error_responses(400, 403, 404, 409),
    summary="Add a custom field to a workspace's work items",
)
async def create_field(
    workspace_id: WorkspaceId, body: FieldCreate, session: SessionDep, caller: CallerDep
) -> Response:
    """Rules the document cannot state: `options` are required for select and multiselect
    and refused for other types, each option once; a key the workspace has is 409
    `duplicate_field`; a workspace has at most 50 fields (409 `field_limit`)."""
    access = access_workspace_id(session, caller, workspace_id, adding=True)
    access.require(Permission.PROJECT_MANAGE)
    field = service.create_field(
        session,
        workspace_id=workspace_id,
        key=body.key,
        name=body.name,
        type_=body.type,
        options=body.options,
        description=body.description,
        actor=access.caller,
    )
    return one(service.field_json(field), status=201)


@router.get(
    "/fields/{id}",
    response_model=One[FieldRead],
    responses=error_responses(404),
    summary="Get a custom field",
)
async def get_field(field_id: FieldId, session: SessionDep, caller: CallerDep) -> Response:
    field, _ = access_field(session, caller, field_id)
    return one(service.field_json(field))


@router.patch(
    "/fields/{id}",
    response_model=One[FieldRead],
    responses=error_responses(400, 403, 404, 409),
    summary="Rename a custom field or change its options",
)
async def update_field(
    field_id: FieldId, body: FieldUpdate, session: SessionDep, caller: CallerDep
) -> Response:
    """Rules the document cannot state: `options` (select and multiselect only) is the whole
    list, each option once; removing an option an item holds is 409 `option_in_use`."""
    field, access = access_field(session, caller, field_id)
    access.require(Permission.PROJECT_MANAGE)
    service.update_field(
        session,
        field,
        sent=body.model_fields_set,
        name=body.name,
        description=body.description,
        options=body.options,
        actor=access.caller,
    )
    return one(service.field_json(field))


@router.delete(
    "/fields/{id}",
    response_model=One[DeletedRecord],
    responses=error_responses(403, 404),
    summary="Remove a custom field and every value of it",
)
async def delete_field(field_id: FieldId, session: SessionDep, caller: CallerDep) -> Response:
    field, access = access_field(session, caller, field_id)
    access.require(Permission.PROJECT_MANAGE)
    forget_field(session, field_id=field.id, key=field.key)
    service.delete_field(session, field, actor=access.caller)
    return deleted(field_id)

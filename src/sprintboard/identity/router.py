from typing import Annotated

from fastapi import Path
from starlette.responses import Response

from sprintboard.concurrency import IfMatch
from sprintboard.deps import CallerDep, PageDep, SessionDep, api_router
from sprintboard.identity import service
from sprintboard.identity.schemas import (
    KeyCreate,
    KeyCreated,
    KeyRead,
    Me,
    UserCreate,
    UserRead,
    key_json,
    user_json,
)
from sprintboard.models import ApiKey
from sprintboard.responses import deleted, many, one
from sprintboard.schemas import DeletedRecord, Many, One, error_responses

router = api_router(tags=["identity"])


@router.get("/me", response_model=One[Me])
async def get_me(session: SessionDep, caller: CallerDep) -> Response:
    user = service.get_user(session, caller.user_id)
    key = session.get(ApiKey, caller.key_id)
    assert key is not None
    return one({**user_json(user), "key": key_json(key)})


@router.post(
    "/users",
    status_code=201,
    response_model=One[UserRead],
    responses=error_responses(400, 403, 409),
    summary="Create a user (organization admins)",
)
async def create_user(body: UserCreate, session: SessionDep, caller: CallerDep) -> Response:
    caller.require_org_admin()
    user = service.create_user(
        session, name=body.name, email=body.email, is_org_admin=body.is_org_admin
    )
    return one(user_json(user), status=201)


@router.get(
    "/users",
    response_model=Many[UserRead],
    responses=error_responses(400, 403),
    summary="List users (organization admins)",
)
async def list_users(session: SessionDep, caller: CallerDep, page: PageDep) -> Response:
    caller.require_org_admin()
    users, total = service.list_users(session, limit=page.limit, offset=page.offset)
    return many([user_json(u) for u in users], total, page)


@router.post(
    "/users/{userId}/keys",
    status_code=201,
    response_model=One[KeyCreated],
    responses=error_responses(400, 403, 404),
    summary="Issue an API key for a user (organization admins)",
)
async def create_user_key(
    user_id: Annotated[str, Path(alias="userId")],
    body: KeyCreate,
    session: SessionDep,
    caller: CallerDep,
) -> Response:
    """Rules the document cannot state: `expiresAt` must be in the future; `permissions`
    within the owner's (for a key restricted to `workspaceId`, within their role there)."""
    caller.require_org_admin()
    owner = service.get_user(session, user_id)
    return _create_key(session, caller, owner.id, body)


@router.post(
    "/keys",
    status_code=201,
    response_model=One[KeyCreated],
    responses=error_responses(400),
    summary="Create an API key for yourself",
)
async def create_key(body: KeyCreate, session: SessionDep, caller: CallerDep) -> Response:
    """Rules the document cannot state: `expiresAt` must be in the future; `permissions`
    within the caller's (for a key restricted to `workspaceId`, within their role there)."""
    return _create_key(session, caller, caller.user_id, body)


def _create_key(session: SessionDep, caller: CallerDep, owner_id: str, body: KeyCreate) -> Response:
    key, secret = service.create_key(
        session,
        caller=caller,
        owner=service.get_user(session, owner_id),
        name=body.name,
        permissions=body.permissions,
        workspace_id=body.workspace_id,
        expires_at=body.expires_at,
    )
    return one({**key_json(key), "key": secret}, status=201)


@router.get("/keys", response_model=Many[KeyRead], responses=error_responses(400))
async def list_keys(session: SessionDep, caller: CallerDep, page: PageDep) -> Response:
    keys, total = service.list_keys(
        session, user_id=caller.user_id, limit=page.limit, offset=page.offset
    )
    return many([key_json(k) for k in keys], total, page)


@router.delete(
    "/keys/{keyId}",
    response_model=One[DeletedRecord],
    responses=error_responses(404, 412),
    summary="Revoke an API key",
)
async def revoke_key(
    key_id: Annotated[str, Path(alias="keyId")],
    session: SessionDep,
    caller: CallerDep,
    if_match: IfMatch = None,
) -> Response:
    key = service.revoke_key(session, caller=caller, key_id=key_id, if_match=if_match)
    return deleted(key.id)

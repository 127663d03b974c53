from typing import Annotated

from fastapi import Path, Request
from starlette.responses import Response

from sprintboard.access import Caller, Permission, access_invitation, access_workspace_id
from sprintboard.errors import Unauthenticated
from sprintboard.http.deps import CallerDep, PageDep, SessionDep, api_router, caller_of
from sprintboard.identity import sessions
from sprintboard.identity.schemas import user_json
from sprintboard.invitations import service
from sprintboard.invitations.schemas import (
    InvitationAccept,
    InvitationAccepted,
    InvitationCreate,
    InvitationCreated,
    InvitationRead,
    invitation_json,
)
from sprintboard.mail.outbox import link_root, outbox_of
from sprintboard.responses import deleted, many, one
from sprintboard.schemas import DeletedRecord, Many, One, error_responses

router = api_router(tags=["invitations"])

WorkspaceId = Annotated[str, Path(alias="id", description="The workspace's `$id`.")]
InvitationId = Annotated[str, Path(alias="invitationId")]


@router.post(
    "/workspaces/{id}/invitations",
    status_code=201,
    response_model=One[InvitationCreated],
    responses=error_responses(400, 403, 404, 409),
    summary="Invite someone to a workspace by email",
)
async def create_invitation(
    request: Request,
    workspace_id: WorkspaceId,
    body: InvitationCreate,
    session: SessionDep,
    caller: CallerDep,
) -> Response:
    """Needs WORKSPACE_MANAGE. `url` (`<public URL>/invite/<token>`) is shown in this
    answer only; the invitation expires after 7 days. A pending invitation of the same
    email here is 409 `duplicate_invitation`; a member's email, 409 `duplicate_member`."""
    access = access_workspace_id(session, caller, workspace_id, adding=True)
    access.require(Permission.WORKSPACE_MANAGE)
    invitation, url = service.create_invitation(
        session,
        access=access,
        email=body.email,
        role=body.role,
        link_root=link_root(request),
        outbox=outbox_of(request),
    )
    return one({**invitation_json(invitation), "url": url}, status=201)


@router.get(
    "/workspaces/{id}/invitations",
    response_model=Many[InvitationRead],
    responses=error_responses(400, 403, 404),
    summary="List a workspace's pending invitations",
)
async def list_invitations(
    workspace_id: WorkspaceId, session: SessionDep, caller: CallerDep, page: PageDep
) -> Response:
    """Needs WORKSPACE_MANAGE. Pending ones only (not used, revoked or expired); no `url`."""
    access = access_workspace_id(session, caller, workspace_id)
    access.require(Permission.WORKSPACE_MANAGE)
    invitations, total, next_cursor = service.list_pending(
        session, workspace_id=workspace_id, window=page.window("invitations", workspace_id)
    )
    return many([invitation_json(i) for i in invitations], total, next_cursor=next_cursor)


@router.delete(
    "/invitations/{invitationId}",
    response_model=One[DeletedRecord],
    responses=error_responses(403, 404),
    summary="Revoke a pending invitation",
)
async def revoke_invitation(
    invitation_id: InvitationId, session: SessionDep, caller: CallerDep
) -> Response:
    """Needs WORKSPACE_MANAGE in its workspace; its link stops working at once."""
    invitation, access = access_invitation(session, caller, invitation_id)
    access.require(Permission.WORKSPACE_MANAGE)
    service.revoke_invitation(session, access=access, invitation=invitation)
    return deleted(invitation.id)


@router.post(
    "/invitations/accept",
    status_code=201,
    response_model=One[InvitationAccepted],
    responses=error_responses(400, 401, 403, 409),
    summary="Accept an invitation: join its workspace (and sign this browser in)",
    openapi_extra={"security": [{}, {"HTTPBearer": []}]},
)
async def accept_invitation(
    request: Request, body: InvitationAccept, session: SessionDep
) -> Response:
    """For an email without an account, `name` and `password` make one; for an existing
    account the caller must be signed in as it (a session cookie or a key): 401 when not
    signed in, 403 with `details.reason` `wrong_user` when signed in as someone else.
    Either way the user becomes a member with the invitation's role, the invitation is used
    up, and the answer sets a browser session cookie (`sb_session`).

    Rules the document cannot state: `token` must be a pending invitation's (an unknown,
    used, revoked or expired one is 400 `invalid_value`, all alike); `name` and `password`
    are required for a new account, and `password` may not be its email."""
    user, invitation, acting = service.accept_invitation(
        session,
        token=body.token,
        name=body.name,
        password=body.password,
        caller=_signed_in(request),
    )
    _, token, _ = sessions.open_for(session, acting)
    response = one({"user": user_json(user), "workspaceId": invitation.workspace_id}, status=201)
    sessions.set_cookie(response, request, token)
    return response


def _signed_in(request: Request) -> Caller | None:
    """The caller, if the request is signed in (a key or a session cookie): an invitation
    for a new account needs none, and a stale cookie must not stand in its way."""
    try:
        return caller_of(request)
    except Unauthenticated:
        return None

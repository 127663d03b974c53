from datetime import datetime
from typing import Annotated, Any

from pydantic import Field

from sprintboard.access import Role
from sprintboard.identity.schemas import EMAIL_PATTERN, Password, UserRead
from sprintboard.models import Invitation
from sprintboard.responses import iso
from sprintboard.schemas import Name, RequestModel, Timestamps, at_most
from sprintboard.workspaces.schemas import RoleIn


class InvitationCreate(RequestModel):
    server_owned = frozenset({"workspaceId", "invitedBy", "expiresAt", "url"})

    email: Annotated[
        str,
        Field(min_length=3, max_length=320, json_schema_extra={"pattern": EMAIL_PATTERN}),
        at_most(320),
    ]
    role: RoleIn = Role.MEMBER


class InvitationRead(Timestamps):
    id: str = Field(alias="$id")
    workspace_id: str = Field(alias="workspaceId")
    email: str
    role: Role
    invited_by: str | None = Field(alias="invitedBy")
    expires_at: datetime = Field(alias="expiresAt")


class InvitationCreated(InvitationRead):
    url: str | None = Field(
        description="`<public URL>/invite/<token>`: shown in this response only (the token "
        "is stored only as a hash). Null in an `Idempotency-Key` replay."
    )


class InvitationAccept(RequestModel):
    token: Annotated[str, Field(min_length=1, max_length=256), at_most(256)]
    name: Name | None = Field(None, description="Required when the email has no account yet.")
    password: Password | None = Field(
        None, description="Required when the email has no account yet."
    )


class InvitationAccepted(RequestModel):
    user: UserRead
    workspace_id: str = Field(alias="workspaceId")


def invitation_json(invitation: Invitation) -> dict[str, Any]:
    return {
        "$id": invitation.id,
        "workspaceId": invitation.workspace_id,
        "email": invitation.email,
        "role": invitation.role,
        "invitedBy": invitation.invited_by,
        "expiresAt": iso(invitation.expires_at),
        "$createdAt": iso(invitation.created_at),
        "$updatedAt": iso(invitation.updated_at),
    }

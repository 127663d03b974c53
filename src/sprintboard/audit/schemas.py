from typing import Any

from pydantic import BaseModel, Field

from sprintboard.schemas import QueryModel

ACTIONS = (
    "session.created",
    "session.failed",
    "session.closed",
    "key.created",
    "key.revoked",
    "user.created",
    "user.updated",
    "password.changed",
    "password.reset",
    "invitation.created",
    "invitation.accepted",
    "invitation.revoked",
    "member.added",
    "member.updated",
    "member.removed",
    "workspace.created",
    "workspace.deleted",
    "project.created",
    "project.deleted",
    "status.created",
    "status.updated",
    "status.deleted",
    "workflow.updated",
    "field.created",
    "field.updated",
    "field.deleted",
    "webhook.created",
    "webhook.updated",
    "webhook.deleted",
    "integration.created",
    "integration.deleted",
)
"""The actions the contract lists (§19); those of features not built yet never occur."""


class AuditQuery(QueryModel):
    after: int | None = Field(None, ge=0, description="Entries after this `seq` (a cursor).")
    limit: int = Field(100, ge=1, le=1000, description="Entries to list (at most 1000).")
    action: str | None = Field(None, max_length=32, description="Only this action.")
    actor_id: str | None = Field(
        None, alias="actorId", max_length=32, description="Only this user's actions."
    )


class AuditTarget(BaseModel):
    kind: str
    id: str | None = Field(alias="$id")


class AuditEntryRead(BaseModel):
    id: str = Field(alias="$id")
    seq: int
    at: str = Field(json_schema_extra={"format": "date-time"})
    action: str
    actor_id: str | None = Field(alias="actorId")
    actor_email: str | None = Field(alias="actorEmail")
    ip: str | None = Field(description="The client's address, as the rate limits find it.")
    target: AuditTarget
    workspace_id: str | None = Field(alias="workspaceId")
    details: dict[str, Any]
    hash: str = Field(
        description="Lowercase hex SHA-256 of the previous entry's `hash` (64 zeros for the "
        "first) followed by this entry's canonical JSON without `hash` (keys sorted, no "
        "spaces, UTF-8 with non-ASCII characters as themselves)."
    )


class AuditVerification(BaseModel):
    ok: bool
    entries: int | None = Field(None, description="How many entries were checked (when ok).")
    broken_at: int | None = Field(
        None, alias="brokenAt", description="The `seq` of the first entry that does not chain."
    )

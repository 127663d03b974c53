from datetime import datetime
from typing import Annotated, Any

from pydantic import Field

from sprintboard.access import Permission
from sprintboard.models import ApiKey, User
from sprintboard.responses import iso
from sprintboard.schemas import DateTimeIn, Name, RequestModel, Timestamps, at_most

_NOT_AT_OR_SPACE = (
    r"[^@\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
)
EMAIL_PATTERN = rf"^{_NOT_AT_OR_SPACE}+@{_NOT_AT_OR_SPACE}+\.{_NOT_AT_OR_SPACE}+$"
"""An email as `identity.service` takes it, in the document too: something, `@`, something
with a dot, no blanks. The blanks are spelt out, as Python's class of them is wider than a
JSON Schema validator's."""


class UserCreate(RequestModel):
    name: Name
    email: Annotated[
        str,
        Field(
            min_length=3,
            max_length=320,
            # (No `format: email`: stricter than the rule the server applies, which is this.)
            json_schema_extra={"pattern": EMAIL_PATTERN},
        ),
        at_most(320),
    ]
    is_org_admin: bool = Field(False, alias="isOrgAdmin")


class UserUpdate(RequestModel):
    # Absent means "unchanged"; an explicit null is refused (defaults are not validated).
    name: Name = None  # type: ignore[assignment]
    is_org_admin: bool = Field(None, alias="isOrgAdmin")  # type: ignore[assignment]
    active: bool = Field(
        None,  # type: ignore[assignment]
        description="False offboards the user: every key of theirs stops at once (401); "
        "their records stay.",
    )


# FastAPI validates the decoded body in Python mode, where a strict enum wants a Permission
# instance and refuses the JSON string; lax mode accepts exactly the member values.
PermissionIn = Annotated[Permission, Field(strict=False)]


class KeyCreate(RequestModel):
    name: Name
    permissions: Annotated[list[PermissionIn], Field(max_length=16)] | None = Field(
        None, description="A subset of the owner's permissions; absent means all of them."
    )
    workspace_id: str | None = Field(
        None, alias="workspaceId", description="Restricts the key to one workspace."
    )
    expires_at: DateTimeIn | None = Field(None, alias="expiresAt")


class UserRead(Timestamps):
    id: str = Field(alias="$id")
    name: str
    email: str
    is_org_admin: bool = Field(alias="isOrgAdmin")
    active: bool


class KeyRead(Timestamps):
    id: str = Field(alias="$id")
    user_id: str = Field(alias="userId")
    name: str
    prefix: str = Field(description="The secret's first characters, to recognize it by.")
    permissions: list[Permission] | None
    workspace_id: str | None = Field(alias="workspaceId")
    expires_at: datetime | None = Field(alias="expiresAt")
    last_used_at: datetime | None = Field(alias="lastUsedAt")
    revoked_at: datetime | None = Field(alias="revokedAt")


class KeyCreated(KeyRead):
    key: str | None = Field(
        description="The secret, shown in this response only; keep it safe. Null when the "
        "response is an `Idempotency-Key` replay: the secret is stored only as a hash."
    )


class Me(UserRead):
    key: KeyRead | None = Field(
        description="The key this call was made with; null in a browser session opened "
        "with a password."
    )
    email_notifications: bool = Field(
        alias="emailNotifications",
        description="Whether your inbox notifications are mailed to you too (at most one "
        "mail a minute; needs the service's mail to be configured).",
    )


class MeUpdate(RequestModel):
    email_notifications: bool = Field(
        None,  # type: ignore[assignment]
        alias="emailNotifications",
        description="True: your inbox notifications are mailed to you too, at most one mail "
        "a minute (the first after a quiet minute at once, later ones together at its end).",
    )


def user_json(user: User) -> dict[str, Any]:
    return {
        "$id": user.id,
        "name": user.name,
        "email": user.email,
        "isOrgAdmin": user.is_org_admin,
        "active": user.active,
        "$createdAt": iso(user.created_at),
        "$updatedAt": iso(user.updated_at),
    }


def me_json(user: User, key: ApiKey | None) -> dict[str, Any]:
    return {
        **user_json(user),
        "emailNotifications": user.email_notifications,
        "key": key_json(key) if key is not None else None,
    }


def key_json(key: ApiKey) -> dict[str, Any]:
    return {
        "$id": key.id,
        "userId": key.user_id,
        "name": key.name,
        "prefix": key.prefix,
        "permissions": key.permissions,
        "workspaceId": key.workspace_id,
        "expiresAt": iso(key.expires_at),
        "lastUsedAt": iso(key.last_used_at),
        "revokedAt": iso(key.revoked_at),
        "$createdAt": iso(key.created_at),
        "$updatedAt": iso(key.updated_at),
    }


Password = Annotated[str, Field(min_length=10, max_length=256), at_most(256)]
"""A new password: 10 to 256 characters (after trimming, as every string), not the email."""
GivenPassword = Annotated[str, Field(min_length=1, max_length=256), at_most(256)]
"""A password given to be checked: any that could have been set."""


class PasswordChange(RequestModel):
    password: Password
    current_password: GivenPassword | None = Field(
        None,
        alias="currentPassword",
        description="Required once the user has a password (else 403 `wrong_password`).",
    )


class PasswordResetRequest(RequestModel):
    email: Annotated[str, Field(min_length=1, max_length=320), at_most(320)]


class PasswordResetConfirm(RequestModel):
    token: Annotated[str, Field(min_length=1, max_length=256), at_most(256)]
    password: Password


class KeySignIn(RequestModel):
    key: Annotated[str, Field(min_length=1, max_length=256)] = Field(
        description="An API key (`sb_...`); the session acts with its permissions."
    )


class PasswordSignIn(RequestModel):
    email: Annotated[str, Field(min_length=1, max_length=320), at_most(320)]
    password: GivenPassword


class SessionCreate(RequestModel):
    """What `POST /sessions` reads: a `KeySignIn` or a `PasswordSignIn` (the document shows
    the two; one model reads both, so the form and JSON share its errors)."""

    key: Annotated[str, Field(min_length=1, max_length=256)] | None = None
    email: Annotated[str, Field(min_length=1, max_length=320), at_most(320)] | None = None
    password: GivenPassword | None = None

    @classmethod
    def documented(cls) -> dict[str, Any]:
        return {
            "anyOf": [
                KeySignIn.model_json_schema(by_alias=True),
                PasswordSignIn.model_json_schema(by_alias=True),
            ]
        }


class SessionRead(Timestamps):
    id: str = Field(alias="$id")
    user: UserRead
    key: KeyRead | None = Field(
        description="The key the session acts as (never its secret); null for a session "
        "opened with a password, which acts with all the user's roles allow."
    )
    expires_at: datetime = Field(
        alias="expiresAt",
        description="When the session ends unless used before: each use moves this on to 12 "
        "hours later (it also ends with its key).",
    )

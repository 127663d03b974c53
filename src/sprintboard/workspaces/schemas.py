from typing import Annotated, Any

from pydantic import Field

from sprintboard.access import Role
from sprintboard.models import User, WorkItemType, Workspace, WorkspaceMember
from sprintboard.responses import iso
from sprintboard.schemas import LongText, Name, RequestModel, Timestamps, at_most

TypeName = Annotated[str, Field(pattern=r"^[A-Z][A-Z0-9_]{0,31}$", max_length=32), at_most(32)]
# FastAPI validates the decoded body in Python mode, where a strict enum wants a Role instance
# and refuses the JSON string; lax mode accepts exactly the member values.
RoleIn = Annotated[Role, Field(strict=False)]


class WorkspaceCreate(RequestModel):
    name: Name
    description: LongText | None = None


class WorkspaceUpdate(RequestModel):
    # Absent means "unchanged"; an explicit null is refused (defaults are not validated).
    name: Name = None  # type: ignore[assignment]
    description: LongText | None = None


class WorkspaceRead(Timestamps):
    id: str = Field(alias="$id")
    name: str
    description: str | None


class MemberCreate(RequestModel):
    server_owned = frozenset({"name", "email", "workspaceId"})

    user_id: str = Field(alias="userId")
    role: RoleIn = Role.MEMBER


class MemberUpdate(RequestModel):
    server_owned = frozenset({"name", "email"})

    role: RoleIn


class MemberRead(Timestamps):
    id: str = Field(alias="$id")
    workspace_id: str = Field(alias="workspaceId")
    user_id: str = Field(alias="userId")
    role: Role
    name: str
    email: str


class WorkItemTypeCreate(RequestModel):
    server_owned = frozenset({"workspaceId"})

    name: TypeName
    description: LongText | None = None


class WorkItemTypeRead(Timestamps):
    id: str = Field(alias="$id")
    workspace_id: str = Field(alias="workspaceId")
    name: str
    description: str | None


def workspace_json(workspace: Workspace) -> dict[str, Any]:
    return {
        "$id": workspace.id,
        "name": workspace.name,
        "description": workspace.description,
        "$createdAt": iso(workspace.created_at),
        "$updatedAt": iso(workspace.updated_at),
    }


def member_json(member: WorkspaceMember, user: User) -> dict[str, Any]:
    return {
        "$id": member.id,
        "workspaceId": member.workspace_id,
        "userId": member.user_id,
        "role": member.role,
        "name": user.name,
        "email": user.email,
        "$createdAt": iso(member.created_at),
        "$updatedAt": iso(member.updated_at),
    }


def work_item_type_json(item_type: WorkItemType) -> dict[str, Any]:
    return {
        "$id": item_type.id,
        "workspaceId": item_type.workspace_id,
        "name": item_type.name,
        "description": item_type.description,
        "$createdAt": iso(item_type.created_at),
        "$updatedAt": iso(item_type.updated_at),
    }

from typing import Annotated, Any

from pydantic import Field, field_validator
from pydantic_core import PydanticCustomError

from sprintboard.models import Project
from sprintboard.responses import iso
from sprintboard.schemas import LongText, Name, RequestModel, Timestamps, at_most

ProjectKey = Annotated[
    str,
    Field(
        min_length=2,
        max_length=10,
        pattern=r"^[A-Z][A-Z0-9]*$",
        description="2-10 characters, `[A-Z][A-Z0-9]*`; derived from the name when absent.",
    ),
    at_most(10),
]


class ProjectCreate(RequestModel):
    server_owned = frozenset({"workspaceId"})

    name: Name
    key: ProjectKey | None = None
    description: LongText | None = None


class ProjectUpdate(RequestModel):
    # Absent means "unchanged"; an explicit null is refused (defaults are not validated).
    name: Name = None  # type: ignore[assignment]
    description: LongText | None = None
    key: Annotated[str | None, Field(description="Immutable: sending it is an error.")] = None

    @field_validator("key", mode="before")
    @classmethod
    def _key_is_immutable(cls, _value: Any) -> Any:
        raise PydanticCustomError("immutable", "A project's key cannot change.")


class ProjectRead(Timestamps):
    id: str = Field(alias="$id")
    workspace_id: str = Field(alias="workspaceId")
    name: str
    key: str
    description: str | None


def project_json(project: Project) -> dict[str, Any]:
    return {
        "$id": project.id,
        "workspaceId": project.workspace_id,
        "name": project.name,
        "key": project.key,
        "description": project.description,
        "$createdAt": iso(project.created_at),
        "$updatedAt": iso(project.updated_at),
    }

from typing import Annotated, Any

from pydantic import Field, model_validator
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
    """The key is immutable: not a field of this body (the document does not offer what is
    always refused), and `immutable` rather than `unknown_field` when sent."""

    # Absent means "unchanged"; an explicit null is refused (defaults are not validated).
    name: Name = None  # type: ignore[assignment]
    description: LongText | None = None

    @model_validator(mode="before")
    @classmethod
    def _key_is_immutable(cls, data: Any) -> Any:
        if isinstance(data, dict) and "key" in data:
            raise PydanticCustomError(
                "immutable", "key: a project's key cannot change.", {"field": "key"}
            )
        return data


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

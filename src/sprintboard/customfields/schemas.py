from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, model_validator
from pydantic_core import PydanticCustomError

from sprintboard.schemas import RequestModel, Timestamps, at_most

FieldType = Literal["text", "number", "date", "select", "multiselect", "user", "url", "checkbox"]
KEY_PATTERN = r"^[a-z][a-zA-Z0-9]{0,31}$"
FieldKey = Annotated[
    str,
    Field(
        min_length=1,
        max_length=32,
        pattern=KEY_PATTERN,
        description="`[a-z][a-zA-Z0-9]{0,31}`: its name in an item's `fields`; never changes.",
    ),
    at_most(32),
]
FieldName = Annotated[str, Field(min_length=1, max_length=64), at_most(64)]
Option = Annotated[str, Field(min_length=1, max_length=64), at_most(64)]
Options = Annotated[
    list[Option],
    Field(
        min_length=1,
        max_length=100,
        description="select and multiselect only (required there): 1 to 100 distinct "
        "strings, in the order items sort by.",
    ),
]
Description = Annotated[str, Field(max_length=4_000), at_most(4_000)]


class FieldCreate(RequestModel):
    key: FieldKey
    name: FieldName
    type: FieldType
    options: Options | None = None
    description: Description | None = None


class FieldUpdate(RequestModel):
    """`key` and `type` never change (`immutable`)."""

    name: FieldName = None  # type: ignore[assignment]
    description: Description | None = None
    options: Options = Field(
        None,  # type: ignore[arg-type]
        description="The whole list: options may be added and reordered; removing one that "
        "an item holds is 409 `option_in_use`.",
    )

    @model_validator(mode="before")
    @classmethod
    def _fixed(cls, data: Any) -> Any:
        for field in ("key", "type"):
            if isinstance(data, dict) and field in data:
                raise PydanticCustomError(
                    "immutable", "{field}: a field's {field} cannot change.", {"field": field}
                )
        return data


class FieldRead(Timestamps):
    id: str = Field(alias="$id")
    workspace_id: str = Field(alias="workspaceId")
    key: str
    name: str
    type: FieldType
    options: list[str] | None = Field(description="null unless select or multiselect.")
    description: str | None


class FieldSummary(BaseModel):
    """What an export carries of a field, and a JSON import creates it from."""

    key: str
    name: str
    type: FieldType
    options: list[str] | None = None
    description: str | None = None

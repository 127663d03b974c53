from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, Field, model_validator
from pydantic_core import PydanticCustomError
from typing_extensions import TypeAliasType

from sprintboard.schemas import QueryModel, RequestModel, at_most
from sprintboard.workflows.service import NAME_PATTERN, Category

StatusName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=32,
        pattern=NAME_PATTERN,
        description="`[A-Z][A-Z0-9_]{0,31}`: what an item's `status` carries.",
    ),
    at_most(32),
]
Label = Annotated[str, Field(min_length=1, max_length=64), at_most(64)]


def _whole(value: Any) -> Any:
    """A JSON number with no fraction (`3.0`) is an integer, as JSON Schema says; strict
    models would refuse it as a float."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


Place = Annotated[int, Field(ge=0, le=1_000, description="0 is first."), BeforeValidator(_whole)]
"""(The bounds before the validator: after it, Pydantic writes them into the document as
unknown keywords, `ge` and `le`, instead of `minimum` and `maximum`.)"""


class StatusCreate(RequestModel):
    name: StatusName
    category: Category
    label: Label | None = Field(None, description="Defaults to the name in sentence case.")
    position: Place | None = Field(None, description="Defaults to last.")


class StatusUpdate(RequestModel):
    """`name` and `category` never change (`immutable`)."""

    label: Label = None  # type: ignore[assignment]
    position: Place = None  # type: ignore[assignment]

    @model_validator(mode="before")
    @classmethod
    def _fixed(cls, data: Any) -> Any:
        for field in ("name", "category"):
            if isinstance(data, dict) and field in data:
                raise PydanticCustomError(
                    "immutable", "{field}: a status's {field} cannot change.", {"field": field}
                )
        return data


class StatusRead(BaseModel):
    name: str
    label: str
    category: Category
    position: int


class StatusDeleteQuery(QueryModel):
    move_to: StatusName | None = Field(
        None, alias="moveTo", description="Where its items move (required while it has any)."
    )


Transitions = TypeAliasType("Transitions", dict[StatusName, list[StatusName]])


class WorkflowRead(BaseModel):
    transitions: Transitions | None = Field(
        description="`{from: [to, ...]}`: a status listed may change only to those; null: "
        "any status to any."
    )


class WorkflowUpdate(RequestModel):
    transitions: Transitions | None

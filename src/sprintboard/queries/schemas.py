"""Saved views' request and response models (contract §18)."""

from typing import Annotated, Any, Literal

from pydantic import Field
from typing_extensions import TypeAliasType

from sprintboard.models import SavedView
from sprintboard.responses import iso
from sprintboard.schemas import Name, PageQuery, RequestModel, Timestamps, at_most
from sprintboard.workitems.fields import FIELDS

CUSTOM_FIELD = r"fields\.[a-z][a-zA-Z0-9]{0,31}"
GROUPS = ("status", "assignee", "priority", "type", "epic", "sprint")
GROUP_PATTERN = f"^({'|'.join(GROUPS)}|{CUSTOM_FIELD})$"
VISIBLE_PATTERN = (
    "^("
    + "|".join(name.replace("$", r"\$") for name in (f.name for f in FIELDS))
    + f"|{CUSTOM_FIELD})$"
)
QueryText = Annotated[
    str,
    Field(
        max_length=4_000,
        description="A query (see the README's Queries); it must run (400 `invalid_query` "
        "on `query`, with `details.position`).",
    ),
    at_most(4_000),
]
Layout = TypeAliasType("Layout", Literal["list", "board"])
GroupBy = Annotated[
    str,
    Field(
        max_length=64,
        pattern=GROUP_PATTERN,
        description="`status`, `assignee`, `priority`, `type`, `epic`, `sprint` or `fields.<key>`.",
    ),
]
VisibleField = Annotated[str, Field(max_length=64, pattern=VISIBLE_PATTERN)]
VisibleFields = Annotated[
    list[VisibleField],
    Field(max_length=50, description="Item fields (as items show them) or `fields.<key>`."),
]
_SERVER_OWNED = frozenset({"workspaceId", "ownerId"})


class ViewCreate(RequestModel):
    server_owned = _SERVER_OWNED

    name: Name
    query: QueryText
    layout: Layout = "list"
    group_by: GroupBy | None = Field(None, alias="groupBy")
    visible_fields: VisibleFields | None = Field(None, alias="visibleFields")
    shared: bool = Field(
        False, description="Shown to every member (a VIEWER may save private views only)."
    )


class ViewUpdate(RequestModel):
    server_owned = _SERVER_OWNED

    name: Name | None = None
    query: QueryText | None = None
    layout: Layout | None = None
    group_by: GroupBy | None = Field(None, alias="groupBy")
    visible_fields: VisibleFields | None = Field(None, alias="visibleFields")
    shared: bool | None = None


class ViewRead(Timestamps):
    id: str = Field(alias="$id")
    workspace_id: str = Field(alias="workspaceId")
    name: str
    query: str
    layout: Layout
    group_by: str | None = Field(alias="groupBy")
    visible_fields: list[str] | None = Field(alias="visibleFields")
    shared: bool
    owner_id: str = Field(alias="ownerId")


class ViewItemsQuery(PageQuery):
    """The page of a view's items (its query sets the filters and the order)."""


def view_json(view: SavedView) -> dict[str, Any]:
    return {
        "$id": view.id,
        "workspaceId": view.workspace_id,
        "name": view.name,
        "query": view.query,
        "layout": view.layout,
        "groupBy": view.group_by,
        "visibleFields": view.visible_fields,
        "shared": view.shared,
        "ownerId": view.owner_id,
        "$createdAt": iso(view.created_at),
        "$updatedAt": iso(view.updated_at),
    }

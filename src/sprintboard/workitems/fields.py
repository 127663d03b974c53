"""Every field a work item has, declared once.

`FIELDS` is the registry: an item's own fields as the API shows them, in that order, each
with its column, its kind (how its values cross the database and the API), whether clients
set it, how `GET /tasks` filters and sorts by it, whether export carries it, and its values
when it has a fixed set. Reads, lists, changes, creates, filters, sorting, export and
import, the request and response models, the agents' tools and the board's forms are all
derived from here (`reads`, `store`, `service`, `schemas`, `ordering`, `transfer`,
`agents`, `GET /meta/work-items`).

A field that is `plain` has no rule beyond its type: generic code creates, changes, filters,
sorts, exports and imports it, so adding one is a model line, a migration and a line here.
The others (a title that is also `name`, the status's default, assignees who must be
members...) keep their rules in `service.py`, but take their lists from here too.
"""

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Annotated, Any, Literal, get_args

from pydantic import Field as ModelField

from sprintboard.schemas import DateIn, LongText, at_most
from sprintboard.sql import Codec
from sprintboard.workflows.schemas import StatusName
from sprintboard.workflows.service import NAME_PATTERN, Category

Status = StatusName
"""A status's name: which names an item may take is its project's (`workflows`)."""
Priority = Literal["LOW", "MEDIUM", "HIGH", "URGENT"]
Amount = Annotated[float, ModelField(ge=0, le=100_000)]
Label = Annotated[str, ModelField(min_length=1, max_length=64), at_most(64)]

Kind = Literal["text", "enum", "list", "map", "day", "stamp", "real", "int", "bool"]
"""How a field's values are stored and shown: `list` a JSON array (text on SQLite), `map` a
JSON object (the custom fields' values by key), `day` a
date (`YYYY-MM-DD`), `stamp` a timestamp (as `responses.iso` shows it), `real` a float."""
Operator = Literal["in", "=", "<", ">", ">="]
_PYTHON: dict[Kind, type] = {
    "text": str,
    "enum": str,
    "list": list,
    "map": dict,
    "day": date,
    "stamp": datetime,
    "real": float,
    "int": int,
    "bool": bool,
}


@dataclass(frozen=True)
class Filter:
    """A query parameter of `GET /tasks` that filters by a field: `in` takes a
    comma-separated list (any of them; checked against the field's `enum` if it has one), the
    others compare with one value."""

    param: str
    operator: Operator
    description: str

    @property
    def attr(self) -> str:
        """Its name in `TaskQuery` (snake case)."""
        return "".join(f"_{c.lower()}" if c.isupper() else c for c in self.param)


@dataclass(frozen=True)
class ItemField:
    name: str
    """As the API shows it."""
    column: str
    """In `work_items`; also its name in the request models, where clients set it."""
    kind: Kind
    settable: bool = False
    """Clients set it on create and change it with PATCH and bulk update."""
    plain: bool = False
    """No rule beyond its type: generic code does everything (see the module's docstring)."""
    value: Any = None
    """A plain field's type in requests (a Pydantic annotation, without `None`); an `enum`'s
    `Literal` of its values."""
    nullable: bool = False
    """Whether it may be empty (`null`): a create may leave it out and a change clear it."""
    default: Any = None
    """A plain field's value when a create leaves it out."""
    filters: tuple[Filter, ...] = ()
    sort: str | None = None
    """Its name in `sort=`, if lists sort by it (an `enum` by its values' order; empty
    values last both ways)."""
    derived: bool = False
    """It changes only with another field (a status's category with the status): a change's
    event names the other alone, and clients never send it."""
    pattern: str | None = None
    """What each value of an `in` filter must match, for a field of open values."""
    exported: bool = False
    """Export writes it and import sends it back on create."""
    label: str = ""
    """What people call it (the board's forms and columns)."""
    description: str | None = None
    read_type: Any = field(default=None, compare=False)

    @property
    def enum(self) -> tuple[str, ...]:
        """Its values, in their order, if it has a fixed set (an `enum`'s `value` lists them)."""
        return get_args(self.value) if self.kind == "enum" else ()

    @property
    def python(self) -> type:
        return _PYTHON[self.kind]

    def shown(self, value: Any) -> Any:
        """A request's value as the API shows it (and events and diffs carry it)."""
        if value is None:
            return None
        if self.kind == "day":
            return value.isoformat()
        if self.kind == "real":
            return float(value)
        return value

    def param(self, codec: Codec, value: Any) -> Any:
        """A value (as a request gives it, or as the API shows it) as the parameter its
        column takes."""
        if self.kind in ("list", "map"):
            return codec.json_param(value)
        if self.kind == "day":
            return codec.day_param(date.fromisoformat(value) if isinstance(value, str) else value)
        if self.kind == "stamp" and value is not None:
            return codec.param(value)
        return value

    def descriptor(self) -> dict[str, Any]:
        """What clients that build forms from data (the board, agents) are told of it."""
        return {
            "name": self.name,
            "label": self.label,
            "kind": self.kind,
            "settable": self.settable,
            "nullable": self.nullable,
            "enum": list(self.enum) or None,
            "filters": [
                {"param": f.param, "operator": f.operator, "description": f.description}
                for f in self.filters
            ],
            "sort": self.sort,
            "exported": self.exported,
            "description": self.description,
        }


@dataclass(frozen=True)
class Match:
    """A filter of the registry and the value a list asked for (a list of values for `in`)."""

    field: ItemField
    filter: Filter
    value: Any


def _in(param: str, what: str) -> Filter:
    return Filter(param, "in", f"Comma-separated {what}: any of them.")


FIELDS: tuple[ItemField, ...] = (
    ItemField("$id", "id", "text"),
    ItemField("key", "key", "text", label="Key"),
    ItemField("title", "title", "text", settable=True, exported=True, label="Title"),
    ItemField(
        "type",
        "type",
        "text",
        settable=True,
        filters=(_in("type", "types"),),
        exported=True,
        label="Type",
    ),
    ItemField(
        "status",
        "status",
        "text",
        settable=True,
        value=Status,
        filters=(_in("status", "status names"),),
        pattern=NAME_PATTERN,
        exported=True,
        label="Status",
        description="One of the project's statuses (`GET /projects/{id}/statuses`).",
    ),
    ItemField(
        "statusCategory",
        "status_category",
        "enum",
        value=Category,
        derived=True,
        filters=(_in("statusCategory", "categories"),),
        label="Category",
        description="The category of its status: BACKLOG, TODO, IN_PROGRESS or DONE.",
    ),
    ItemField(
        "priority",
        "priority",
        "enum",
        settable=True,
        plain=True,
        value=Priority,
        default="MEDIUM",
        filters=(_in("priority", "priorities"),),
        sort="priority",
        exported=True,
        label="Priority",
    ),
    ItemField(
        "description",
        "description",
        "text",
        nullable=True,
        settable=True,
        plain=True,
        value=LongText,
        exported=True,
        label="Description",
    ),
    ItemField("assigneeIds", "assignee_ids", "list", settable=True, label="Assignees"),
    ItemField("labels", "labels", "list", settable=True, exported=True, label="Labels"),
    ItemField(
        "dueDate",
        "due_date",
        "day",
        nullable=True,
        settable=True,
        plain=True,
        value=DateIn,
        filters=(
            Filter("dueDate", "=", "YYYY-MM-DD"),
            Filter("dueBefore", "<", "YYYY-MM-DD: due before that day (exclusive)."),
            Filter("dueAfter", ">", "YYYY-MM-DD: due after that day (exclusive)."),
        ),
        sort="dueDate",
        exported=True,
        label="Due date",
    ),
    ItemField(
        "estimatedHours",
        "estimated_hours",
        "real",
        nullable=True,
        settable=True,
        plain=True,
        value=Amount,
        exported=True,
        label="Estimate (hours)",
    ),
    ItemField(
        "storyPoints",
        "story_points",
        "real",
        nullable=True,
        settable=True,
        plain=True,
        value=Amount,
        sort="storyPoints",
        exported=True,
        label="Story points",
    ),
    ItemField(
        "flagged",
        "flagged",
        "bool",
        settable=True,
        plain=True,
        value=bool,
        default=False,
        filters=(Filter("flagged", "=", "true or false."),),
        exported=True,
        label="Flagged",
    ),
    ItemField("sprintId", "sprint_id", "text", settable=True, nullable=True, label="Sprint"),
    ItemField("projectId", "project_id", "text", label="Project"),
    ItemField("workspaceId", "workspace_id", "text"),
    ItemField(
        "position",
        "position",
        "real",
        settable=True,
        sort="position",
        exported=True,
        label="Position",
    ),
    ItemField("commentCount", "comment_count", "int", label="Comments"),
    ItemField("loggedHours", "logged_hours", "real", label="Logged hours"),
    ItemField("$createdAt", "created_at", "stamp", sort="createdAt", label="Created"),
    ItemField(
        "$updatedAt",
        "updated_at",
        "stamp",
        filters=(Filter("updatedSince", ">=", "Only items changed at or after this moment."),),
        sort="updatedAt",
        label="Updated",
    ),
    ItemField("parentId", "parent_id", "text", settable=True, nullable=True, label="Parent"),
    ItemField(
        "fields",
        "custom_fields",
        "map",
        settable=True,
        value=dict[str, Any],
        exported=True,
        label="Custom fields",
        description="The workspace's custom fields' values by key (`GET /workspaces/{id}/"
        "fields`); unset ones are absent. A change sets the keys it sends; null clears one.",
    ),
)
"""A work item's own fields, in the order the API shows them."""

BY_NAME = {f.name: f for f in FIELDS}
BY_COLUMN = {f.column: f for f in FIELDS}
SETTABLE = tuple(f for f in FIELDS if f.settable)
PLAIN = tuple(f for f in FIELDS if f.plain)
FILTERS: tuple[tuple[ItemField, Filter], ...] = tuple(
    (f, filter_) for f in FIELDS for filter_ in f.filters
)
EXPORTED = tuple(f.name for f in FIELDS if f.exported)
"""What an export writes of an item's own fields, and an import sends back on create."""
DERIVED = frozenset(f.name for f in FIELDS if f.derived)
CREATE_ONLY_COLUMNS = ("number", "created_by", "version")
"""Columns a create writes that the API does not show."""
CREATE_COLUMNS = (*(f.column for f in FIELDS), *CREATE_ONLY_COLUMNS)
"""The columns a create writes (`service.item_values`' order)."""


def descriptors() -> dict[str, Any]:
    """The registry as clients read it (`GET /meta/work-items`)."""
    return {"fields": [f.descriptor() for f in FIELDS]}

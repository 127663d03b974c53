import re
from collections.abc import Callable
from datetime import date
from typing import Annotated, Any, ClassVar, Literal, Optional, TypeVar

from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator
from pydantic_core import PydanticCustomError

from sprintboard.errors import InvalidRequest
from sprintboard.schemas import (
    DateIn,
    DateTimeIn,
    Name,
    PageQuery,
    QueryModel,
    RequestModel,
    Timestamps,
    at_most,
    state_string_rules_of,
)
from sprintboard.workflows.service import Category
from sprintboard.workitems import fields
from sprintboard.workitems.fields import Label, Priority, Status
from sprintboard.workitems.ordering import SORT_FIELDS

__all__ = ["Priority", "Status"]
# No pattern here: the contract answers any type that is not known with `invalid_value`
# (service._check_type), also for names no type could have, like `bug`.
TypeName = Annotated[
    str, Field(description="TASK, BUG, STORY, EPIC or a custom type of the workspace.")
]
Labels = Annotated[list[Label], Field(max_length=50)]
AssigneeIds = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=64), at_most(64)]], Field(max_length=50)
]
Position = Annotated[float, Field(ge=-1e15, le=1e15)]
Ref = Annotated[str, Field(min_length=1, max_length=64), at_most(64)]
CustomValues = Annotated[
    dict[str, Any],
    Field(
        description="Custom fields' values by key (`GET /workspaces/{id}/fields`): text (at "
        "most 4,000 characters), number (finite, magnitude at most 10^12), date "
        "(YYYY-MM-DD), select (one of its options), multiselect (distinct options, at most "
        "50), user (a member's `$id`), url (http/https, at most 2,000 characters), checkbox "
        "(true/false); null clears one. A key the workspace lacks is `unknown_field`."
    ),
]

# Fields that PATCH and create share. In an update model, a field defaulting to None that is
# not `| None` refuses an explicit null (defaults are not validated): absent means unchanged.
# The registry's plain fields (`fields.PLAIN`) join each model through `_with_fields`.

M = TypeVar("M", bound=BaseModel)
Role = Literal["create", "update", "read"]
_READ_TYPES: dict[str, Any] = {"day": date, "real": float, "bool": bool, "text": str}


def _with_fields(role: Role) -> Callable[[type[M]], type[M]]:
    """A model with the registry's plain fields added, as `role` takes or shows them."""

    def extend(model: type[M]) -> type[M]:
        extra = {f.column: _model_field(f, role) for f in fields.PLAIN}
        return _extended(model, extra)

    return extend


def _extended(model: type[M], extra: dict[str, Any]) -> type[M]:
    return create_model(
        model.__name__, __base__=model, __module__=model.__module__, __doc__=model.__doc__, **extra
    )


def _model_field(f: fields.ItemField, role: Role) -> tuple[Any, Any]:
    alias = f.name if f.name != f.column else None
    if role == "read":
        shown = f.value if f.kind == "enum" else _READ_TYPES[f.kind]
        annotation = Optional[shown] if f.nullable else shown  # noqa: UP045
        return annotation, Field(alias=alias, description=f.description)
    value = Optional[f.value] if f.nullable else f.value  # noqa: UP045
    default = f.default if role == "create" else None
    return value, Field(default, alias=alias, description=f.description)


def _given(name: str) -> dict[str, Any]:
    """`name` is in the body and not null (a null one counts as not given)."""
    return {"required": [name], "properties": {name: {"not": {"type": "null"}}}}


def _named_by(first: str, second: str, *, both: bool) -> Callable[[dict[str, Any]], None]:
    """A body's schema (its `json_schema_extra`): a body's string rules (`RequestModel`'s,
    which a model's own `json_schema_extra` replaces), and `first` or `second` required
    (and, unless `both`, not the two together). Said with `if`/`then`/`else`: generated
    clients read a top-level `oneOf` or `anyOf` as a union of anonymous models, and the
    body's own model is lost (`Any`)."""

    def extend(schema: dict[str, Any]) -> None:
        for node in schema.get("properties", {}).values():
            state_string_rules_of(node)
        schema.update({"if": _given(first), "else": _given(second)})
        if not both:
            schema["then"] = {"not": {"required": [second]}}

    return extend


@_with_fields("create")
class TaskCreate(RequestModel):
    # One of the two is required (the document says so with `if`/`else`); both must agree.
    model_config = ConfigDict(json_schema_extra=_named_by("name", "title", both=True))

    name: Name | None = Field(None, description="The title (`title` is accepted too).")
    title: Name | None = None
    workspace_id: Ref = Field(alias="workspaceId")
    project_id: Ref = Field(alias="projectId")
    type: TypeName = "TASK"
    status: Status | None = Field(
        None,
        description="One of the project's statuses; defaults to its first of category TODO "
        "in a sprint, of category BACKLOG otherwise.",
    )
    assignee_ids: AssigneeIds = Field(default_factory=list, alias="assigneeIds")
    labels: Labels = Field(default_factory=list)
    sprint_id: Ref | None = Field(
        None,
        alias="sprintId",
        description="A sprint of the project; null for the backlog; absent: the active sprint.",
    )
    position: Position | None = Field(None, description="Defaults to the end of the project.")
    parent_id: Ref | None = Field(
        None, alias="parentId", description="The parent's `$id` or key (same workspace)."
    )
    custom_fields: CustomValues = Field(default_factory=dict, alias="fields")


@_with_fields("update")
class TaskUpdate(RequestModel):
    name: Name = None  # type: ignore[assignment]
    title: Name = None  # type: ignore[assignment]
    type: TypeName = None  # type: ignore[assignment]
    status: Status = None  # type: ignore[assignment]
    assignee_ids: AssigneeIds | None = Field(None, alias="assigneeIds")
    labels: Labels | None = None
    sprint_id: Ref | None = Field(None, alias="sprintId")
    position: Position = None  # type: ignore[assignment]
    parent_id: Ref | None = Field(
        None, alias="parentId", description="The parent's `$id` or key; null: none."
    )
    custom_fields: CustomValues = Field(None, alias="fields")  # type: ignore[arg-type]

    @property
    def moving_to(self) -> list[str]:
        """The sprint the change moves the item to, if any (locked before the item is)."""
        return [self.sprint_id] if self.sprint_id is not None else []


class BulkEntry(TaskUpdate):
    """One item of a bulk update, named by `$id` or `key`, with any field PATCH takes."""

    # Exactly one of the two names the item (the document says so with `if`/`then`/`else`); an
    # explicit null is refused, as for PATCH's fields.
    model_config = ConfigDict(json_schema_extra=_named_by("$id", "key", both=False))

    id: Ref = Field(None, alias="$id")  # type: ignore[assignment]
    key: Ref = Field(None, description="The item's key, instead of `$id`.")  # type: ignore[assignment]

    @model_validator(mode="after")
    def _named_once(self) -> "BulkEntry":
        if (self.id is None) == (self.key is None):
            raise PydanticCustomError(
                "required", "{field}: name the item by `$id` or by `key`.", {"field": "$id"}
            )
        return self

    @property
    def ref(self) -> str:
        return self.id or self.key or ""

    KANBAN: ClassVar[frozenset[str]] = frozenset({"id", "key", "status", "position", "sprint_id"})

    def is_kanban_move(self) -> bool:
        """Whether it changes only what a board drags: status, position, sprint."""
        return self.model_fields_set <= self.KANBAN


class BulkUpdate(RequestModel):
    tasks: Annotated[list[BulkEntry], Field(min_length=1, description="1 to 500 entries.")]

    @property
    def moving_to(self) -> list[str]:
        """The sprints the entries move items to (locked before the items are)."""
        return [sprint_id for entry in self.tasks for sprint_id in entry.moving_to]


class BulkCreate(RequestModel):
    tasks: Annotated[
        list[TaskCreate],
        Field(min_length=1, description="1 to 500 create bodies, all of one workspace."),
    ]


class CommentCreate(RequestModel):
    body: Annotated[str, Field(min_length=1, max_length=65_536), at_most(65_536)]


class CommentUpdate(RequestModel):
    body: Annotated[str, Field(min_length=1, max_length=65_536), at_most(65_536)]


class TimeLogCreate(RequestModel):
    hours: Annotated[float, Field(gt=0, le=1_000)]
    date: DateIn | None = Field(None, description="The day worked; defaults to today (UTC).")
    note: Annotated[str, Field(max_length=4_000), at_most(4_000)] | None = None


class ProjectSummary(BaseModel):
    id: str = Field(alias="$id")
    name: str
    key: str


class UserSummary(BaseModel):
    id: str = Field(alias="$id")
    name: str
    email: str


class CommentRead(Timestamps):
    id: str = Field(alias="$id")
    work_item_id: str = Field(alias="workItemId")
    author_id: str | None = Field(alias="authorId")
    body: str


class TimeLogRead(Timestamps):
    id: str = Field(alias="$id")
    work_item_id: str = Field(alias="workItemId")
    user_id: str | None = Field(alias="userId")
    hours: float
    date: date
    note: str | None


@_with_fields("read")
class TaskRead(Timestamps):
    id: str = Field(alias="$id")
    key: str
    title: str
    type: str
    status: str
    status_category: Category = Field(alias="statusCategory")
    assignee_ids: list[str] = Field(alias="assigneeIds")
    labels: list[str]
    sprint_id: str | None = Field(alias="sprintId")
    project_id: str = Field(alias="projectId")
    workspace_id: str = Field(alias="workspaceId")
    position: float
    comment_count: int = Field(alias="commentCount")
    logged_hours: float = Field(alias="loggedHours")
    parent_id: str | None = Field(alias="parentId")
    custom_fields: dict[str, Any] = Field(
        alias="fields", description="The custom fields' values by key; unset ones are absent."
    )
    child_count: int = Field(alias="childCount", description="Direct children.")
    project: ProjectSummary
    assignees: list[UserSummary]


class ParentSummary(BaseModel):
    id: str = Field(alias="$id")
    key: str
    title: str
    type: str
    status: str


class Progress(BaseModel):
    """Over every descendant, at any depth."""

    items: int
    done_items: int = Field(alias="doneItems")
    points: float
    done_points: float = Field(alias="donePoints")


RelationType = Literal["blocks", "blocked_by", "relates_to", "duplicates", "duplicated_by"]


class RelatedTask(BaseModel):
    id: str = Field(alias="$id")
    key: str
    title: str
    status: str


class RelationRead(BaseModel):
    """A relation as the item it is read through sees it."""

    id: str = Field(alias="$id")
    type: RelationType
    task: RelatedTask
    created_at: str = Field(alias="$createdAt", json_schema_extra={"format": "date-time"})


class TaskDetail(TaskRead):
    """One work item: with its comments, time logs, place in the hierarchy and relations."""

    comments: list[CommentRead]
    time_logs: list[TimeLogRead] = Field(alias="timeLogs")
    parent: ParentSummary | None
    progress: Progress
    relations: list[RelationRead]
    blocked: bool = Field(description="An item that blocks this one is not DONE.")


class RelationCreate(RequestModel):
    type: RelationType
    target_id: Ref = Field(alias="targetId", description="The other item's `$id` or key.")


_SORT_FIELD = f"-?({'|'.join(SORT_FIELDS)}|fields\\.[a-z][a-zA-Z0-9]{{0,31}})"
SORT_PATTERN = f"^{_SORT_FIELD}(,{_SORT_FIELD})*$"


def _with_filters(model: type[M]) -> type[M]:
    """A query model with a parameter for each filter of the registry (`fields.FILTERS`)."""
    extra = {filter_.attr: _query_field(f, filter_) for f, filter_ in fields.FILTERS}
    return _extended(model, extra)


_COMPARED: dict[str, Any] = {"day": DateIn, "stamp": DateTimeIn, "bool": bool, "real": float}


def _query_field(f: fields.ItemField, filter_: fields.Filter) -> tuple[Any, Any]:
    alias = filter_.param if filter_.param != filter_.attr else None
    value = str if filter_.operator == "in" else _COMPARED[f.kind]
    return Optional[value], Field(None, alias=alias, description=filter_.description)  # noqa: UP045


@_with_filters
class TaskQuery(PageQuery):
    """The filters and order of `GET /tasks`; `fields.<key>` parameters (custom fields) are
    kept as extras (`custom_filters`)."""

    model_config = ConfigDict(frozen=True, extra="allow")
    PARAMETER_PREFIXES = ("fields.",)

    workspace_id: str | None = Field(
        None, alias="workspaceId", min_length=1, description="This or `projectId` is required."
    )
    project_id: str | None = Field(
        None,
        alias="projectId",
        min_length=1,
        description="This or `workspaceId` is required (alone, the workspace is the project's).",
    )
    sprint_id: str | None = Field(
        None, alias="sprintId", description="A sprint's `$id`, or `none`: backlog."
    )
    assignee_id: str | None = Field(
        None, alias="assigneeId", description="A user's `$id`, or `none`: unassigned items."
    )
    labels: str | None = Field(None, description="Comma-separated; an item must carry all of them.")
    search: str | None = Field(
        None, max_length=255, description="Case-insensitive, in title, key and description."
    )
    sort: str | None = Field(
        None,
        max_length=200,
        json_schema_extra={"pattern": SORT_PATTERN},  # (checked by `parse_sort`: invalid_value)
        description="Comma-separated fields, `-` for descending: "
        + ", ".join(f"`{f}`" for f in SORT_FIELDS)
        + " or `fields.<key>` (a custom field: a select by its options' order)"
        " (default `position`). Ties go to `position`, then `$id`; empty due dates, "
        "points and custom fields come last both ways; `-priority` puts URGENT first.",
    )
    parent_id: str | None = Field(
        None,
        alias="parentId",
        description="A parent's `$id` or key (its direct children), or `none`: no parent.",
    )
    ancestor_id: str | None = Field(
        None, alias="ancestorId", description="An item's `$id` or key: every item below it."
    )
    q: str | None = Field(
        None,
        max_length=4_000,
        description="A query (JQL-like: `status = DONE AND assignee = currentUser() ORDER BY "
        "priority DESC`; see the README's Queries), combined with the other filters (AND). "
        "Its `ORDER BY` replaces `sort` (both: 400 on `sort`).",
    )

    def custom_filters(self) -> dict[str, list[str]]:
        """`fields.<key>=v1,v2`: the values asked for, by key."""
        found = {}
        for name, value in (self.model_extra or {}).items():
            if name.startswith("fields.") and isinstance(value, str):
                found[name.removeprefix("fields.")] = [
                    v.strip() for v in value.split(",") if v.strip()
                ]
        return found

    def matches(self) -> list[fields.Match]:
        """The registry's filters this query sets, with their values (`in`'s checked
        against the field's values, if it has a fixed set)."""
        found = []
        for f, filter_ in fields.FILTERS:
            if filter_.operator == "in":
                value: Any = self.listed(filter_.attr, f.enum or None)
                if not value:
                    continue
                if f.pattern and (bad := [v for v in value if not re.match(f.pattern, v)]):
                    raise InvalidRequest(
                        filter_.param, "invalid_value", f"{filter_.param}: not a name: {bad}."
                    )
            elif (value := getattr(self, filter_.attr)) is None:
                continue
            found.append(fields.Match(f, filter_, value))
        return found


class ItemQuery(QueryModel):
    """What a work item's own routes take besides its `$id` or key."""

    workspace_id: str | None = Field(
        None,
        alias="workspaceId",
        description="Where to look up a key that exists in several of your workspaces "
        "(otherwise the newest match).",
    )


class FilterDescriptor(BaseModel):
    param: str = Field(description="The `GET /tasks` query parameter.")
    operator: fields.Operator = Field(description="`in`: comma-separated, any of them.")
    description: str


class FieldDescriptor(BaseModel):
    """One field of the registry, as a client that builds its forms from data reads it."""

    name: str = Field(description="As items show it.")
    label: str
    kind: fields.Kind
    settable: bool = Field(description="Create, PATCH and bulk update take it.")
    nullable: bool = Field(description="May be empty (null).")
    enum: list[str] | None = Field(description="Its values, in their order, if fixed.")
    filters: list[FilterDescriptor]
    sort: str | None = Field(description="Its name in `sort=`, if lists sort by it.")
    exported: bool
    description: str | None


class WorkItemMeta(BaseModel):
    fields: list[FieldDescriptor]
    event_types: list[str] = Field(alias="eventTypes", description="What the stream sends.")

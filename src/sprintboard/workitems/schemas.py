from datetime import date
from typing import Annotated, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from sprintboard.schemas import (
    DateIn,
    DateTimeIn,
    LongText,
    Name,
    PageQuery,
    QueryModel,
    RequestModel,
    Timestamps,
    at_most,
)
from sprintboard.workitems.ordering import SORT_FIELDS

Status = Literal["BACKLOG", "TODO", "IN_PROGRESS", "IN_REVIEW", "DONE"]
Priority = Literal["LOW", "MEDIUM", "HIGH", "URGENT"]
# No pattern here: the contract answers any type that is not known with `invalid_value`
# (service._check_type), also for names no type could have, like `bug`.
TypeName = Annotated[
    str, Field(description="TASK, BUG, STORY, EPIC or a custom type of the workspace.")
]
Label = Annotated[str, Field(min_length=1, max_length=64), at_most(64)]
Labels = Annotated[list[Label], Field(max_length=50)]
AssigneeIds = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=64), at_most(64)]], Field(max_length=50)
]
Amount = Annotated[float, Field(ge=0, le=100_000)]
Position = Annotated[float, Field(ge=-1e15, le=1e15)]
Ref = Annotated[str, Field(min_length=1, max_length=64), at_most(64)]

# Fields that PATCH and create share. In an update model, a field defaulting to None that is
# not `| None` refuses an explicit null (defaults are not validated): absent means unchanged.


class TaskCreate(RequestModel):
    name: Name | None = Field(None, description="The title (`title` is accepted too).")
    title: Name | None = None
    workspace_id: Ref = Field(alias="workspaceId")
    project_id: Ref = Field(alias="projectId")
    type: TypeName = "TASK"
    status: Status | None = Field(
        None, description="Defaults to TODO in a sprint, BACKLOG otherwise."
    )
    priority: Priority = "MEDIUM"
    description: LongText | None = None
    assignee_ids: AssigneeIds = Field(default_factory=list, alias="assigneeIds")
    labels: Labels = Field(default_factory=list)
    due_date: DateIn | None = Field(None, alias="dueDate")
    estimated_hours: Amount | None = Field(None, alias="estimatedHours")
    story_points: Amount | None = Field(None, alias="storyPoints")
    flagged: bool = False
    sprint_id: Ref | None = Field(
        None,
        alias="sprintId",
        description="A sprint of the project; null for the backlog; absent: the active sprint.",
    )
    position: Position | None = Field(None, description="Defaults to the end of the project.")
    parent_id: Ref | None = Field(
        None, alias="parentId", description="The parent's `$id` or key (same workspace)."
    )


class TaskUpdate(RequestModel):
    name: Name = None  # type: ignore[assignment]
    title: Name = None  # type: ignore[assignment]
    type: TypeName = None  # type: ignore[assignment]
    status: Status = None  # type: ignore[assignment]
    priority: Priority = None  # type: ignore[assignment]
    description: LongText | None = None
    assignee_ids: AssigneeIds | None = Field(None, alias="assigneeIds")
    labels: Labels | None = None
    due_date: DateIn | None = Field(None, alias="dueDate")
    estimated_hours: Amount | None = Field(None, alias="estimatedHours")
    story_points: Amount | None = Field(None, alias="storyPoints")
    flagged: bool = None  # type: ignore[assignment]
    sprint_id: Ref | None = Field(None, alias="sprintId")
    position: Position = None  # type: ignore[assignment]
    parent_id: Ref | None = Field(
        None, alias="parentId", description="The parent's `$id` or key; null: none."
    )

    @property
    def moving_to(self) -> list[str]:
        """The sprint the change moves the item to, if any (locked before the item is)."""
        return [self.sprint_id] if self.sprint_id is not None else []


class BulkEntry(TaskUpdate):
    """One item of a bulk update, named by `$id` or `key`, with any field PATCH takes."""

    # Exactly one of the two names the item (the document says so with `oneOf`); an
    # explicit null is refused, as for PATCH's fields.
    model_config = ConfigDict(
        json_schema_extra={"oneOf": [{"required": ["$id"]}, {"required": ["key"]}]}
    )

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


class TaskRead(Timestamps):
    id: str = Field(alias="$id")
    key: str
    title: str
    type: str
    status: Status
    priority: Priority
    description: str | None
    assignee_ids: list[str] = Field(alias="assigneeIds")
    labels: list[str]
    due_date: date | None = Field(alias="dueDate")
    estimated_hours: float | None = Field(alias="estimatedHours")
    story_points: float | None = Field(alias="storyPoints")
    flagged: bool
    sprint_id: str | None = Field(alias="sprintId")
    project_id: str = Field(alias="projectId")
    workspace_id: str = Field(alias="workspaceId")
    position: float
    comment_count: int = Field(alias="commentCount")
    logged_hours: float = Field(alias="loggedHours")
    parent_id: str | None = Field(alias="parentId")
    child_count: int = Field(alias="childCount", description="Direct children.")
    project: ProjectSummary
    assignees: list[UserSummary]


class ParentSummary(BaseModel):
    id: str = Field(alias="$id")
    key: str
    title: str
    type: str
    status: Status


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
    status: Status


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


_SORT_FIELD = f"-?({'|'.join(SORT_FIELDS)})"
SORT_PATTERN = f"^{_SORT_FIELD}(,{_SORT_FIELD})*$"


class TaskQuery(PageQuery):
    """The filters and order of `GET /tasks`."""

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
    status: str | None = Field(None, description="Comma-separated statuses.")
    priority: str | None = Field(None, description="Comma-separated priorities.")
    type: str | None = Field(None, description="Comma-separated types.")
    assignee_id: str | None = Field(
        None, alias="assigneeId", description="A user's `$id`, or `none`: unassigned items."
    )
    labels: str | None = Field(None, description="Comma-separated; an item must carry all of them.")
    due_date: DateIn | None = Field(None, alias="dueDate", description="YYYY-MM-DD")
    due_before: DateIn | None = Field(
        None, alias="dueBefore", description="YYYY-MM-DD: due before that day (exclusive)."
    )
    due_after: DateIn | None = Field(
        None, alias="dueAfter", description="YYYY-MM-DD: due after that day (exclusive)."
    )
    flagged: bool | None = None
    search: str | None = Field(
        None, max_length=255, description="Case-insensitive, in title, key and description."
    )
    updated_since: DateTimeIn | None = Field(
        None, alias="updatedSince", description="Only items changed at or after this moment."
    )
    sort: str | None = Field(
        None,
        max_length=200,
        json_schema_extra={"pattern": SORT_PATTERN},  # (checked by `parse_sort`: invalid_value)
        description="Comma-separated fields, `-` for descending: "
        + ", ".join(f"`{f}`" for f in SORT_FIELDS)
        + " (default `position`). Ties go to `position`, then `$id`; empty due dates and "
        "points come last both ways; `-priority` puts URGENT first.",
    )
    parent_id: str | None = Field(
        None,
        alias="parentId",
        description="A parent's `$id` or key (its direct children), or `none`: no parent.",
    )
    ancestor_id: str | None = Field(
        None, alias="ancestorId", description="An item's `$id` or key: every item below it."
    )


class ItemQuery(QueryModel):
    """What a work item's own routes take besides its `$id` or key."""

    workspace_id: str | None = Field(
        None,
        alias="workspaceId",
        description="Where to look up a key that exists in several of your workspaces "
        "(otherwise the newest match).",
    )

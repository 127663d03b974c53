from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import Field

from sprintboard.models import Sprint
from sprintboard.responses import iso
from sprintboard.schemas import DateTimeIn, Name, PageQuery, RequestModel, Timestamps, at_most
from sprintboard.workitems.schemas import Position, Ref, TaskRead

SprintStatus = Literal["PLANNED", "ACTIVE", "COMPLETED"]
Goal = Annotated[str, Field(max_length=4_000), at_most(4_000)]


class SprintQuery(PageQuery):
    """The filters of `GET /sprints`."""

    workspace_id: str | None = Field(
        None, alias="workspaceId", description="This or `projectId` is required."
    )
    project_id: str | None = Field(
        None, alias="projectId", description="This or `workspaceId` is required."
    )
    status: str | None = Field(None, description="Comma-separated statuses.")


class SprintCreate(RequestModel):
    server_owned = frozenset({"position"})

    name: Name
    workspace_id: Ref = Field(alias="workspaceId")
    project_id: Ref = Field(alias="projectId")
    start_date: DateTimeIn | None = Field(None, alias="startDate")
    end_date: DateTimeIn | None = Field(None, alias="endDate")
    goal: Goal | None = None
    status: Literal["PLANNED"] = Field(
        "PLANNED", description="New sprints are PLANNED; start them with PATCH."
    )


class MoveToSprint(RequestModel):
    sprint_id: Ref = Field(alias="sprintId")


class UnfinishedDetails(RequestModel):
    move_to: Literal["backlog"] | MoveToSprint = Field("backlog", alias="moveTo")


class SprintUpdate(RequestModel):
    # Absent means "unchanged"; an explicit null is refused where the field has no `| None`.
    name: Name = None  # type: ignore[assignment]
    start_date: DateTimeIn | None = Field(None, alias="startDate")
    end_date: DateTimeIn | None = Field(None, alias="endDate")
    goal: Goal | None = None
    position: Position = None  # type: ignore[assignment]
    status: SprintStatus = Field(
        None,  # type: ignore[arg-type]
        description="ACTIVE starts (SPRINT_START), COMPLETED completes (SPRINT_COMPLETE);"
        " PLANNED, which no transition leads to, needs SPRINT_CREATE.",
    )
    unfinished_details: UnfinishedDetails | None = Field(
        None,
        alias="unfinishedDetails",
        description="With status COMPLETED: where unfinished items go (default: the backlog).",
    )
    workspace_id: Ref | None = Field(
        None, alias="workspaceId", description="Only with status COMPLETED: the sprint's own."
    )
    project_id: Ref | None = Field(
        None, alias="projectId", description="Only with status COMPLETED: the sprint's own."
    )


class SprintComplete(RequestModel):
    workspace_id: Ref | None = Field(None, alias="workspaceId")
    project_id: Ref | None = Field(None, alias="projectId")
    unfinished_details: UnfinishedDetails | None = Field(None, alias="unfinishedDetails")


class ReorderEntry(RequestModel):
    id: Ref = Field(alias="$id")
    position: Position


class SprintReorder(RequestModel):
    sprints: Annotated[list[ReorderEntry], Field(min_length=1, max_length=500)]


class SprintRead(Timestamps):
    id: str = Field(alias="$id")
    name: str
    status: SprintStatus
    start_date: datetime | None = Field(alias="startDate")
    end_date: datetime | None = Field(alias="endDate")
    completed_at: datetime | None = Field(alias="completedAt")
    goal: str | None
    position: float
    workspace_id: str = Field(alias="workspaceId")
    project_id: str = Field(alias="projectId")
    work_item_count: int = Field(alias="workItemCount")
    total_points: float = Field(alias="totalPoints", description="Sum of `storyPoints`.")
    completed_points: float = Field(
        alias="completedPoints", description="Sum of `storyPoints` of DONE items."
    )


class SprintCompleted(SprintRead):
    moved_item_count: int = Field(alias="movedItemCount")


class SprintDetail(SprintRead):
    work_items: list[TaskRead] = Field(alias="workItems")


def sprint_json(sprint: Sprint) -> dict[str, Any]:
    """A sprint's own fields (the form events carry)."""
    return {
        "$id": sprint.id,
        "name": sprint.name,
        "status": sprint.status,
        "startDate": iso(sprint.start_date),
        "endDate": iso(sprint.end_date),
        "completedAt": iso(sprint.completed_at),
        "goal": sprint.goal,
        "position": sprint.position,
        "workspaceId": sprint.workspace_id,
        "projectId": sprint.project_id,
        "$createdAt": iso(sprint.created_at),
        "$updatedAt": iso(sprint.updated_at),
    }

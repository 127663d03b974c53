from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from sprintboard.models import Sprint
from sprintboard.responses import iso
from sprintboard.schemas import (
    DateTimeIn,
    Name,
    PageQuery,
    QueryModel,
    RequestModel,
    Timestamps,
    at_most,
)
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


class VelocityQuery(QueryModel):
    limit: int = Field(7, ge=1, le=50, description="Completed sprints to list (at most 50).")


class Tally(BaseModel):
    items: int
    points: float


class CarriedOver(Tally):
    to: Literal["backlog"] | MoveToSprint | None = Field(
        description='"backlog" or {"sprintId"}; null while the sprint is ACTIVE.'
    )


class ScopeChange(BaseModel):
    at: str = Field(json_schema_extra={"format": "date-time"})
    task_id: str = Field(alias="taskId")
    key: str
    kind: Literal["added", "removed", "estimate_changed"]
    points: float = Field(description="The change in scope (+/-).")


class BurndownDay(BaseModel):
    date: str = Field(json_schema_extra={"format": "date"})
    remaining_points: float = Field(alias="remainingPoints")
    remaining_items: int = Field(alias="remainingItems")
    scope_points: float = Field(alias="scopePoints")


class IdealDay(BaseModel):
    date: str = Field(json_schema_extra={"format": "date"})
    points: float


class SprintReportRead(BaseModel):
    sprint_id: str = Field(alias="sprintId")
    status: SprintStatus
    start_date: datetime | None = Field(alias="startDate")
    end_date: datetime | None = Field(alias="endDate")
    started_at: datetime | None = Field(alias="startedAt")
    completed_at: datetime | None = Field(alias="completedAt")
    committed: Tally = Field(description="In the sprint when it started, at their estimates then.")
    added: Tally = Field(description="Joined after the start (points when they joined).")
    removed: Tally = Field(description="Left during the sprint (moved out, deleted).")
    completed: Tally = Field(description="DONE at completion (now, while ACTIVE).")
    carried_over: CarriedOver = Field(alias="carriedOver")
    scope_changes: list[ScopeChange] = Field(alias="scopeChanges")
    burndown: list[BurndownDay]
    ideal: list[IdealDay]


class VelocitySprint(BaseModel):
    sprint_id: str = Field(alias="sprintId")
    name: str
    completed_at: datetime = Field(alias="completedAt")
    committed_points: float = Field(alias="committedPoints")
    completed_points: float = Field(alias="completedPoints")
    completed_items: int = Field(alias="completedItems")


class VelocityRead(BaseModel):
    sprints: list[VelocitySprint]
    average_completed_points: float | None = Field(alias="averageCompletedPoints")

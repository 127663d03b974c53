"""Sprints' rows: the one place that reads and writes them, but for the tenant lookup that
loads and locks one for a change (`access.access_sprint`, `access.access_sprints`).

Sprints are few and change seldom, so they are ORM records (`models.Sprint`), changed in
place by `sprints.service`; what is read with them (a sprint's figures, a list page) comes
as labelled columns read by name. The sprints an item may move to are read by
`access.open_sprints`, below both sprints and work items, which create and move into them.
"""

from collections.abc import Sequence
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import case, func, select
from sqlalchemy.orm import Session

from sprintboard.access import for_change
from sprintboard.cursors import ListPage, Window
from sprintboard.models import Project, Sprint, WorkItem, new_id


class Figures(NamedTuple):
    """A sprint's three figures: its items, their points, the points of those DONE."""

    item_count: int
    total_points: float
    completed_points: float


def _figure_columns() -> tuple[Any, Any, Any]:
    """A sprint's figures, as columns over its items, labelled as `Figures` names them."""
    points = func.coalesce(WorkItem.story_points, 0)
    done = func.coalesce(func.sum(case((WorkItem.status_category == "DONE", points), else_=0)), 0)
    return (
        # (`count(*)`: the figures index holds no `id`, and needs none to count.)
        func.count().label("item_count"),
        func.coalesce(func.sum(points), 0).label("total_points"),
        done.label("completed_points"),
    )


def _figures_of_each() -> list[Any]:
    """`_figure_columns`, each a subquery of one sprint's items (the row's `Sprint`)."""
    return [
        select(column.element)
        .where(WorkItem.sprint_id == Sprint.id)
        .scalar_subquery()
        .label(column.name)
        for column in _figure_columns()
    ]


def _figures(row: Any) -> Figures:
    """The figures in a row with `_figure_columns`, by name."""
    return Figures(int(row.item_count), row.total_points, row.completed_points)


def figures_of(session: Session, sprint_id: str) -> Figures:
    return _figures(
        session.execute(select(*_figure_columns()).where(WorkItem.sprint_id == sprint_id)).one()
    )


def page(
    session: Session,
    *,
    workspace_id: str,
    project_id: str | None,
    statuses: Sequence[str],
    window: Window,
) -> ListPage:
    """Sprints in `position` order, each with its figures (in the same statement), as
    `(Sprint, Figures)` pairs.

    Each figure is a subquery of the sprint's own items, read from the figures index alone
    (`ix_work_items_sprint_figures`): a page costs its sprints' index entries. (A join
    grouped by sprint let PostgreSQL hash the whole `work_items` table, every workspace's,
    for the board's first read.)"""
    criteria = [Sprint.workspace_id == workspace_id]
    if project_id is not None:
        criteria.append(Sprint.project_id == project_id)
    if statuses:
        criteria.append(Sprint.status.in_(statuses))
    rows, total, next_cursor = window.page(
        session,
        select(Sprint, *_figures_of_each()).where(*criteria),
        Sprint.position,
        Sprint.created_at,
        Sprint.id,
        count=select(func.count()).select_from(Sprint).where(*criteria),
    )
    return ListPage([(row.Sprint, _figures(row)) for row in rows], total, next_cursor)


def project_for_create(session: Session, *, workspace_id: str, project_id: str) -> Project | None:
    """The workspace's project a sprint is created in, locked for the change: creates in a
    project are placed one at a time, each after the last (`create`)."""
    project: Project | None = session.scalar(
        for_change(
            session,
            select(Project).where(Project.id == project_id, Project.workspace_id == workspace_id),
            Project,
        )
    )
    return project


def create(
    session: Session,
    *,
    project: Project,
    name: str,
    goal: str | None,
    start_date: datetime | None,
    end_date: datetime | None,
) -> Sprint:
    """A new PLANNED sprint at the end of the project's order (after its last sprint: the
    project is locked, `project_for_create`)."""
    last = session.scalar(select(func.max(Sprint.position)).where(Sprint.project_id == project.id))
    sprint = Sprint(
        id=new_id(),
        workspace_id=project.workspace_id,
        project_id=project.id,
        name=name,
        status="PLANNED",
        goal=goal,
        start_date=start_date,
        end_date=end_date,
        position=(last or 0.0) + 1.0,
    )
    session.add(sprint)
    return sprint


def other_active(session: Session, sprint: Sprint) -> str | None:
    """The `$id` of the project's ACTIVE sprint other than `sprint`, if there is one."""
    return session.scalar(
        select(Sprint.id).where(
            Sprint.project_id == sprint.project_id,
            Sprint.status == "ACTIVE",
            Sprint.id != sprint.id,
        )
    )


def of_project(session: Session, project_id: str) -> Sequence[Sprint]:
    """The project's sprints in `position` order (what its delete tells feed readers of)."""
    return session.scalars(
        select(Sprint).where(Sprint.project_id == project_id).order_by(Sprint.position, Sprint.id)
    ).all()

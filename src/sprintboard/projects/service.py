"""Projects: the containers of work items and sprints, each with a key (`WEB`) of its own."""

import re
from collections.abc import Sequence

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from sprintboard.access import for_change
from sprintboard.errors import Conflict
from sprintboard.models import Project, Workspace, touched


def derive_key(name: str) -> str:
    """`Web Platform` → `WP`, `Website` → `WEBS`: initials of several words, else a prefix."""
    words = [w for w in re.split(r"[^A-Za-z0-9]+", name.upper()) if w]
    words = [w for w in words if w[0].isalpha()] or [f"P{w}" for w in words] or ["PRJ"]
    initials = "".join(w[0] for w in words)[:10]
    return initials if len(initials) >= 2 else (words[0][:4] if len(words[0]) >= 2 else "PRJ")


def _free_key(session: Session, workspace_id: str, base: str) -> str:
    """`base`, or the first of `base2`, `base3`... not taken in the workspace: the stem is cut
    to keep the key within 10 characters (`ABCDEFGH99`, `ABCDEFG100`)."""
    taken = set(
        session.scalars(
            select(Project.key).where(
                Project.workspace_id == workspace_id, Project.key.like(f"{base[:2]}%")
            )
        )
    )
    candidate, suffix = base, 1
    while candidate in taken:
        suffix += 1
        candidate = f"{base[: min(8, 10 - len(str(suffix)))]}{suffix}"
    return candidate


def create_project(
    session: Session, *, workspace_id: str, name: str, key: str | None, description: str | None
) -> Project:
    if key is None:
        # Creates that derive a key take turns (the workspace row, on PostgreSQL): two at
        # once would pick the same free key, and the second fail on it.
        session.execute(
            for_change(session, select(Workspace.id).where(Workspace.id == workspace_id), Workspace)
        )
        key = _free_key(session, workspace_id, derive_key(name))
    elif session.scalar(
        select(Project.id).where(Project.workspace_id == workspace_id, Project.key == key)
    ):
        raise Conflict("duplicate_key", f"The key {key} is taken in this workspace.", key=key)
    project = Project(workspace_id=workspace_id, name=name, key=key, description=description)
    session.add(project)
    try:
        with session.begin_nested():
            session.flush()
    except IntegrityError:
        raise Conflict("duplicate_key", f"The key {key} is taken in this workspace.") from None
    return project


def list_projects(
    session: Session, *, workspace_id: str, limit: int, offset: int
) -> tuple[Sequence[Project], int]:
    projects = session.scalars(
        select(Project)
        .where(Project.workspace_id == workspace_id)
        .order_by(Project.created_at, Project.id)
        .limit(limit)
        .offset(offset)
    ).all()
    total = session.scalar(select(func.count()).where(Project.workspace_id == workspace_id))
    return projects, total or 0


def update_project(
    project: Project, *, name: str | None, description: str | None, fields: set[str]
) -> Project:
    changed = False
    if "name" in fields and name is not None and name != project.name:
        project.name, changed = name, True
    if "description" in fields and description != project.description:
        project.description, changed = description, True
    if changed:
        project.updated_at = touched(project.updated_at)
    return project


def delete_project(session: Session, project: Project) -> None:
    """Deletes the project with its sprints and work items (through foreign keys)."""
    session.delete(project)

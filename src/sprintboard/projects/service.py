"""Projects: the containers of work items and sprints, each with a key (`WEB`) of its own."""

import re
from collections.abc import Sequence

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from sprintboard.errors import Conflict
from sprintboard.models import Project, utcnow


def derive_key(name: str) -> str:
    """`Web Platform` → `WP`, `Website` → `WEBS`: initials of several words, else a prefix."""
    words = [w for w in re.split(r"[^A-Za-z0-9]+", name.upper()) if w]
    words = [w for w in words if w[0].isalpha()] or [f"P{w}" for w in words] or ["PRJ"]
    initials = "".join(w[0] for w in words)[:10]
    return initials if len(initials) >= 2 else (words[0][:4] if len(words[0]) >= 2 else "PRJ")


def _free_key(session: Session, workspace_id: str, base: str) -> str:
    taken = set(
        session.scalars(
            select(Project.key).where(
                Project.workspace_id == workspace_id, Project.key.like(f"{base[:8]}%")
            )
        )
    )
    if base not in taken:
        return base
    suffix = 2
    while f"{base[:8]}{suffix}" in taken:
        suffix += 1
    return f"{base[:8]}{suffix}"


def create_project(
    session: Session, *, workspace_id: str, name: str, key: str | None, description: str | None
) -> Project:
    if key is None:
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
        project.updated_at = utcnow()
    return project


def delete_project(session: Session, project: Project) -> None:
    """Deletes the project with its sprints and work items (through foreign keys)."""
    session.delete(project)

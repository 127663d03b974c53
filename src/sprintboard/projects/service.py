"""Projects: the containers of work items and sprints, each with a key (`WEB`) of its own."""

import re

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from sprintboard import audit
from sprintboard.access import Caller, lock_workspace
from sprintboard.cursors import ListPage, Window
from sprintboard.errors import Conflict
from sprintboard.events import service as events
from sprintboard.models import Project, touched
from sprintboard.sprints import history as sprint_history
from sprintboard.sprints import store as sprint_store
from sprintboard.sprints.schemas import sprint_json
from sprintboard.workflows.service import add_built_in
from sprintboard.workitems import store as item_store
from sprintboard.workitems.reads import event_form
from sprintboard.workitems.relations import delete_relations_of
from sprintboard.workitems.service import detach_children


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
    session: Session,
    *,
    workspace_id: str,
    name: str,
    key: str | None,
    description: str | None,
    actor: Caller,
) -> Project:
    if key is None:
        # Creates that derive a key take turns: two at once would pick the same free key,
        # and the second fail on it.
        lock_workspace(session, workspace_id)
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
    add_built_in(session, project.id)
    _audit(session, "project.created", actor, project)
    return project


def _audit(session: Session, action: str, actor: Caller, project: Project) -> None:
    audit.record(
        session,
        action,
        actor=actor,
        target=audit.Target("project", project.id),
        workspace_id=project.workspace_id,
        details={"key": project.key, "name": project.name},
    )


def list_projects(session: Session, *, workspace_id: str, window: Window) -> ListPage:
    query = select(Project).where(Project.workspace_id == workspace_id)
    return window.page(session, query, Project.created_at, Project.id)


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


def delete_project(session: Session, project: Project, *, caller: Caller) -> None:
    """Deletes the project with its work items (their comments and time logs with them) and
    its sprints. Each item, sprint and relation of an item leaves a `task.deleted`,
    `sprint.deleted` or `relation.deleted` event, as when deleted one by one, so that feed
    readers and webhooks learn that it is gone."""
    # Children in other projects stay, without a parent, as when their parent is deleted.
    detach_children(
        session,
        workspace_id=project.workspace_id,
        actor_id=caller.user_id,
        condition=item_store.CHILDREN_ELSEWHERE,
        project_id=project.id,
    )
    delete_relations_of(
        session,
        workspace_id=project.workspace_id,
        actor_id=caller.user_id,
        condition="project_id = :project_id",
        project_id=project.id,
    )
    items = item_store.delete_project_items(session, project.id)
    sprints = sprint_store.of_project(session, project.id)
    gone = [("task.deleted", item["$id"], {"workItem": event_form(item)}) for item in items]
    gone += [("sprint.deleted", sprint.id, {"sprint": sprint_json(sprint)}) for sprint in sprints]
    events.record_many(
        session,
        [
            {
                "workspace_id": project.workspace_id,
                "type": type,
                "subject_id": subject_id,
                "actor_id": caller.user_id,
                "payload": payload,
            }
            for type, subject_id, payload in gone
        ],
    )
    sprint_history.forget(session, scope="project_id", record_id=project.id)
    _audit(session, "project.deleted", caller, project)
    session.delete(project)

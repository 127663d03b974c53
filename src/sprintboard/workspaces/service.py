"""Workspaces, their members and their custom work item types."""

from collections.abc import Callable

from sqlalchemy import delete, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from sprintboard import audit
from sprintboard.access import (
    Caller,
    Role,
    WorkspaceAccess,
    for_change,
    lock_for_delete,
    lock_workspace,
    visible_workspace_ids,
)
from sprintboard.concurrency import check_if_match, stamp_version
from sprintboard.cursors import ListPage, Window
from sprintboard.errors import Conflict, InvalidRequest, NotFound
from sprintboard.hooks import Hooks
from sprintboard.models import (
    User,
    WorkItem,
    WorkItemType,
    Workspace,
    WorkspaceMember,
    touched,
)

BUILTIN_TYPES = ("TASK", "BUG", "STORY", "EPIC")


def create_workspace(
    session: Session, *, caller: Caller, name: str, description: str | None
) -> Workspace:
    """A new workspace, with the caller as its ADMIN."""
    workspace = Workspace(name=name, description=description)
    session.add(workspace)
    session.flush()
    session.add(WorkspaceMember(workspace_id=workspace.id, user_id=caller.user_id, role=Role.ADMIN))
    _audit_workspace(session, "workspace.created", caller, workspace)
    return workspace


def _audit_workspace(session: Session, action: str, actor: Caller, workspace: Workspace) -> None:
    audit.record(
        session,
        action,
        actor=actor,
        target=audit.Target("workspace", workspace.id),
        workspace_id=workspace.id,
        details={"name": workspace.name},
    )


def list_workspaces(session: Session, *, caller: Caller, window: Window) -> ListPage:
    query = select(Workspace).where(Workspace.id.in_(visible_workspace_ids(caller)))
    return window.page(session, query, Workspace.created_at, Workspace.id)


def update_workspace(
    workspace: Workspace, *, name: str | None, description: str | None, fields: set[str]
) -> Workspace:
    changed = False
    if "name" in fields and name != workspace.name:
        workspace.name, changed = name or workspace.name, True
    if "description" in fields and description != workspace.description:
        workspace.description, changed = description, True
    if changed:
        workspace.updated_at = touched(workspace.updated_at)
    return workspace


BEFORE_DELETE: Hooks[Callable[[Session, str], None]] = Hooks("before a workspace's delete")
"""Called with the workspace's id once all it holds is locked, before it goes: for rows that
keep no foreign key to it (sprint history). Registered by the composition root (`wiring.py`)."""


def delete_workspace(session: Session, workspace: Workspace, *, actor: Caller) -> None:
    """Deletes the workspace and, through foreign keys, everything in it (all it holds
    locked first, `access.lock_for_delete`); its audit entries stay."""
    _audit_workspace(session, "workspace.deleted", actor, workspace)
    lock_for_delete(session, Workspace, workspace.id)
    for hook in BEFORE_DELETE:
        hook(session, workspace.id)
    session.delete(workspace)


def list_members(session: Session, *, workspace_id: str, window: Window) -> ListPage:
    """(member, user) pairs."""
    query = (
        select(WorkspaceMember, User)
        .join(User, User.id == WorkspaceMember.user_id)
        .where(WorkspaceMember.workspace_id == workspace_id)
    )
    return window.page(session, query, WorkspaceMember.created_at, WorkspaceMember.id)


def add_member(
    session: Session, *, workspace_id: str, user_id: str, role: Role, actor: Caller
) -> tuple[WorkspaceMember, User]:
    user = session.get(User, user_id)
    if user is None:
        raise InvalidRequest("userId", "not_found", "userId: no such user.")
    if _find_member(session, workspace_id, user_id) is not None:
        raise Conflict("duplicate_member", "This user is already a member of the workspace.")
    member = WorkspaceMember(workspace_id=workspace_id, user_id=user_id, role=role)
    session.add(member)
    try:
        with session.begin_nested():
            session.flush()
    except IntegrityError:
        raise Conflict("duplicate_member", "This user is already a member.") from None
    _audit_member(session, "member.added", actor, workspace_id, user_id, role=str(role))
    return member, user


def _audit_member(
    session: Session, action: str, actor: Caller, workspace_id: str, user_id: str, **details: str
) -> None:
    """A member's entry names the user: `target` is `{"kind": "user", "$id": <user>}`."""
    audit.record(
        session,
        action,
        actor=actor,
        target=audit.Target("user", user_id),
        workspace_id=workspace_id,
        details=details,
    )


def change_member_role(
    session: Session,
    *,
    workspace_id: str,
    user_id: str,
    role: Role,
    actor: Caller,
    if_match: str | None = None,
) -> tuple[WorkspaceMember, User]:
    lock_workspace(session, workspace_id)  # ("one ADMIN stays": counted one at a time)
    member, user = _get_member(session, workspace_id, user_id)
    check_if_match(if_match, member.id, stamp_version(member.updated_at))
    if member.role == Role.ADMIN and role != Role.ADMIN:
        _ensure_another_admin(session, workspace_id)
    if member.role != role:
        _audit_member(
            session, "member.updated", actor, workspace_id, user_id, role=str(role), was=member.role
        )
        member.role = role
        member.updated_at = touched(member.updated_at)
    return member, user


def remove_member(
    session: Session,
    *,
    workspace_id: str,
    user_id: str,
    actor: Caller,
    if_match: str | None = None,
) -> WorkspaceMember:
    lock_workspace(session, workspace_id)  # ("one ADMIN stays": counted one at a time)
    member, _ = _get_member(session, workspace_id, user_id)
    check_if_match(if_match, member.id, stamp_version(member.updated_at))
    if member.role == Role.ADMIN:
        _ensure_another_admin(session, workspace_id)
    session.execute(delete(WorkspaceMember).where(WorkspaceMember.id == member.id))
    _audit_member(session, "member.removed", actor, workspace_id, user_id, role=member.role)
    return member


def _find_member(session: Session, workspace_id: str, user_id: str) -> WorkspaceMember | None:
    return session.scalar(
        select(WorkspaceMember).where(
            WorkspaceMember.workspace_id == workspace_id, WorkspaceMember.user_id == user_id
        )
    )


def _get_member(session: Session, workspace_id: str, user_id: str) -> tuple[WorkspaceMember, User]:
    row = session.execute(
        select(WorkspaceMember, User)
        .join(User, User.id == WorkspaceMember.user_id)
        .where(WorkspaceMember.workspace_id == workspace_id, WorkspaceMember.user_id == user_id)
        .with_for_update(of=WorkspaceMember)
    ).first()
    if row is None:
        raise NotFound("Member")
    return row.WorkspaceMember, row.User


def _ensure_another_admin(session: Session, workspace_id: str) -> None:
    admins = session.scalar(
        select(func.count()).where(
            WorkspaceMember.workspace_id == workspace_id, WorkspaceMember.role == Role.ADMIN
        )
    )
    if (admins or 0) <= 1:
        raise Conflict("last_admin", "A workspace must keep at least one ADMIN.")


def list_work_item_types(session: Session, *, workspace_id: str, window: Window) -> ListPage:
    query = select(WorkItemType).where(WorkItemType.workspace_id == workspace_id)
    return window.page(session, query, WorkItemType.name, WorkItemType.id)


def create_work_item_type(
    session: Session, *, access: WorkspaceAccess, name: str, description: str | None
) -> WorkItemType:
    if name in BUILTIN_TYPES or session.scalar(
        select(WorkItemType.id).where(
            WorkItemType.workspace_id == access.workspace_id, WorkItemType.name == name
        )
    ):
        raise Conflict("duplicate_type", f"The work item type {name} exists already.")
    item_type = WorkItemType(workspace_id=access.workspace_id, name=name, description=description)
    session.add(item_type)
    try:
        with session.begin_nested():  # (the same name, created meanwhile)
            session.flush()
    except IntegrityError:
        raise Conflict("duplicate_type", f"The work item type {name} exists already.") from None
    return item_type


def is_known_type(session: Session, *, workspace_id: str, name: str) -> bool:
    return name in BUILTIN_TYPES or (
        session.scalar(
            select(WorkItemType.id).where(
                WorkItemType.workspace_id == workspace_id, WorkItemType.name == name
            )
        )
        is not None
    )


def delete_work_item_type(session: Session, *, access: WorkspaceAccess, name: str) -> str:
    """Remove a custom type; returns its `$id`. 404 for a type the workspace does not have,
    409 `type_in_use` while an item has it, 409 `builtin_type` for TASK, BUG, STORY, EPIC.

    (An item's type check does not lock the type's row: a create holding it for share would
    wait for its project's row while a workspace delete holding that row waits for the type's,
    a deadlock. So on PostgreSQL an item created in the instant of the removal may keep it.)
    """
    if name in BUILTIN_TYPES:
        raise Conflict("builtin_type", f"{name} is a built-in type and cannot be removed.")
    item_type: WorkItemType | None = session.scalar(
        for_change(
            session,
            select(WorkItemType).where(
                WorkItemType.workspace_id == access.workspace_id, WorkItemType.name == name
            ),
            WorkItemType,
        )
    )
    if item_type is None:
        raise NotFound("Work item type")
    in_use = session.scalar(
        select(WorkItem.id)
        .where(WorkItem.workspace_id == access.workspace_id, WorkItem.type == name)
        .limit(1)
    )
    if in_use is not None:
        raise Conflict("type_in_use", f"Work items of type {name} exist; change them first.")
    session.delete(item_type)
    return item_type.id

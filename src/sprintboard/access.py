"""Who may do what. Every lookup of a workspace-scoped record goes through a function here.

A record outside the caller's workspaces is "not found", exactly like a record that does not
exist: no status code or message tells the two apart. Inside a workspace, a missing permission
is 403 with `details.permission`.
"""

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal, TypeVar

from sqlalchemy import Select, select
from sqlalchemy.orm import Session

from sprintboard.errors import Forbidden, InvalidRequest, NotFound
from sprintboard.models import (
    Base,
    Comment,
    CustomField,
    Integration,
    Invitation,
    Notification,
    Project,
    SavedView,
    Sprint,
    Webhook,
    WorkItem,
    WorkItemRelation,
    Workspace,
    WorkspaceMember,
)
from sprintboard.sql import WRITES, Raw, in_list, raw


class Role(StrEnum):
    ADMIN = "ADMIN"
    MEMBER = "MEMBER"
    VIEWER = "VIEWER"


class Permission(StrEnum):
    SPRINT_CREATE = "SPRINT_CREATE"
    SPRINT_START = "SPRINT_START"
    SPRINT_COMPLETE = "SPRINT_COMPLETE"
    SPRINT_DELETE = "SPRINT_DELETE"
    WORK_ITEM_WRITE = "WORK_ITEM_WRITE"
    PROJECT_MANAGE = "PROJECT_MANAGE"
    WORKSPACE_MANAGE = "WORKSPACE_MANAGE"
    ORG_ADMIN = "ORG_ADMIN"


_MEMBER_PERMISSIONS = frozenset(
    {
        Permission.SPRINT_CREATE,
        Permission.SPRINT_START,
        Permission.SPRINT_COMPLETE,
        Permission.WORK_ITEM_WRITE,
    }
)

ROLE_PERMISSIONS: dict[Role, frozenset[Permission]] = {
    Role.ADMIN: _MEMBER_PERMISSIONS
    | {Permission.SPRINT_DELETE, Permission.PROJECT_MANAGE, Permission.WORKSPACE_MANAGE},
    Role.MEMBER: _MEMBER_PERMISSIONS,
    Role.VIEWER: frozenset(),
}
"""The contract's permission table. ORG_ADMIN is not a role's: it belongs to org admins."""


@dataclass(frozen=True, slots=True)
class Caller:
    """The authenticated user, as seen through the API key they called with."""

    user_id: str
    name: str
    email: str
    is_org_admin: bool
    key_id: str | None
    """None for a browser session opened with a password: it acts with all the user's roles
    allow."""
    key_permissions: frozenset[str] | None
    """The key's own permission list; None means "all my role allows"."""
    key_workspace_id: str | None
    session_id: str | None = None
    """The browser session the call came through (the `sb_session` cookie), if any."""

    def allows(self, permission: Permission) -> bool:
        return self.key_permissions is None or permission in self.key_permissions

    def require_org_admin(self) -> None:
        if not (self.is_org_admin and self.allows(Permission.ORG_ADMIN)):
            raise Forbidden(Permission.ORG_ADMIN)

    def sees_workspace(self, workspace_id: str) -> bool:
        return self.key_workspace_id is None or self.key_workspace_id == workspace_id


@dataclass(frozen=True, slots=True)
class WorkspaceAccess:
    """The caller's standing in one workspace."""

    caller: Caller
    workspace_id: str
    role: Role

    def permits(self, permission: Permission) -> bool:
        return permission in ROLE_PERMISSIONS[self.role] and self.caller.allows(permission)

    def require(self, permission: Permission) -> None:
        if not self.permits(permission):
            raise Forbidden(permission)


RecordT = TypeVar("RecordT", bound=Base)

_WORK_ITEM_KEY = re.compile(r"^[A-Z][A-Z0-9]{1,9}-[1-9][0-9]*$")


def _membership_join(query: Any, caller: Caller, workspace_column: Any) -> Any:
    """`query`, narrowed to the caller's memberships (and to the key's workspace, if any)."""
    query = query.join(
        WorkspaceMember,
        (WorkspaceMember.workspace_id == workspace_column)
        & (WorkspaceMember.user_id == caller.user_id),
    )
    if caller.key_workspace_id is not None:
        query = query.where(workspace_column == caller.key_workspace_id)
    return query


def for_change(session: Session, query: Any, model: type[Base]) -> Any:
    """`query`, locking the `model` rows it reads when the request may change them.

    A write request's record is the one it changes, and what it checks first (`If-Match`, the
    status a transition starts from) must still hold when it writes: on PostgreSQL the row is
    locked until the commit (`FOR NO KEY UPDATE`, the lock an UPDATE takes, which lets rows
    that refer to it be inserted meanwhile), so a concurrent change waits and then sees the
    result. SQLite needs nothing: a write transaction holds the database (`BEGIN IMMEDIATE`).
    """
    if session.info.get(WRITES):
        return query.with_for_update(of=model, key_share=True)
    return query


def _takes_row_locks(session: Session) -> bool:
    """Whether plain-SQL row locks apply: a write session on PostgreSQL (`for_change` leaves
    this to SQLAlchemy, which drops `FOR ...` on SQLite; one writer holds SQLite whole)."""
    return raw(session).locks_rows


def lock_workspace(session: Session, workspace_id: str) -> None:
    """The workspace's row, locked for a change (`FOR NO KEY UPDATE`): changes that must see
    each other's outcome (its members' roles, its projects' derived keys) take turns."""
    session.execute(
        for_change(session, select(Workspace.id).where(Workspace.id == workspace_id), Workspace)
    ).first()


def lock_for_delete(
    session: Session, model: type[Workspace] | type[Project], record_id: str
) -> None:
    """Before a workspace or project is deleted with all it holds: on PostgreSQL, lock what
    the delete removes in the order changes lock it (sprints, then work items, then projects,
    each in `$id` order), so that it waits for changes under way instead of taking the tree
    from the top while they wait for it in a ring. (A workspace's own row comes first, as for
    every change to it; changes inside it only take KEY SHARE on it, which that lets through.)
    """
    if not _takes_row_locks(session):
        return
    db = raw(session)
    scope = "workspace_id" if model is Workspace else "project_id"
    project_scope = "workspace_id" if model is Workspace else "id"
    lock = row_lock(session, strength="UPDATE")
    for table, column in (("sprints", scope), ("work_items", scope), ("projects", project_scope)):
        db.execute(
            f"SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {column} = :id"
            f" ORDER BY id{lock}) AS locked",
            {"id": record_id},
        )


def _access_one(
    session: Session,
    caller: Caller,
    model: type[RecordT],
    what: str,
    *criteria: Any,
    lock: bool = True,
) -> tuple[RecordT, WorkspaceAccess]:
    workspace_column = model.workspace_id if model is not Workspace else model.id  # type: ignore[attr-defined]
    query = _membership_join(select(model, WorkspaceMember.role), caller, workspace_column)
    query = query.where(*criteria).limit(1)
    if lock:
        query = for_change(session, query, model)
    row = session.execute(query).first()
    if row is None:
        raise NotFound(what)
    record, role = row
    workspace_id = record.id if model is Workspace else record.workspace_id
    return record, WorkspaceAccess(caller, workspace_id, Role(role))


def access_workspace(
    session: Session, caller: Caller, workspace_id: str
) -> tuple[Workspace, WorkspaceAccess]:
    return _access_one(session, caller, Workspace, "Workspace", Workspace.id == workspace_id)


_ROLE = (
    "SELECT role FROM workspace_members WHERE workspace_id = :workspace_id AND user_id = :user_id"
)
_ROLE_JOINING_WORKSPACE = (
    "SELECT m.role FROM workspace_members m JOIN workspaces w ON w.id = m.workspace_id"
    " WHERE m.workspace_id = :workspace_id AND m.user_id = :user_id"
)


def access_workspace_id(
    session: Session, caller: Caller, workspace_id: str, *, adding: bool = False
) -> WorkspaceAccess:
    """The caller's standing in a workspace, without loading the workspace (a hot path).

    `adding`: the request adds a record to the workspace and locks nothing else a delete of
    the workspace locks (a project, a member, a webhook, a type). On PostgreSQL the workspace
    is then locked for key share here, as the new row's foreign key would lock it later: a
    delete under way has gone first (404), or waits for this request (and takes its record
    along), instead of failing it on that key.
    """
    if not caller.sees_workspace(workspace_id):
        raise NotFound("Workspace")
    lock = row_lock(session, "w", strength="KEY SHARE") if adding else ""
    row = raw(session).row(
        _ROLE_JOINING_WORKSPACE + lock if lock else _ROLE,
        {"workspace_id": workspace_id, "user_id": caller.user_id},
    )
    if row is None:
        raise NotFound("Workspace")
    return WorkspaceAccess(caller, workspace_id, Role(row[0]))


def access_project(
    session: Session, caller: Caller, project_id: str
) -> tuple[Project, WorkspaceAccess]:
    return _access_one(session, caller, Project, "Project", Project.id == project_id)


def access_list_scope(
    session: Session,
    caller: Caller,
    *,
    workspace_id: str | None,
    project_id: str | None,
    project_first: bool = False,
) -> tuple[str, Project | None]:
    """What a list that takes `workspaceId` or `projectId` reads (one of them is required,
    else 400): the workspace, and the project when it is looked up. `workspaceId` names the
    workspace when sent (a `projectId` then only narrows the list), unless `project_first`:
    then a sent `projectId` is looked up (404 if not visible) and names it.
    """
    if project_id is not None and (project_first or workspace_id is None):
        project, _ = access_project(session, caller, project_id)
        return project.workspace_id, project
    if workspace_id is None:
        raise InvalidRequest("workspaceId", "required", "workspaceId or projectId is required.")
    access_workspace_id(session, caller, workspace_id)
    return workspace_id, None


def access_project_for_delete(
    session: Session, caller: Caller, project_id: str
) -> tuple[Project, WorkspaceAccess]:
    """The project, for PROJECT_MANAGE, with all it holds locked (`lock_for_delete`) and read
    again once they are: as it now stands, or 404 if a delete that was under way took it."""
    project, access = _access_one(
        session, caller, Project, "Project", Project.id == project_id, lock=False
    )
    access.require(Permission.PROJECT_MANAGE)
    lock_for_delete(session, Project, project.id)
    session.expire(project)
    return access_project(session, caller, project_id)


def access_sprint(
    session: Session, caller: Caller, sprint_id: str
) -> tuple[Sprint, WorkspaceAccess]:
    return _access_one(session, caller, Sprint, "Sprint", Sprint.id == sprint_id)


def access_work_item(
    session: Session, caller: Caller, ref: str, *, workspace_id: str | None = None
) -> tuple[WorkItem, WorkspaceAccess]:
    """A work item by `$id` or by key (`WEB-12`), as an ORM record, locked for a change in a
    write request; found by `visible_item_sql`'s rule (as `reads.read_visible_item` finds it).
    """
    where, params = visible_item_sql(caller, ref, workspace_id=workspace_id)
    row, columns = raw(session).fetch_one(
        f"SELECT wi.id, member_.role FROM work_items wi{where}{row_lock(session, 'wi')}", params
    )
    if row is None:
        raise NotFound("Work item")
    item = session.get_one(WorkItem, row[columns["id"]])
    return item, WorkspaceAccess(caller, item.workspace_id, Role(row[columns["role"]]))


def visible_item_sql(
    caller: Caller, ref: str, *, workspace_id: str | None = None
) -> tuple[str, dict[str, Any]]:
    """The rule that finds one work item by `$id` or by key (`WEB-12`), as plain SQL to follow
    `FROM work_items wi` (its joins, condition, order and limit), exposing the caller's role
    as `member_.role`; and its parameters.

    Keys are unique per workspace. When a key matches items in several of the caller's
    workspaces, `workspace_id` says which; without it the newest match wins.
    """
    join, params = membership_join_sql(caller, "wi.workspace_id")
    column = "wi.key" if is_work_item_key(ref) else "wi.id"
    where = f"{column} = :ref"
    params["ref"] = ref
    if workspace_id is not None:
        where += " AND wi.workspace_id = :workspace_id"
        params["workspace_id"] = workspace_id
    return f"{join} WHERE {where} ORDER BY wi.created_at DESC LIMIT 1", params


LockStrength = Literal["UPDATE", "NO KEY UPDATE", "SHARE", "KEY SHARE"]


def row_lock(
    session: Session | Raw, of: str | None = None, *, strength: LockStrength = "NO KEY UPDATE"
) -> str:
    """What ends a plain-SQL `SELECT` that locks the rows it reads for a change, as
    `for_change` does for the ORM: `FOR NO KEY UPDATE` (of the table aliased `of`) in a write
    request on PostgreSQL, nothing elsewhere (SQLite's writer holds the database whole).
    `strength` `UPDATE` also keeps new rows from referring to the locked ones (a delete);
    `KEY SHARE` is the lock a new row's foreign key takes on the row it refers to, taken
    early (a delete of that row under way goes first, or waits). Several rows are locked in
    `$id` order (the statement's `ORDER BY`), as every request that locks several does: two
    changes never wait for each other in a ring. `session` may be a write session's `Raw`.
    """
    if not (session if isinstance(session, Raw) else raw(session)).locks_rows:
        return ""
    return lock_clause("postgresql", strength, of)


def lock_clause(
    dialect: str, strength: LockStrength = "NO KEY UPDATE", of: str | None = None
) -> str:
    """`row_lock`'s clause for SQL text built ahead of a request, for a dialect: the lock on
    PostgreSQL, nothing on SQLite. Only for statements that run in a write request."""
    if dialect != "postgresql":
        return ""
    return f" FOR {strength} OF {of}" if of else f" FOR {strength}"


def lock_sprints_moved_to(session: Session, caller: Caller, sprint_ids: Sequence[str]) -> None:
    """Before work items are locked to be moved to these sprints: on PostgreSQL, the sprints
    (those the caller sees; a move to another is refused later), locked for share in `$id`
    order, as a create locks its sprint and a completion its own. Every request then locks
    sprints before items, so none waits for another in a ring (a project's delete locks them
    in that order too)."""
    if not sprint_ids or not _takes_row_locks(session):
        return
    placeholders, names = in_list("s", sorted(set(sprint_ids)))
    join, params = membership_join_sql(caller, "s.workspace_id")
    raw(session).rows(
        f"SELECT s.id FROM sprints s{join} WHERE s.id IN {placeholders}"
        f" ORDER BY s.id{row_lock(session, 's', strength='SHARE')}",
        {**params, **names},
    )


def access_comment(
    session: Session, caller: Caller, comment_id: str
) -> tuple[Comment, WorkspaceAccess]:
    return _access_one(session, caller, Comment, "Comment", Comment.id == comment_id)


def access_relation(
    session: Session, caller: Caller, relation_id: str
) -> tuple[WorkItemRelation, WorkspaceAccess]:
    return _access_one(
        session, caller, WorkItemRelation, "Relation", WorkItemRelation.id == relation_id
    )


def visible_workspace_ids(caller: Caller) -> Select[str]:
    """A subquery of the workspaces the caller may see (for list filters)."""
    query = select(WorkspaceMember.workspace_id).where(WorkspaceMember.user_id == caller.user_id)
    if caller.key_workspace_id is not None:
        query = query.where(WorkspaceMember.workspace_id == caller.key_workspace_id)
    return query


def access_field(
    session: Session, caller: Caller, field_id: str
) -> tuple[CustomField, WorkspaceAccess]:
    return _access_one(session, caller, CustomField, "Field", CustomField.id == field_id)


def access_webhook(
    session: Session, caller: Caller, webhook_id: str
) -> tuple[Webhook, WorkspaceAccess]:
    return _access_one(session, caller, Webhook, "Webhook", Webhook.id == webhook_id)


def access_integration(
    session: Session, caller: Caller, integration_id: str
) -> tuple[Integration, WorkspaceAccess]:
    return _access_one(
        session, caller, Integration, "Integration", Integration.id == integration_id
    )


def integration_for_hook(session: Session, integration_id: str) -> Integration:
    """The integration a forge's hook names, for anyone: the hook's signature, checked
    next, is its credential (an unknown integration is 404, as the contract says)."""
    integration = session.get(Integration, integration_id)
    if integration is None:
        raise NotFound("Integration")
    return integration


def access_invitation(
    session: Session, caller: Caller, invitation_id: str
) -> tuple[Invitation, WorkspaceAccess]:
    return _access_one(session, caller, Invitation, "Invitation", Invitation.id == invitation_id)


def access_view(
    session: Session, caller: Caller, view_id: str, *, lock: bool = False
) -> tuple[SavedView, WorkspaceAccess]:
    """A saved view: a shared one to every member of its workspace, a private one to its
    owner alone (anyone else: "not found", as for a record of another workspace)."""
    return _access_one(
        session,
        caller,
        SavedView,
        "View",
        SavedView.id == view_id,
        SavedView.shared | (SavedView.owner_id == caller.user_id),
        lock=lock,
    )


def own_notifications(caller: Caller) -> Any:
    """The criterion for the caller's inbox: their notifications, in workspaces they still see."""
    return (Notification.user_id == caller.user_id) & Notification.workspace_id.in_(
        visible_workspace_ids(caller)
    )


def access_notification(session: Session, caller: Caller, notification_id: str) -> Notification:
    """One of the caller's own notifications; anyone else's is "not found"."""
    notification = session.scalar(
        select(Notification).where(Notification.id == notification_id, own_notifications(caller))
    )
    if notification is None:
        raise NotFound("Notification")
    return notification


def access_sprints(
    session: Session, caller: Caller, ids: list[str]
) -> tuple[dict[str, Sprint], WorkspaceAccess]:
    """Several sprints by `$id`, each named once and all of one project (else 400), locked
    for a change; any the caller cannot see is 404."""
    if len(set(ids)) != len(ids):
        raise InvalidRequest("sprints", "invalid_value", "sprints: a sprint appears twice.")
    query = _membership_join(
        select(Sprint, WorkspaceMember.role), caller, Sprint.workspace_id
    ).where(Sprint.id.in_(ids))
    # (In `$id` order: two reorders lock their sprints in the same order, never in a ring.)
    rows = session.execute(for_change(session, query.order_by(Sprint.id), Sprint)).all()
    sprints = {row.Sprint.id: row.Sprint for row in rows}
    if len(sprints) != len(ids):
        raise NotFound("Sprint")
    if len({sprint.project_id for sprint in sprints.values()}) > 1:
        raise InvalidRequest("sprints", "invalid_value", "sprints: all must be of one project.")
    return sprints, WorkspaceAccess(caller, rows[0].Sprint.workspace_id, Role(rows[0].role))


def membership_join_sql(caller: Caller, workspace_column: str) -> tuple[str, dict[str, Any]]:
    """The plain-SQL form of the membership rule, for the hot read paths (`sql.Raw`).

    A JOIN that keeps only rows in workspaces the caller belongs to (and the key's own
    workspace, if it is restricted), exposing the caller's role as `member_.role`.
    """
    sql = (
        f" JOIN workspace_members member_ ON member_.workspace_id = {workspace_column}"
        " AND member_.user_id = :caller_user_id"
    )
    params: dict[str, Any] = {"caller_user_id": caller.user_id}
    if caller.key_workspace_id is not None:
        sql += f" AND {workspace_column} = :caller_key_workspace_id"
        params["caller_key_workspace_id"] = caller.key_workspace_id
    return sql, params


def workspace_access(caller: Caller, workspace_id: str, role: str) -> WorkspaceAccess:
    """The standing a `membership_join_sql` row grants."""
    return WorkspaceAccess(caller, workspace_id, Role(role))


def is_work_item_key(ref: str) -> bool:
    """Whether a reference is a key such as `WEB-12` rather than an `$id`."""
    return _WORK_ITEM_KEY.match(ref) is not None


def open_sprints(
    session: Session, workspace_id: str, sprint_ids: Sequence[str]
) -> dict[str, tuple[str, str]]:
    """The workspace's sprints among `sprint_ids`, `$id` → (project, status); on PostgreSQL
    locked for share, in `$id` order: a completion under way is waited for, and then seen (and
    the sprints stay open, and stay, while items move in; a delete meanwhile had failed the
    move on its foreign key). `workitems.store.check_open_sprint` is the rule they meet."""
    wanted = sorted(set(sprint_ids))
    if not wanted:
        return {}
    db = raw(session)
    among = "IN (SELECT value FROM json_each(:ids))" if db.codec.sqlite else "= ANY(:ids)"
    share = row_lock(session, strength="SHARE")
    rows, columns = db.fetch(
        "SELECT id, project_id, status FROM sprints"
        f" WHERE workspace_id = :workspace_id AND id {among} ORDER BY id{share}",
        {
            "workspace_id": workspace_id,
            "ids": db.codec.json_param(wanted) if db.codec.sqlite else wanted,
        },
    )
    sprint_id, project_and_status = columns.getter("id"), columns.getter("project_id", "status")
    return {sprint_id(row): project_and_status(row) for row in rows}

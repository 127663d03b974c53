"""Saved views (contract §18): a named query, private to its owner or shared with the
workspace. Who may see one is `access.access_view`'s; who may change one is here."""

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from sprintboard.access import Caller, Role, WorkspaceAccess
from sprintboard.cursors import ListPage, Window
from sprintboard.errors import AppError, Conflict, InvalidRequest
from sprintboard.models import SavedView, touched
from sprintboard.queries import service
from sprintboard.queries.schemas import ViewCreate, ViewUpdate
from sprintboard.workitems import reads

VIEW_LIMIT = 100
"""Views one user may have in one workspace."""


class ViewForbidden(AppError):
    """A change to a view the caller sees but may not make: `not_owner` (a shared view is
    changed by its owner or a workspace ADMIN), `viewer` (a VIEWER shares none)."""

    status = 403
    code = "FORBIDDEN"

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message, {"reason": reason})


def create_view(session: Session, *, access: WorkspaceAccess, data: ViewCreate) -> SavedView:
    caller = access.caller
    service.check(
        session, caller=caller, workspace_id=access.workspace_id, text=data.query, field="query"
    )
    if data.shared:
        _may_share(access)
    owned = session.scalar(
        select(func.count())
        .select_from(SavedView)
        .where(SavedView.workspace_id == access.workspace_id, SavedView.owner_id == caller.user_id)
    )
    if (owned or 0) >= VIEW_LIMIT:
        raise Conflict(
            "view_limit", f"You have {VIEW_LIMIT} views in this workspace: delete one first."
        )
    view = SavedView(
        workspace_id=access.workspace_id,
        owner_id=caller.user_id,
        name=data.name,
        query=data.query,
        layout=data.layout,
        group_by=data.group_by,
        visible_fields=data.visible_fields,
        shared=data.shared,
    )
    session.add(view)
    session.flush()
    return view


def list_views(session: Session, *, access: WorkspaceAccess, window: Window) -> ListPage:
    """The workspace's shared views and the caller's own, oldest first."""
    query = select(SavedView).where(
        SavedView.workspace_id == access.workspace_id,
        SavedView.shared | (SavedView.owner_id == access.caller.user_id),
    )
    return window.page(session, query, SavedView.created_at, SavedView.id)


def update_view(
    session: Session, *, access: WorkspaceAccess, view: SavedView, data: ViewUpdate
) -> SavedView:
    _may_change(access, view)
    changes: dict[str, Any] = {}
    for name in ("name", "query", "layout", "shared"):  # (`groupBy`, `visibleFields`: null clears)
        if data.sent(name):
            value = getattr(data, name)
            if value is None:
                raise _null(name)
            changes[name] = value
    for name in ("group_by", "visible_fields"):
        if data.sent(name):
            changes[name] = getattr(data, name)
    if "query" in changes:
        service.check(
            session,
            caller=access.caller,
            workspace_id=view.workspace_id,
            text=changes["query"],
            field="query",
        )
    if changes.get("shared") and not view.shared:
        _may_share(access)
    changed = {k: v for k, v in changes.items() if getattr(view, k) != v}
    for name, value in changed.items():
        setattr(view, name, value)
    if changed:
        view.updated_at = touched(view.updated_at)
    return view


def delete_view(session: Session, *, access: WorkspaceAccess, view: SavedView) -> None:
    _may_change(access, view)
    session.delete(view)


def view_items(
    session: Session,
    *,
    caller: Caller,
    view: SavedView,
    limit: int,
    offset: int,
    after: Any,
) -> reads.ItemPage:
    """The view's query run for the caller (`currentUser()` is the caller)."""
    condition, order = service.list_order(
        session,
        caller=caller,
        workspace_id=view.workspace_id,
        text=view.query,
        sort=None,
        field="query",
    )
    return reads.list_items(
        session,
        workspace_id=view.workspace_id,
        filters=reads.TaskFilters(condition=condition),
        limit=limit,
        offset=offset,
        order=order,
        after=after,
    )


def _may_change(access: WorkspaceAccess, view: SavedView) -> None:
    """The owner may; so may a workspace ADMIN, of a shared view (a private one is not found
    by anyone else)."""
    if view.owner_id != access.caller.user_id and access.role != Role.ADMIN:
        raise ViewForbidden(
            "not_owner", "Only the view's owner or a workspace ADMIN may change this view."
        )


def _may_share(access: WorkspaceAccess) -> None:
    if access.role == Role.VIEWER:
        raise ViewForbidden("viewer", "A VIEWER may save private views only.")


def _null(name: str) -> Exception:
    return InvalidRequest(name, "invalid_type", f"{name}: may not be null.")

"""Reading the event log: a workspace's change feed and one work item's history."""

from collections.abc import Sequence
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from sprintboard.cursors import ListPage, Window
from sprintboard.errors import InvalidRequest
from sprintboard.models import Event, User
from sprintboard.responses import iso


def list_events(
    session: Session, *, workspace_id: str, after: str | None, limit: int
) -> tuple[Sequence[Event], int]:
    """The workspace's events after the one named by `after`, in commit order.

    `total` counts every event after the cursor, so a client knows how far behind it is.
    """
    query = select(Event).where(Event.workspace_id == workspace_id)
    if after is not None:
        query = query.where(Event.seq > cursor_seq(session, workspace_id=workspace_id, after=after))
    events = session.scalars(query.order_by(Event.seq).limit(limit)).all()
    total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
    return events, total


def cursor_seq(session: Session, *, workspace_id: str, after: str, field: str = "after") -> int:
    """The position in the workspace's feed of the event `after` (400 `not_found` on `field`
    when the workspace has no such event)."""
    cursor = session.scalar(
        select(Event.seq).where(Event.id == after, Event.workspace_id == workspace_id)
    )
    if cursor is None:
        raise InvalidRequest(field, "not_found", f"{field}: no such event in this workspace.")
    return cursor


def item_activity(session: Session, *, work_item_id: str, window: Window) -> ListPage:
    """One work item's history, oldest first, each event with its actor embedded."""
    rows, total, next_cursor = window.page(
        session,
        select(Event, *_ACTOR)
        .outerjoin(User, User.id == Event.actor_id)
        .where(Event.subject_id == work_item_id),
        Event.seq,
    )
    activity = [
        {
            **event_json(row.Event),
            "actor": _actor(row),
            "changes": row.Event.payload.get("changes"),
        }
        for row in rows
    ]
    return ListPage(activity, total, next_cursor)


def event_json(event: Event) -> dict[str, Any]:
    created = iso(event.created_at)
    return {
        "$id": event.id,
        "type": event.type,
        "workspaceId": event.workspace_id,
        "subjectId": event.subject_id,
        "actorId": event.actor_id,
        "payload": event.payload,
        "$createdAt": created,
        "$updatedAt": created,
    }


_ACTOR = (User.id.label("actor_id"), User.name.label("actor_name"), User.email.label("actor_email"))
"""An event's actor, as `_actor` reads it."""


def _actor(row: Any) -> dict[str, Any] | None:
    if row.actor_id is None:
        return None
    return {"$id": row.actor_id, "name": row.actor_name, "email": row.actor_email}

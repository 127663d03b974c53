"""The in-app inbox: reading and marking a user's notifications (written by the outbox)."""

from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from sprintboard.access import Caller, own_notifications
from sprintboard.cursors import ListPage, Window
from sprintboard.models import Notification, utcnow
from sprintboard.responses import iso


def list_notifications(
    session: Session, *, caller: Caller, unread_only: bool, window: Window
) -> ListPage:
    """The caller's notifications, newest first."""
    criteria = [own_notifications(caller)]
    if unread_only:
        criteria.append(Notification.read.is_(False))
    return window.page(
        session,
        select(Notification).where(*criteria),
        Notification.created_at.desc(),
        Notification.id.desc(),
    )


def mark_read(notification: Notification) -> Notification:
    if not notification.read:
        notification.read = True
        notification.updated_at = utcnow()
    return notification


def mark_all_read(session: Session, *, caller: Caller) -> int:
    """Marks every unread notification of the caller's read; returns how many."""
    result = session.execute(
        update(Notification)
        .where(own_notifications(caller), Notification.read.is_(False))
        .values(read=True, updated_at=utcnow())
        .execution_options(synchronize_session=False)
    )
    return int(result.rowcount)  # type: ignore[attr-defined]


def notification_json(notification: Notification) -> dict[str, Any]:
    return {
        "$id": notification.id,
        "type": notification.type,
        "workspaceId": notification.workspace_id,
        "eventId": notification.event_id,
        "workItemId": notification.work_item_id,
        "workItemKey": notification.work_item_key,
        "workItemTitle": notification.work_item_title,
        "actorId": notification.actor_id,
        "changes": notification.changes,
        "read": notification.read,
        "$createdAt": iso(notification.created_at),
        "$updatedAt": iso(notification.updated_at),
    }

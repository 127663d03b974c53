"""Notification mail (contract §19): at most one mail per user per minute. A notification
for a user who opted in waits as a `NotificationMail` row (written with the notification, in
the change's transaction); a user's waiting notifications become one mail as soon as the
user's last notification mail is a minute old (or there was none): so the first after a quiet
minute goes at once, and later ones together when that minute ends."""

from datetime import datetime, timedelta

from sqlalchemy import Select, delete, or_, select
from sqlalchemy.orm import Session

from sprintboard.access import for_change
from sprintboard.db import Database
from sprintboard.mail.outbox import Outbox
from sprintboard.models import Notification, NotificationMail, User, utcnow

INTERVAL = timedelta(minutes=1)
USERS_PER_ROUND = 100


def write_due(database: Database, *, outbox: Outbox | None, link_root: str | None) -> int:
    """Writes the notification mails that are due; returns how many. Without an outbox
    (mail not configured) the waiting notifications are dropped instead. Looked for first
    in a read, so that an idle loop takes no write lock (SQLite's is the database's)."""
    with database.session(write=False) as session:
        user_ids = session.scalars(_due_users(utcnow())).all()
    if not user_ids:
        return 0
    written = 0
    with database.transaction() as session:
        for user_id in user_ids:
            written += _write_for(session, user_id, outbox=outbox, link_root=link_root)
    return written


def _due_users(now: datetime) -> Select[str]:
    return (
        select(NotificationMail.user_id)
        .join(User, User.id == NotificationMail.user_id)
        .where(
            or_(
                User.notifications_mailed_at.is_(None),
                User.notifications_mailed_at <= now - INTERVAL,
            )
        )
        .group_by(NotificationMail.user_id)
        .order_by(NotificationMail.user_id)
        .limit(USERS_PER_ROUND)
    )


def _write_for(
    session: Session, user_id: str, *, outbox: Outbox | None, link_root: str | None
) -> int:
    user = session.scalars(for_change(session, select(User).where(User.id == user_id), User)).one()
    mailed = user.notifications_mailed_at
    if mailed is not None and mailed > utcnow() - INTERVAL:
        return 0  # (another worker mailed this user meanwhile)
    waiting = session.execute(
        select(NotificationMail.id, Notification)
        .join(Notification, Notification.id == NotificationMail.notification_id)
        .where(NotificationMail.user_id == user_id)
        .order_by(Notification.created_at, Notification.id)
    ).all()
    session.execute(
        delete(NotificationMail)
        .where(NotificationMail.id.in_([row[0] for row in waiting]))
        .execution_options(synchronize_session=False)
    )
    notes = [row[1] for row in waiting]
    if outbox is None or not notes or not user.active or not user.email_notifications:
        return 0
    actors = {
        row.id: row.name
        for row in session.execute(
            select(User.id, User.name).where(
                User.id.in_(sorted({n.actor_id for n in notes if n.actor_id}))
            )
        )
    }
    subject, body = compose(notes, actors=actors, link_root=link_root)
    outbox.write(session, kind="notifications", to=user.email, subject=subject, body=body)
    user.notifications_mailed_at = utcnow()
    return 1


def compose(
    notes: list[Notification], *, actors: dict[str, str], link_root: str | None
) -> tuple[str, str]:
    """The subject and text of one mail telling of `notes` (oldest first)."""
    if len(notes) == 1:
        subject = f"[{notes[0].work_item_key}] {notes[0].work_item_title}"
    else:
        subject = f"{len(notes)} updates on your work items"
    lines = []
    for note in notes:
        actor = actors.get(note.actor_id or "", "Someone")
        if note.type == "comment.created":
            what = f"{actor} commented"
        else:
            fields = ", ".join(sorted(note.changes or {}))
            what = f"{actor} changed {fields}" if fields else f"{actor} updated it"
        lines.append(f"{note.work_item_key} {note.work_item_title}\n  {what}")
        if link_root:
            lines.append(f"  {link_root.rstrip('/')}/tasks/{note.work_item_key}")
        lines.append("")
    lines.append("You get these because email notifications are on for your account;")
    lines.append('turn them off with PATCH /me {"emailNotifications": false}.')
    return subject[:255], "\n".join(lines)

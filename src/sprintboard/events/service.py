"""The outbox: every change to a work item or sprint becomes an event row in the transaction
that makes the change, together with the notifications and webhook deliveries it causes.

**Commit order.** The change feed promises events in commit order, and sequence numbers alone
do not give it on PostgreSQL: transaction A can draw `seq` 10, transaction B `seq` 11, and B
commit first; a reader that saw 11 and moved its cursor past it would never see 10. So `record`
only stages events; they are written from a `before_commit` hook, which flushes the session's
own changes, then takes a transaction-level advisory lock per workspace, draws the sequence
numbers and inserts. The lock is held from there until the commit, so within a workspace (the
feed's scope) sequence order is commit order. The lock is held only for these few inserts and
the commit itself — the request's row locks are all taken before it, so it cannot deadlock
with them — and workspaces never wait for each other. (The alternative, serving only events
below the oldest in-flight transaction id, needs a transaction id per event and makes every
reader pay for every writer.) SQLite needs nothing: write transactions begin with
`BEGIN IMMEDIATE`, so there is one writer at a time and its rows are numbered after all
committed ones.

A transaction that rolls back leaves nothing: staged events are dropped with it, and rows
written in the hook go with the transaction that wrote them.
"""

from collections import defaultdict
from collections.abc import Iterable
from typing import Any, cast

from sqlalchemy import event as sa_event
from sqlalchemy import Table, func, insert, select, text
from sqlalchemy.orm import Session, SessionTransaction

from sprintboard.models import (
    Base,
    Event,
    Notification,
    Webhook,
    WebhookDelivery,
    WorkspaceMember,
    new_id,
    utcnow,
)

TASK_EVENTS = ("task.created", "task.updated", "task.deleted")
SPRINT_EVENTS = (
    "sprint.created",
    "sprint.updated",
    "sprint.started",
    "sprint.completed",
    "sprint.deleted",
)
EVENT_TYPES = TASK_EVENTS + SPRINT_EVENTS

ADMIN_NOTIFIED_FIELDS = frozenset({"status", "priority", "flagged", "assigneeIds", "sprintId"})
"""Changes to these fields notify the workspace's ADMINs, not only the item's assignees."""

_STAGED = "sprintboard.staged_events"
_HOOKED = "sprintboard.events_hooked"


def record(
    session: Session,
    *,
    workspace_id: str,
    type: str,
    subject_id: str,
    actor_id: str | None,
    payload: dict[str, Any],
) -> Event:
    """Record one event in the caller's transaction; it exists only if that commits.

    `payload` holds the record after the change (`workItem` or `sprint`) and, for
    `*.updated`, `changes`: `{field: {"from": old, "to": new}}` in API field names.
    The returned event has its `$id`; its row (and `seq`) is written when the transaction
    commits, so call this after the change itself.
    """
    row = _row(workspace_id, type, subject_id, actor_id, payload, utcnow())
    _staged(session).append(row)
    return Event(**row)


def record_many(session: Session, events: list[dict[str, Any]]) -> None:
    """Record several events at once (bulk updates, the moves of a sprint completion).

    Each dict has the keyword arguments of `record`. They are written in this order.
    """
    now = utcnow()
    _staged(session).extend(
        _row(e["workspace_id"], e["type"], e["subject_id"], e["actor_id"], e["payload"], now)
        for e in events
    )


def _row(
    workspace_id: str,
    type: str,
    subject_id: str,
    actor_id: str | None,
    payload: dict[str, Any],
    now: Any,
) -> dict[str, Any]:
    return {
        "id": new_id(),
        "workspace_id": workspace_id,
        "type": type,
        "subject_id": subject_id,
        "actor_id": actor_id,
        "payload": payload,
        "created_at": now,
    }


def _staged(session: Session) -> list[dict[str, Any]]:
    if not session.info.get(_HOOKED):
        sa_event.listen(session, "before_commit", _before_commit)
        sa_event.listen(session, "after_transaction_end", _after_transaction_end)
        session.info[_HOOKED] = True
    staged: list[dict[str, Any]] = session.info.setdefault(_STAGED, [])
    return staged


def _before_commit(session: Session) -> None:
    if not session.in_nested_transaction():
        write_staged(session)


def _after_transaction_end(session: Session, transaction: SessionTransaction) -> None:
    if transaction.parent is None:
        session.info.pop(_STAGED, None)


def write_staged(session: Session) -> None:
    """Write the staged events, their notifications and webhook deliveries (the commit hook).

    Public so that a test can fail a commit right after the events were written.
    """
    rows: list[dict[str, Any]] = session.info.pop(_STAGED, None) or []
    if not rows:
        return
    session.flush()
    workspace_ids = sorted({row["workspace_id"] for row in rows})
    for row, seq in zip(
        rows, _draw_sequence_numbers(session, workspace_ids, len(rows)), strict=True
    ):
        row["seq"] = seq
    _insert(session, Event, rows)
    _insert(session, Notification, _notifications(session, workspace_ids, rows))
    _insert(session, WebhookDelivery, _deliveries(session, workspace_ids, rows))


def _insert(session: Session, model: type[Base], rows: list[dict[str, Any]]) -> None:
    """Insert many rows in a few multi-row statements.

    RETURNING makes SQLAlchemy batch the rows into `INSERT ... VALUES (...), (...)` pages
    ("insertmanyvalues"); without it psycopg sends one statement per row, ~50 times slower
    for a sprint's worth of events.
    """
    if rows:
        table = cast(Table, model.__table__)
        key = next(iter(table.primary_key.columns))
        session.connection().execute(insert(table).returning(key), rows).all()


def _draw_sequence_numbers(session: Session, workspace_ids: list[str], count: int) -> list[int]:
    if session.get_bind().dialect.name != "postgresql":
        # BEGIN IMMEDIATE made this the only writer: nothing can take these numbers meanwhile.
        top = session.scalar(select(func.max(Event.seq))) or 0
        return list(range(top + 1, top + 1 + count))
    for workspace_id in workspace_ids:  # sorted: two batches never wait for each other in a ring
        session.execute(
            text("SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))"),
            {"key": f"sprintboard.events:{workspace_id}"},
        )
    seqs = session.scalars(
        text("SELECT nextval(pg_get_serial_sequence('events', 'seq')) FROM generate_series(1, :n)"),
        {"n": count},
    ).all()
    return sorted(seqs)


def notification_recipients(
    *,
    before: Iterable[str],
    after: Iterable[str],
    admins: Iterable[str],
    changed_fields: Iterable[str],
    actor_id: str | None,
) -> set[str]:
    """Who hears of a work item update: its assignees before and after the change, and the
    workspace ADMINs when a field they follow changed; never the actor.
    """
    recipients = {*before, *after}
    if ADMIN_NOTIFIED_FIELDS.intersection(changed_fields):
        recipients.update(admins)
    recipients.discard(actor_id)
    return recipients


def _notifications(
    session: Session, workspace_ids: list[str], rows: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    updates = [row for row in rows if row["type"] == "task.updated"]
    if not updates:
        return []
    members: dict[str, set[str]] = defaultdict(set)
    admins: dict[str, set[str]] = defaultdict(set)
    for workspace_id, user_id, role in session.execute(
        select(WorkspaceMember.workspace_id, WorkspaceMember.user_id, WorkspaceMember.role).where(
            WorkspaceMember.workspace_id.in_(workspace_ids)
        )
    ):
        members[workspace_id].add(user_id)
        if role == "ADMIN":
            admins[workspace_id].add(user_id)
    notifications = []
    for row in updates:
        payload = row["payload"]
        item = payload.get("workItem") or {}
        changes = payload.get("changes") or {}
        after = item.get("assigneeIds") or []
        before = (changes.get("assigneeIds") or {}).get("from", after) or []
        workspace_id = row["workspace_id"]
        recipients = notification_recipients(
            before=before,
            after=after,
            admins=admins[workspace_id],
            changed_fields=changes,
            actor_id=row["actor_id"],
        )
        # Someone no longer in the workspace has no inbox there.
        for user_id in sorted(recipients & members[workspace_id]):
            notifications.append(
                {
                    "id": new_id(),
                    "user_id": user_id,
                    "workspace_id": workspace_id,
                    "event_id": row["id"],
                    "type": row["type"],
                    "work_item_id": row["subject_id"],
                    "work_item_key": item.get("key", ""),
                    "work_item_title": item.get("title", ""),
                    "actor_id": row["actor_id"],
                    "changes": changes,
                    "read": False,
                    "created_at": row["created_at"],
                    "updated_at": row["created_at"],
                }
            )
    return notifications


def _deliveries(
    session: Session, workspace_ids: list[str], rows: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    subscribed: dict[tuple[str, str], list[str]] = defaultdict(list)
    for webhook_id, workspace_id, types in session.execute(
        select(Webhook.id, Webhook.workspace_id, Webhook.events)
        .where(Webhook.workspace_id.in_(workspace_ids), Webhook.enabled.is_(True))
        .order_by(Webhook.id)
    ):
        for event_type in types:
            subscribed[workspace_id, event_type].append(webhook_id)
    if not subscribed:
        return []
    return [
        {
            "id": new_id(),
            "webhook_id": webhook_id,
            "event_seq": row["seq"],
            "event_id": row["id"],
            "event_type": row["type"],
            "subject_id": row["subject_id"],
            "status": "PENDING",
            "attempts": 0,
            "next_attempt_at": row["created_at"],
            "created_at": row["created_at"],
            "updated_at": row["created_at"],
        }
        for row in rows
        for webhook_id in subscribed.get((row["workspace_id"], row["type"]), ())
    ]

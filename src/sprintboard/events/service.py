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

import secrets
from collections import defaultdict
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

import orjson
from sqlalchemy import event as sa_event
from sqlalchemy.orm import Session, SessionTransaction

from sprintboard.models import new_id, utcnow
from sprintboard.sql import in_list, raw

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


def record(
    session: Session,
    *,
    workspace_id: str,
    type: str,
    subject_id: str,
    actor_id: str | None,
    payload: dict[str, Any],
) -> None:
    """Record one event in the caller's transaction; it exists only if that commits.

    `payload` holds the record after the change (`workItem` or `sprint`) and, for
    `*.updated`, `changes`: `{field: {"from": old, "to": new}}` in API field names.
    Its row (and `seq`) is written when the transaction commits, so call this after the
    change itself.
    """
    row = _row(new_id(), workspace_id, type, subject_id, actor_id, payload, utcnow())
    _staged(session).append(row)


def record_many(session: Session, events: list[dict[str, Any]]) -> None:
    """Record several events at once (bulk updates, the moves of a sprint completion).

    Each dict has the keyword arguments of `record`. They are written in this order.
    """
    now = utcnow()
    _staged(session).extend(
        _row(
            event_id,
            e["workspace_id"],
            e["type"],
            e["subject_id"],
            e["actor_id"],
            e["payload"],
            now,
        )
        for event_id, e in zip(_new_ids(len(events)), events, strict=True)
    )


def _row(
    event_id: str,
    workspace_id: str,
    type: str,
    subject_id: str,
    actor_id: str | None,
    payload: dict[str, Any],
    now: Any,
) -> dict[str, Any]:
    return {
        "id": event_id,
        "workspace_id": workspace_id,
        "type": type,
        "subject_id": subject_id,
        "actor_id": actor_id,
        "payload": payload,
        "created_at": now,
    }


def _staged(session: Session) -> list[dict[str, Any]]:
    staged: list[dict[str, Any]] = session.info.setdefault(_STAGED, [])
    return staged


# On the Session class, once: a listener added per session cost more than the event itself.
@sa_event.listens_for(Session, "before_commit")
def _before_commit(session: Session) -> None:
    if _STAGED in session.info and not session.in_nested_transaction():
        write_staged(session)


@sa_event.listens_for(Session, "after_transaction_end")
def _after_transaction_end(session: Session, transaction: SessionTransaction) -> None:
    if transaction.parent is None and _STAGED in session.info:
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
    seqs = _draw_sequence_numbers(session, workspace_ids, len(rows))
    for row, seq in zip(rows, seqs, strict=True):
        row["seq"] = seq
    writer = _BulkWriter(session)
    writer.insert("events", _EVENT_COLUMNS, [writer.event(row) for row in rows])
    writer.insert("notifications", _NOTIFICATION_COLUMNS, _notifications(session, writer, rows))
    writer.insert("webhook_deliveries", _DELIVERY_COLUMNS, _deliveries(session, writer, rows))


_EVENT_COLUMNS = (
    "seq",
    "id",
    "workspace_id",
    "type",
    "subject_id",
    "actor_id",
    "payload",
    "created_at",
)
_NOTIFICATION_COLUMNS = (
    "id",
    "user_id",
    "workspace_id",
    "event_id",
    "type",
    "work_item_id",
    "work_item_key",
    "work_item_title",
    "actor_id",
    "changes",
    "read",
    "created_at",
    "updated_at",
)
_DELIVERY_COLUMNS = (
    "id",
    "webhook_id",
    "event_seq",
    "event_id",
    "event_type",
    "subject_id",
    "status",
    "attempts",
    "next_attempt_at",
    "created_at",
    "updated_at",
)


class _BulkWriter:
    """Writes thousands of rows in milliseconds: `COPY` on PostgreSQL, the driver's
    `executemany` on SQLite, with values converted once in the form each column stores.

    This bypasses the ORM on purpose: its per-row work (type processing, parameter dicts)
    and psycopg's one-statement-per-row `executemany` made a 5,000-item sprint completion
    take seconds. The column tuples above must match the models (the tests read every
    column back through them).
    """

    def __init__(self, session: Session) -> None:
        self.connection = session.connection()
        self.postgresql = self.connection.dialect.name == "postgresql"
        self._stamps: dict[datetime, Any] = {}

    def stamp(self, value: datetime) -> Any:
        """A UTC datetime as the column stores it (SQLite: naive text; see `UTCDateTime`)."""
        stamp = self._stamps.get(value)
        if stamp is None:
            utc = value.astimezone(UTC)
            stamp = utc if self.postgresql else f"{utc:%Y-%m-%d %H:%M:%S.%f}"
            self._stamps[value] = stamp
        return stamp

    @staticmethod
    def json(value: Any) -> str:
        return orjson.dumps(value).decode()

    def event(self, row: dict[str, Any]) -> tuple[Any, ...]:
        return (
            row["seq"],
            row["id"],
            row["workspace_id"],
            row["type"],
            row["subject_id"],
            row["actor_id"],
            self.json(row["payload"]),
            self.stamp(row["created_at"]),
        )

    def insert(self, table: str, columns: tuple[str, ...], rows: list[tuple[Any, ...]]) -> None:
        if not rows:
            return
        names = ", ".join(f'"{column}"' for column in columns)
        driver: Any = self.connection.connection.driver_connection
        if self.postgresql and len(rows) > _FEW_ROWS:
            with (
                driver.cursor() as cursor,
                cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy,
            ):
                for row in rows:
                    copy.write_row(row)
            return
        if self.postgresql:  # one round trip, where COPY takes two
            row_marks = f"({', '.join(['%s'] * len(columns))})"
            values = ", ".join([row_marks] * len(rows))
            with driver.cursor() as cursor:
                cursor.execute(
                    f"INSERT INTO {table} ({names}) VALUES {values}",
                    [value for row in rows for value in row],
                )
            return
        marks = ", ".join("?" * len(columns))
        cursor = driver.cursor()
        try:
            cursor.executemany(f"INSERT INTO {table} ({names}) VALUES ({marks})", rows)
        finally:
            cursor.close()


_FEW_ROWS = 20
"""Up to this many rows go to PostgreSQL as one `INSERT`; more, by `COPY`."""


def _new_ids(count: int) -> list[str]:
    """`count` fresh ids of `new_id`'s form, with one call for the randomness."""
    prefix = new_id()[:12]
    random = secrets.token_hex(10 * count)
    return [prefix + random[20 * n : 20 * n + 20] for n in range(count)]


def _draw_sequence_numbers(session: Session, workspace_ids: list[str], count: int) -> list[int]:
    db = raw(session)
    if db.codec.sqlite:
        # BEGIN IMMEDIATE made this the only writer: nothing can take these numbers meanwhile.
        top = db.row("SELECT max(seq) FROM events")
        first = (top[0] if top and top[0] is not None else 0) + 1
        return list(range(first, first + count))
    *others, last = workspace_ids  # sorted: two batches never wait for each other in a ring
    for workspace_id in others:
        db.rows(
            "SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))",
            {"key": f"sprintboard.events:{workspace_id}"},
        )
    # The last lock and the numbers in one round trip: the materialized lock is taken before
    # the join yields the rows whose `nextval` draws the numbers.
    seqs = db.rows(
        "WITH locked AS MATERIALIZED (SELECT pg_advisory_xact_lock(hashtextextended(:key, 0)))"
        " SELECT nextval(pg_get_serial_sequence('events', 'seq'))"
        " FROM locked, generate_series(1, :n)",
        {"key": f"sprintboard.events:{last}", "n": count},
    )
    return sorted(int(row[0]) for row in seqs)


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
    session: Session, writer: _BulkWriter, rows: list[dict[str, Any]]
) -> list[tuple[Any, ...]]:
    updates = [row for row in rows if row["type"] == "task.updated"]
    if not updates:
        return []
    members: dict[str, set[str]] = defaultdict(set)
    admins: dict[str, set[str]] = defaultdict(set)
    placeholders, names = in_list("w", sorted({row["workspace_id"] for row in updates}))
    for workspace_id, user_id, role in raw(session).rows(
        "SELECT workspace_id, user_id, role FROM workspace_members"
        f" WHERE workspace_id IN {placeholders}",
        names,
    ):
        members[workspace_id].add(user_id)
        if role == "ADMIN":
            admins[workspace_id].add(user_id)
    notifications: list[tuple[Any, ...]] = []
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
        recipients &= members[workspace_id]
        if not recipients:
            continue
        stamp = writer.stamp(row["created_at"])
        shared = (
            workspace_id,
            row["id"],
            row["type"],
            row["subject_id"],
            item.get("key", ""),
            item.get("title", ""),
            row["actor_id"],
            writer.json(changes),
            False,
            stamp,
            stamp,
        )
        ids = _new_ids(len(recipients))
        notifications.extend(
            (notification_id, user_id, *shared)
            for notification_id, user_id in zip(ids, sorted(recipients), strict=True)
        )
    return notifications


def _deliveries(
    session: Session, writer: _BulkWriter, rows: list[dict[str, Any]]
) -> list[tuple[Any, ...]]:
    subscribed: dict[tuple[str, str], list[str]] = defaultdict(list)
    db = raw(session)
    placeholders, workspaces = in_list("w", sorted({row["workspace_id"] for row in rows}))
    # A webhook deleted meanwhile must not fail this commit on its foreign key: KEY SHARE
    # makes a concurrent delete wait for us, or hides the row if it committed first.
    lock = "" if db.codec.sqlite else " FOR KEY SHARE"
    for webhook_id, workspace_id, types in db.rows(
        "SELECT id, workspace_id, events FROM webhooks"
        f" WHERE workspace_id IN {placeholders}"
        f" AND enabled = :enabled ORDER BY id{lock}",
        {**workspaces, "enabled": True},
    ):
        for event_type in db.codec.json(types):
            subscribed[workspace_id, event_type].append(webhook_id)
    if not subscribed:
        return []
    targets = [
        (row, webhook_id)
        for row in rows
        for webhook_id in subscribed.get((row["workspace_id"], row["type"]), ())
    ]
    return [
        (
            delivery_id,
            webhook_id,
            row["seq"],
            row["id"],
            row["type"],
            row["subject_id"],
            "PENDING",
            0,
            writer.stamp(row["created_at"]),
            writer.stamp(row["created_at"]),
            writer.stamp(row["created_at"]),
        )
        for delivery_id, (row, webhook_id) in zip(_new_ids(len(targets)), targets, strict=True)
    ]

"""The outbox: every change to a work item or sprint becomes an event row in the transaction
that makes the change, together with the notifications and webhook deliveries it causes.

**Commit order.** The change feed promises events in commit order, and sequence numbers alone
do not give it on PostgreSQL: transaction A can draw `seq` 10, transaction B `seq` 11, and B
commit first; a reader that saw 11 and moved its cursor past it would never see 10. So `record`
only stages events; they are written from a `before_commit` hook, which flushes the session's
own changes, then takes a transaction-level advisory lock per workspace, draws the sequence
numbers, reads who is to hear of the events (members, webhooks) and inserts. When the lock is
free that is one round trip with the reads; when it is busy, the reads are done again after
the wait, so that what committed meanwhile counts. The lock is held from there until the
commit, so within a workspace (the feed's scope) sequence order is commit order. The lock
is held only for these few inserts and the commit itself — the request's row locks are all
taken before it, so it cannot deadlock with them — and workspaces never wait for each other.
(The alternative, serving only events below the oldest in-flight transaction id, needs a
transaction id per event and makes every reader pay for every writer.) SQLite needs nothing:
write transactions begin with `BEGIN IMMEDIATE`, so there is one writer at a time and its
rows are numbered after all committed ones.

A transaction that rolls back leaves nothing: staged events are dropped with it, and rows
written in the hook go with the transaction that wrote them.
"""

import asyncio
import contextlib
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import event as sa_event
from sqlalchemy.orm import Session, SessionTransaction

from sprintboard.access import row_lock
from sprintboard.hooks import Hooks
from sprintboard.models import new_id, new_ids, stored_timestamp, utcnow
from sprintboard.sql import in_list, insert_rows, raw

TASK_EVENTS = ("task.created", "task.updated", "task.deleted")
SPRINT_EVENTS = (
    "sprint.created",
    "sprint.updated",
    "sprint.started",
    "sprint.completed",
    "sprint.deleted",
)
RELATION_EVENTS = ("relation.created", "relation.deleted")
COMMENT_EVENTS = ("comment.created", "comment.updated", "comment.deleted")
LINK_EVENTS = ("link.created", "link.updated")
EVENT_TYPES = TASK_EVENTS + SPRINT_EVENTS + RELATION_EVENTS + COMMENT_EVENTS + LINK_EVENTS

ADMIN_NOTIFIED_FIELDS = frozenset({"status", "priority", "flagged", "assigneeIds", "sprintId"})
"""Changes to these fields notify the workspace's ADMINs, not only the item's assignees."""

Subscriber = Callable[
    [Session, list[dict[str, Any]], Callable[[Any], Any]],
    list[tuple[str, tuple[str, ...], list[tuple[Any, ...]]]],
]
"""Told the events a commit writes (numbered rows: `seq`, `type`, `subject_id`, `payload`,
`created_at`...) and how to store a timestamp, in the transaction, before they are inserted;
answers rows to insert with them, `(table, columns, rows)`: one batch for all."""

SUBSCRIBERS: Hooks[Subscriber] = Hooks("outbox subscribers")
"""Registered by the composition root (`wiring.py`): the outbox knows none of them."""

_STAGED = "sprintboard.staged_events"
_DELIVERIES = "sprintboard.deliveries_written"
_WORKSPACES = "sprintboard.events_written"


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
        for event_id, e in zip(new_ids(len(events)), events, strict=True)
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


class Doorbell:
    """Rung after each commit that wrote webhook deliveries (or events), from whichever thread
    committed: calls each listener in its own event loop, so that this process's delivery
    loops (event streams) wake at once instead of at their next poll (and, with Redis, tell
    the other instances). Whatever `ring` is given, each listener is called with."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listeners: set[tuple[asyncio.AbstractEventLoop, Callable[..., None]]] = set()

    def ring(self, *args: Any) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for loop, listener in listeners:
            with contextlib.suppress(RuntimeError):  # (its loop has just closed)
                loop.call_soon_threadsafe(listener, *args)

    @contextlib.contextmanager
    def listening(self, listener: Callable[..., None]) -> Iterator[None]:
        """`listener` is called, in the running loop, on each ring while the block runs."""
        entry = (asyncio.get_running_loop(), listener)
        with self._lock:
            self._listeners.add(entry)
        try:
            yield
        finally:
            with self._lock:
                self._listeners.discard(entry)


DELIVERIES_WRITTEN = Doorbell()
EVENTS_WRITTEN = Doorbell()
"""Rung with the `frozenset` of workspaces whose change feed a commit added to."""


def deliveries_written(session: Session) -> None:
    """Wake the delivery loops once this transaction commits (it wrote a delivery itself)."""
    session.info[_DELIVERIES] = True


def _staged(session: Session) -> list[dict[str, Any]]:
    staged: list[dict[str, Any]] = session.info.setdefault(_STAGED, [])
    return staged


# On the Session class, once: a listener added per session cost more than the event itself.
@sa_event.listens_for(Session, "before_commit")
def _before_commit(session: Session) -> None:
    if _STAGED in session.info and not session.in_nested_transaction():
        write_staged(session)


@sa_event.listens_for(Session, "after_commit")
def _after_commit(session: Session) -> None:
    if session.info.pop(_DELIVERIES, False):
        DELIVERIES_WRITTEN.ring()
    workspaces = session.info.pop(_WORKSPACES, None)
    if workspaces:
        EVENTS_WRITTEN.ring(frozenset(workspaces))


@sa_event.listens_for(Session, "after_transaction_end")
def _after_transaction_end(session: Session, transaction: SessionTransaction) -> None:
    if transaction.parent is None:
        session.info.pop(_STAGED, None)
        session.info.pop(_DELIVERIES, None)
        session.info.pop(_WORKSPACES, None)


def write_staged(session: Session) -> None:
    """Write the staged events, their notifications, webhook deliveries and what the
    `SUBSCRIBERS` make of them (the commit hook).

    Public so that a test can fail a commit right after the events were written.
    """
    rows: list[dict[str, Any]] = session.info.pop(_STAGED, None) or []
    if not rows:
        return
    session.flush()
    notifying = any(row["type"] in _NOTIFYING for row in rows)
    fan_out = _read_fan_out(session, rows, members=notifying)
    for row, seq in zip(rows, fan_out.seqs, strict=True):
        row["seq"] = seq
    writer = _BulkWriter(session)
    deliveries = _deliveries(writer, rows, fan_out)
    subscribed = [
        made for subscriber in SUBSCRIBERS for made in subscriber(session, rows, writer.stamp)
    ]
    notifications = _notifications(writer, rows, fan_out)
    mails = _notification_mails(session, notifications)
    writer.insert(
        [
            # (made as written: the payloads' JSON, megabytes for a sprint's completion, is
            # never held whole)
            ("events", _EVENT_COLUMNS, _Made(writer.event, rows)),
            ("notifications", _NOTIFICATION_COLUMNS, notifications),
            ("notification_mails", _NOTIFICATION_MAIL_COLUMNS, mails),
            ("webhook_deliveries", _DELIVERY_COLUMNS, deliveries),
            *subscribed,
        ]
    )
    if deliveries or mails:
        session.info[_DELIVERIES] = True
    session.info.setdefault(_WORKSPACES, set()).update(row["workspace_id"] for row in rows)


@dataclass
class _FanOut:
    """What writing a batch of events needs to read: their sequence numbers, the members of
    their workspaces (`(workspace, user, role)`, for notifications) and the enabled webhooks
    (`(id, workspace, event types)`)."""

    seqs: list[int]
    members: list[tuple[str, str, str]]
    webhooks: list[tuple[str, str, list[str]]]


def _read_fan_out(session: Session, rows: list[dict[str, Any]], *, members: bool) -> _FanOut:
    """The sequence numbers, members (if `members`) and webhooks for `rows`. On PostgreSQL
    the numbers need the workspace's lock: one round trip when it is free (a batch of one
    workspace), three when another transaction holds it."""
    db = raw(session)
    workspace_ids = sorted({row["workspace_id"] for row in rows})
    placeholders, workspaces = in_list("w", workspace_ids)
    members_sql = (
        "SELECT workspace_id, user_id, role FROM workspace_members"
        f" WHERE workspace_id IN {placeholders}"
    )
    # A webhook deleted meanwhile must not fail this commit on its foreign key: KEY SHARE
    # makes a concurrent delete wait for us, or hides the row if it committed first.
    webhooks_sql = (
        f"SELECT id, workspace_id, events FROM webhooks WHERE workspace_id IN {placeholders}"
        " AND enabled = :enabled ORDER BY id"
    )
    params = {**workspaces, "enabled": True}
    if db.codec.sqlite:
        # BEGIN IMMEDIATE made this the only writer: nothing can take these numbers meanwhile.
        top = db.row("SELECT max(seq) FROM events")
        first = (top[0] if top and top[0] is not None else 0) + 1
        return _FanOut(
            seqs=list(range(first, first + len(rows))),
            members=[tuple(row) for row in db.rows(members_sql, params)] if members else [],
            webhooks=[(i, w, orjson.loads(t)) for i, w, t in db.rows(webhooks_sql, params)],
        )
    *others, last = workspace_ids  # sorted: two batches never wait for each other in a ring
    for workspace_id in others:
        db.rows(_LOCK, {"key": f"sprintboard.events:{workspace_id}"})
    # Rows of one shape, (kind, a, b, c): the numbers, the webhooks, the members.
    read = (
        " UNION ALL SELECT 'h', id, workspace_id, events::text"
        f" FROM ({webhooks_sql}{row_lock(session, strength='KEY SHARE')}) h"
    )
    if members:
        read += f" UNION ALL SELECT 'm', workspace_id, user_id, role FROM ({members_sql}) m"
    params = {**params, "key": f"sprintboard.events:{last}", "n": len(rows)}
    found = db.rows(_TRY_LOCK_THEN_NUMBERS + read, params)
    if not any(kind == "s" for kind, *_ in found):
        # The lock is busy: wait for it, then read again. A statement sees what was committed
        # when it began, and what the holder commits meanwhile (a webhook, a member removed)
        # must count for events numbered after it.
        db.rows(_LOCK, params)
        found = db.rows(_NUMBERS + read, params)
    fan_out = _FanOut(seqs=[], members=[], webhooks=[])
    for kind, a, b, c in found:
        if kind == "s":
            fan_out.seqs.append(int(a))
        elif kind == "h":
            fan_out.webhooks.append((a, b, orjson.loads(c)))
        else:
            fan_out.members.append((a, b, c))
    fan_out.seqs.sort()
    return fan_out


_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))"
_NUMBERS = (
    "SELECT 's', nextval(pg_get_serial_sequence('events', 'seq'))::text, NULL, NULL"
    " FROM generate_series(1, :n)"
)
_TRY_LOCK_THEN_NUMBERS = (
    "WITH locked AS MATERIALIZED"
    " (SELECT pg_try_advisory_xact_lock(hashtextextended(:key, 0)) AS held)"
    f" {_NUMBERS}, locked WHERE locked.held"
)
"""The numbers only if the lock was free: the materialized lock is tried before the join
yields the rows whose `nextval` draws them (and UNION ALL runs its parts in order)."""


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
        """A datetime as the column stores it (`models.stored_timestamp`), each one once."""
        stamp = self._stamps.get(value)
        if stamp is None:
            stamp = self._stamps[value] = stored_timestamp(value, sqlite=not self.postgresql)
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

    def insert(self, tables: Sequence[tuple[str, tuple[str, ...], "Rows"]]) -> None:
        """Insert `(table, columns, rows)` in this order. On PostgreSQL, tables of few rows
        go in one statement (`WITH a AS (INSERT ...) INSERT ...`: one round trip), and those
        of many by `COPY`."""
        driver: Any = self.connection.connection.driver_connection
        few: list[tuple[str, list[Any]]] = []
        for table, columns, rows in tables:
            if not rows:
                continue
            if self.postgresql and len(rows) <= _FEW_ROWS:
                names = ", ".join(f'"{column}"' for column in columns)
                row_marks = f"({', '.join(['%s'] * len(columns))})"
                values = ", ".join([row_marks] * len(rows))
                statement = f"INSERT INTO {table} ({names}) VALUES {values}"
                few.append((statement, [value for row in rows for value in row]))
            else:
                self._insert_together(driver, few)
                few = []
                insert_rows(
                    driver, postgresql=self.postgresql, table=table, columns=columns, rows=rows
                )
        self._insert_together(driver, few)

    @staticmethod
    def _insert_together(driver: Any, inserts: list[tuple[str, list[Any]]]) -> None:
        if not inserts:
            return
        *first, (last, params) = inserts
        sql = last
        if first:
            ctes = ", ".join(
                f"insert_{n} AS ({statement})" for n, (statement, _) in enumerate(first)
            )
            sql = f"WITH {ctes} {last}"
        with driver.cursor() as cursor:
            cursor.execute(sql, [value for _, values in first for value in values] + params)


_FEW_ROWS = 20
"""Up to this many rows go to PostgreSQL as one `INSERT`; more, by `COPY`."""


class _Made:
    """The rows `make` makes of `items`, each made when it is read (`_BulkWriter.insert`)."""

    def __init__(self, make: Callable[[Any], tuple[Any, ...]], items: list[Any]) -> None:
        self._make = make
        self._items = items

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return map(self._make, self._items)


Rows = list[tuple[Any, ...]] | _Made


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


_NOTIFYING = frozenset({"task.updated", "comment.created"})
"""The events that notify anyone."""


def _recipients(row: dict[str, Any], admins: set[str]) -> set[str]:
    """Who hears of a `task.updated` or `comment.created` event (the actor included)."""
    payload = row["payload"]
    item = payload.get("workItem") or {}
    after = item.get("assigneeIds") or []
    if row["type"] == "comment.created":
        return {*after, *payload.get("mentionedUserIds", ())}
    changes = payload.get("changes") or {}
    before = (changes.get("assigneeIds") or {}).get("from", after) or []
    return notification_recipients(
        before=before, after=after, admins=admins, changed_fields=changes, actor_id=None
    )


def _notifications(
    writer: "_BulkWriter", rows: list[dict[str, Any]], fan_out: _FanOut
) -> list[tuple[Any, ...]]:
    notifying = [row for row in rows if row["type"] in _NOTIFYING]
    if not notifying:
        return []
    members: dict[str, set[str]] = defaultdict(set)
    admins: dict[str, set[str]] = defaultdict(set)
    for workspace_id, user_id, role in fan_out.members:
        members[workspace_id].add(user_id)
        if role == "ADMIN":
            admins[workspace_id].add(user_id)
    addressed: list[tuple[str, tuple[Any, ...]]] = []  # (user, what all its recipients get)
    # A batch's events mostly share their audience and their diff (a completion's 5,000
    # moves: a few sets of assignees, one diff object): each is worked out once.
    audiences: dict[tuple[Any, ...], list[str]] = {}
    diffs: dict[int, tuple[Any, str]] = {}  # id(changes) -> (changes, its JSON)
    for row in notifying:
        payload = row["payload"]
        item = payload.get("workItem") or {}
        workspace_id = row["workspace_id"]
        changes = payload.get("changes") or {}
        key = (
            workspace_id,
            row["type"],
            row["actor_id"],
            tuple(item.get("assigneeIds") or ()),
            tuple(payload.get("mentionedUserIds", ())),
            repr(changes.get("assigneeIds")) if "assigneeIds" in changes else None,
            not ADMIN_NOTIFIED_FIELDS.isdisjoint(changes),
        )
        users = audiences.get(key)
        if users is None:
            recipients = _recipients(row, admins[workspace_id])
            recipients.discard(row["actor_id"])
            # Someone no longer in the workspace has no inbox there.
            recipients &= members[workspace_id]
            users = audiences[key] = sorted(recipients)
        if not users:
            continue
        diff = diffs.get(id(changes))
        if diff is None:
            diff = diffs[id(changes)] = (changes, writer.json(changes))
        stamp = writer.stamp(row["created_at"])
        shared = (
            workspace_id,
            row["id"],
            row["type"],
            row["subject_id"],
            item.get("key", ""),
            item.get("title", ""),
            row["actor_id"],
            diff[1],
            False,
            stamp,
            stamp,
        )
        addressed.extend((user_id, shared) for user_id in users)
    # Their ids drawn at once (one draw a row cost a fifth of this), in the order made.
    return [
        (notification_id, user_id, *shared)
        for notification_id, (user_id, shared) in zip(
            new_ids(len(addressed)), addressed, strict=True
        )
    ]


_NOTIFICATION_MAIL_COLUMNS = ("id", "user_id", "notification_id", "created_at")


def _notification_mails(
    session: Session, notifications: list[tuple[Any, ...]]
) -> list[tuple[Any, ...]]:
    """The notifications to mail too (`mail/digests.py`): those of users who opted in. One
    more read, made only by a commit that notifies someone."""
    if not notifications:
        return []
    placeholders, users = in_list("u", sorted({row[1] for row in notifications}))
    opted_in = {
        user_id
        for (user_id,) in raw(session).rows(
            f"SELECT id FROM users WHERE id IN {placeholders} AND email_notifications = :on",
            {**users, "on": True},
        )
    }
    if not opted_in:
        return []
    mailed = [row for row in notifications if row[1] in opted_in]
    return [
        (mail_id, row[1], row[0], row[-1])
        for mail_id, row in zip(new_ids(len(mailed)), mailed, strict=True)
    ]


def _deliveries(
    writer: "_BulkWriter", rows: list[dict[str, Any]], fan_out: _FanOut
) -> list[tuple[Any, ...]]:
    subscribed: dict[tuple[str, str], list[str]] = defaultdict(list)
    for webhook_id, workspace_id, types in fan_out.webhooks:
        for event_type in types:
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
        for delivery_id, (row, webhook_id) in zip(new_ids(len(targets)), targets, strict=True)
    ]

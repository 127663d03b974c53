"""Every table, on one page. Only the migrations in `sprintboard/migrations` create them."""

import secrets
import threading
import time
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Date,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    event,
    false,
    text,
    true,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


_last_id = (0, 0)  # (milliseconds, the 80-bit rest) of the newest id made in this process
_id_lock = threading.Lock()


def new_ids(count: int) -> list[str]:
    """`count` opaque, time-ordered identifiers: 48 bits of milliseconds, then 80 bits, random
    for a millisecond's first id and counting up from it for the next ones (as monotonic
    ULIDs do), so that records made in one millisecond (a bulk update's notifications) still
    list in the order they were made."""
    global _last_id
    with _id_lock:
        milliseconds = time.time_ns() // 1_000_000
        if milliseconds > _last_id[0]:
            rest = secrets.randbits(79)  # (room to count up without overflowing 80 bits)
        else:
            milliseconds, rest = _last_id[0], _last_id[1] + 1
        _last_id = (milliseconds, rest + count - 1)
    return [f"{milliseconds:012x}{rest + n:020x}" for n in range(count)]


def new_id() -> str:
    return new_ids(1)[0]


def system_clock() -> datetime:
    return datetime.now(UTC)


clock: Callable[[], datetime] = system_clock
"""Where every record's "now" comes from. Tests replace it to play a sprint over several days
(a sprint report counts each change on its UTC day)."""


def utcnow() -> datetime:
    """Now, in UTC, cut to the millisecond we show in responses."""
    now = clock()
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


def touched(previous: datetime) -> datetime:
    """The `updated_at` of a change to a record last changed at `previous`: now, and at least
    a millisecond later, so that two changes within one millisecond still get two ETags
    (`stamp_version` makes them from `updated_at`)."""
    return max(utcnow(), previous + timedelta(milliseconds=1))


def stored_timestamp(moment: datetime, *, sqlite: bool) -> datetime | str:
    """A timestamp as its column stores it, for every writer (the ORM's `UTCDateTime`, raw
    SQL's `sql.Codec.param`, the events' bulk writer): in UTC; on SQLite, which has no
    timestamp type, as naive text `2026-11-22 09:30:00.000000` (SQLAlchemy's SQLite form,
    which sorts as time goes and which its reader parses)."""
    utc = moment.astimezone(UTC)
    return utc.replace(tzinfo=None).isoformat(" ", "microseconds") if sqlite else utc


class UTCDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC datetime on every backend (SQLite stores it naive)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def bind_processor(self, dialect: Dialect) -> Callable[[datetime | None], Any]:
        """Values are written by `stored_timestamp`, the one encoder, rather than by
        `process_bind_param` and then SQLAlchemy's own formatting of the SQLite column: so
        that the ORM cannot store a form the raw SQL's and the bulk writer's do not."""
        sqlite = dialect.name == "sqlite"

        def process(value: datetime | None) -> Any:
            return None if value is None else stored_timestamp(value, sqlite=sqlite)

        return process

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


JSONValue = JSON().with_variant(JSONB(), "postgresql")


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map: ClassVar[dict[Any, Any]] = {
        datetime: UTCDateTime,
        dict[str, Any]: JSONValue,
        date: Date,
    }


@event.listens_for(Base, "init", propagate=True)
def _apply_defaults(target: Base, _args: Any, kwargs: dict[str, Any]) -> None:
    """Fill column defaults when a record is built, not when it is flushed, so that a new
    record can be serialized (its `$id`, timestamps, counters) before the commit. A new
    record's `updated_at` is its `created_at`: two readings of the clock could fall on either
    side of a millisecond.
    """
    given = set(kwargs)
    for column in target.__table__.columns:
        default = column.default
        if column.key in kwargs or default is None or not hasattr(default, "arg"):
            continue
        kwargs[column.key] = default.arg(None) if callable(default.arg) else default.arg
    if "updated_at" not in given and "created_at" in kwargs and "updated_at" in kwargs:
        kwargs["updated_at"] = kwargs["created_at"]


class Timestamped:
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class User(Timestamped, Base):
    __tablename__ = "users"

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(255))
    email: Mapped[str] = mapped_column(String(320))
    email_normalized: Mapped[str] = mapped_column(String(320), unique=True)
    is_org_admin: Mapped[bool] = mapped_column(Boolean, default=False)
    active: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())
    """False once offboarded: none of the user's keys authenticate; their records stay."""
    password_hash: Mapped[str | None] = mapped_column(String(255))
    """Argon2id (`identity/passwords.py`); none until the user sets one or accepts an invite."""
    email_notifications: Mapped[bool] = mapped_column(
        Boolean, default=False, server_default=false()
    )
    """Whether inbox notifications are mailed too (`PATCH /me`), one mail a minute at most."""
    notifications_mailed_at: Mapped[datetime | None]
    """When the last notification mail was written: the next waits until a minute after."""


class ApiKey(Timestamped, Base):
    __tablename__ = "api_keys"

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(255))
    prefix: Mapped[str] = mapped_column(String(16))
    secret_hash: Mapped[str] = mapped_column(String(64), unique=True)
    permissions: Mapped[list[str] | None] = mapped_column(JSONValue)
    workspace_id: Mapped[str | None] = mapped_column(
        ForeignKey("workspaces.id", ondelete="CASCADE"), index=True
    )
    expires_at: Mapped[datetime | None]
    last_used_at: Mapped[datetime | None]
    revoked_at: Mapped[datetime | None]


class BrowserSession(Base):
    """A browser's sign-in: the `sb_session` cookie holds a random token, stored here only as
    its hash. One opened with a key acts as that key, so it ends with that key; one opened
    with a password (no key) acts with all the user's roles allow."""

    __tablename__ = "browser_sessions"

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    api_key_id: Mapped[str | None] = mapped_column(
        ForeignKey("api_keys.id", ondelete="CASCADE"), index=True
    )
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_used_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)


class SignInFailure(Base):
    """A failed password sign-in, by the email it tried: 10 within 15 minutes lock that email
    out for a while whatever the address (`identity/passwords.py`). In the database so that
    every instance counts the same failures, with or without Redis."""

    __tablename__ = "sign_in_failures"
    __table_args__ = (Index("ix_sign_in_failures_email", "email_normalized", "at"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    email_normalized: Mapped[str] = mapped_column(String(320))
    at: Mapped[datetime] = mapped_column(default=utcnow)


class Invitation(Timestamped, Base):
    """An invitation to a workspace, by email. Its token is shown once (in the create's
    `url`) and stored only as its SHA-256; it is pending until used, revoked or expired."""

    __tablename__ = "invitations"
    __table_args__ = (Index("ix_invitations_workspace_email", "workspace_id", "email_normalized"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    email: Mapped[str] = mapped_column(String(320))
    email_normalized: Mapped[str] = mapped_column(String(320))
    role: Mapped[str] = mapped_column(String(16))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    invited_by: Mapped[str | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    expires_at: Mapped[datetime]
    accepted_at: Mapped[datetime | None]
    accepted_by: Mapped[str | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    revoked_at: Mapped[datetime | None]


class PasswordReset(Base):
    """A password reset link's token, stored only as its SHA-256; good once, for an hour."""

    __tablename__ = "password_resets"

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime]
    used_at: Mapped[datetime | None]


class AuditEntry(Base):
    """One entry of the audit log (contract §19), written in the transaction of the change it
    records and chained to the one before by `hash` (`audit/service.py`). No foreign keys:
    an entry outlives the workspace, user or record it names. Nothing changes or deletes it."""

    __tablename__ = "audit_log"
    __table_args__ = (
        Index("ix_audit_log_action", "action", "seq"),
        Index("ix_audit_log_actor", "actor_id", "seq"),
    )

    seq: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=False
    )
    """Drawn under the log's lock as one more than the last: commit order, with no gaps."""
    id: Mapped[str] = mapped_column(String(32), unique=True)
    at: Mapped[datetime]
    action: Mapped[str] = mapped_column(String(32))
    actor_id: Mapped[str | None] = mapped_column(String(32))
    actor_email: Mapped[str | None] = mapped_column(String(320))
    ip: Mapped[str | None] = mapped_column(String(64))
    target_kind: Mapped[str | None] = mapped_column(String(32))
    target_id: Mapped[str | None] = mapped_column(String(32))
    workspace_id: Mapped[str | None] = mapped_column(String(32))
    details: Mapped[dict[str, Any]] = mapped_column(JSON)
    """`json`, not `jsonb`: read back exactly as written, for the hash."""
    hash: Mapped[str] = mapped_column(String(64))


class Workspace(Timestamped, Base):
    __tablename__ = "workspaces"

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(255))
    description: Mapped[str | None] = mapped_column(Text)


class WorkspaceMember(Timestamped, Base):
    __tablename__ = "workspace_members"
    __table_args__ = (UniqueConstraint("workspace_id", "user_id"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    role: Mapped[str] = mapped_column(String(16))


class Project(Timestamped, Base):
    __tablename__ = "projects"
    __table_args__ = (UniqueConstraint("workspace_id", "key"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(255))
    key: Mapped[str] = mapped_column(String(10))
    description: Mapped[str | None] = mapped_column(Text)
    last_item_number: Mapped[int] = mapped_column(Integer, default=0)
    """The per-project key counter: raised in the transaction that creates an item."""
    item_count: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    """How many work items the project has, kept by the statements that create and delete
    them: an unfiltered board list's `total` without counting 100,000 rows."""
    board_end: Mapped[float] = mapped_column(Float, default=0.0, server_default="0")
    """The highest position a create has given or been given: a create's default position
    comes from the row it locks for its number (`workitems/service.create_work_item`)."""
    transitions: Mapped[dict[str, list[str]] | None] = mapped_column(JSONValue)
    """The workflow's transition rules (`{from: [to, ...]}`), or None: any status to any."""


class ProjectStatus(Base):
    """A status of a project's workflow: its items' `status` is one of its names. The name and
    the category never change, so an item's category is kept on its row with its status."""

    __tablename__ = "project_statuses"

    project_id: Mapped[str] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), primary_key=True
    )
    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    label: Mapped[str] = mapped_column(String(64))
    category: Mapped[str] = mapped_column(String(16))
    position: Mapped[int] = mapped_column(Integer)


class WorkItemType(Timestamped, Base):
    __tablename__ = "work_item_types"
    __table_args__ = (UniqueConstraint("workspace_id", "name"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(32))
    description: Mapped[str | None] = mapped_column(Text)


class CustomField(Timestamped, Base):
    """A custom field of a workspace's work items (contract §17): its `key` names it in an
    item's `fields` and never changes; `options` (select and multiselect) in their order."""

    __tablename__ = "custom_fields"
    __table_args__ = (UniqueConstraint("workspace_id", "key"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    key: Mapped[str] = mapped_column(String(32))
    name: Mapped[str] = mapped_column(String(64))
    type: Mapped[str] = mapped_column(String(16))
    options: Mapped[list[str] | None] = mapped_column(JSONValue)
    description: Mapped[str | None] = mapped_column(Text)


class Sprint(Timestamped, Base):
    __tablename__ = "sprints"
    __table_args__ = (
        Index("ix_sprints_project_position", "project_id", "position"),
        Index("ix_sprints_workspace_position", "workspace_id", "position"),
        # At most one ACTIVE sprint per project, enforced by the database itself.
        Index(
            "uq_sprints_one_active_per_project",
            "project_id",
            unique=True,
            sqlite_where=text("status = 'ACTIVE'"),
            postgresql_where=text("status = 'ACTIVE'"),
        ),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(255))
    status: Mapped[str] = mapped_column(String(16), default="PLANNED")
    goal: Mapped[str | None] = mapped_column(Text)
    start_date: Mapped[datetime | None]
    end_date: Mapped[datetime | None]
    started_at: Mapped[datetime | None]
    completed_at: Mapped[datetime | None]
    position: Mapped[float] = mapped_column(Float)
    version: Mapped[int] = mapped_column(Integer, default=1)


class SprintHistory(Base):
    """What a sprint's report is computed from, written with the events of each change (in
    the same transaction; `sprints/history.py`): at the start, one row per item the sprint then
    holds (`start`); afterwards, for each change that moves an item in or out of the sprint,
    deletes it, re-estimates it or makes it DONE or not DONE, the item's standing in the
    sprint after it (`in` or `out`). The rows from before a start are dropped at the start.
    """

    __tablename__ = "sprint_history"
    __table_args__ = (Index("ix_sprint_history_sprint", "sprint_id", "seq"),)

    id: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=True
    )
    sprint_id: Mapped[str] = mapped_column(String(32))
    """No foreign key: its check, at the commit of an item's change, would lock the sprint for
    key share after the item, while a project's delete locks sprints before items (a
    deadlock). The deletes of a sprint, project or workspace remove its rows themselves."""
    seq: Mapped[int] = mapped_column(BigInteger().with_variant(Integer(), "sqlite"))
    """The `seq` of the event the row comes from: commit order within the workspace."""
    at: Mapped[datetime]
    work_item_id: Mapped[str] = mapped_column(String(32))
    key: Mapped[str] = mapped_column(String(24))
    kind: Mapped[str] = mapped_column(String(8))
    points: Mapped[float | None] = mapped_column(Float)
    done: Mapped[bool] = mapped_column(Boolean)


class SprintReport(Base):
    """A completed sprint's report, frozen in the transaction that completed it: `body` is
    served as it is, byte for byte, whatever happens to the sprint's items later. The figures
    beside it are what velocity lists."""

    __tablename__ = "sprint_reports"
    __table_args__ = (Index("ix_sprint_reports_project", "project_id", "completed_at"),)

    sprint_id: Mapped[str] = mapped_column(
        ForeignKey("sprints.id", ondelete="CASCADE"), primary_key=True
    )
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    completed_at: Mapped[datetime]
    committed_points: Mapped[float] = mapped_column(Float)
    completed_points: Mapped[float] = mapped_column(Float)
    completed_items: Mapped[int] = mapped_column(Integer)
    body: Mapped[str] = mapped_column(Text)


STATUS_FOREIGN_KEY = "fk_work_items_status_project_statuses"

_PRIORITY_RANK = (
    "(CASE priority WHEN 'LOW' THEN 0 WHEN 'MEDIUM' THEN 1 WHEN 'HIGH' THEN 2 ELSE 3 END)"
)
_SORTED_BY: dict[str, list[str]] = {
    "priority": [_PRIORITY_RANK],
    "due_date": ["(due_date IS NULL)", "due_date"],
    "story_points": ["(story_points IS NULL)", "story_points"],
    "created_at": ["created_at"],
    "updated_at": ["updated_at"],
}
"""A project's items in each order `sort=` takes (`workitems/ordering.py` writes the same
expressions), empty values last; each field's last expression takes the direction."""


def _sort_index(field: str, descending: bool, scope: str) -> Index:
    *first, last = _SORTED_BY[field]
    columns = [*first, f"{last} DESC" if descending else last]
    prefix = "ix_work_items_sort" if scope == "project_id" else "ix_work_items_wsort"
    return Index(
        f"{prefix}_{field}_{'desc' if descending else 'asc'}",
        scope,
        *(text(column) for column in columns),
        "position",
        "id",
    )


SORT_INDEXES = tuple(
    _sort_index(f, d, scope)
    for scope in ("project_id", "workspace_id")
    for f in _SORTED_BY
    for d in (False, True)
)
"""`sort=` on a project's list (migration 0019), or on a workspace's (a query, a saved view;
migration 0020), reads its page in one of these indexes' order (ties by `position, id`
ascending either way, so each direction has its own)."""

FILTER_INDEXES = (
    *(
        Index(name, column, postgresql_using="gin", postgresql_ops={column: "jsonb_path_ops"})
        for name, column in (
            ("ix_work_items_assignees", "assignee_ids"),
            ("ix_work_items_labels", "labels"),
        )
    ),
    *(
        Index(
            f"ix_work_items_search_{column}",
            text(f"lower({column})"),
            postgresql_using="gin",
            postgresql_ops={f"lower({column})": "gin_trgm_ops"},
        )
        for column in ("title", "key", "description")
    ),
)
"""PostgreSQL only (migration 0019): `assigneeId` and `labels` (`@>`), and `search`'s
`LIKE '%word%'` (trigrams, where `pg_trgm` is available)."""
for _index in FILTER_INDEXES:
    _index.ddl_if(dialect="postgresql")

RARE_INDEXES = (
    Index("ix_work_items_type", "workspace_id", "type", "position", "id"),
    Index(
        "ix_work_items_flagged",
        "workspace_id",
        "position",
        "id",
        postgresql_where=text("flagged"),
        sqlite_where=text("flagged"),
    ),
    Index(
        "ix_work_items_unassigned",
        "workspace_id",
        "position",
        "id",
        postgresql_where=text("jsonb_array_length(assignee_ids) = 0"),
        sqlite_where=text("json_array_length(assignee_ids) = 0"),
    ),
)
"""A workspace's items of a type, flagged, or with no assignee, in board order (migration
0020): filters that match few items (`type = BUG`, `flagged = true`, `assignee IS EMPTY`)
read their page, and count their total, from these, not by walking the workspace."""


class WorkItem(Timestamped, Base):
    __tablename__ = "work_items"
    __table_args__ = (
        UniqueConstraint("project_id", "number"),
        # Board order is exactly `position, id` (lists and cursors), so that a page is read
        # in index order, never sorted. A project's items are always read with their
        # workspace: this index serves both.
        Index("ix_work_items_board_order", "workspace_id", "project_id", "position", "id"),
        Index("ix_work_items_workspace_order", "workspace_id", "position", "id"),
        Index("ix_work_items_workspace_key", "workspace_id", "key"),
        # A sprint's items in board order (its status is filtered on the rows): `status` in
        # no index lets a status change be a HOT update on PostgreSQL (the fill factor leaves
        # it room); `position` is in the board's index anyway.
        Index("ix_work_items_sprint", "sprint_id", "position", "id"),
        # A sprint's figures (`sprints/store.py`) from the index alone: the board's first read
        # costs its sprints' index entries, not their rows (migration 0019).
        Index("ix_work_items_sprint_figures", "sprint_id", "status_category", "story_points"),
        # Children by parent: `childCount`, and the recursive walks down a tree (progress,
        # `ancestorId`) that follow it one level at a time.
        Index("ix_work_items_parent", "parent_id"),
        # An item's status is one its project has, whatever changes at the same time: a
        # change racing a status's delete fails here and runs again (`db.must_run_again`).
        ForeignKeyConstraint(
            ["project_id", "status"],
            ["project_statuses.project_id", "project_statuses.name"],
            name=STATUS_FOREIGN_KEY,
        ),
        *SORT_INDEXES,
        *FILTER_INDEXES,
        *RARE_INDEXES,
        {"postgresql_with": {"fillfactor": 85}},
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    project_id: Mapped[str] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    sprint_id: Mapped[str | None] = mapped_column(ForeignKey("sprints.id", ondelete="SET NULL"))
    number: Mapped[int] = mapped_column(Integer)
    key: Mapped[str] = mapped_column(String(24))
    title: Mapped[str] = mapped_column(String(255))
    type: Mapped[str] = mapped_column(String(32), default="TASK")
    status: Mapped[str] = mapped_column(String(32))
    status_category: Mapped[str] = mapped_column(String(16), server_default="TODO")
    """The category of `status` in its project (`ProjectStatus`), kept with it: what "DONE"
    means everywhere (completion, points, progress, `blocked`, reports)."""
    priority: Mapped[str] = mapped_column(String(16), default="MEDIUM")
    description: Mapped[str | None] = mapped_column(Text)
    assignee_ids: Mapped[list[str]] = mapped_column(JSONValue, default=list)
    labels: Mapped[list[str]] = mapped_column(JSONValue, default=list)
    due_date: Mapped[date | None]
    estimated_hours: Mapped[float | None] = mapped_column(Float)
    story_points: Mapped[float | None] = mapped_column(Float)
    flagged: Mapped[bool] = mapped_column(Boolean, default=False)
    position: Mapped[float] = mapped_column(Float)
    comment_count: Mapped[int] = mapped_column(Integer, default=0)
    logged_hours: Mapped[float] = mapped_column(Float, default=0.0)
    # (No index: nothing reads items by their creator, and users are offboarded, not deleted.)
    created_by: Mapped[str | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    version: Mapped[int] = mapped_column(Integer, default=1)
    parent_id: Mapped[str | None] = mapped_column(ForeignKey("work_items.id", ondelete="SET NULL"))
    """The parent in the hierarchy (any project of the workspace); at most 10 levels deep."""
    custom_fields: Mapped[dict[str, Any]] = mapped_column(
        JSONValue, default=dict, server_default="{}"
    )
    """The custom fields' values by key, as the API shows them (`fields`): reads take them
    with the row; `FieldValue` indexes them for filters and sorts."""


class FieldValue(Base):
    """One custom field's value of one item, typed, for filters and sorts by index (a
    multiselect has a row per option it holds, `ordinal` its place): written with the item's
    `custom_fields` in the same transaction (`customfields.values`)."""

    __tablename__ = "work_item_field_values"
    __table_args__ = (
        Index("ix_field_values_text", "field_id", "text_value", "item_id"),
        Index("ix_field_values_number", "field_id", "number_value", "item_id"),
    )

    item_id: Mapped[str] = mapped_column(
        ForeignKey("work_items.id", ondelete="CASCADE"), primary_key=True
    )
    field_id: Mapped[str] = mapped_column(
        ForeignKey("custom_fields.id", ondelete="CASCADE"), primary_key=True
    )
    ordinal: Mapped[int] = mapped_column(Integer, primary_key=True)
    text_value: Mapped[str | None] = mapped_column(Text)
    number_value: Mapped[float | None] = mapped_column(Float)


class SavedView(Timestamped, Base):
    """A saved query (contract §18): private to its owner, or shared with the workspace."""

    __tablename__ = "saved_views"
    __table_args__ = (Index("ix_saved_views_workspace_owner", "workspace_id", "owner_id"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    owner_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(255))
    query: Mapped[str] = mapped_column(Text)
    layout: Mapped[str] = mapped_column(String(8), default="list")
    group_by: Mapped[str | None] = mapped_column(String(64))
    visible_fields: Mapped[list[str] | None] = mapped_column(JSONValue)
    shared: Mapped[bool] = mapped_column(Boolean, default=False)


class WorkItemRelation(Base):
    """A relation between two work items, stored once in its canonical direction: `blocks`
    (source blocks target), `duplicates` (source duplicates target) or `relates_to` (source
    is the lesser `$id`). `blocked_by` and `duplicated_by` are these read from the target."""

    __tablename__ = "work_item_relations"
    __table_args__ = (
        UniqueConstraint("source_id", "target_id", "type"),
        Index("ix_work_item_relations_target", "target_id"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    source_id: Mapped[str] = mapped_column(ForeignKey("work_items.id", ondelete="CASCADE"))
    target_id: Mapped[str] = mapped_column(ForeignKey("work_items.id", ondelete="CASCADE"))
    type: Mapped[str] = mapped_column(String(16))
    created_by: Mapped[str | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Comment(Timestamped, Base):
    __tablename__ = "comments"
    __table_args__ = (Index("ix_comments_item", "work_item_id", "created_at"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    work_item_id: Mapped[str] = mapped_column(ForeignKey("work_items.id", ondelete="CASCADE"))
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    author_id: Mapped[str | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    body: Mapped[str] = mapped_column(Text)


class TimeLog(Timestamped, Base):
    __tablename__ = "time_logs"
    __table_args__ = (Index("ix_time_logs_item", "work_item_id", "created_at"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    work_item_id: Mapped[str] = mapped_column(ForeignKey("work_items.id", ondelete="CASCADE"))
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    user_id: Mapped[str | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    hours: Mapped[float] = mapped_column(Float)
    day: Mapped[date]
    note: Mapped[str | None] = mapped_column(Text)


class Event(Base):
    """The outbox: one row per change, written in the transaction that makes the change."""

    __tablename__ = "events"
    __table_args__ = (
        Index("ix_events_workspace_seq", "workspace_id", "seq"),
        Index("ix_events_subject", "subject_id", "seq"),
    )

    seq: Mapped[int] = mapped_column(
        BigInteger().with_variant(Integer(), "sqlite"), primary_key=True, autoincrement=True
    )
    id: Mapped[str] = mapped_column(String(32), unique=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    type: Mapped[str] = mapped_column(String(32))
    subject_id: Mapped[str] = mapped_column(String(32))
    actor_id: Mapped[str | None] = mapped_column(String(32))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    """`json`, not `jsonb`: stored and read back whole, never queried into (migration 0003)."""
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Notification(Timestamped, Base):
    """A user's in-app inbox entry about a change to a work item."""

    __tablename__ = "notifications"
    __table_args__ = (Index("ix_notifications_user_read", "user_id", "read", "created_at"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    event_id: Mapped[str] = mapped_column(String(32))
    type: Mapped[str] = mapped_column(String(32))
    work_item_id: Mapped[str] = mapped_column(String(32))
    work_item_key: Mapped[str] = mapped_column(String(24))
    work_item_title: Mapped[str] = mapped_column(String(255))
    actor_id: Mapped[str | None] = mapped_column(String(32))
    changes: Mapped[dict[str, Any]] = mapped_column(JSONValue)
    read: Mapped[bool] = mapped_column(Boolean, default=False)


class Webhook(Timestamped, Base):
    __tablename__ = "webhooks"

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(
        ForeignKey("workspaces.id", ondelete="CASCADE"), index=True
    )
    url: Mapped[str] = mapped_column(String(2048))
    events: Mapped[list[str]] = mapped_column(JSONValue)
    secret_encrypted: Mapped[str | None] = mapped_column(Text)
    """The signing secret, sealed with the server key (`serverkey.SecretBox`)."""
    legacy_secret: Mapped[str | None] = mapped_column("secret", String(128))
    """A secret stored in plain text before migration 0005; the first command that knows
    the server key seals it and empties this (`webhooks.seal_legacy_secrets`)."""
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    disabled_reason: Mapped[str | None] = mapped_column(Text)
    failing_since: Mapped[datetime | None]
    created_by: Mapped[str | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))


class WebhookDelivery(Timestamped, Base):
    """One event for one webhook; its `id` is the `webhook-id`, stable across retries."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        UniqueConstraint("webhook_id", "event_seq"),
        Index("ix_webhook_deliveries_due", "status", "next_attempt_at"),
        Index("ix_webhook_deliveries_subject", "webhook_id", "subject_id", "event_seq"),
    )

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    webhook_id: Mapped[str] = mapped_column(ForeignKey("webhooks.id", ondelete="CASCADE"))
    event_seq: Mapped[int | None] = mapped_column(BigInteger().with_variant(Integer(), "sqlite"))
    """The event delivered; none for a `ping`, whose body is `payload`."""
    event_id: Mapped[str] = mapped_column(String(32))
    event_type: Mapped[str] = mapped_column(String(32))
    subject_id: Mapped[str] = mapped_column(String(32))
    status: Mapped[str] = mapped_column(String(16), default="PENDING")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime | None]
    last_attempt_at: Mapped[datetime | None]
    response_status: Mapped[int | None] = mapped_column(Integer)
    last_error: Mapped[str | None] = mapped_column(Text)
    delivered_at: Mapped[datetime | None]
    payload: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    """The body's `data` of a delivery that has no event (a `ping`)."""


class MailMessage(Timestamped, Base):
    """The mail outbox: one mail, written in the transaction of the change it tells of and
    sent by the delivery loop (`mail/delivery.py`), never by a request. Its body may hold a
    link's token, so it is sealed with the server key and emptied once sent."""

    __tablename__ = "mail_outbox"
    __table_args__ = (Index("ix_mail_outbox_due", "status", "next_attempt_at"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    kind: Mapped[str] = mapped_column(String(32))
    """`invitation`, `password_reset` or `notifications`."""
    recipient: Mapped[str] = mapped_column(String(320))
    subject: Mapped[str] = mapped_column(String(255))
    body_sealed: Mapped[str | None] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16), default="PENDING")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime | None]
    last_error: Mapped[str | None] = mapped_column(Text)
    sent_at: Mapped[datetime | None]


class NotificationMail(Base):
    """A notification waiting to be mailed to a user who opted in; written with the
    notification (`events.service.write_staged`), used up when its mail is written."""

    __tablename__ = "notification_mails"
    __table_args__ = (Index("ix_notification_mails_user", "user_id", "created_at"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    notification_id: Mapped[str] = mapped_column(ForeignKey("notifications.id", ondelete="CASCADE"))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class IdempotentRequest(Base):
    """A POST made with an `Idempotency-Key`, and the response it got (kept 24 hours)."""

    __tablename__ = "idempotent_requests"
    __table_args__ = (UniqueConstraint("api_key_id", "idempotency_key"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    api_key_id: Mapped[str] = mapped_column(ForeignKey("api_keys.id", ondelete="CASCADE"))
    idempotency_key: Mapped[str] = mapped_column(String(255))
    request_hash: Mapped[str] = mapped_column(String(64))
    status_code: Mapped[int | None] = mapped_column(Integer)
    response_body: Mapped[bytes | None]
    response_headers: Mapped[dict[str, Any] | None] = mapped_column(JSONValue)
    created_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)


class Integration(Timestamped, Base):
    """A forge (GitHub, GitLab, Gitea) that sends a workspace its webhooks (contract §20). It
    acts through a user of its own (`user_id`): no member, no key, so it can do nothing but
    what its hooks do, and an item's history names it."""

    __tablename__ = "integrations"

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(
        ForeignKey("workspaces.id", ondelete="CASCADE"), index=True
    )
    provider: Mapped[str] = mapped_column(String(16))
    name: Mapped[str] = mapped_column(String(255))
    secret_encrypted: Mapped[str] = mapped_column(Text)
    """The secret the forge signs with, sealed with the server key (`serverkey.SecretBox`)."""
    on_open: Mapped[str | None] = mapped_column(String(32))
    on_merge: Mapped[str | None] = mapped_column(String(32))
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id"))
    created_by: Mapped[str | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))


class IntegrationDelivery(Base):
    """A delivery id an integration has acted on: its primary key makes a repeat (or two
    copies at once) a no-op, in the transaction that makes the delivery's changes."""

    __tablename__ = "integration_deliveries"

    integration_id: Mapped[str] = mapped_column(
        ForeignKey("integrations.id", ondelete="CASCADE"), primary_key=True
    )
    delivery_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    received_at: Mapped[datetime] = mapped_column(default=utcnow)


class WorkItemLink(Timestamped, Base):
    """A pull request or commit that names a work item (contract §20): one per item and
    pull request (`ref`: its address), one per item and commit (`ref`: its sha)."""

    __tablename__ = "work_item_links"
    __table_args__ = (UniqueConstraint("work_item_id", "ref"),)

    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)
    workspace_id: Mapped[str] = mapped_column(ForeignKey("workspaces.id", ondelete="CASCADE"))
    work_item_id: Mapped[str] = mapped_column(ForeignKey("work_items.id", ondelete="CASCADE"))
    integration_id: Mapped[str | None] = mapped_column(
        ForeignKey("integrations.id", ondelete="SET NULL")
    )
    provider: Mapped[str] = mapped_column(String(16))
    kind: Mapped[str] = mapped_column(String(16))
    ref: Mapped[str] = mapped_column(String(64))
    """SHA-256 (hex) of what names the pull request or commit at its forge."""
    url: Mapped[str | None] = mapped_column(String(2048))
    title: Mapped[str | None] = mapped_column(Text)
    number: Mapped[int | None] = mapped_column(BigInteger)
    sha: Mapped[str | None] = mapped_column(String(64))
    state: Mapped[str | None] = mapped_column(String(16))
    author: Mapped[str | None] = mapped_column(String(255))
    source_updated_at: Mapped[datetime | None]
    """The forge's own `updated_at` of the newest delivery applied: an older one arriving
    late does not undo it."""

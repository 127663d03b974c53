"""Engine and sessions.

Handlers are `async` but talk to the database synchronously. On SQLite they do so in the event
loop: every request's transaction is a few short statements, so one process runs its
transactions one after another. That is what SQLite wants anyway (one writer), it avoids a
thread hand-off per request, and it measured several times faster than SQLAlchemy's async
bridge. On PostgreSQL, where each statement is a round trip, a request runs in a thread of
its own (`http.deps.REQUEST_THREADS` at a time), so that requests overlap their waits. Scale comes
from more processes; across processes, SQLite writes take the lock up front with
`BEGIN IMMEDIATE` and PostgreSQL relies on row locks.
"""

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import orjson
import psycopg
from anyio import CapacityLimiter, to_thread
from psycopg.types.json import set_json_loads
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.orm import Session, sessionmaker

from sprintboard.models import STATUS_FOREIGN_KEY
from sprintboard.sql import READS, WRITES, AutocommitReads

WRITE_OPTION = "sprintboard_write"
T = TypeVar("T")

_RUN_AGAIN = frozenset({"40P01", "40001"})  # deadlock_detected, serialization_failure
_FOREIGN_KEY_VIOLATION = "23503"


def must_run_again(error: BaseException) -> bool:
    """Whether PostgreSQL aborted the transaction only to let others through (a deadlock's
    victim), or because a check it made came true meanwhile (an item moved to a status that
    a concurrent delete removed: `models.STATUS_FOREIGN_KEY`): run again from the start, it
    goes through (or is refused as it should be) once the others are done."""
    cause = error.orig if isinstance(error, DBAPIError) else error  # (raw driver SQL too)
    if not isinstance(cause, psycopg.Error):
        return False
    if cause.sqlstate == _FOREIGN_KEY_VIOLATION:
        return cause.diag.constraint_name == STATUS_FOREIGN_KEY
    return cause.sqlstate in _RUN_AGAIN


CONNECT_TIMEOUT = 5
"""Seconds to wait for a PostgreSQL connection before the request gets 503 UNAVAILABLE."""


def is_unavailable(error: BaseException) -> bool:
    """Whether `error` says the database cannot be used right now (unreachable, restarting,
    out of connections, locked past the busy timeout), not that the request was wrong: the
    answer is 503 UNAVAILABLE with `Retry-After`, never a 500."""
    if isinstance(error, PoolTimeout):
        return True
    cause = error.orig if isinstance(error, DBAPIError) else error  # (raw driver SQL too)
    return isinstance(cause, psycopg.OperationalError | sqlite3.OperationalError)


def normalize_url(url: str) -> URL:
    """Accept plain `postgresql://` URLs and pick the psycopg 3 driver for them."""
    parsed = make_url(url)
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed


def make_engine(url: str) -> Engine:
    parsed = normalize_url(url)
    if parsed.get_backend_name() == "sqlite":
        engine = create_engine(parsed, connect_args={"check_same_thread": False})
        _configure_sqlite(engine)
        return engine
    # Pre-ping: a pooled connection that died while idle (the server restarted) is replaced
    # at checkout instead of failing the request that drew it (the audit saw one 500 per
    # stale connection after a restart). It costs a write request one round trip; reads run
    # on kept connections (`sql.AutocommitReads`), which re-run their statement instead.
    engine = create_engine(
        parsed,
        pool_size=10,
        max_overflow=20,
        pool_recycle=1800,
        pool_pre_ping=True,
        connect_args={}
        if "connect_timeout" in parsed.query
        else {"connect_timeout": CONNECT_TIMEOUT},
    )

    @event.listens_for(engine, "connect")
    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        # jsonb values decoded by orjson: the standard library's decoder took half the time
        # of fetching a sprint's 5,000 items.
        set_json_loads(orjson.loads, dbapi_connection)
        # No JIT compilation: a walk down a tree is estimated at tens of children a level,
        # so past its cost threshold a 3 ms statement spent 100 ms to 2.7 s compiling.
        # (A statement, not a startup option, which PgBouncer would refuse.)
        autocommit, dbapi_connection.autocommit = dbapi_connection.autocommit, True
        dbapi_connection.execute("SET jit = off")
        dbapi_connection.autocommit = autocommit

    return engine


def _configure_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take transaction control away from the driver so that `begin` below decides.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA busy_timeout=10000")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()
        # Case-insensitive search beyond ASCII, as PostgreSQL's LOWER gives it.
        dbapi_connection.create_function("unicode_lower", 1, _unicode_lower, deterministic=True)

    @event.listens_for(engine, "begin")
    def on_begin(connection: Any) -> None:
        write = connection.get_execution_options().get(WRITE_OPTION, False)
        # On the driver's connection: SQLAlchemy's own execute path would cost ten times more.
        connection.connection.driver_connection.execute("BEGIN IMMEDIATE" if write else "BEGIN")


def _unicode_lower(value: Any) -> Any:
    """Lower case one character for one, as PostgreSQL's `lower` does: Python's makes the
    one letter with a longer lower case, `İ`, into `i` and a combining dot."""
    if not isinstance(value, str):
        return value
    return value.replace("\u0130", "i").lower() if "\u0130" in value else value.lower()


class AppSession(Session):
    """A session that skips closing when it was never used (most read requests use only
    plain SQL, see `Database.session`): closing an unused session still cost ~15 µs.
    """

    def close(self) -> None:
        if self.in_transaction() or self.identity_map or self.new:
            super().close()


class Database:
    def __init__(self, url: str) -> None:
        self.url = url
        self.engine = make_engine(url)
        # Write sessions' connections carry the write option from their engine: set on each
        # connection instead, it cost every write request a round of option processing.
        self._sessions = sessionmaker(
            self.engine.execution_options(**{WRITE_OPTION: True}),
            class_=AppSession,
            expire_on_commit=False,
            autoflush=False,
        )
        reads_engine = (
            self.engine.execution_options(isolation_level="AUTOCOMMIT")
            if self.dialect == "postgresql"
            else self.engine
        )
        self._read_sessions = sessionmaker(
            reads_engine, class_=AppSession, expire_on_commit=False, autoflush=False
        )
        self._reads = AutocommitReads(self.engine)

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    def session(self, *, write: bool) -> Session:
        """A new session; `write` sessions lock the SQLite database when they begin.

        A read-only session runs its plain SQL (`sql.raw`) in autocommit on a connection
        kept for such reads (`AutocommitReads`): every statement still sees only committed
        data, and the request saves the BEGIN and COMMIT (round trips, on PostgreSQL), the
        pool checkout and the ORM's transaction set-up, which were most of a one-row read's
        cost. Its ORM statements, if any, run in autocommit too on PostgreSQL, in a read
        transaction on SQLite.
        """
        if write:
            session = self._sessions()
            session.info[WRITES] = True
            session.connection()  # begins now: on SQLite, BEGIN IMMEDIATE takes the write lock
        else:
            session = self._read_sessions()
            session.info[READS] = self._reads
        return session

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """A write session committed on success, rolled back on error (CLI and workers)."""
        session = self.session(write=True)
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise
        finally:
            session.close()

    async def call(
        self, function: Callable[..., T], *args: Any, limiter: CapacityLimiter | None = None
    ) -> T:
        """`function(*args)`, which uses the database: in the event loop on SQLite, in a thread
        on PostgreSQL (at most `limiter`'s number at once, if given), where a statement waits
        on a round trip or on another transaction's lock, and the loop must not wait with it.
        Requests (`deps.TransactionalRoute`) and middleware go through here."""
        if self.dialect == "sqlite":
            return function(*args)
        return await to_thread.run_sync(function, *args, limiter=limiter)

    def dispose(self) -> None:
        self._reads.close()
        self.engine.dispose()

"""Hand-written SQL for the hot paths, run on the request session's own DB-API connection.

SQLAlchemy builds, caches and executes a statement in 100-350 µs on the machines we measure
on; the driver runs the same statement in about 10 µs. The handful of statements every
request makes (authentication, loading a work item, a list page) therefore go through here:
plain SQL with `:name` parameters, inside the same transaction as everything else the request
does. Everything else keeps using SQLAlchemy.

Values come back as the driver gives them, which differs by database (SQLite returns
timestamps and JSON as text); a `Codec` turns them into API values.
"""

import re
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, date, datetime
from functools import lru_cache
from operator import itemgetter
from typing import Any, TypeVar

import orjson
from psycopg.types.json import Jsonb
from sqlalchemy import Engine, PoolProxiedConnection
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from sprintboard.models import stored_timestamp
from sprintboard.responses import iso

_NAMED = re.compile(r"(?<![:\w]):([a-z_][a-z0-9_]*)")


def in_list(prefix: str, values: Iterable[Any]) -> tuple[str, dict[str, Any]]:
    """`(:p0, :p1, ...)` for `column IN`, and its parameters (`p` being `prefix`)."""
    params = {f"{prefix}{i}": value for i, value in enumerate(values)}
    return f"({', '.join(':' + name for name in params)})", params


def insert_rows(
    driver: Any, *, postgresql: bool, table: str, columns: Sequence[str], rows: Iterable[Any]
) -> None:
    """Many rows into `table` in one go, on the driver's own connection: `executemany` with
    positional parameters on SQLite (named ones cost it a search per parameter), `COPY` on
    PostgreSQL (values as `COPY` parses them: JSON as text). Either takes the rows one at a
    time: an iterator of them is never held whole."""
    names = ", ".join(f'"{column}"' for column in columns)
    if not postgresql:
        marks = ", ".join("?" * len(columns))
        cursor = driver.cursor()
        try:
            cursor.executemany(f"INSERT INTO {table} ({names}) VALUES ({marks})", rows)
        finally:
            cursor.close()
        return
    with driver.cursor() as cursor, cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


_DIALECTS: dict[str, Any] = {}


def render(expression: Any, dialect: str, prefix: str) -> tuple[str, dict[str, Any]]:
    """A SQLAlchemy expression (a query's condition, `queries/`) as hand-written SQL with
    `:name` parameters for `Raw`, and those parameters, each name given `prefix` so that it
    cannot meet the statement's own."""
    if dialect not in _DIALECTS:
        made = sqlite.dialect if dialect == "sqlite" else postgresql.dialect
        _DIALECTS[dialect] = made(paramstyle="named")
    compiled = expression.compile(
        dialect=_DIALECTS[dialect], compile_kwargs={"render_postcompile": True}
    )
    params = compiled.params
    sql = _NAMED.sub(
        lambda found: f":{prefix}{found[1]}" if found[1] in params else found[0], str(compiled)
    )
    return sql, {f"{prefix}{name}": value for name, value in params.items()}


@lru_cache(maxsize=512)
def _for_postgres(sql: str) -> str:
    """`:name` → `%(name)s` (psycopg's style); a literal `%` doubles."""
    return _NAMED.sub(r"%(\1)s", sql.replace("%", "%%"))


class Codec:
    """Turns driver values into API values, for one database."""

    def __init__(self, dialect: str) -> None:
        self.sqlite = dialect == "sqlite"

    def timestamp(self, value: Any) -> str | None:
        """`2026-11-22T09:30:00.000Z` from a stored timestamp."""
        if value is None:
            return None
        if isinstance(value, str):  # SQLite: "2026-11-22 09:30:00.000000", always UTC
            return f"{value[:10]}T{value[11:23]}Z"
        return iso(value)

    def day(self, value: Any) -> str | None:
        if value is None or isinstance(value, str):
            return value
        day: date = value
        return day.isoformat()

    def json(self, value: Any) -> Any:
        return orjson.loads(value) if isinstance(value, str | bytes) else value

    def bool(self, value: Any) -> bool:
        return bool(value)

    def moment(self, value: Any) -> datetime | None:
        """A stored timestamp as an aware UTC datetime."""
        if value is None:
            return None
        if isinstance(value, str):
            return datetime.fromisoformat(value).replace(tzinfo=UTC)
        moment: datetime = value.astimezone(UTC)
        return moment

    def timestamp_column(self, column: str) -> str:
        """How to select a timestamp `column` as the API shows it, so that the driver's value
        is the answer's: psycopg's timestamptz loader and the formatting after it cost more
        than the query, and a list page has a hundred timestamps. SQLite stores
        `2026-11-22 09:30:00.000000`, always UTC.
        """
        if self.sqlite:
            return f"substr({column}, 1, 10) || 'T' || substr({column}, 12, 12) || 'Z'"
        # (The format must stay upper case: `:mi` would read as a `:name` parameter.)
        return f"""to_char({column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')"""

    def json_column(self, column: str) -> str:
        """How to select a JSON `column`: as text, which `json` decodes (psycopg's jsonb
        loader costs about a microsecond a value more)."""
        return column if self.sqlite else f"{column}::text"

    def day_column(self, column: str) -> str:
        """How to select a date `column`: as `YYYY-MM-DD` text, as SQLite stores it."""
        return column if self.sqlite else f"to_char({column}, 'YYYY-MM-DD')"

    def json_param(self, value: Any) -> Any:
        """A JSON value as a parameter (text on SQLite, jsonb on PostgreSQL)."""
        return orjson.dumps(value).decode() if self.sqlite else Jsonb(value)

    def day_param(self, day: date | None) -> Any:
        return day.isoformat() if self.sqlite and day is not None else day

    def param(self, moment: datetime) -> Any:
        """A timestamp as a parameter, as its column stores it (`models.stored_timestamp`)."""
        return stored_timestamp(moment, sqlite=self.sqlite)


T = TypeVar("T")
Getter = Callable[[Sequence[Any]], Any]
"""What reads some columns of a row (`Columns.getter`)."""


class Columns:
    """The columns of one statement's rows by name: `columns["version"]` is where a row holds
    `version`. Made once per statement (`Raw.fetch`), with what decodes its rows (`made`), so
    a row is read by name at the cost of reading it by position.
    """

    __slots__ = ("_at", "_made")

    def __init__(self, names: Iterable[str]) -> None:
        self._at = {name: index for index, name in enumerate(names)}
        self._made: dict[Any, Any] = {}

    def __getitem__(self, name: str) -> int:
        return self._at[name]

    def __contains__(self, name: str) -> bool:
        return name in self._at

    def getter(self, *names: str) -> Getter:
        """A function of a row giving these columns (one value, or a tuple of several)."""
        return itemgetter(*(self._at[name] for name in names))

    def made(self, make: Callable[["Columns"], T]) -> T:
        """`make(self)`, made once for these columns (a decoder of their rows)."""
        found = self._made.get(make)
        if found is None:
            found = self._made[make] = make(self)
        result: T = found
        return result


_COLUMNS: dict[tuple[str, str], Columns] = {}


def _columns_of(dialect: str, sql: str, description: Sequence[Sequence[Any]]) -> Columns:
    """The `Columns` of a statement, kept by its text (a few hundred distinct statements)."""
    found = _COLUMNS.get((dialect, sql))
    if found is None:
        if len(_COLUMNS) > 2048:  # (statements with IN lists vary; never grow without end)
            _COLUMNS.clear()
        found = _COLUMNS[dialect, sql] = Columns(column[0] for column in description)
    return found


class Raw:
    """A DB-API connection, for plain SQL: the session's own inside a write request's
    transaction, or one in autocommit for a read request (`AutocommitReads`).

    `locks_rows`: a write session's on PostgreSQL, where plain-SQL row locks apply
    (`access.row_lock`).
    """

    def __init__(self, dialect: str, dbapi_connection: Any, *, locks_rows: bool = False) -> None:
        self.dialect = dialect
        self.codec = Codec(self.dialect)
        self.locks_rows = locks_rows and not self.codec.sqlite
        self._dbapi = dbapi_connection

    def rows(self, sql: str, params: Mapping[str, Any] | None = None) -> list[Sequence[Any]]:
        cursor = self.run(sql, params)
        try:
            return list(cursor.fetchall())
        finally:
            cursor.close()

    def row(self, sql: str, params: Mapping[str, Any] | None = None) -> Sequence[Any] | None:
        rows = self.rows(sql, params)
        return rows[0] if rows else None

    def fetch(
        self, sql: str, params: Mapping[str, Any] | None = None
    ) -> tuple[list[Sequence[Any]], Columns]:
        """`rows`, and their columns by name (as the statement names them: `AS` aliases)."""
        cursor = self.run(sql, params)
        try:
            return list(cursor.fetchall()), _columns_of(self.dialect, sql, cursor.description)
        finally:
            cursor.close()

    def fetch_one(
        self, sql: str, params: Mapping[str, Any] | None = None
    ) -> tuple[Sequence[Any] | None, Columns]:
        """`fetch` for at most one row."""
        rows, columns = self.fetch(sql, params)
        return (rows[0] if rows else None), columns

    def execute(self, sql: str, params: Mapping[str, Any] | None = None) -> int:
        """Run a statement that returns no rows; returns the row count."""
        cursor = self.run(sql, params)
        try:
            return int(cursor.rowcount)
        finally:
            cursor.close()

    def execute_many(self, sql: str, rows: Sequence[Mapping[str, Any]]) -> None:
        """Run one statement for many parameter sets (pipelined by psycopg)."""
        if not rows:
            return
        self.run(sql, rows[0]).close()  # through `run`, so statement counters see it
        cursor = self._dbapi.cursor()
        try:
            cursor.executemany(sql if self.codec.sqlite else _for_postgres(sql), rows[1:])
        finally:
            cursor.close()

    def run(self, sql: str, params: Mapping[str, Any] | None = None) -> Any:
        """Every statement goes through here: an open cursor that has executed `sql`."""
        cursor = self._dbapi.cursor()
        cursor.execute(sql if self.codec.sqlite else _for_postgres(sql), params or {})
        return cursor


class AutocommitReads:
    """The plain SQL of read-only requests, in autocommit on one connection per thread that
    is kept while the thread lives: no transaction to begin or end, no pool checkout, and no
    ORM transaction set up for it. Each statement sees what was committed when it ran, as
    PostgreSQL's READ COMMITTED would give anyway; a request's ORM statements, if any, run
    on its session's own connection.

    Sharing is safe because a thread runs one request at a time (the event loop on SQLite,
    a request thread on PostgreSQL), each statement is fetched in full, and autocommit leaves
    no state behind between statements. A thread's connection goes back to the pool when the
    thread ends (its thread-local data is dropped then), when it is found broken, or when
    the database is disposed of.
    """

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self.dialect = engine.dialect.name
        self._local = threading.local()
        self._held: list[PoolProxiedConnection] = []
        self._lock = threading.Lock()

    def raw(self) -> Raw:
        kept: _Kept | None = getattr(self._local, "kept", None)
        if kept is None or _broken(kept.connection):
            kept = self._local.kept = self._keep()
        return kept.raw

    def _keep(self) -> "_Kept":
        raw = _KeptRaw(self, *self._connect())
        kept = _Kept(raw)
        weakref.finalize(kept, self._give_back_current, raw)  # (not `kept`: it is going)
        return kept

    def _connect(self) -> tuple[PoolProxiedConnection, Any]:
        connection = self._engine.raw_connection()
        driver_connection: Any = connection.driver_connection
        if self._engine.dialect.name == "postgresql":
            driver_connection.autocommit = True
        # (SQLite connections are always in autocommit until a BEGIN; see db.py.)
        with self._lock:
            self._held.append(connection)
        return connection, driver_connection

    def _give_back_current(self, raw: "_KeptRaw") -> None:
        self._give_back(raw.connection)

    def _give_back(self, connection: PoolProxiedConnection) -> None:
        with self._lock:
            if connection not in self._held:
                return  # already given back (the database was disposed of)
            self._held.remove(connection)
        if not _broken(connection):
            try:
                if self._engine.dialect.name == "postgresql":
                    driver_connection: Any = connection.driver_connection
                    driver_connection.autocommit = False
                connection.close()
                return
            except Exception:  # lost meanwhile: drop it below
                pass
        connection.invalidate()

    def close(self) -> None:
        """Give every kept connection back (when the database is disposed of)."""
        with self._lock:
            held = list(self._held)
        for connection in held:
            self._give_back(connection)
        self._local = threading.local()


class _KeptRaw(Raw):
    """The `Raw` of a kept read connection. A statement that finds the connection dropped by
    the server (a restart while it sat idle) runs again, once, on a new one, instead of
    failing its request: safe because it is a read in autocommit, so it changed nothing and
    nothing earlier in the request depends on that connection."""

    def __init__(
        self, reads: AutocommitReads, connection: PoolProxiedConnection, driver_connection: Any
    ) -> None:
        super().__init__(reads.dialect, driver_connection)
        self.reads = reads
        self.connection = connection

    def run(self, sql: str, params: Mapping[str, Any] | None = None) -> Any:
        try:
            return super().run(sql, params)
        except Exception:
            if not _broken(self.connection):
                raise
        self.reads._give_back(self.connection)
        self.connection, self._dbapi = self.reads._connect()
        return super().run(sql, params)


class _Kept:
    """A thread's kept connection; when the thread ends, this goes and the connection with it."""

    __slots__ = ("__weakref__", "raw")

    def __init__(self, raw: _KeptRaw) -> None:
        self.raw = raw

    @property
    def connection(self) -> PoolProxiedConnection:
        return self.raw.connection


def _broken(connection: PoolProxiedConnection) -> bool:
    """Whether the server dropped the connection (psycopg notices on the failed statement),
    or it was given back already: a re-run that found the database still down (a restart
    under way) leaves its thread holding the invalidated connection, to replace next time."""
    driver_connection = connection.driver_connection
    if driver_connection is None:
        return True
    return bool(
        getattr(driver_connection, "broken", False) or getattr(driver_connection, "closed", False)
    )


READS = "sprintboard_reads"
"""`session.info` key of a read-only session's `AutocommitReads`."""
WRITES = "sprintboard_writes"
"""`session.info` key marking a write session (see `access.for_change`)."""


def raw(session: Session) -> Raw:
    """The `Raw` for the session: its read connection, or its current transaction's."""
    reads: AutocommitReads | None = session.info.get(READS)
    if reads is not None:
        return reads.raw()
    cached: tuple[Any, Raw] | None = session.info.get("raw")
    transaction = session.get_transaction()
    if cached is None or transaction is None or cached[0] is not transaction:
        connection = session.connection()  # begins the transaction if none is open
        made = Raw(
            connection.dialect.name,
            connection.connection.dbapi_connection,
            locks_rows=bool(session.info.get(WRITES)),
        )
        cached = session.info["raw"] = (session.get_transaction(), made)
    return cached[1]

"""`sprintboard backup FILE` and `sprintboard restore FILE` (contract §23).

A backup is a consistent copy taken while the service runs: on SQLite, the online backup API
(one read transaction, so writers carry on under WAL and the copy is one moment); on
PostgreSQL, `pg_dump --format=custom` (one snapshot). The copy is written beside FILE under
another name and renamed into place, so FILE is never half a copy.

A restore loads a copy into the database `SPRINTBOARD_DATABASE_URL` names, which must hold
nothing yet. "Holds something" is precise and checked before anything is written:

- SQLite: the file exists and has any table at all (`sqlite_master`); a missing or
  table-less file is empty. A file that is not a SQLite database is refused too.
- PostgreSQL: any table, view, materialized view, sequence or foreign table in any schema
  but the system ones (`pg_catalog`, `information_schema`, `pg_toast`, temporary schemas).
  A new database, with its empty `public` schema, is empty. `pg_restore` then runs in one
  transaction, stopping at the first error, so a failed restore leaves nothing behind.

Neither kind of copy holds the server key (§14): it lives in `SPRINTBOARD_SECRET_KEY` or, on
SQLite without it, in the `.secret-key` file beside the database, and both commands say so.
"""

import os
import secrets
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sqlalchemy.engine import URL, make_url

from sprintboard.config import Settings

COMMANDS = ("backup", "restore")
SQLITE_MAGIC = b"SQLite format 3\x00"
PG_DUMP_MAGIC = b"PGDMP"


class Refused(Exception):
    """The request cannot be carried out as asked (exit 2); nothing was changed."""


class Failed(Exception):
    """Something went wrong while carrying it out (exit 1); nothing was changed."""


def add_commands(commands: Any) -> None:
    """Adds both to the CLI's subparsers (argparse's private `_SubParsersAction`)."""
    backup = commands.add_parser(
        "backup",
        help="write a consistent copy of the database to FILE, while the service runs",
        description="Write a consistent copy of SPRINTBOARD_DATABASE_URL to FILE while the "
        "service keeps running. SQLite: a SQLite file, through SQLite's online backup. "
        "PostgreSQL: pg_dump's custom format (pg_dump is looked up on PATH; its major version "
        "must be the server's or newer). FILE is replaced whole, never left half-written. "
        "The server key (SPRINTBOARD_SECRET_KEY, or the .secret-key file beside a SQLite "
        "database) is NOT in the copy: keep it apart from the copy, as safely. "
        "Exit status: 0 done, 1 failed, 2 refused.",
    )
    backup.add_argument("file", type=Path, metavar="FILE", help="where to write the copy")
    restore = commands.add_parser(
        "restore",
        help="load a copy made by `backup` into an empty database",
        description="Load FILE (made by `sprintboard backup`) into the database "
        "SPRINTBOARD_DATABASE_URL names, which must be empty: a SQLite file that is missing "
        "or has no table, or a PostgreSQL database with no table, view or sequence outside "
        "the system schemas (a new one). A database that holds anything is refused with "
        "exit status 2 and left as it was. PostgreSQL uses pg_restore from PATH, in one "
        "transaction. Stop the service using the target first; afterwards, set the original "
        "server key (SPRINTBOARD_SECRET_KEY, or copy the .secret-key file beside the SQLite "
        "database) before starting it, or webhook secrets cannot be read. A copy from an "
        "older release is brought up to date by `sprintboard migrate` (or `serve`). "
        "Exit status: 0 done, 1 failed, 2 refused.",
    )
    restore.add_argument("file", type=Path, metavar="FILE", help="a copy made by `backup`")


def run(command: str, file: Path, settings: Settings) -> int:
    """Runs `backup` or `restore`; progress and the outcome go to standard error."""
    url = make_url(settings.database_url)
    try:
        if command == "backup":
            _backup(url, file)
            _say(_key_reminder(url, settings, restored=False))
        else:
            _restore(url, file)
            _say(_key_reminder(url, settings, restored=True))
    except Refused as error:
        _say(f"sprintboard: {error}")
        return 2
    except Failed as error:
        _say(f"sprintboard: {error}")
        return 1
    return 0


def _backup(url: URL, file: Path) -> None:
    if not file.parent.is_dir():
        raise Failed(f"no directory {file.parent} to write {file.name} in")
    draft = file.with_name(f".{file.name}.{secrets.token_hex(6)}.partial")
    try:
        if url.get_backend_name() == "sqlite":
            _say(f"backing up SQLite database {url.database} to {file} ...")
            pages = _sqlite_backup(_sqlite_path(url), file, draft)
            what = f"{pages} pages"
        else:
            pg_dump = _program("pg_dump")
            _say(f"backing up PostgreSQL database {url.database} to {file} with {pg_dump} ...")
            _run_program(
                [pg_dump, "--format=custom", "--no-password", f"--file={draft}", _libpq(url)],
                url,
            )
            what = "pg_dump custom format"
        os.replace(draft, file)
    except OSError as error:
        raise Failed(f"cannot write {file}: {error.strerror or error}") from None
    finally:
        draft.unlink(missing_ok=True)
    _say(f"backup written: {file} ({what}, {file.stat().st_size} bytes)")


def _sqlite_backup(database: Path, file: Path, draft: Path) -> int:
    if not database.is_file():
        raise Failed(f"no SQLite database at {database}")
    if file.exists() and file.resolve() == database.resolve():
        raise Refused(f"{file} is the database itself; choose another file")
    try:
        source = sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as error:
        raise Failed(f"cannot open {database}: {error}") from None
    try:
        copy = sqlite3.connect(draft)
        try:
            # All pages in one step: one read transaction, so the copy is one moment of the
            # database; under WAL, writers are not held up by it.
            source.backup(copy)
            # One self-contained file, whatever journal mode the database runs in.
            copy.execute("PRAGMA journal_mode=DELETE")
            pages: int = copy.execute("PRAGMA page_count").fetchone()[0]
        finally:
            copy.close()
    except sqlite3.Error as error:
        raise Failed(f"cannot back up {database}: {error}") from None
    finally:
        source.close()
    return pages


def _restore(url: URL, file: Path) -> None:
    try:
        with file.open("rb") as opened:
            head = opened.read(len(SQLITE_MAGIC))
    except OSError as error:
        raise Refused(f"cannot read {file}: {error.strerror or error}") from None
    sqlite = url.get_backend_name() == "sqlite"
    if sqlite and not head.startswith(SQLITE_MAGIC):
        kind = "a PostgreSQL backup" if head.startswith(PG_DUMP_MAGIC) else "not a SQLite backup"
        raise Refused(f"{file} is {kind}; SPRINTBOARD_DATABASE_URL names a SQLite database")
    if not sqlite and not head.startswith(PG_DUMP_MAGIC):
        kind = "a SQLite backup" if head.startswith(SQLITE_MAGIC) else "not a pg_dump backup"
        raise Refused(f"{file} is {kind}; SPRINTBOARD_DATABASE_URL names a PostgreSQL database")
    if sqlite:
        target = _sqlite_path(url)
        _say(f"restoring {file} into SQLite database {target} ...")
        _sqlite_restore(file, target)
    else:
        pg_restore = _program("pg_restore")
        _say(f"restoring {file} into PostgreSQL database {url.database} with {pg_restore} ...")
        _refuse_unless_postgres_empty(url)
        _run_program(
            [
                pg_restore,
                "--single-transaction",  # (all or nothing)
                "--exit-on-error",
                "--no-owner",  # (the restoring role owns what it creates)
                "--no-privileges",
                "--no-password",
                f"--dbname={_libpq(url)}",
                str(file),
            ],
            url,
        )
    _say(f"restored {file}")


def _sqlite_restore(file: Path, target: Path) -> None:
    if target.exists() and target.resolve() == file.resolve():
        raise Refused(f"{file} is the database itself")
    try:
        source = sqlite3.connect(f"{file.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.Error as error:
        raise Refused(f"cannot open {file}: {error}") from None
    try:
        try:
            tables = _sqlite_tables(source)
        except sqlite3.DatabaseError as error:
            raise Refused(f"{file} is not a usable SQLite backup: {error}") from None
        if "alembic_version" not in tables:
            raise Refused(f"{file} is not a sprintboard backup (it has no alembic_version)")
        if target.exists():
            _refuse_unless_sqlite_empty(target)
        elif not target.parent.is_dir():
            raise Failed(f"no directory {target.parent} for {target}")
        try:
            destination = sqlite3.connect(target)
            try:
                source.backup(destination)
            finally:
                destination.close()
        except sqlite3.Error as error:
            raise Failed(f"cannot restore into {target}: {error}") from None
    finally:
        source.close()


def _refuse_unless_sqlite_empty(target: Path) -> None:
    try:
        existing = sqlite3.connect(f"{target.resolve().as_uri()}?mode=ro", uri=True)
        try:
            tables = _sqlite_tables(existing)
        finally:
            existing.close()
    except sqlite3.DatabaseError as error:
        message = f"{target} is not an empty SQLite database ({error}); nothing changed"
        raise Refused(message) from None
    if tables:
        raise Refused(
            f"{target} holds {len(tables)} tables (e.g. {sorted(tables)[0]}); restore needs a "
            "database without tables: nothing changed"
        )


def _sqlite_tables(connection: sqlite3.Connection) -> set[str]:
    rows = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return {row[0] for row in rows}


_POSTGRES_RELATIONS = """
    SELECT n.nspname || '.' || c.relname
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
      AND n.nspname NOT IN ('pg_catalog', 'information_schema')
      AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp\\_%'
    ORDER BY 1
"""


def _refuse_unless_postgres_empty(url: URL) -> None:
    from sqlalchemy import create_engine, text
    from sqlalchemy.exc import OperationalError

    from sprintboard.db import normalize_url

    engine = create_engine(normalize_url(url.render_as_string(hide_password=False)))
    try:
        with engine.connect() as connection:
            relations = list(connection.scalars(text(_POSTGRES_RELATIONS)))
    except OperationalError as error:
        reason = str(error.orig).strip().splitlines()[0] if error.orig else str(error)
        raise Failed(f"cannot use the database: {reason}") from None
    finally:
        engine.dispose()
    if relations:
        raise Refused(
            f"database {url.database} holds {len(relations)} tables, views or sequences "
            f"(e.g. {relations[0]}); restore needs a new, empty database: nothing changed"
        )


def _sqlite_path(url: URL) -> Path:
    if not url.database or url.database == ":memory:" or url.database.startswith("file:"):
        raise Refused(f"cannot back up or restore SQLite database {url.database!r}: not a file")
    return Path(url.database)


def _program(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise Failed(
            f"{name} was not found on PATH; install PostgreSQL's client programs (Debian: "
            f"postgresql-client) of the server's major version or newer"
        )
    return found


def _libpq(url: URL) -> str:
    """The URL as libpq takes it: no SQLAlchemy driver name, no password (that goes in the
    environment, never on a command line others can read)."""
    return url.set(drivername="postgresql", password=None).render_as_string(hide_password=False)


def _run_program(arguments: list[str], url: URL) -> None:
    environment: Mapping[str, str] = os.environ
    if url.password is not None:
        environment = {**os.environ, "PGPASSWORD": str(url.password)}
    done = subprocess.run(arguments, env=environment, capture_output=True, text=True, check=False)
    for line in done.stderr.splitlines():
        _say(f"{Path(arguments[0]).name}: {line}")
    if done.returncode != 0:
        raise Failed(f"{Path(arguments[0]).name} failed (exit status {done.returncode})")


def _key_reminder(url: URL, settings: Settings, *, restored: bool) -> str:
    from sprintboard.serverkey import KEY_FILE_SUFFIX

    key_file = None
    if settings.secret_key is None and url.get_backend_name() == "sqlite" and url.database:
        key_file = f"{url.database}{KEY_FILE_SUFFIX}"
    if not restored:
        where = f"the file {key_file}" if key_file else "SPRINTBOARD_SECRET_KEY's value"
        return (
            f"reminder: the server key is not in the copy: keep {where} as safely, apart "
            f"from the copy; webhook secrets cannot be read without it"
        )
    where = (
        f"put the original key file at {key_file} (or set SPRINTBOARD_SECRET_KEY to it)"
        if key_file
        else "make sure SPRINTBOARD_SECRET_KEY is the original deployment's key"
    )
    return (
        f"reminder: the server key is not in the copy: before starting the service, {where}; "
        f"webhook secrets cannot be read without it"
    )


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)

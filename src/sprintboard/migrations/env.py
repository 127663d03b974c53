"""Alembic environment: one history for SQLite and PostgreSQL.

Migrations run under a lock (an advisory lock on PostgreSQL, `BEGIN IMMEDIATE` on SQLite), so
several instances starting at once apply each migration exactly once.

On SQLite a migration that changes a table rebuilds it (batch mode): a copy, then `DROP TABLE`
of the old one, which with foreign keys on deletes, through `ON DELETE CASCADE`, every row
that points at it (a project's rebuild would take its members' keys, an item's its
comments). So foreign keys are off while migrations run (a pragma only a connection outside a
transaction can set), and `PRAGMA foreign_key_check` must find nothing before they commit.
"""

from alembic import context
from sqlalchemy import Connection, text

from sprintboard.db import WRITE_OPTION, make_engine
from sprintboard.models import Base

MIGRATION_LOCK_ID = 7_312_001

config = context.config
engine = make_engine(config.get_main_option("sqlalchemy.url") or "")


def _check_foreign_keys(connection: Connection) -> None:
    broken = connection.execute(text("PRAGMA foreign_key_check")).all()
    if broken:
        raise RuntimeError(f"migrations left rows whose foreign keys point nowhere: {broken[:5]}")


try:
    with engine.connect() as connection:
        sqlite = connection.dialect.name == "sqlite"
        if sqlite:
            connection.connection.driver_connection.execute("PRAGMA foreign_keys=OFF")  # type: ignore[union-attr]
        connection.execution_options(**{WRITE_OPTION: True})
        context.configure(
            connection=connection,
            target_metadata=Base.metadata,
            render_as_batch=True,
            compare_type=True,
        )
        with context.begin_transaction():
            if connection.dialect.name == "postgresql":
                connection.execute(text(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK_ID})"))
            context.run_migrations()
            if sqlite:
                _check_foreign_keys(connection)
        if sqlite:
            connection.connection.driver_connection.execute("PRAGMA foreign_keys=ON")  # type: ignore[union-attr]
finally:
    engine.dispose()

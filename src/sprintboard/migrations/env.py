"""Alembic environment: one history for SQLite and PostgreSQL.

Migrations run under a lock (an advisory lock on PostgreSQL, `BEGIN IMMEDIATE` on SQLite), so
several instances starting at once apply each migration exactly once.
"""

from alembic import context
from sqlalchemy import text

from sprintboard.db import WRITE_OPTION, make_engine
from sprintboard.models import Base

MIGRATION_LOCK_ID = 7_312_001

config = context.config
engine = make_engine(config.get_main_option("sqlalchemy.url") or "")
try:
    with engine.connect() as connection:
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
finally:
    engine.dispose()

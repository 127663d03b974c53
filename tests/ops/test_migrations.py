"""The migrations alone build the schema the models describe, on SQLite and PostgreSQL, and
upgrade a database without losing a row."""

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Column, create_engine, text
from sqlalchemy.engine import make_url

from sprintboard.db import Database
from sprintboard.migrations import alembic_config, migrate
from sprintboard.models import Base
from tests.conftest import BACKENDS, POSTGRES_ADMIN_URL


def _modelled(name: str | None, kind: str, _: object) -> bool:
    """The text index (0016) is each database's own kind of table (PostgreSQL's `tsvector`
    table, SQLite's FTS5 tables), kept by triggers, outside the models."""
    return not (kind == "table" and name is not None and name.startswith("work_item_search"))


# Expression indexes (the sorts', migration 0019) are not reflected on SQLite, and PostgreSQL
# rewrites their expressions (`'LOW'::text`) past what Alembic compares; GIN ones are
# PostgreSQL's alone. Their names are checked here, their use by `tests/workitems/test_plans.py`.
@pytest.mark.filterwarnings("ignore:Skipped unsupported reflection of expression-based index")
@pytest.mark.filterwarnings("ignore:autogenerate skipping metadata-specified expression-based")
def test_migrated_schema_matches_the_models(database: Database) -> None:
    special = {
        index.name: index
        for table in Base.metadata.tables.values()
        for index in table.indexes
        if any(not isinstance(e, Column) for e in index.expressions)
        or index.dialect_options["postgresql"].get("using")
    }

    def compared(obj: object, name: str | None, type_: str, *_: object) -> bool:
        return not (type_ == "index" and name in special)

    with database.engine.connect() as connection:
        sqlite = connection.dialect.name == "sqlite"
        context = MigrationContext.configure(
            connection,
            opts={"compare_type": True, "include_object": compared, "include_name": _modelled},
        )
        differences = compare_metadata(context, Base.metadata)
        names = "SELECT name FROM sqlite_master" if sqlite else "SELECT indexname FROM pg_indexes"
        present = set(connection.execute(text(names)).scalars())
    assert differences == []
    expected = {
        name
        for name, index in special.items()
        if not (sqlite and index.dialect_options["postgresql"].get("using"))
    }
    assert expected <= present


NOW = "2026-01-01 00:00:00"
ROWS_AT_0001 = [
    (
        "users",
        {
            "id": "u1",
            "name": "Ada",
            "email": "a@example.com",
            "email_normalized": "a@example.com",
            "is_org_admin": True,
        },
    ),
    ("workspaces", {"id": "w1", "name": "W"}),
    (
        "api_keys",
        {"id": "k1", "user_id": "u1", "name": "k", "prefix": "sb_x", "secret_hash": "h" * 64},
    ),
    ("workspace_members", {"id": "m1", "workspace_id": "w1", "user_id": "u1", "role": "OWNER"}),
    (
        "projects",
        {"id": "p1", "workspace_id": "w1", "name": "P", "key": "P", "last_item_number": 1},
    ),
    (
        "sprints",
        {
            "id": "s1",
            "workspace_id": "w1",
            "project_id": "p1",
            "name": "S",
            "status": "ACTIVE",
            "position": 1,
            "version": 1,
        },
    ),
    (
        "work_items",
        {
            "id": "i1",
            "workspace_id": "w1",
            "project_id": "p1",
            "sprint_id": "s1",
            "number": 1,
            "key": "P-1",
            "title": "T",
            "type": "TASK",
            "status": "TODO",
            "priority": "MEDIUM",
            "assignee_ids": "[]",
            "labels": "[]",
            "flagged": False,
            "position": 1,
            "comment_count": 1,
            "logged_hours": 1,
            "created_by": "u1",
            "version": 1,
        },
    ),
    (
        "comments",
        {"id": "c1", "work_item_id": "i1", "workspace_id": "w1", "author_id": "u1", "body": "b"},
    ),
    (
        "time_logs",
        {
            "id": "t1",
            "work_item_id": "i1",
            "workspace_id": "w1",
            "user_id": "u1",
            "hours": 1,
            "day": "2026-01-01",
        },
    ),
    (
        "webhooks",
        {
            "id": "h1",
            "workspace_id": "w1",
            "url": "https://example.com/",
            "events": "[]",
            "secret": "s",
            "enabled": True,
            "created_by": "u1",
        },
    ),
]
"""A row in each table that has a foreign key, as the first revision's schema takes it."""


@pytest.fixture(params=BACKENDS)
def unmigrated_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A database of its own with no schema at all."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'old.db'}"
        return
    name = f"sb_migrate_{uuid.uuid4().hex[:12]}"
    admin = create_engine(POSTGRES_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    yield make_url(POSTGRES_ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def test_upgrading_a_database_keeps_every_row(unmigrated_url: str) -> None:
    # SQLite migrations rebuild tables (batch mode): with foreign keys on, dropping the old
    # table would delete, through ON DELETE CASCADE, the rows that point at it.
    command.upgrade(alembic_config(unmigrated_url), "0001")
    engine = create_engine(unmigrated_url)
    with engine.begin() as connection:
        for table, row in ROWS_AT_0001:
            row = {**row, "created_at": NOW, "updated_at": NOW}
            names = ", ".join(f'"{column}"' for column in row)
            values = ", ".join(f":{column}" for column in row)
            connection.execute(text(f"INSERT INTO {table} ({names}) VALUES ({values})"), row)
    engine.dispose()
    migrate(unmigrated_url)
    engine = create_engine(unmigrated_url)
    with engine.connect() as connection:
        for table, row in ROWS_AT_0001:
            kept = connection.execute(text(f"SELECT id FROM {table}")).scalars().all()
            assert kept == [row["id"]], table
        assert connection.execute(text("SELECT sprint_id FROM work_items")).scalar() == "s1"
        if connection.dialect.name == "sqlite":
            assert connection.execute(text("PRAGMA foreign_key_check")).all() == []
    engine.dispose()

"""The migrations alone build the schema the models describe, on SQLite and PostgreSQL."""

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from sprintboard.db import Database
from sprintboard.models import Base


def test_migrated_schema_matches_the_models(database: Database) -> None:
    with database.engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        differences = compare_metadata(context, Base.metadata)
    assert differences == []

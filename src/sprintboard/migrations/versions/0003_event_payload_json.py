"""Event payloads as `json`, not `jsonb`, on PostgreSQL.

A payload is only ever stored and read back whole, never queried into, and writing `jsonb`
costs PostgreSQL a parse into its binary form: half the time of copying a sprint
completion's 5,000 events. `json` keeps the text as written (key order included). SQLite
stores JSON as text either way.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22 06:20:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.alter_column("events", "payload", type_=sa.JSON(), postgresql_using="payload::json")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.alter_column(
            "events", "payload", type_=postgresql.JSONB(), postgresql_using="payload::jsonb"
        )

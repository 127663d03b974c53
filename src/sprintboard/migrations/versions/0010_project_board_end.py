"""The end of each project's board kept on its row, as its item count is: a create takes its
default position from the row it locks for its number, instead of reading the board under
that lock.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-26 00:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("projects") as batch_op:
        batch_op.add_column(sa.Column("board_end", sa.Float(), server_default="0", nullable=False))
    op.execute(
        "UPDATE projects SET board_end = coalesce("
        " (SELECT max(position) FROM work_items WHERE work_items.project_id = projects.id), 0)"
    )


def downgrade() -> None:
    # (Not a batch operation: on SQLite that copies the table, and dropping the old one would
    # cascade to every work item. SQLite drops a column itself since 3.35.)
    op.execute("ALTER TABLE projects DROP COLUMN board_end")

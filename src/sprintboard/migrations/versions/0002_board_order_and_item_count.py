"""Board-order indexes that end in id; a maintained per-project item count.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 02:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ORDER = ["position", "created_at", "id"]


def upgrade() -> None:
    with op.batch_alter_table("projects") as batch_op:
        batch_op.add_column(
            sa.Column("item_count", sa.Integer(), server_default="0", nullable=False)
        )
    op.execute(
        "UPDATE projects SET item_count ="
        " (SELECT count(*) FROM work_items WHERE work_items.project_id = projects.id)"
    )
    op.drop_index("ix_work_items_project_order", table_name="work_items")
    op.drop_index("ix_work_items_workspace_order", table_name="work_items")
    op.create_index("ix_work_items_project_order", "work_items", ["project_id", *ORDER])
    op.create_index(
        "ix_work_items_board_order", "work_items", ["workspace_id", "project_id", *ORDER]
    )
    op.create_index("ix_work_items_workspace_order", "work_items", ["workspace_id", *ORDER])


def downgrade() -> None:
    op.drop_index("ix_work_items_workspace_order", table_name="work_items")
    op.drop_index("ix_work_items_board_order", table_name="work_items")
    op.drop_index("ix_work_items_project_order", table_name="work_items")
    op.create_index(
        "ix_work_items_workspace_order", "work_items", ["workspace_id", "position", "created_at"]
    )
    op.create_index(
        "ix_work_items_project_order", "work_items", ["project_id", "position", "created_at"]
    )
    with op.batch_alter_table("projects") as batch_op:
        batch_op.drop_column("item_count")

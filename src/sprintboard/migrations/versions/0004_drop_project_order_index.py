"""Drop `ix_work_items_project_order`: `ix_work_items_board_order` serves what it served.

Every read of a project's items also names its workspace (`workspace_id, project_id, ...` is
the board order's prefix), and the project's foreign key is covered by the unique
`(project_id, number)`. One index fewer is one b-tree page fewer to write on every create,
and one entry fewer to move for each item a sprint completion or a bulk update moves.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22 08:20:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_index("ix_work_items_project_order", table_name="work_items")


def downgrade() -> None:
    op.create_index(
        "ix_work_items_project_order",
        "work_items",
        ["project_id", "position", "created_at", "id"],
    )

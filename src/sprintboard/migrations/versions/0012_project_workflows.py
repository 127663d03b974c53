"""Statuses per project (`project_statuses`), each item's status category kept on its row
(`work_items.status_category`), and the workflow's transition rules (`projects.transitions`).

Every existing project gets the five built-in statuses, and every item the category of its
status, so that nothing behaves differently until a project changes its workflow.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-28 05:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BUILT_IN = (
    ("BACKLOG", "Backlog", "BACKLOG"),
    ("TODO", "Todo", "TODO"),
    ("IN_PROGRESS", "In progress", "IN_PROGRESS"),
    ("IN_REVIEW", "In review", "IN_PROGRESS"),
    ("DONE", "Done", "DONE"),
)


def upgrade() -> None:
    op.create_table(
        "project_statuses",
        sa.Column("project_id", sa.String(32), nullable=False),
        sa.Column("name", sa.String(32), nullable=False),
        sa.Column("label", sa.String(64), nullable=False),
        sa.Column("category", sa.String(16), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name="fk_project_statuses_project_id_projects",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("project_id", "name", name="pk_project_statuses"),
    )
    for position, (name, label, category) in enumerate(BUILT_IN):
        op.execute(
            sa.text(
                "INSERT INTO project_statuses (project_id, name, label, category, position)"
                " SELECT id, :name, :label, :category, :position FROM projects"
            ).bindparams(name=name, label=label, category=category, position=position)
        )
    op.add_column(
        "work_items",
        sa.Column("status_category", sa.String(16), server_default="TODO", nullable=False),
    )
    op.execute(
        "UPDATE work_items SET status_category = CASE status"
        " WHEN 'IN_REVIEW' THEN 'IN_PROGRESS' ELSE status END"
    )
    # (SQLite copies the table to add a foreign key; the migrations run with its foreign keys
    # off, so the copy cascades nowhere.)
    with op.batch_alter_table("work_items") as batch_op:
        batch_op.alter_column("status", type_=sa.String(32), existing_type=sa.String(16))
        batch_op.create_foreign_key(
            "fk_work_items_status_project_statuses",
            "project_statuses",
            ["project_id", "status"],
            ["project_id", "name"],
        )
    op.add_column(
        "projects",
        sa.Column("transitions", sa.JSON().with_variant(JSONB(), "postgresql"), nullable=True),
    )


def downgrade() -> None:
    op.execute("ALTER TABLE projects DROP COLUMN transitions")
    with op.batch_alter_table("work_items") as batch_op:
        batch_op.drop_constraint("fk_work_items_status_project_statuses", type_="foreignkey")
        batch_op.drop_column("status_category")
    op.drop_table("project_statuses")

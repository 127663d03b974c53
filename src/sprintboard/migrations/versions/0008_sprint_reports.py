"""Sprint reports: when a sprint started, the history its report is computed from, and the
report a completion freezes.

Sprints started before this revision get `started_at` from their `sprint.started` event; their
history was not recorded, so their reports count only what changes after it (README).

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25 21:10:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SEQ = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    with op.batch_alter_table("sprints") as batch_op:
        batch_op.add_column(sa.Column("started_at", sa.DateTime(timezone=True), nullable=True))
    op.execute(
        "UPDATE sprints SET started_at = (SELECT min(events.created_at) FROM events"
        " WHERE events.subject_id = sprints.id AND events.type = 'sprint.started')"
        " WHERE status <> 'PLANNED'"
    )
    op.create_table(
        "sprint_history",
        sa.Column("id", SEQ, autoincrement=True, nullable=False),
        sa.Column("sprint_id", sa.String(length=32), nullable=False),
        sa.Column("seq", SEQ, nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("work_item_id", sa.String(length=32), nullable=False),
        sa.Column("key", sa.String(length=24), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("points", sa.Float(), nullable=True),
        sa.Column("done", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sprint_history")),
    )
    op.create_index("ix_sprint_history_sprint", "sprint_history", ["sprint_id", "seq"])
    op.create_table(
        "sprint_reports",
        sa.Column("sprint_id", sa.String(length=32), nullable=False),
        sa.Column("project_id", sa.String(length=32), nullable=False),
        sa.Column("completed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("committed_points", sa.Float(), nullable=False),
        sa.Column("completed_points", sa.Float(), nullable=False),
        sa.Column("completed_items", sa.Integer(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["sprint_id"],
            ["sprints.id"],
            name=op.f("fk_sprint_reports_sprint_id_sprints"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["project_id"],
            ["projects.id"],
            name=op.f("fk_sprint_reports_project_id_projects"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("sprint_id", name=op.f("pk_sprint_reports")),
    )
    op.create_index("ix_sprint_reports_project", "sprint_reports", ["project_id", "completed_at"])


def downgrade() -> None:
    op.drop_index("ix_sprint_reports_project", table_name="sprint_reports")
    op.drop_table("sprint_reports")
    op.drop_index("ix_sprint_history_sprint", table_name="sprint_history")
    op.drop_table("sprint_history")
    with op.batch_alter_table("sprints") as batch_op:
        batch_op.drop_column("started_at")

"""Work item hierarchy (`work_items.parent_id`) and relations (`work_item_relations`).

`ix_work_items_parent` serves `childCount` and the recursive walks down a tree (progress,
the `ancestorId` filter), one index probe per item reached.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25 21:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("work_items") as batch:
        batch.add_column(sa.Column("parent_id", sa.String(length=32), nullable=True))
        batch.create_foreign_key(
            op.f("fk_work_items_parent_id_work_items"),
            "work_items",
            ["parent_id"],
            ["id"],
            ondelete="SET NULL",
        )
        batch.create_index("ix_work_items_parent", ["parent_id"])
    op.create_table(
        "work_item_relations",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("source_id", sa.String(length=32), nullable=False),
        sa.Column("target_id", sa.String(length=32), nullable=False),
        sa.Column("type", sa.String(length=16), nullable=False),
        sa.Column("created_by", sa.String(length=32), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_work_item_relations_workspace_id_workspaces"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["source_id"],
            ["work_items.id"],
            name=op.f("fk_work_item_relations_source_id_work_items"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["target_id"],
            ["work_items.id"],
            name=op.f("fk_work_item_relations_target_id_work_items"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["created_by"],
            ["users.id"],
            name=op.f("fk_work_item_relations_created_by_users"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_work_item_relations")),
        sa.UniqueConstraint(
            "source_id",
            "target_id",
            "type",
            name=op.f("uq_work_item_relations_source_id_target_id_type"),
        ),
    )
    op.create_index("ix_work_item_relations_target", "work_item_relations", ["target_id"])


def downgrade() -> None:
    op.drop_index("ix_work_item_relations_target", table_name="work_item_relations")
    op.drop_table("work_item_relations")
    with op.batch_alter_table("work_items") as batch:
        batch.drop_index("ix_work_items_parent")
        batch.drop_constraint(op.f("fk_work_items_parent_id_work_items"), type_="foreignkey")
        batch.drop_column("parent_id")

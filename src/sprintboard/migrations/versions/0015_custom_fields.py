"""Custom fields (contract §17): a workspace's field definitions (`custom_fields`), each
item's values as the API shows them (`work_items.custom_fields`, JSON, read with the row),
and the same values typed, one row each (`work_item_field_values`), for filters and sorts
served by an index on both databases.

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-28 07:20:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "custom_fields",
        sa.Column("id", sa.String(32), nullable=False),
        sa.Column("workspace_id", sa.String(32), nullable=False),
        sa.Column("key", sa.String(32), nullable=False),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("type", sa.String(16), nullable=False),
        sa.Column("options", _JSON, nullable=True),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name="fk_custom_fields_workspace_id_workspaces",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_custom_fields"),
        sa.UniqueConstraint("workspace_id", "key", name="uq_custom_fields_workspace_id_key"),
    )
    op.add_column(
        "work_items",
        sa.Column("custom_fields", _JSON, server_default="{}", nullable=False),
    )
    op.create_table(
        "work_item_field_values",
        sa.Column("item_id", sa.String(32), nullable=False),
        sa.Column("field_id", sa.String(32), nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("text_value", sa.Text(), nullable=True),
        sa.Column("number_value", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(
            ["item_id"],
            ["work_items.id"],
            name="fk_work_item_field_values_item_id_work_items",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["field_id"],
            ["custom_fields.id"],
            name="fk_work_item_field_values_field_id_custom_fields",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("item_id", "field_id", "ordinal", name="pk_work_item_field_values"),
    )
    op.create_index(
        "ix_field_values_text", "work_item_field_values", ["field_id", "text_value", "item_id"]
    )
    op.create_index(
        "ix_field_values_number", "work_item_field_values", ["field_id", "number_value", "item_id"]
    )


def downgrade() -> None:
    op.drop_table("work_item_field_values")
    with op.batch_alter_table("work_items") as batch_op:
        batch_op.drop_column("custom_fields")
    op.drop_table("custom_fields")

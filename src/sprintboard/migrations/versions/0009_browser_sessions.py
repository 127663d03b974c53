"""Browser sessions: the `sb_session` cookie's token, stored only as its hash (contract §13).

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-25 21:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "browser_sessions",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("api_key_id", sa.String(length=32), nullable=False),
        sa.Column("user_id", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["api_key_id"],
            ["api_keys.id"],
            name=op.f("fk_browser_sessions_api_key_id_api_keys"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_browser_sessions_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_browser_sessions")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_browser_sessions_token_hash")),
    )
    with op.batch_alter_table("browser_sessions", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_browser_sessions_api_key_id"), ["api_key_id"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_browser_sessions_user_id"), ["user_id"], unique=False)
        batch_op.create_index(
            batch_op.f("ix_browser_sessions_last_used_at"), ["last_used_at"], unique=False
        )


def downgrade() -> None:
    op.drop_table("browser_sessions")

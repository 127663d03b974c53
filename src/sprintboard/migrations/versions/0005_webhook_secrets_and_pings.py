"""Webhook secrets sealed with the server key; deliveries without an event (`ping`).

`webhooks.secret_encrypted` holds the secret encrypted with `SPRINTBOARD_SECRET_KEY`. A
migration cannot count on having that key, so the plain `secret` column stays (nullable) for
the secrets written before this revision: the first command run with the key after it
(`serve`, `worker`, `migrate`, `create-admin` all migrate first) seals them and empties the
column (`events.webhooks.seal_legacy_secrets`).

`webhook_deliveries.event_seq` becomes nullable and `payload` is added: a `ping` delivery
(`POST /webhooks/{id}/test`) carries its own body and belongs to no event.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-25 21:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("webhooks") as batch:
        batch.add_column(sa.Column("secret_encrypted", sa.Text(), nullable=True))
        batch.alter_column("secret", existing_type=sa.String(128), nullable=True)
    with op.batch_alter_table("webhook_deliveries") as batch:
        batch.add_column(sa.Column("payload", sa.JSON(), nullable=True))
        batch.alter_column(
            "event_seq",
            existing_type=sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            nullable=True,
        )


def downgrade() -> None:
    # (Secrets sealed since cannot be opened here, without the key: those webhooks are lost.)
    op.execute("DELETE FROM webhook_deliveries WHERE event_seq IS NULL")
    op.execute("DELETE FROM webhooks WHERE secret IS NULL")
    with op.batch_alter_table("webhook_deliveries") as batch:
        batch.alter_column(
            "event_seq",
            existing_type=sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            nullable=False,
        )
        batch.drop_column("payload")
    with op.batch_alter_table("webhooks") as batch:
        batch.alter_column("secret", existing_type=sa.String(128), nullable=False)
        batch.drop_column("secret_encrypted")

"""A workspace's list sorted by a field reads its page in an index's order, as a project's
does since 0019, and its rare filters find their rows through an index (issues 26 and 28).

Queries and saved views run over a whole workspace (`GET /tasks?workspaceId=…&q=… ORDER BY
priority DESC`, no `projectId`): with only the project-led indexes, such a list sorted every
matching item of the workspace before its `LIMIT`. Each index here is 0019's with
`workspace_id` in front instead of `project_id`: the sort's expressions (empty values last),
then `position, id` ascending. Filters that match few items walked the workspace's board
order to the end to fill a page (and count its total): `type = BUG` (an index by type),
`flagged = true` and `assignee IS EMPTY` (partial indexes of just those items).

The price, as for 0019: eleven more index entries per item created (and one in each partial
index an item is in), and two more per change (the `updated_at` pair). On PostgreSQL each
index is built in the upgrade's transaction, which blocks writes to `work_items` for as
long as that takes.

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-28 11:20:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_RANK = "(CASE priority WHEN 'LOW' THEN 0 WHEN 'MEDIUM' THEN 1 WHEN 'HIGH' THEN 2 ELSE 3 END)"
_SORTED_BY = {
    "priority": [_RANK],
    "due_date": ["(due_date IS NULL)", "due_date"],
    "story_points": ["(story_points IS NULL)", "story_points"],
    "created_at": ["created_at"],
    "updated_at": ["updated_at"],
}


def _indexes() -> dict[str, list[str]]:
    indexes = {}
    for field, expressions in _SORTED_BY.items():
        *first, last = expressions
        for direction in ("asc", "desc"):
            ordered = f"{last} DESC" if direction == "desc" else last
            indexes[f"ix_work_items_wsort_{field}_{direction}"] = [*first, ordered]
    return indexes


_BOARD_ORDER = ["workspace_id", "position", "id"]


def upgrade() -> None:
    for name, columns in _indexes().items():
        op.create_index(
            name, "work_items", ["workspace_id", *(sa.text(c) for c in columns), "position", "id"]
        )
    op.create_index("ix_work_items_type", "work_items", ["workspace_id", "type", "position", "id"])
    flagged = sa.text("flagged")
    op.create_index(
        "ix_work_items_flagged",
        "work_items",
        _BOARD_ORDER,
        postgresql_where=flagged,
        sqlite_where=flagged,
    )
    length = "json_array_length" if op.get_bind().dialect.name == "sqlite" else "jsonb_array_length"
    unassigned = sa.text(f"{length}(assignee_ids) = 0")
    op.create_index(
        "ix_work_items_unassigned",
        "work_items",
        _BOARD_ORDER,
        postgresql_where=unassigned,
        sqlite_where=unassigned,
    )


def downgrade() -> None:
    for name in ["ix_work_items_unassigned", "ix_work_items_flagged", "ix_work_items_type"]:
        op.drop_index(name, table_name="work_items")
    for name in _indexes():
        op.drop_index(name, table_name="work_items")

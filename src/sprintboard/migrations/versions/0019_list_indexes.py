"""Every sort of a project's list reads its page in an index's order, and on PostgreSQL the
`assigneeId`, `labels` and `search` filters find their rows through an index (issue 26).

A sort by anything but `position` sorted the whole workspace before its `LIMIT` (430-475 ms
at 100,000 items on PostgreSQL). Each index is the list's `ORDER BY` exactly, after the
project: the sort's expressions (empty values last), then `position, id` ascending, so each
direction of a field has its own. PostgreSQL also gets GIN indexes on the JSON arrays of
assignees and labels (`@>`) and, where the `pg_trgm` extension is available (it is trusted:
a database owner may create it), trigram indexes for `search`'s `LIKE '%word%'`. A sprint's
figures (items, points, points done) are read from an index of their own: the board's first
read, `GET /sprints?projectId`, costs its sprints' index entries rather than their rows.

The price: each index is one more entry to write per item created, and the one on
`updated_at` one more per change (no change of an item can then be a HOT update on
PostgreSQL, as every change moves `updated_at`). On PostgreSQL each index is built in the
upgrade's transaction, which blocks writes to `work_items` for as long as that takes.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-28 07:20:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
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
_GIN = {"ix_work_items_assignees": "assignee_ids", "ix_work_items_labels": "labels"}
_TRIGRAM = {
    "ix_work_items_search_title": "lower(title)",
    "ix_work_items_search_key": "lower(key)",
    "ix_work_items_search_description": "lower(description)",
}


def _sort_indexes() -> dict[str, list[str]]:
    indexes = {}
    for field, expressions in _SORTED_BY.items():
        *first, last = expressions
        for direction in ("asc", "desc"):
            ordered = f"{last} DESC" if direction == "desc" else last
            indexes[f"ix_work_items_sort_{field}_{direction}"] = [*first, ordered]
    return indexes


def _has_trigrams() -> bool:
    return bool(
        op.get_bind().scalar(
            sa.text("SELECT count(*) FROM pg_available_extensions WHERE name = 'pg_trgm'")
        )
    )


def upgrade() -> None:
    op.create_index(
        "ix_work_items_sprint_figures",
        "work_items",
        ["sprint_id", "status_category", "story_points"],
    )
    for name, columns in _sort_indexes().items():
        op.create_index(
            name, "work_items", ["project_id", *(sa.text(c) for c in columns), "position", "id"]
        )
    if op.get_bind().dialect.name != "postgresql":
        return
    for name, column in _GIN.items():
        op.execute(f"CREATE INDEX {name} ON work_items USING gin ({column} jsonb_path_ops)")
    if _has_trigrams():
        op.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        for name, expression in _TRIGRAM.items():
            op.execute(f"CREATE INDEX {name} ON work_items USING gin (({expression}) gin_trgm_ops)")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for name in [*_GIN, *_TRIGRAM]:
            op.execute(f"DROP INDEX IF EXISTS {name}")
    for name in _sort_indexes():
        op.drop_index(name, table_name="work_items")
    op.drop_index("ix_work_items_sprint_figures", table_name="work_items")

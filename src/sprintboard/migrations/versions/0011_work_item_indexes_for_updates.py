"""Work items' indexes for cheaper updates: `ix_work_items_sprint` on `sprint_id` alone (was
`sprint_id, status`), no `ix_work_items_created_by`, and on PostgreSQL a fill factor of 85.

With `status` in an index, every status change that moves nothing (the drawer, a bulk update
of 500 statuses) wrote a new entry into every index of the row on PostgreSQL (no HOT update)
and moved an entry on SQLite; every read by sprint filters its status on the rows anyway.
Now a change to none of the indexed columns (`status`, `title`, points, assignees...) can
be a HOT update, which the free tenth of each page left by the fill factor keeps possible
(pages written from now on; a `VACUUM FULL` applies it to the old ones). A repeated bulk
status change of 500 items went from 30-160 ms to 5-15 ms in psql. No query reads items by
`created_by`, and users are never deleted (they are offboarded, 0006): that index only cost
each insert and each move of an item (a sprint completion's 5,000) an entry.

The price: a list filtered on both a sprint and a status (`GET /tasks?sprintId=&status=`, as
the MCP `find_items` tool may send it; the board and the backlog read a sprint's items
unfiltered) now filters the sprint's rows, or walks the board order, for the status: EXPLAIN
on a 100,000-item project took 24-32 ms instead of 0.1 ms when the sprint held no item of
that status. Every other read by sprint (its items, figures, completion, the sprints page)
kept its plan on `ix_work_items_sprint`. On PostgreSQL, building the new index blocks writes
to `work_items` for as long as it takes (it runs in the upgrade's transaction).

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-26 06:00:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_index("ix_work_items_sprint", table_name="work_items")
    op.create_index("ix_work_items_sprint", "work_items", ["sprint_id"])
    op.drop_index("ix_work_items_created_by", table_name="work_items")
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE work_items SET (fillfactor = 85)")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE work_items RESET (fillfactor)")
    op.create_index("ix_work_items_created_by", "work_items", ["created_by"])
    op.drop_index("ix_work_items_sprint", table_name="work_items")
    op.create_index("ix_work_items_sprint", "work_items", ["sprint_id", "status"])

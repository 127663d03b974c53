"""Saved views and full-text search (contract §18).

`saved_views` holds the views. Full-text search (`text ~`): each database's own text index
over an item's title, description and comments, kept by triggers in the transaction that
changes them.

PostgreSQL: `work_item_search` holds one `tsvector` per item (the `simple` configuration:
whole words, case folded, no stemming), with a GIN index. SQLite: an FTS5 table of the same
name (`unicode61`, diacritics kept, as `simple` keeps them) whose rows are numbered by
`work_item_search_rows` (an item's `$id` → its document), since a table's own rowid may
change on VACUUM. Neither is in `models.py`: they are the databases' own kinds of table,
which `queries/compiler.py` reads and only these triggers write. The upgrade indexes every
existing item.

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-28 07:20:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_PG_TEXT = (
    "left(wi.title || ' ' || coalesce(wi.description, '') || ' ' || coalesce("
    "(SELECT string_agg(c.body, ' ' ORDER BY c.created_at) FROM comments c"
    " WHERE c.work_item_id = wi.id), ''), 500000)"
)
"""An item's words (capped well under a `tsvector`'s 1 MB, so that no write fails on it)."""

_POSTGRESQL = [
    "CREATE TABLE work_item_search (work_item_id VARCHAR(32) NOT NULL PRIMARY KEY"
    " REFERENCES work_items (id) ON DELETE CASCADE, document tsvector NOT NULL)",
    "CREATE INDEX ix_work_item_search_document ON work_item_search USING gin (document)",
    f"""CREATE FUNCTION work_item_search_refresh(item varchar) RETURNS void LANGUAGE sql AS $$
    INSERT INTO work_item_search (work_item_id, document)
    SELECT wi.id, to_tsvector('simple', {_PG_TEXT}) FROM work_items wi WHERE wi.id = item
    ON CONFLICT (work_item_id) DO UPDATE SET document = EXCLUDED.document
    $$""",
    """CREATE FUNCTION work_item_search_item() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN PERFORM work_item_search_refresh(NEW.id); RETURN NULL; END $$""",
    """CREATE FUNCTION work_item_search_comment() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'DELETE' THEN PERFORM work_item_search_refresh(OLD.work_item_id);
        ELSE PERFORM work_item_search_refresh(NEW.work_item_id);
        END IF;
        RETURN NULL;
    END $$""",
    "CREATE TRIGGER work_item_search_insert AFTER INSERT ON work_items"
    " FOR EACH ROW EXECUTE FUNCTION work_item_search_item()",
    "CREATE TRIGGER work_item_search_update AFTER UPDATE OF title, description ON work_items"
    " FOR EACH ROW WHEN (OLD.title IS DISTINCT FROM NEW.title"
    " OR OLD.description IS DISTINCT FROM NEW.description)"
    " EXECUTE FUNCTION work_item_search_item()",
    "CREATE TRIGGER work_item_search_comments AFTER INSERT OR DELETE OR UPDATE OF body"
    " ON comments FOR EACH ROW EXECUTE FUNCTION work_item_search_comment()",
    f"INSERT INTO work_item_search (work_item_id, document)"
    f" SELECT wi.id, to_tsvector('simple', {_PG_TEXT}) FROM work_items wi",
]
_POSTGRESQL_DOWN = [
    "DROP TRIGGER work_item_search_comments ON comments",
    "DROP TRIGGER work_item_search_update ON work_items",
    "DROP TRIGGER work_item_search_insert ON work_items",
    "DROP FUNCTION work_item_search_comment()",
    "DROP FUNCTION work_item_search_item()",
    "DROP FUNCTION work_item_search_refresh(varchar)",
    "DROP TABLE work_item_search",
]


def _sqlite_refresh(item: str) -> str:
    """Statements (for a trigger's body) that index the item `item` names anew."""
    return f"""
    DELETE FROM work_item_search
        WHERE rowid = (SELECT doc FROM work_item_search_rows WHERE work_item_id = {item});
    INSERT OR IGNORE INTO work_item_search_rows (work_item_id)
        SELECT id FROM work_items WHERE id = {item};
    INSERT INTO work_item_search (rowid, document)
        SELECT r.doc, wi.title || ' ' || coalesce(wi.description, '') || ' ' || coalesce(
            (SELECT group_concat(c.body, ' ') FROM comments c WHERE c.work_item_id = wi.id), '')
        FROM work_item_search_rows r JOIN work_items wi ON wi.id = r.work_item_id
        WHERE r.work_item_id = {item};"""


_SQLITE = [
    "CREATE VIRTUAL TABLE work_item_search USING fts5(document,"
    " tokenize = 'unicode61 remove_diacritics 0')",
    "CREATE TABLE work_item_search_rows (doc INTEGER PRIMARY KEY,"
    " work_item_id VARCHAR(32) NOT NULL UNIQUE)",
    f"CREATE TRIGGER work_item_search_insert AFTER INSERT ON work_items BEGIN"
    f" {_sqlite_refresh('NEW.id')} END",
    "CREATE TRIGGER work_item_search_update AFTER UPDATE OF title, description ON work_items"
    " WHEN OLD.title IS NOT NEW.title OR OLD.description IS NOT NEW.description BEGIN"
    f" {_sqlite_refresh('NEW.id')} END",
    """CREATE TRIGGER work_item_search_delete AFTER DELETE ON work_items BEGIN
    DELETE FROM work_item_search
        WHERE rowid = (SELECT doc FROM work_item_search_rows WHERE work_item_id = OLD.id);
    DELETE FROM work_item_search_rows WHERE work_item_id = OLD.id;
    END""",
    "CREATE TRIGGER work_item_search_comment_insert AFTER INSERT ON comments BEGIN"
    f" {_sqlite_refresh('NEW.work_item_id')} END",
    "CREATE TRIGGER work_item_search_comment_update AFTER UPDATE OF body ON comments BEGIN"
    f" {_sqlite_refresh('NEW.work_item_id')} END",
    "CREATE TRIGGER work_item_search_comment_delete AFTER DELETE ON comments BEGIN"
    f" {_sqlite_refresh('OLD.work_item_id')} END",
    "INSERT INTO work_item_search_rows (work_item_id) SELECT id FROM work_items",
    "INSERT INTO work_item_search (rowid, document)"
    " SELECT r.doc, wi.title || ' ' || coalesce(wi.description, '') || ' ' || coalesce("
    "(SELECT group_concat(c.body, ' ') FROM comments c WHERE c.work_item_id = wi.id), '')"
    " FROM work_item_search_rows r JOIN work_items wi ON wi.id = r.work_item_id",
]
_SQLITE_DOWN = [
    "DROP TRIGGER work_item_search_comment_delete",
    "DROP TRIGGER work_item_search_comment_update",
    "DROP TRIGGER work_item_search_comment_insert",
    "DROP TRIGGER work_item_search_delete",
    "DROP TRIGGER work_item_search_update",
    "DROP TRIGGER work_item_search_insert",
    "DROP TABLE work_item_search_rows",
    "DROP TABLE work_item_search",
]


def _run(statements: list[str]) -> None:
    for statement in statements:
        op.execute(statement)


def _create_views() -> None:
    op.create_table(
        "saved_views",
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("workspace_id", sa.String(length=32), nullable=False),
        sa.Column("owner_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("query", sa.Text(), nullable=False),
        sa.Column("layout", sa.String(length=8), nullable=False),
        sa.Column("group_by", sa.String(length=64), nullable=True),
        sa.Column(
            "visible_fields",
            sa.JSON().with_variant(postgresql.JSONB(), "postgresql"),
            nullable=True,
        ),
        sa.Column("shared", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["users.id"],
            name=op.f("fk_saved_views_owner_id_users"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id"],
            ["workspaces.id"],
            name=op.f("fk_saved_views_workspace_id_workspaces"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_saved_views")),
    )
    op.create_index("ix_saved_views_workspace_owner", "saved_views", ["workspace_id", "owner_id"])


def upgrade() -> None:
    _create_views()
    _run(_SQLITE if op.get_bind().dialect.name == "sqlite" else _POSTGRESQL)


def downgrade() -> None:
    _run(_SQLITE_DOWN if op.get_bind().dialect.name == "sqlite" else _POSTGRESQL_DOWN)
    op.drop_index("ix_saved_views_workspace_owner", table_name="saved_views")
    op.drop_table("saved_views")

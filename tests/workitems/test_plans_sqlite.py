"""SQLite reads a project's list in an index's order too: for each sort, the statement that
finds the page names a sort index of migration 0019 and sorts no items (`USE TEMP B-TREE`
inside the page's subquery). A plan is what regresses silently; a timing would be noise."""

import re
from typing import Any

import pytest
from sqlalchemy import text

from sprintboard import sql
from sprintboard.db import Database
from tests.factories import Api
from tests.workitem_factories import make_board
from tests.workitems.test_plans import SORTS

pytestmark = pytest.mark.sqlite_only


@pytest.fixture
def statements(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    seen: list[tuple[str, dict[str, Any]]] = []
    run = sql.Raw.run

    def recording(self: sql.Raw, statement: str, params: Any = None) -> Any:
        if "FROM work_items wi" in statement and "ORDER BY" in statement:
            seen.append((statement, dict(params or {})))
        return run(self, statement, params)

    monkeypatch.setattr(sql.Raw, "run", recording)
    return seen


def _page_plan(database: Database, statement: str, params: dict[str, Any]) -> list[str]:
    """The plan's lines for the page's subquery (`page_`), which the outer read follows."""
    with database.engine.connect() as connection:
        rows = connection.execute(text("EXPLAIN QUERY PLAN " + statement), params).all()
    by_id = {row[0]: row for row in rows}
    page = next(row[0] for row in rows if "page_" in row[3])

    def inside(row: Any) -> bool:
        while row[1] in by_id:
            if row[1] == page:
                return True
            row = by_id[row[1]]
        return False

    return [row[3] for row in rows if inside(row)]


@pytest.mark.parametrize(
    ("scope", "index"),
    # (A project's list may take the workspace's index: with one project they cost the same.)
    [("project", r"ix_work_items_w?sort_"), ("workspace", r"ix_work_items_wsort_")],
)
def test_every_sort_reads_its_page_in_an_index_order(
    admin: Api,
    database: Database,
    statements: list[tuple[str, dict[str, Any]]],
    scope: str,
    index: str,
) -> None:
    """A project's list (migration 0019) and a workspace's (a query, a view: 0020)."""
    board = make_board(admin)
    for n in range(3):
        board.task(title=f"item {n}")
    narrowed = {"projectId": board.project_id} if scope == "project" else {}
    statements.clear()
    for sort in SORTS:
        board.list(**narrowed, sort=sort, limit=2)
    assert len(statements) == len(SORTS)
    for statement, params in statements:
        plan = _page_plan(database, statement, params)
        assert any(re.search(index, line) for line in plan), plan
        assert not any("TEMP B-TREE" in line for line in plan), plan


def test_a_parents_children_are_found_through_the_parent_index(
    admin: Api, database: Database, statements: list[tuple[str, dict[str, Any]]]
) -> None:
    board = make_board(admin)
    parent = board.task(title="parent")
    child = board.task(title="child", parentId=parent["$id"])
    statements.clear()
    found = board.list(projectId=board.project_id, parentId=parent["key"])
    assert [item["$id"] for item in found["documents"]] == [child["$id"]]
    (statement, params), *_ = statements
    plan = _page_plan(database, statement, params)
    assert any("ix_work_items_parent" in line for line in plan), plan

"""Every kind of query reads work items through an index on PostgreSQL: with sequential
scans priced out (`enable_seqscan` off), no plan of `GET /tasks?q=` scans `work_items`
whole (the bench reads the same plans at 100,000 items)."""

from typing import Any

import pytest

from tests.factories import Api
from tests.workitem_factories import make_board
from tests.workitems.test_plans import plans, statements

__all__ = ["statements"]

pytestmark = pytest.mark.postgresql_only

QUERIES = [
    "key = QP-1",
    "project = QP",
    'title ~ "login"',
    'description ~ "login"',
    'text ~ "login time*"',
    "status in (TODO, DONE)",
    "statusCategory != DONE",
    "type = BUG",
    "priority >= HIGH",
    "assignee = currentUser()",
    "assignee is empty",
    "label in (ui, api)",
    "sprint in openSprints()",
    "sprint is empty",
    "parent = QP-1",
    "ancestor = QP-1",
    "storyPoints > 2",
    "estimatedHours is empty",
    "dueDate <= +2w",
    "createdAt >= -7d",
    "updatedAt >= startOfDay()",
    "flagged = true",
    "blocked = true",
    "NOT (priority = LOW OR label = ui) AND status != DONE",
    "ORDER BY priority DESC",
    "ORDER BY dueDate",
    "ORDER BY title DESC",
    "ORDER BY storyPoints",
    "ORDER BY updatedAt DESC",
    "ORDER BY createdAt",
    "ORDER BY key",
]


def test_no_query_scans_work_items_whole(
    admin: Api, database_url: str, statements: list[tuple[str, dict[str, Any]]]
) -> None:
    board = make_board(admin, key="QP")
    epic = board.task(title="login epic", type="EPIC")
    for n in range(3):
        board.task(title=f"login {n}", parentId=epic["$id"], labels=["ui"])
    statements.clear()
    for q in QUERIES:
        board.list(q=q, limit=2)
    assert len(statements) >= len(QUERIES)
    for plan in plans(database_url, statements):
        assert "Seq Scan on work_items" not in plan, plan

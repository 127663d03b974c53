"""The lists of work items read the items in an index's order on PostgreSQL: with sequential
scans and sorts priced out (`enable_seqscan`, `enable_sort` off), no plan of theirs scans
`work_items` whole or sorts its rows (a sort of a few sprints is fine). A 4x slower list once
landed green because nothing checked this; a timing would be noise, a plan is not."""

from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from sqlalchemy import event
from sqlalchemy.engine import Engine

from sprintboard import sql
from sprintboard.db import normalize_url
from tests.factories import Api
from tests.workitem_factories import make_board

pytestmark = pytest.mark.postgresql_only


def _reads_items(statement: str) -> bool:
    return "work_items" in statement and statement.lstrip()[:4].upper() in ("SELE", "WITH")


@pytest.fixture
def statements(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, dict[str, Any]]]]:
    """Every statement that reads `work_items`, as the requests ran it (in psycopg's form):
    the plain SQL of `sql.Raw` and the ORM's."""
    seen: list[tuple[str, dict[str, Any]]] = []
    run = sql.Raw.run

    def recording(self: sql.Raw, statement: str, params: Any = None) -> Any:
        if _reads_items(statement):
            seen.append((sql._for_postgres(statement), dict(params or {})))
        return run(self, statement, params)

    def orm(_conn: Any, _cursor: Any, statement: str, params: Any, *_: Any) -> None:
        if _reads_items(statement):
            seen.append((statement, dict(params or {})))

    monkeypatch.setattr(sql.Raw, "run", recording)
    event.listen(Engine, "before_cursor_execute", orm)
    yield seen
    event.remove(Engine, "before_cursor_execute", orm)


def plans(database_url: str, statements: list[tuple[str, dict[str, Any]]]) -> list[str]:
    url = normalize_url(database_url).set(drivername="postgresql")
    found = []
    with psycopg.connect(url.render_as_string(hide_password=False)) as connection:
        connection.execute("SET enable_seqscan = off")
        connection.execute("SET enable_sort = off")
        for statement, params in statements:
            rows = connection.execute("EXPLAIN " + statement, params)
            found.append("\n".join(row[0] for row in rows))
    return found


def test_the_board_and_its_lists_read_items_in_index_order(
    admin: Api, database_url: str, statements: list[tuple[str, dict[str, Any]]]
) -> None:
    board = make_board(admin)
    sprint = board.sprint(status="ACTIVE")
    for n in range(3):
        board.task(title=f"in sprint {n}")
        board.task(title=f"backlog {n}", sprintId=None)
    statements.clear()
    board.list()
    board.list(projectId=board.project_id)
    board.list(projectId=board.project_id, sprintId=sprint["$id"])
    board.list(sprintId="none", projectId=board.project_id)
    admin.ok("GET", f"/sprints/{sprint['$id']}")
    admin.ok("GET", f"/sprints?projectId={board.project_id}")
    assert len(statements) >= 6
    for plan in plans(database_url, statements):
        assert "Seq Scan on work_items" not in plan, plan
        sorted_by = [line for line in plan.splitlines() if "Sort Key:" in line]
        assert not [key for key in sorted_by if "wi." in key or "work_items." in key], plan


def test_lists_by_custom_fields_read_items_and_values_by_index(
    admin: Api, database_url: str, statements: list[tuple[str, dict[str, Any]]]
) -> None:
    """A filter by a select field and a sort by a number field (issue 27) read the values
    through `work_item_field_values`' indexes and the items by theirs."""
    board = make_board(admin)
    for key, body in (
        ("severity", {"type": "select", "options": ["LOW", "HIGH"]}),
        ("estimate", {"type": "number"}),
        ("tags", {"type": "multiselect", "options": ["a", "b"]}),
    ):
        admin.ok(
            "POST", f"/workspaces/{board.workspace_id}/fields", {"key": key, "name": key, **body}
        )
    for n in range(4):
        board.task(fields={"severity": "HIGH" if n % 2 else "LOW", "estimate": n, "tags": ["a"]})
    board.task()
    statements.clear()
    board.list(**{"fields.severity": "HIGH"})
    board.list(**{"fields.severity": "none,LOW", "fields.tags": "a"})
    board.list(sort="fields.estimate")
    board.list(sort="-fields.estimate", projectId=board.project_id)
    board.list(sort="fields.severity", **{"fields.estimate": "1,2"})
    assert len(statements) >= 5
    for plan in plans(database_url, statements):
        assert "Seq Scan on work_items" not in plan, plan
        assert "Seq Scan on work_item_field_values" not in plan, plan


def _sorted_rows(plan: str) -> list[str]:
    """The plan's sorts of items (a sort of the page's own 51 rows, `page_`, is fine)."""
    keys = [line for line in plan.splitlines() if "Sort Key:" in line or "Presorted" in line]
    return [key for key in keys if "wi." in key or "work_items." in key]


def test_the_default_page_of_fifty_is_read_in_index_order(
    admin: Api, database_url: str, statements: list[tuple[str, dict[str, Any]]]
) -> None:
    """The bisected regression (issue 26): the default order `position, id` is exactly an
    index's (migration 0013), so a page is the index's first 51 entries, never sorted."""
    board = make_board(admin)
    for n in range(3):
        board.task(title=f"item {n}")
    statements.clear()
    first = board.list(projectId=board.project_id, limit=2)
    board.list(projectId=board.project_id, limit=2, cursor=first["nextCursor"])
    board.list()
    for plan in plans(database_url, statements):
        assert "Seq Scan on work_items" not in plan, plan
        assert "Incremental Sort" not in plan, plan
        assert not _sorted_rows(plan), plan
        assert "ix_work_items_board_order" in plan or "ix_work_items_workspace_order" in plan


SORTS = ["-priority", "priority", "dueDate", "-dueDate", "-updatedAt", "updatedAt"]
SORTS += ["createdAt", "-createdAt", "storyPoints", "-storyPoints"]


def test_every_sort_and_filter_of_a_project_reads_its_page_through_an_index(
    admin: Api, database_url: str, statements: list[tuple[str, dict[str, Any]]]
) -> None:
    """Each sort of a project's list is an index's order (migration 0019), its next page
    starts in that index, and each filter finds rows through one: a page costs the page."""
    board = make_board(admin)
    parent = board.task(title="parent")
    for n in range(3):
        board.task(title=f"item {n}", labels=["docs"], parentId=parent["$id"])
    statements.clear()
    for sort in SORTS:
        page = board.list(projectId=board.project_id, sort=sort, limit=2)
        board.list(projectId=board.project_id, sort=sort, limit=2, cursor=page["nextCursor"])
    sorted_statements = list(statements)
    statements.clear()
    me = admin.ok("GET", "/me")["$id"]
    for filters in (
        {"assigneeId": me},
        {"labels": "docs"},
        {"parentId": parent["key"]},
        {"search": "item"},
        {"assigneeId": "none"},
    ):
        board.list(projectId=board.project_id, **filters)
    sorted_plans = plans(database_url, sorted_statements)
    assert len(sorted_plans) == 2 * len(SORTS)
    for plan in sorted_plans:
        # (The project's index, or the workspace's: in a workspace of one project, as here,
        # the planner cannot tell them apart; either is the page's order.)
        assert "ix_work_items_sort_" in plan or "ix_work_items_wsort_" in plan, plan
    for plan in sorted_plans + plans(database_url, statements):
        assert "Seq Scan on work_items" not in plan, plan
        assert not _sorted_rows(plan), plan


def test_every_sort_of_a_workspace_reads_its_page_through_an_index(
    admin: Api, database_url: str, statements: list[tuple[str, dict[str, Any]]]
) -> None:
    """A workspace's list (a query or a saved view names no project) sorted by a field reads
    its page in a workspace-led index's order (migration 0020), its next page too."""
    board = make_board(admin)
    for n in range(3):
        board.task(title=f"item {n}")
    statements.clear()
    for sort in SORTS:
        page = board.list(sort=sort, limit=2)
        board.list(sort=sort, limit=2, cursor=page["nextCursor"])
    sorted_plans = plans(database_url, statements)
    assert len(sorted_plans) == 2 * len(SORTS)
    for plan in sorted_plans:
        assert "ix_work_items_wsort_" in plan, plan
        assert "Seq Scan on work_items" not in plan, plan
        assert not _sorted_rows(plan), plan


def test_the_boards_first_read_takes_sprint_figures_from_an_index_alone(
    admin: Api, database_url: str, statements: list[tuple[str, dict[str, Any]]]
) -> None:
    """`GET /sprints?projectId` counts and sums each sprint's items from the figures index
    (an index-only scan): it never reads `work_items` rows, of its project or any other."""
    board = make_board(admin)
    sprint = board.sprint()
    board.task(sprintId=sprint["$id"], storyPoints=3)
    statements.clear()
    listed = admin.ok("GET", f"/sprints?projectId={board.project_id}")["documents"]
    assert listed[0]["workItemCount"] == 1
    assert listed[0]["totalPoints"] == 3
    # An index-only scan needs the visibility map that autovacuum keeps on a live table; the
    # rows earlier tests deleted (`empty_postgres`) leave it stale here until a vacuum.
    url = normalize_url(database_url).set(drivername="postgresql")
    with psycopg.connect(url.render_as_string(hide_password=False), autocommit=True) as db:
        db.execute("VACUUM work_items")
    (plan,) = plans(database_url, statements)
    assert plan.count("Index Only Scan using ix_work_items_sprint_figures") == 3, plan
    assert "Seq Scan on work_items" not in plan, plan


@pytest.mark.parametrize(
    ("query", "index"),
    [
        ("type = BUG", "ix_work_items_type"),
        ("flagged = true", "ix_work_items_flagged"),
        ("assignee is empty", "ix_work_items_unassigned"),
    ],
)
def test_a_filter_that_matches_few_items_finds_them_through_an_index(
    admin: Api,
    database_url: str,
    statements: list[tuple[str, dict[str, Any]]],
    query: str,
    index: str,
) -> None:
    """Filters that match few of a workspace's items (migration 0020) read them through an
    index instead of walking the workspace's board order to its end."""
    board = make_board(admin)
    board.task(title="rare", type="BUG", flagged=True, labels=["docs"])
    statements.clear()
    found = board.list(q=query)
    assert [item["title"] for item in found["documents"]] == ["rare"]
    (plan,) = plans(database_url, statements[:1])
    assert index in plan, plan
    assert "Seq Scan on work_items" not in plan, plan
    assert not _sorted_rows(plan), plan

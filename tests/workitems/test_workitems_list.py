"""Listing work items (contract §5): every filter, paging, order, embeds, query count."""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import event

from sprintboard.db import Database
from sprintboard.sql import Raw
from tests.factories import Api, make_project, make_workspace
from tests.workitem_factories import Board, make_board


@pytest.fixture
def board(admin: Api) -> Board:
    return make_board(admin, key="WEB")


def keys(page: dict[str, Any]) -> list[str]:
    return [item["key"] for item in page["documents"]]


def test_workspace_id_is_required(board: Board) -> None:
    response = board.api.get("/tasks")
    assert response.status_code == 400
    assert response.json()["error"]["details"] == {"field": "workspaceId", "reason": "required"}
    outsider = make_board(board.api).member("MEMBER")[1]
    assert outsider.get(f"/tasks?workspaceId={board.workspace_id}").status_code == 404


def test_filters(board: Board) -> None:
    alice, _ = board.member("MEMBER")
    bob, _ = board.member("MEMBER")
    sprint = board.sprint()
    other = make_project(board.api, board.workspace_id, key="API")
    board.api.ok("POST", f"/workspaces/{board.workspace_id}/work-item-types", {"name": "SPIKE"})
    board.task(
        name="Login page",
        status="TODO",
        priority="HIGH",
        type="BUG",
        assigneeIds=[alice["$id"]],
        labels=["ui", "auth"],
        dueDate="2026-03-01",
        flagged=True,
        sprintId=sprint["$id"],
    )  # WEB-1
    board.task(
        name="Logout",
        status="IN_PROGRESS",
        priority="LOW",
        type="STORY",
        assigneeIds=[alice["$id"], bob["$id"]],
        labels=["auth"],
        dueDate="2026-03-10",
    )  # WEB-2
    board.task(
        name="Docs",
        status="DONE",
        type="SPIKE",
        labels=["ui"],
        dueDate="2026-03-20",
        sprintId=sprint["$id"],
    )  # WEB-3
    board.task(name="Other login", projectId=other["$id"], labels=["ui", "auth", "x"])  # API-1
    make_board(board.api).task(name="Login elsewhere")  # another workspace: never listed

    cases: list[tuple[dict[str, Any], list[str]]] = [
        ({}, ["WEB-1", "WEB-2", "WEB-3", "API-1"]),
        ({"projectId": other["$id"]}, ["API-1"]),
        ({"sprintId": sprint["$id"]}, ["WEB-1", "WEB-3"]),
        ({"sprintId": "none"}, ["WEB-2", "API-1"]),
        ({"status": "TODO"}, ["WEB-1"]),
        ({"status": "TODO,DONE"}, ["WEB-1", "WEB-3"]),
        ({"priority": "LOW,HIGH"}, ["WEB-1", "WEB-2"]),
        ({"type": "BUG,SPIKE"}, ["WEB-1", "WEB-3"]),
        ({"type": "TASK"}, ["API-1"]),
        ({"assigneeId": alice["$id"]}, ["WEB-1", "WEB-2"]),
        ({"assigneeId": bob["$id"]}, ["WEB-2"]),
        ({"labels": "ui"}, ["WEB-1", "WEB-3", "API-1"]),
        ({"labels": "ui,auth"}, ["WEB-1", "API-1"]),
        ({"labels": "auth,x"}, ["API-1"]),
        ({"dueDate": "2026-03-10"}, ["WEB-2"]),
        ({"dueBefore": "2026-03-10"}, ["WEB-1"]),
        ({"dueAfter": "2026-03-10"}, ["WEB-3"]),
        ({"dueAfter": "2026-02-28", "dueBefore": "2026-03-20"}, ["WEB-1", "WEB-2"]),
        ({"flagged": True}, ["WEB-1"]),
        ({"flagged": False}, ["WEB-2", "WEB-3", "API-1"]),
        ({"search": "LOGIN"}, ["WEB-1", "API-1"]),
        ({"search": "web-2"}, ["WEB-2"]),
        ({"search": "%"}, []),
        ({"status": "TODO,IN_PROGRESS", "assigneeId": bob["$id"], "labels": "auth"}, ["WEB-2"]),
    ]
    for params, expected in cases:
        page = board.list(**params)
        assert (sorted(keys(page)), page["total"]) == (sorted(expected), len(expected)), params


def test_bad_filter_values(board: Board) -> None:
    for params, field in [
        ("status=OPEN", "status"),
        ("priority=LOW,NOPE", "priority"),
        ("dueDate=2026-1-1", "dueDate"),
        ("dueDate=2026-03-01T00:00:00", "dueDate"),
        ("dueBefore=2026-03-01T00:00:00Z", "dueBefore"),
        ("dueAfter=20260301", "dueAfter"),
        ("dueDate=2026-W09-1", "dueDate"),
        ("flagged=maybe", "flagged"),
        ("limit=501", "limit"),
        ("limit=0", "limit"),
        ("offset=-1", "offset"),
    ]:
        response = board.api.get(f"/tasks?workspaceId={board.workspace_id}&{params}")
        assert response.status_code == 400, params
        assert response.json()["error"]["details"]["field"] == field, params


def test_paging_order_and_embeds(board: Board) -> None:
    alice, _ = board.member("MEMBER")
    for n in range(1, 8):
        board.task(name=f"T{n}", assigneeIds=[alice["$id"]] if n % 2 else [])
    board.api.ok("PATCH", "/tasks/WEB-7", {"position": 0})
    board.api.ok("PATCH", "/tasks/WEB-5", {"position": 2})  # ties with WEB-2: created later

    order = ["WEB-7", "WEB-1", "WEB-2", "WEB-5", "WEB-3", "WEB-4", "WEB-6"]
    assert keys(board.list()) == order
    assert keys(board.list(limit=500)) == order
    page = board.list(limit=3, offset=2)
    assert (keys(page), page["total"]) == (order[2:5], 7)
    page = board.list(limit=3, offset=6)
    assert (keys(page), page["total"]) == (order[6:], 7)
    page = board.list(offset=50)
    assert (page["documents"], page["total"]) == ([], 7)
    page = board.list(search="t", limit=2, offset=1)  # counted, not read off the projects
    assert (keys(page), page["total"]) == (order[1:3], 7)
    page = board.list(search="t", offset=50)
    assert (page["documents"], page["total"]) == ([], 7)

    item = board.list(limit=1)["documents"][0]
    assert item["project"] == {"$id": board.project_id, "name": board.project["name"], "key": "WEB"}
    assert item["assignees"] == [
        {"$id": alice["$id"], "name": alice["name"], "email": alice["email"]}
    ]
    assert "comments" not in item
    assert "timeLogs" not in item


@contextmanager
def counting_statements(database: Database) -> Iterator[list[str]]:
    """Every statement a request sends: SQLAlchemy's, and the hot paths' plain SQL."""
    statements: list[str] = []

    def count(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        statements.append(statement)

    run = Raw.run

    def counted_run(self: Raw, sql: str, params: Any = None) -> Any:
        statements.append(sql)
        return run(self, sql, params)

    event.listen(database.engine, "before_cursor_execute", count)
    Raw.run = counted_run  # type: ignore[method-assign]
    try:
        yield statements
    finally:
        Raw.run = run  # type: ignore[method-assign]
        event.remove(database.engine, "before_cursor_execute", count)


def test_a_page_costs_a_fixed_number_of_statements(board: Board, database: Database) -> None:
    users = [board.member("MEMBER")[0]["$id"] for _ in range(3)]
    other = make_project(board.api, board.workspace_id)
    for n in range(100):
        project = {"projectId": other["$id"]} if n % 2 else {}
        board.task(assigneeIds=[users[n % 3], users[(n + 1) % 3]], **project)

    with counting_statements(database) as one:
        page = board.list(limit=1)
    assert len(page["documents"]) == 1
    assert page["documents"][0]["assignees"]
    with counting_statements(database) as hundred:
        page = board.list(limit=100)
    assert len(page["documents"]) == 100
    assert {a["$id"] for item in page["documents"] for a in item["assignees"]} == set(users)
    assert len(hundred) == len(one), (one, hundred)
    assert len(one) >= 4  # key, page, total, assignees: the counter sees the plain SQL too


def test_one_item_comes_with_its_assignees_in_one_statement(
    board: Board, database: Database
) -> None:
    """`GET /tasks/{id}` shows the item's assignees in `assigneeIds` order, and its comments
    and time logs. On PostgreSQL it reads the item with its assignees, parent and relations
    in one statement after the key's, comments and time logs (when it has any) in one more.
    SQLite, whose JSON functions cost more than a statement, reads the assignees in a second
    one, or with the comments and time logs, and the parent and relations in one more. Its
    pull requests and commits (`links`, contract §20) are one more statement on either."""
    first, second = (board.member("MEMBER")[0] for _ in range(2))
    item = board.task(assigneeIds=[second["$id"], first["$id"]])
    with counting_statements(database) as plain:
        read = board.api.ok("GET", f"/tasks/{item['$id']}")
    assert read["assignees"] == [
        {"$id": user["$id"], "name": user["name"], "email": user["email"]}
        for user in (second, first)
    ]
    assert read["comments"] == read["timeLogs"] == []
    board.api.ok("POST", f"/tasks/{item['$id']}/comments", {"body": "Looks good"})
    with counting_statements(database) as commented:
        read = board.api.ok("GET", f"/tasks/{item['key']}")
    assert [c["body"] for c in read["comments"]] == ["Looks good"]
    assert [a["$id"] for a in read["assignees"]] == [second["$id"], first["$id"]]
    expected = (5, 5) if database.dialect == "sqlite" else (3, 4)
    assert (len(plain), len(commented)) == expected, (plain, commented)
    unassigned = board.task()
    assert board.api.ok("GET", f"/tasks/{unassigned['$id']}")["assignees"] == []

    child = board.task(parentId=unassigned["$id"])
    relation = {"type": "blocks", "targetId": child["$id"]}
    board.api.ok("POST", f"/tasks/{item['$id']}/relations", relation)
    with counting_statements(database) as related:
        read = board.api.ok("GET", f"/tasks/{child['$id']}")
    assert read["parent"]["$id"] == unassigned["$id"]
    assert [(r["type"], r["task"]["$id"]) for r in read["relations"]] == [
        ("blocked_by", item["$id"])
    ]
    assert read["blocked"] is True
    assert len(related) == (4 if database.dialect == "sqlite" else 3), related  # (no assignees)


def test_unfiltered_totals_stay_exact_through_creates_and_deletes(
    board: Board, database: Database
) -> None:
    """Unfiltered lists take `total` from counts kept per project; they must never drift."""
    other = make_project(board.api, board.workspace_id)
    mine = [board.task() for _ in range(4)]
    theirs = [board.task(projectId=other["$id"]) for _ in range(3)]
    board.api.ok("DELETE", f"/tasks/{mine[0]['$id']}")
    board.api.ok("DELETE", f"/tasks/{theirs[0]['key']}")
    board.task()

    with counting_statements(database) as statements:
        project_page = board.list(projectId=board.project_id, limit=2)
    # (Each item's `childCount` is counted too: that is not the total.)
    counted = "count(*) from (select 1 from work_items wi"
    assert not [s for s in statements if counted in s.lower()], "counted rows instead"
    with counting_statements(database) as statements:
        board.list(projectId=board.project_id, status="BACKLOG")
    assert [s for s in statements if counted in s.lower()]
    assert project_page["total"] == 4
    assert len(project_page["documents"]) == 2
    assert board.list(projectId=other["$id"])["total"] == 2
    everything = board.list(limit=500)
    assert everything["total"] == len(everything["documents"]) == 6
    assert board.list(status="BACKLOG")["total"] == 6  # the counting path agrees
    stranger = make_project(board.api, make_workspace(board.api)["$id"])
    empty = {"documents": [], "total": 0, "nextCursor": None, "totalCapped": False}
    assert board.list(projectId=stranger["$id"]) == empty


def test_search_folds_case_beyond_ascii(board: Board) -> None:
    """`search` is case-insensitive for every letter, not only A-Z (SQLite's own LOWER and
    LIKE fold ASCII only)."""
    board.task(name="Ärger im Büro")  # WEB-1
    board.task(name="École d'été")  # WEB-2
    board.task(name="Plain")  # WEB-3
    board.task(name="ΟΔΟΣ test")  # WEB-4: a term and a title folded alike, final sigma too
    board.task(name="İstanbul")  # WEB-5: one letter for one, as PostgreSQL folds it
    for term, expected in (
        ("istanbul", ["WEB-5"]),
        ("İSTANBUL", ["WEB-5"]),
        ("ΟΔΟΣ", ["WEB-4"]),
        ("οΔοΣ T", ["WEB-4"]),
        ("ärger", ["WEB-1"]),
        ("ÄRGER", ["WEB-1"]),
        ("BÜRO", ["WEB-1"]),
        ("école", ["WEB-2"]),
        ("ÉTÉ", ["WEB-2"]),
        ("PLAIN", ["WEB-3"]),
        ("web-2", ["WEB-2"]),
    ):
        page = board.api.ok("GET", f"/tasks?workspaceId={board.workspace_id}&search={term}")
        assert keys(page) == expected, term

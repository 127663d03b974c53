"""The end of a project's board, kept on the project's row (migration 0010): a create's
default position comes from the row it locks for its number, and still lands after every
item, whichever way the items got where they are."""

from typing import Any

import pytest
from alembic import command

from sprintboard.db import Database
from sprintboard.migrations import alembic_config
from tests.factories import Api
from tests.workitem_factories import Board, make_board


@pytest.fixture
def board(admin: Api) -> Board:
    return make_board(admin, key="WEB")


def bulk(board: Board, *entries: dict[str, Any]) -> list[dict[str, Any]]:
    created: list[dict[str, Any]] = board.api.ok(
        "POST", "/tasks/bulk-create", {"tasks": list(entries)}
    )["documents"]
    return created


def test_creates_go_after_an_item_moved_past_the_end(board: Board) -> None:
    first, _ = board.task(), board.task()
    board.api.ok("PATCH", f"/tasks/{first['$id']}", {"position": 100})
    assert board.task()["position"] == 101
    moved = {"tasks": [{"$id": first["$id"], "position": 200}]}
    board.api.ok("POST", "/tasks/bulk-update", moved, status=200)
    assert [i["position"] for i in bulk(board, board.body(), board.body())] == [201, 202]


def test_a_given_position_past_the_end_moves_it_and_one_before_does_not(board: Board) -> None:
    assert board.task()["position"] == 1
    assert board.task(position=0.5)["position"] == 0.5
    assert board.task()["position"] == 2
    assert board.task(position=10)["position"] == 10
    assert board.task()["position"] == 11
    given = bulk(board, board.body(), board.body(position=50), board.body(), board.body(position=3))
    assert [i["position"] for i in given] == [12, 50, 13, 3]
    assert board.task()["position"] == 51


def test_the_end_stays_where_a_deleted_last_item_was(board: Board) -> None:
    board.task()
    last = board.task(position=40)
    board.api.ok("DELETE", f"/tasks/{last['$id']}", status=200)
    assert board.task()["position"] == 41  # (after every item, not necessarily right after)


def test_the_migration_sets_each_project_end_from_its_items(
    board: Board, database: Database
) -> None:
    board.task()
    last = board.task(position=40)
    other = make_board(board.api)
    other.task()
    url = database.url
    database.dispose()
    command.downgrade(alembic_config(url), "0009")
    command.upgrade(alembic_config(url), "head")
    board.api.ok("DELETE", f"/tasks/{last['$id']}", status=200)
    assert board.task()["position"] == 41
    assert other.task()["position"] == 2


def test_a_refused_create_uses_up_no_number_and_moves_no_end(board: Board) -> None:
    refused = board.api.post("/tasks", board.body(assigneeIds=["nobody"], position=90))
    assert refused.status_code == 400, refused.text
    assert refused.json()["error"]["details"]["field"] == "assigneeIds"
    missing = board.api.post("/tasks", board.body(projectId="nope", assigneeIds=["nobody"]))
    assert missing.json()["error"]["details"]["field"] == "assigneeIds"  # (named first)
    created = board.task()
    assert (created["key"], created["position"]) == ("WEB-1", 1)

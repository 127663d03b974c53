"""Kanban bulk updates (contract §5): one workspace, all or nothing, 413 before anything."""

from typing import Any

import pytest

from tests.factories import Api, add_member
from tests.workitem_factories import Board, make_board


@pytest.fixture
def board(admin: Api) -> Board:
    return make_board(admin, key="WEB")


def bulk(client: Api, entries: Any) -> Any:
    return client.post("/tasks/bulk-update", {"tasks": entries})


def snapshot(board: Board) -> list[dict[str, Any]]:
    return list(board.list(limit=500)["documents"])


def test_bulk_update_moves_items(board: Board) -> None:
    sprint = board.sprint(status="ACTIVE")
    first, second, third = board.task(sprintId=None), board.task(sprintId=None), board.task()
    response = bulk(
        board.api,
        [
            {"$id": second["$id"], "status": "IN_PROGRESS", "position": 0.5},
            {"$id": first["$id"], "sprintId": sprint["$id"]},
            {"$id": third["$id"], "sprintId": None, "status": "DONE"},
        ],
    )
    assert response.status_code == 200, response.text
    data = response.json()["data"]
    assert data["total"] == 3
    moved = {item["$id"]: item for item in data["documents"]}
    assert (moved[second["$id"]]["status"], moved[second["$id"]]["position"]) == (
        "IN_PROGRESS",
        0.5,
    )
    assert moved[first["$id"]]["sprintId"] == sprint["$id"]
    assert (moved[third["$id"]]["sprintId"], moved[third["$id"]]["status"]) == (None, "DONE")
    assert moved[first["$id"]]["project"]["key"] == "WEB"
    assert moved == {item["$id"]: item for item in snapshot(board)}


def test_a_bad_entry_leaves_every_item_unchanged(board: Board) -> None:
    planned = board.sprint()
    done = board.sprint(status="COMPLETED")
    tasks = [board.task() for _ in range(3)]
    before = snapshot(board)
    good = [
        {"$id": tasks[0]["$id"], "status": "DONE"},
        {"$id": tasks[1]["$id"], "sprintId": planned["$id"], "position": 9},
    ]
    bad_entries: list[tuple[dict[str, Any], int, str]] = [
        ({"$id": tasks[2]["$id"], "status": "WONTFIX"}, 400, "invalid_value"),
        ({"$id": tasks[2]["$id"], "sprintId": done["$id"]}, 400, "invalid_value"),
        ({"$id": tasks[2]["$id"], "sprintId": "nope"}, 400, "not_found"),
        ({"$id": tasks[2]["$id"], "bogus": "x"}, 400, "unknown_field"),
        ({"$id": tasks[2]["$id"], "projectId": "x"}, 400, "immutable"),
        ({"$id": tasks[2]["$id"], "position": "top"}, 400, "invalid_type"),
        ({"$id": "nope"}, 404, ""),
    ]
    for bad, status, why in bad_entries:
        response = bulk(board.api, [*good, bad])
        assert response.status_code == status, (bad, response.text)
        if why:
            assert response.json()["error"]["details"]["reason"] == why, bad
        assert snapshot(board) == before, bad


def test_bulk_size_limits(board: Board) -> None:
    task = board.task()
    too_many = [{"$id": f"bogus{i}", "status": "NOPE"} for i in range(501)]
    response = bulk(board.api, too_many)
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "PAYLOAD_TOO_LARGE"
    response = bulk(board.api, [])
    assert response.status_code == 400
    assert response.json()["error"]["details"]["field"] == "tasks"
    response = bulk(board.api, [{"$id": task["$id"]}, {"$id": task["$id"], "status": "DONE"}])
    assert response.status_code == 400


def test_five_hundred_entries_are_within_the_limit(board: Board) -> None:
    task = board.task()
    response = bulk(board.api, [{"$id": task["$id"], "status": "DONE"}] * 500)
    # 500 is within the limit; the duplicates are what this request gets wrong.
    assert response.status_code == 400


def test_items_the_caller_cannot_see_are_not_found(board: Board) -> None:
    mine = board.task()
    foreign = make_board(board.api)
    theirs = foreign.task()
    outsider, client = board.member("ADMIN")
    before = snapshot(board)
    response = bulk(
        client, [{"$id": mine["$id"], "status": "DONE"}, {"$id": theirs["$id"], "status": "DONE"}]
    )
    assert response.status_code == 404
    assert snapshot(board) == before
    assert foreign.api.ok("GET", f"/tasks/{theirs['$id']}") == theirs

    add_member(foreign.api, foreign.workspace_id, outsider["$id"], "ADMIN")
    response = bulk(
        client, [{"$id": mine["$id"], "status": "DONE"}, {"$id": theirs["$id"], "status": "DONE"}]
    )
    assert response.status_code == 400
    assert response.json()["error"]["details"]["reason"] == "mixed_workspaces"
    assert snapshot(board) == before
    assert foreign.api.ok("GET", f"/tasks/{theirs['$id']}") == theirs


def test_viewers_may_not_bulk_update(board: Board) -> None:
    task = board.task()
    _, viewer = board.member("VIEWER")
    response = bulk(viewer, [{"$id": task["$id"], "status": "DONE"}])
    assert response.status_code == 403
    assert response.json()["error"]["details"]["permission"] == "WORK_ITEM_WRITE"
    assert board.api.ok("GET", f"/tasks/{task['$id']}")["status"] == "BACKLOG"


def test_unchanged_entries_keep_their_timestamps(board: Board) -> None:
    task = board.task(status="TODO")
    data = board.api.ok(
        "POST",
        "/tasks/bulk-update",
        {"tasks": [{"$id": task["$id"], "status": "TODO"}]},
        status=200,
    )
    assert data["documents"][0]["$updatedAt"] == task["$updatedAt"]

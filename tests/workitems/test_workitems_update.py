"""Reading, updating and deleting one work item (contract §5, §8 optimistic concurrency)."""

from typing import Any

import pytest

from tests.factories import Api, make_project
from tests.workitem_factories import Board, make_board


@pytest.fixture
def board(admin: Api) -> Board:
    return make_board(admin, key="WEB")


def reason(response: Any) -> tuple[int, str | None, str | None]:
    details = response.json()["error"]["details"]
    return response.status_code, details.get("field"), details.get("reason")


def events(board: Board) -> list[dict[str, Any]]:
    data = board.api.ok("GET", f"/events?workspaceId={board.workspace_id}&limit=500")
    return list(data["documents"])


def test_get_by_id_and_by_key(board: Board) -> None:
    task = board.task()
    by_id = board.api.get(f"/tasks/{task['$id']}")
    by_key = board.api.get("/tasks/WEB-1")
    assert by_id.status_code == by_key.status_code == 200
    assert by_id.json()["data"] == by_key.json()["data"] == task
    assert by_id.headers["ETag"] == by_key.headers["ETag"]
    for ref in ("nope", "WEB-2", "ZZZ-1"):
        response = board.api.get(f"/tasks/{ref}")
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "NOT_FOUND"


def test_items_of_another_workspace_are_not_found(board: Board) -> None:
    task = board.task()
    outsider = board.member("MEMBER")[1]
    stranger_board = make_board(outsider)
    assert stranger_board.task()["key"]  # outsider has their own workspace
    board.api.ok("DELETE", f"/workspaces/{board.workspace_id}/members/{_me(outsider)}")
    for method, path in [
        ("GET", f"/tasks/{task['$id']}"),
        ("PATCH", f"/tasks/{task['$id']}"),
        ("DELETE", "/tasks/WEB-1"),
        ("GET", f"/tasks/{task['$id']}/comments"),
        ("POST", f"/tasks/{task['$id']}/comments"),
        ("GET", f"/tasks/{task['$id']}/time-logs"),
        ("POST", f"/tasks/{task['$id']}/time-logs"),
    ]:
        json = {"body": "x"} if path.endswith("comments") else {"hours": 1}
        json = {"title": "Mine"} if method == "PATCH" else json
        response = outsider.request(method, path, json=json if method != "GET" else None)
        assert response.status_code == 404, (method, path, response.text)
    assert board.api.ok("GET", "/tasks/WEB-1") == task


def _me(client: Api) -> str:
    return str(client.ok("GET", "/me")["$id"])


def test_patch_every_writable_field_and_clear_with_null(board: Board) -> None:
    user, _ = board.member("MEMBER")
    board.api.ok("POST", f"/workspaces/{board.workspace_id}/work-item-types", {"name": "SPIKE"})
    sprint = board.sprint()
    task = board.task()
    changes = {
        "title": "Renamed",
        "type": "SPIKE",
        "status": "IN_REVIEW",
        "priority": "LOW",
        "description": "Why",
        "assigneeIds": [user["$id"]],
        "labels": ["a", "b"],
        "dueDate": "2027-01-31",
        "estimatedHours": 3,
        "storyPoints": 5,
        "flagged": True,
        "sprintId": sprint["$id"],
        "position": 42.5,
    }
    patched = board.api.ok("PATCH", "/tasks/WEB-1", changes)
    assert {k: patched[k] for k in changes} == changes
    assert patched["assignees"][0]["$id"] == user["$id"]
    assert patched["$updatedAt"] >= task["$updatedAt"]
    assert board.api.ok("GET", f"/tasks/{task['$id']}") == patched
    assert board.api.ok("PATCH", "/tasks/WEB-1", {"name": "Via name"})["title"] == "Via name"

    cleared = board.api.ok(
        "PATCH",
        "/tasks/WEB-1",
        {
            "description": None,
            "assigneeIds": None,
            "labels": None,
            "dueDate": None,
            "estimatedHours": None,
            "storyPoints": None,
            "sprintId": None,
        },
    )
    assert cleared["description"] is None
    assert cleared["dueDate"] is None
    assert cleared["assigneeIds"] == cleared["labels"] == cleared["assignees"] == []
    assert cleared["estimatedHours"] is None
    assert cleared["storyPoints"] is None
    assert cleared["sprintId"] is None


def test_patch_validation(board: Board) -> None:
    task = board.task()
    other = make_project(board.api, board.workspace_id)
    outsider = make_board(board.api).member("MEMBER")[0]
    cases: list[tuple[dict[str, Any], str, str]] = [
        ({"projectId": other["$id"]}, "projectId", "immutable"),
        ({"workspaceId": board.workspace_id}, "workspaceId", "immutable"),
        ({"key": "WEB-7"}, "key", "read_only"),
        ({"$createdAt": "2020-01-01T00:00:00.000Z"}, "$createdAt", "read_only"),
        ({"loggedHours": 1}, "loggedHours", "read_only"),
        ({"bogus": 1}, "bogus", "unknown_field"),
        ({"title": None}, "title", "invalid_type"),
        ({"status": None}, "status", "invalid_type"),  # null where a status is required
        ({"title": "  "}, "title", "too_short"),
        ({"name": "a", "title": "b"}, "title", "invalid_value"),
        ({"type": "NOPE"}, "type", "invalid_value"),
        ({"status": "CLOSED"}, "status", "invalid_value"),
        ({"dueDate": "2027-02-30"}, "dueDate", "invalid_format"),
        ({"storyPoints": 100_000.01}, "storyPoints", "out_of_range"),
        ({"estimatedHours": -0.1}, "estimatedHours", "out_of_range"),
        ({"labels": ["x"] * 51}, "labels", "too_long"),
        ({"assigneeIds": [outsider["$id"]]}, "assigneeIds", "not_found"),
        ({"sprintId": "nope"}, "sprintId", "not_found"),
        ({"sprintId": board.sprint(status="COMPLETED")["$id"]}, "sprintId", "invalid_value"),
        ({"sprintId": board.sprint(project=other)["$id"]}, "sprintId", "invalid_value"),
    ]
    for body, field, why in cases:
        response = board.api.patch(f"/tasks/{task['$id']}", body)
        assert reason(response) == (400, field, why), body
    assert board.api.ok("GET", f"/tasks/{task['$id']}") == task


def test_any_status_moves_to_any_status(board: Board) -> None:
    task = board.task()
    statuses = ["BACKLOG", "TODO", "IN_PROGRESS", "IN_REVIEW", "DONE"]
    for start in statuses:
        for end in statuses:
            board.api.ok("PATCH", f"/tasks/{task['$id']}", {"status": start})
            assert board.api.ok("PATCH", f"/tasks/{task['$id']}", {"status": end})["status"] == end


def test_patch_with_equal_values_changes_nothing(board: Board) -> None:
    task = board.task(labels=["a"], priority="HIGH", dueDate="2026-05-01", storyPoints=3)
    before = events(board)
    response = board.api.patch(
        f"/tasks/{task['$id']}",
        {
            "name": task["title"],
            "priority": "HIGH",
            "labels": ["a"],
            "dueDate": "2026-05-01",
            "storyPoints": 3,
            "sprintId": None,
            "description": None,
        },
    )
    assert response.status_code == 200
    assert response.json()["data"] == task
    assert events(board) == before
    get = board.api.get(f"/tasks/{task['$id']}")
    assert get.json()["data"]["$updatedAt"] == task["$updatedAt"]


def test_an_assignee_who_left_the_workspace_may_be_resent_but_not_added(board: Board) -> None:
    stayed, _ = board.member("MEMBER")
    left, _ = board.member("MEMBER")
    task = board.task(assigneeIds=[left["$id"]])
    board.api.ok("DELETE", f"/workspaces/{board.workspace_id}/members/{left['$id']}")
    before = events(board)
    unchanged = board.api.ok("PATCH", f"/tasks/{task['$id']}", {"assigneeIds": [left["$id"]]})
    assert unchanged["$updatedAt"] == task["$updatedAt"]
    assert events(board) == before
    both = {"assigneeIds": [left["$id"], stayed["$id"]]}
    assert (
        board.api.ok("PATCH", f"/tasks/{task['$id']}", both)["assigneeIds"] == both["assigneeIds"]
    )
    other = board.task()
    response = board.api.patch(f"/tasks/{other['$id']}", {"assigneeIds": [left["$id"]]})
    assert response.status_code == 400
    details = response.json()["error"]["details"]
    assert (details["field"], details["reason"]) == ("assigneeIds", "not_found")


def test_if_match(board: Board) -> None:
    board.task()
    etag = board.api.get("/tasks/WEB-1").headers["ETag"]
    first = board.api.patch("/tasks/WEB-1", {"title": "One"}, headers={"If-Match": etag})
    assert first.status_code == 200
    assert first.headers["ETag"] != etag

    stale = board.api.patch("/tasks/WEB-1", {"title": "Two"}, headers={"If-Match": etag})
    assert stale.status_code == 412
    assert stale.json()["error"]["code"] == "PRECONDITION_FAILED"
    assert board.api.delete("/tasks/WEB-1", headers={"If-Match": etag}).status_code == 412
    assert board.api.ok("GET", "/tasks/WEB-1")["title"] == "One"

    current = first.headers["ETag"]
    noop = board.api.patch("/tasks/WEB-1", {"title": "One"}, headers={"If-Match": current})
    assert noop.status_code == 200
    assert noop.headers["ETag"] == current
    deleted = board.api.delete("/tasks/WEB-1", headers={"If-Match": current})
    assert deleted.status_code == 200


def test_delete_by_id_or_key_removes_comments_and_time_logs(board: Board) -> None:
    first, second = board.task(), board.task()
    comment = board.api.ok("POST", "/tasks/WEB-1/comments", {"body": "hi"})
    board.api.ok("POST", "/tasks/WEB-1/time-logs", {"hours": 2})

    response = board.api.delete("/tasks/WEB-1")
    assert response.status_code == 200
    assert response.json() == {"data": {"$id": first["$id"], "deleted": True}}
    assert board.api.get(f"/tasks/{first['$id']}").status_code == 404
    assert board.api.delete(f"/comments/{comment['$id']}").status_code == 404
    assert board.api.get("/tasks/WEB-1/time-logs").status_code == 404

    assert board.api.ok("DELETE", f"/tasks/{second['$id']}")["deleted"] is True
    assert board.list()["total"] == 0
    assert board.task()["key"] == "WEB-3"

"""Comments, time logs and the WORK_ITEM_WRITE permission on work items (contract §3, §5)."""

from typing import Any

import pytest

from tests.factories import Api
from tests.workitem_factories import Board, make_board


@pytest.fixture
def board(admin: Api) -> Board:
    return make_board(admin, key="WEB")


def forbidden(response: Any) -> tuple[int, str | None]:
    return response.status_code, response.json()["error"]["details"].get("permission")


def test_comments_keep_an_exact_count(board: Board) -> None:
    task = board.task()
    first = board.api.ok("POST", "/tasks/WEB-1/comments", {"body": "  First  "})
    assert first["body"] == "First"
    assert first["workItemId"] == task["$id"]
    second = board.api.ok("POST", f"/tasks/{task['$id']}/comments", {"body": "Second"})
    board.api.ok("POST", "/tasks/WEB-1/comments", {"body": "Third"})
    assert board.api.ok("GET", "/tasks/WEB-1")["commentCount"] == 3

    page = board.api.ok("GET", "/tasks/WEB-1/comments?limit=2&offset=1")
    assert [c["body"] for c in page["documents"]] == ["Second", "Third"]
    assert page["total"] == 3

    assert board.api.ok("DELETE", f"/comments/{second['$id']}") == {
        "$id": second["$id"],
        "deleted": True,
    }
    assert board.api.delete(f"/comments/{second['$id']}").status_code == 404
    item = board.api.ok("GET", "/tasks/WEB-1")
    assert item["commentCount"] == 2
    assert [c["body"] for c in item["comments"]] == ["First", "Third"]
    listed = board.list()["documents"][0]
    assert listed["commentCount"] == 2


def test_comment_validation(board: Board) -> None:
    board.task()
    for body, why in [
        ({}, "required"),
        ({"body": "   "}, "too_short"),
        ({"body": "x" * 65_537}, "too_long"),
        ({"body": "x", "extra": 1}, "unknown_field"),
    ]:
        response = board.api.post("/tasks/WEB-1/comments", body)
        assert response.status_code == 400, body
        assert response.json()["error"]["details"]["reason"] == why, body
    assert board.api.ok("POST", "/tasks/WEB-1/comments", {"body": "x" * 65_536})
    assert board.api.ok("GET", "/tasks/WEB-1")["commentCount"] == 1


def test_time_logs_keep_exact_logged_hours(board: Board) -> None:
    task = board.task()
    first = board.api.ok(
        "POST", "/tasks/WEB-1/time-logs", {"hours": 1.5, "date": "2026-03-02", "note": "pairing"}
    )
    assert (first["hours"], first["date"], first["note"]) == (1.5, "2026-03-02", "pairing")
    second = board.api.ok("POST", f"/tasks/{task['$id']}/time-logs", {"hours": 0.25})
    assert len(second["date"]) == 10
    assert second["note"] is None
    board.api.ok("POST", "/tasks/WEB-1/time-logs", {"hours": 2})
    item = board.api.ok("GET", "/tasks/WEB-1")
    assert item["loggedHours"] == 3.75
    assert [t["hours"] for t in item["timeLogs"]] == [1.5, 0.25, 2]
    page = board.api.ok("GET", "/tasks/WEB-1/time-logs")
    assert ([t["$id"] for t in page["documents"]][:2], page["total"]) == (
        [first["$id"], second["$id"]],
        3,
    )
    for body in ({"hours": 0}, {"hours": -1}, {"hours": "1"}, {"hours": 1, "date": "03/02/2026"}):
        assert board.api.post("/tasks/WEB-1/time-logs", body).status_code == 400, body
    assert board.list()["documents"][0]["loggedHours"] == 3.75


def test_logged_hours_do_not_show_float_noise(board: Board) -> None:
    board.task()
    for hours in (0.1, 0.2):
        board.api.ok("POST", "/tasks/WEB-1/time-logs", {"hours": hours})
    assert board.api.ok("GET", "/tasks/WEB-1")["loggedHours"] == 0.3


@pytest.mark.parametrize("role", ["MEMBER", "ADMIN"])
def test_members_and_admins_may_write(board: Board, role: str) -> None:
    _, client = board.member(role)
    task = client.ok("POST", "/tasks", board.body())
    client.ok("PATCH", f"/tasks/{task['$id']}", {"status": "DONE"})
    client.ok(
        "POST", "/tasks/bulk-update", {"tasks": [{"$id": task["$id"], "position": 3}]}, status=200
    )
    comment = client.ok("POST", f"/tasks/{task['$id']}/comments", {"body": "hi"})
    client.ok("DELETE", f"/comments/{comment['$id']}")
    client.ok("POST", f"/tasks/{task['$id']}/time-logs", {"hours": 1})
    client.ok("DELETE", f"/tasks/{task['$id']}")


def write_calls(board: Board, task: dict[str, Any], comment: dict[str, Any]) -> list[Any]:
    ref = task["$id"]
    return [
        ("POST", "/tasks", board.body()),
        ("PATCH", f"/tasks/{ref}", {"status": "DONE"}),
        ("POST", "/tasks/bulk-update", {"tasks": [{"$id": ref, "status": "DONE"}]}),
        ("POST", f"/tasks/{ref}/comments", {"body": "hi"}),
        ("DELETE", f"/comments/{comment['$id']}", None),
        ("POST", f"/tasks/{ref}/time-logs", {"hours": 1}),
        ("DELETE", f"/tasks/{ref}", None),
    ]


def test_viewers_and_narrowed_keys_may_read_but_not_write(board: Board) -> None:
    task = board.task()
    comment = board.api.ok("POST", f"/tasks/{task['$id']}/comments", {"body": "mine"})
    _, viewer = board.member("VIEWER")
    _, narrowed = board.member("ADMIN", permissions=["SPRINT_CREATE"])
    before = board.api.ok("GET", f"/tasks/{task['$id']}")
    for client in (viewer, narrowed):
        for method, path, body in write_calls(board, task, comment):
            response = client.request(method, path, json=body)
            assert forbidden(response) == (403, "WORK_ITEM_WRITE"), (method, path)
        assert client.ok("GET", f"/tasks/{task['$id']}") == before
        assert client.ok("GET", f"/tasks/{task['$id']}/comments")["total"] == 1
        assert client.ok("GET", f"/tasks/{task['$id']}/time-logs")["total"] == 0
        assert client.get(f"/tasks?workspaceId={board.workspace_id}").status_code == 200
    assert board.list()["total"] == 1


def test_comments_of_another_workspace_are_not_found(board: Board) -> None:
    board.task()
    comment = board.api.ok("POST", "/tasks/WEB-1/comments", {"body": "secret"})
    _, stranger = make_board(board.api).member("ADMIN")
    assert stranger.delete(f"/comments/{comment['$id']}").status_code == 404
    assert stranger.get("/tasks/WEB-1/comments").status_code == 404
    assert stranger.post("/tasks/WEB-1/time-logs", {"hours": 1}).status_code == 404
    assert board.api.ok("GET", "/tasks/WEB-1")["commentCount"] == 1


def test_an_item_embeds_its_history_and_assignees_as_their_own_routes_show_them(
    board: Board,
) -> None:
    """`GET /tasks/{id}` reads comments, time logs and assignees in one statement: each comes
    out as its own route shows it, in the same order; assignees in `assigneeIds` order.
    """
    zed, _ = board.member("MEMBER")
    amy, _ = board.member("MEMBER")
    task = board.task(assigneeIds=[amy["$id"], zed["$id"], amy["$id"]])  # not in id order
    assert task["assigneeIds"] == [amy["$id"], zed["$id"]]
    assert [a["$id"] for a in task["assignees"]] == task["assigneeIds"]
    path = f"/tasks/{task['$id']}"
    for body in ("one", "two", "three"):
        board.api.ok("POST", f"{path}/comments", {"body": body})
    board.api.ok("POST", f"{path}/time-logs", {"hours": 1.5, "date": "2026-11-01", "note": "a"})
    board.api.ok("POST", f"{path}/time-logs", {"hours": 0.25, "date": "2026-11-02"})

    item = board.api.ok("GET", path)
    assert item["comments"] == board.api.ok("GET", f"{path}/comments")["documents"]
    assert [c["body"] for c in item["comments"]] == ["one", "two", "three"]
    assert item["timeLogs"] == board.api.ok("GET", f"{path}/time-logs")["documents"]
    assert [(t["hours"], t["date"], t["note"]) for t in item["timeLogs"]] == [
        (1.5, "2026-11-01", "a"),
        (0.25, "2026-11-02", None),
    ]
    assert [a["$id"] for a in item["assignees"]] == [amy["$id"], zed["$id"]]
    assert item["assignees"][0] == {"$id": amy["$id"], "name": amy["name"], "email": amy["email"]}
    patched = board.api.patch(path, json={"title": "renamed"})  # answered from what it read
    assert patched.status_code == 200, patched.text
    assert patched.json()["data"] == board.api.ok("GET", path)
    assert patched.headers["ETag"] == board.api.get(path).headers["ETag"]
    assert patched.json()["data"]["comments"] == item["comments"]
    unassigned = board.task()
    bare = board.api.ok("GET", f"/tasks/{unassigned['$id']}")
    assert (bare["comments"], bare["timeLogs"], bare["assignees"]) == ([], [], [])
    quiet = board.api.ok("GET", f"/tasks/{board.task(assigneeIds=[zed['$id']])['$id']}")
    assert (quiet["comments"], quiet["timeLogs"]) == ([], [])
    assert quiet["assignees"] == [{"$id": zed["$id"], "name": zed["name"], "email": zed["email"]}]
    logged_only = board.task()
    board.api.ok("POST", f"/tasks/{logged_only['$id']}/time-logs", {"hours": 0.5})
    assert [
        t["hours"] for t in board.api.ok("GET", f"/tasks/{logged_only['$id']}")["timeLogs"]
    ] == [0.5]

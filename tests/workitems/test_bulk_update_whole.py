"""Bulk update, whole (contract §16): entries by `$id` or key, every field PATCH takes,
errors that name their entry, all or nothing."""

from typing import Any

import pytest

from tests.factories import Api
from tests.workitem_factories import Board, make_board


@pytest.fixture
def board(admin: Api) -> Board:
    return make_board(admin, key="WEB")


def bulk(client: Api, entries: Any) -> Any:
    return client.post("/tasks/bulk-update", {"tasks": entries})


def refusal(response: Any) -> tuple[int, str, str]:
    details = response.json()["error"]["details"]
    return response.status_code, details.get("field"), details.get("reason")


def test_any_patch_field_by_id_or_key(board: Board) -> None:
    user, member = board.member("MEMBER")
    epic = board.task(type="EPIC")
    first, second = board.task(), board.task()
    response = bulk(
        board.api,
        [
            {"key": second["key"], "title": "Renamed", "labels": ["a"], "parentId": epic["key"]},
            {"$id": first["$id"], "assigneeIds": [user["$id"]], "storyPoints": 5, "type": "BUG"},
            {"key": epic["key"], "status": "DONE", "dueDate": "2026-12-24"},
        ],
    )
    assert response.status_code == 200, response.text
    updated = response.json()["data"]["documents"]
    assert [i["$id"] for i in updated] == [second["$id"], first["$id"], epic["$id"]]
    assert (updated[0]["title"], updated[0]["labels"], updated[0]["parentId"]) == (
        "Renamed",
        ["a"],
        epic["$id"],
    )
    assert updated[1]["assignees"][0]["$id"] == user["$id"]
    assert (updated[1]["storyPoints"], updated[1]["type"]) == (5, "BUG")
    assert (updated[2]["status"], updated[2]["dueDate"]) == ("DONE", "2026-12-24")
    listed = {i["$id"]: i for i in board.list()["documents"]}
    assert all(listed[i["$id"]] == i for i in updated)
    activity = board.api.ok("GET", f"/tasks/{second['$id']}/activity")["documents"]
    (change,) = [e["changes"] for e in activity if e["type"] == "task.updated"]
    assert set(change) == {"title", "labels", "parentId"}
    inbox = member.ok("GET", "/notifications")["documents"]  # (the assignee is told)
    assert [n["workItemId"] for n in inbox] == [first["$id"]]


@pytest.mark.parametrize(
    ("bad", "field", "reason"),
    [
        ({"status": "NOPE"}, "tasks[1].status", "invalid_value"),
        ({"projectId": "x"}, "tasks[1].projectId", "immutable"),
        ({"workspaceId": "x"}, "tasks[1].workspaceId", "immutable"),
        ({"type": "NOPE"}, "tasks[1].type", "invalid_value"),
        ({"title": ""}, "tasks[1].title", "too_short"),
        ({"assigneeIds": ["nobody"]}, "tasks[1].assigneeIds", "not_found"),
        ({"parentId": "NOPE-1"}, "tasks[1].parentId", "not_found"),
        ({"sprintId": "nope", "title": "x"}, "tasks[1].sprintId", "not_found"),
        ({"sprintId": "nope"}, "tasks[1].sprintId", "not_found"),
        ({"bogus": 1}, "tasks[1].bogus", "unknown_field"),
    ],
)
def test_a_bad_entry_is_named_and_nothing_changes(
    board: Board, bad: dict[str, Any], field: str, reason: str
) -> None:
    first, second = board.task(), board.task()
    before = board.list()["documents"]
    response = bulk(
        board.api, [{"$id": first["$id"], "title": "changed"}, {"$id": second["$id"], **bad}]
    )
    assert refusal(response) == (400, field, reason), response.text
    assert board.list()["documents"] == before


def test_an_entry_names_its_item_once(board: Board) -> None:
    task = board.task()
    response = bulk(board.api, [{"status": "DONE"}])
    assert refusal(response) == (400, "tasks[0].$id", "required"), response.text
    response = bulk(board.api, [{"$id": task["$id"], "key": task["key"], "status": "DONE"}])
    assert refusal(response)[:2] == (400, "tasks[0].$id")
    response = bulk(board.api, [{"$id": task["$id"]}, {"key": task["key"], "title": "x"}])
    assert refusal(response) == (400, "tasks", "invalid_value")


def test_moves_in_one_bulk_that_make_a_cycle_are_refused(board: Board) -> None:
    a, b = board.task(), board.task()
    response = bulk(
        board.api,
        [{"$id": a["$id"], "parentId": b["$id"]}, {"$id": b["$id"], "parentId": a["key"]}],
    )
    assert refusal(response) == (400, "tasks[1].parentId", "cycle"), response.text
    assert board.api.ok("GET", f"/tasks/{a['$id']}")["parentId"] is None

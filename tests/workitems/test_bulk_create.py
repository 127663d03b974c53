"""Bulk create (contract §10): up to 500 items, one workspace, each checked as POST /tasks
checks one, all or nothing, consecutive keys in request order."""

from typing import Any

import pytest

from tests.factories import Api, make_project, make_user
from tests.workitem_factories import Board, make_board


@pytest.fixture
def board(admin: Api) -> Board:
    return make_board(admin, key="WEB")


def bulk(client: Api, entries: Any, **kwargs: Any) -> Any:
    return client.post("/tasks/bulk-create", {"tasks": entries}, **kwargs)


def refusal(response: Any) -> tuple[int, str, str]:
    details = response.json()["error"]["details"]
    return response.status_code, details.get("field"), details.get("reason")


def test_creates_in_request_order_with_consecutive_keys(board: Board) -> None:
    other = make_project(board.api, board.workspace_id, key="OPS")
    sprint = board.sprint(status="ACTIVE")
    user, _ = board.member("MEMBER")
    board.task(name="before")  # WEB-1
    epic = board.task(name="epic", type="EPIC")  # WEB-2
    entries = [
        board.body(name="a", storyPoints=3, assigneeIds=[user["$id"]], labels=["x", "x"]),
        board.body(name="b", projectId=other["$id"], parentId=epic["key"]),
        board.body(title="c", sprintId=None, status="IN_PROGRESS", dueDate="2026-12-01"),
        board.body(name="d", projectId=other["$id"], position=0.5),
    ]
    response = bulk(board.api, entries)
    assert response.status_code == 201, response.text
    data = response.json()["data"]
    assert data["total"] == 4
    created = data["documents"]
    assert [i["key"] for i in created] == ["WEB-3", "OPS-1", "WEB-4", "OPS-2"]
    assert [i["title"] for i in created] == ["a", "b", "c", "d"]
    first, second, third, fourth = created
    assert first["sprintId"] == sprint["$id"]  # the active sprint by default
    assert first["status"] == "TODO"
    assert first["assignees"][0]["$id"] == user["$id"]
    assert first["labels"] == ["x"]
    assert second["parentId"] == epic["$id"]
    assert (third["sprintId"], third["status"], third["dueDate"]) == (
        None,
        "IN_PROGRESS",
        "2026-12-01",
    )
    assert fourth["position"] == 0.5
    assert second["position"] == 1  # the end of its (empty) project's board
    assert first["position"] == 3  # after WEB-1 and WEB-2
    listed = {i["$id"]: i for i in board.list(limit=500)["documents"]}
    for item in created:
        assert listed[item["$id"]] == item
    assert board.list()["total"] == 6
    assert board.api.ok("GET", f"/tasks/{epic['$id']}")["childCount"] == 1
    feed = board.api.ok("GET", f"/events?workspaceId={board.workspace_id}&limit=100")
    made = [e["subjectId"] for e in feed["documents"] if e["type"] == "task.created"]
    assert made[-4:] == [i["$id"] for i in created]
    assert board.task()["key"] == "WEB-5"


def test_five_hundred_at_once(board: Board) -> None:
    response = bulk(board.api, [board.body(name=f"t{n}") for n in range(500)])
    assert response.status_code == 201, response.text
    keys = [i["key"] for i in response.json()["data"]["documents"]]
    assert keys == [f"WEB-{n}" for n in range(1, 501)]
    assert board.list()["total"] == 500


def test_more_than_five_hundred_is_413_before_anything_else(board: Board) -> None:
    response = bulk(board.api, [{"bogus": n} for n in range(501)])
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "PAYLOAD_TOO_LARGE"
    assert refusal(bulk(board.api, []))[:2] == (400, "tasks")


@pytest.mark.parametrize(
    ("bad", "field", "reason"),
    [
        ({"name": ""}, "tasks[2].name", "too_short"),
        ({"name": None, "title": None}, "tasks[2].name", "required"),
        ({"bogus": 1}, "tasks[2].bogus", "unknown_field"),
        ({"key": "WEB-9"}, "tasks[2].key", "read_only"),
        ({"status": "NOPE"}, "tasks[2].status", "invalid_value"),
        ({"type": "NOPE"}, "tasks[2].type", "invalid_value"),
        ({"storyPoints": -1}, "tasks[2].storyPoints", "out_of_range"),
        ({"assigneeIds": ["nobody"]}, "tasks[2].assigneeIds", "not_found"),
        ({"projectId": "nope"}, "tasks[2].projectId", "not_found"),
        ({"sprintId": "nope"}, "tasks[2].sprintId", "not_found"),
        ({"parentId": "NOPE-1"}, "tasks[2].parentId", "not_found"),
    ],
)
def test_a_bad_entry_is_named_and_nothing_is_created(
    board: Board, bad: dict[str, Any], field: str, reason: str
) -> None:
    entries = [board.body(name="ok"), board.body(name="ok"), {**board.body(), **bad}]
    entries[2] = {k: v for k, v in entries[2].items() if v is not None}
    response = bulk(board.api, entries)
    assert refusal(response) == (400, field, reason), response.text
    assert board.list()["total"] == 0
    assert board.task()["key"] == "WEB-1"  # no number was used up


def test_a_parent_at_level_ten_is_out_of_range(board: Board) -> None:
    parent = board.task()
    for _ in range(9):
        parent = board.task(parentId=parent["$id"])
    response = bulk(board.api, [board.body(), board.body(parentId=parent["$id"])])
    assert refusal(response) == (400, "tasks[1].parentId", "out_of_range"), response.text
    assert board.list()["total"] == 10


def test_entries_in_two_workspaces_are_refused(board: Board) -> None:
    foreign = make_board(board.api)
    response = bulk(board.api, [board.body(), foreign.body()])
    assert refusal(response) == (400, "tasks", "mixed_workspaces")
    assert board.list()["total"] == 0
    assert foreign.list()["total"] == 0


def test_a_foreign_workspace_or_parent_is_not_found(board: Board) -> None:
    foreign = make_board(board.api)
    _, stranger = foreign.member("ADMIN")
    response = bulk(stranger, [board.body()])
    assert response.status_code == 404
    theirs = foreign.task()
    response = bulk(board.api, [board.body(parentId=theirs["$id"])])
    assert refusal(response) == (400, "tasks[0].parentId", "not_found")


def test_viewers_may_not_bulk_create(board: Board) -> None:
    _, viewer = board.member("VIEWER")
    response = bulk(viewer, [board.body()])
    assert response.status_code == 403
    assert response.json()["error"]["details"]["permission"] == "WORK_ITEM_WRITE"


def test_idempotency_key_is_honoured(board: Board) -> None:
    entries = [board.body(name="a"), board.body(name="b")]
    once = {"Idempotency-Key": "import-1"}
    first = bulk(board.api, entries, headers=once)
    again = bulk(board.api, entries, headers=once)
    assert first.status_code == again.status_code == 201
    assert first.json() == again.json()
    assert board.list()["total"] == 2
    different = bulk(board.api, [board.body(name="c")], headers=once)
    assert different.status_code == 409


def test_a_project_of_a_workspace_you_cannot_see_is_a_missing_one(board: Board) -> None:
    _, stranger = make_user(board.api)
    hidden = make_board(stranger)
    for entries, index in (
        ([board.body(), hidden.body()], 1),
        ([hidden.body(), board.body()], 0),
        ([board.body(), board.body(projectId=hidden.project_id)], 1),
    ):
        response = bulk(board.api, entries)
        assert refusal(response) == (400, f"tasks[{index}].projectId", "not_found"), response.text
    assert board.list()["total"] == 0
    assert hidden.list()["total"] == 0

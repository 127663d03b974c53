"""Creating work items (contract §5): fields, defaults, keys, sprints, types, limits."""

from datetime import UTC, datetime
from typing import Any

import pytest

from sprintboard.db import Database
from sprintboard.models import WorkItem
from sprintboard.responses import iso
from tests.factories import Api, make_project, make_workspace
from tests.workitem_factories import Board, make_board


@pytest.fixture
def board(admin: Api) -> Board:
    return make_board(admin, key="WEB")


def reason(response: Any) -> tuple[int, str | None, str | None]:
    details = response.json()["error"]["details"]
    return response.status_code, details.get("field"), details.get("reason")


def test_create_answers_the_item_with_defaults(board: Board) -> None:
    response = board.api.post("/tasks", board.body(name="  Fix login  "))
    assert response.status_code == 201, response.text
    assert response.headers["ETag"]
    task = response.json()["data"]
    assert "name" not in task
    assert task["title"] == "Fix login"
    assert task["key"] == "WEB-1"
    assert task["workspaceId"] == board.workspace_id
    assert task["projectId"] == board.project_id
    assert {k: task[k] for k in DEFAULTS} == DEFAULTS
    assert task["project"] == {
        "$id": board.project_id,
        "name": board.project["name"],
        "key": "WEB",
    }
    assert task["comments"] == []
    assert task["timeLogs"] == []
    assert task["$createdAt"].endswith("Z")
    assert task["$createdAt"] == task["$updatedAt"]


DEFAULTS = {
    "type": "TASK",
    "priority": "MEDIUM",
    "status": "BACKLOG",
    "labels": [],
    "assigneeIds": [],
    "assignees": [],
    "flagged": False,
    "description": None,
    "dueDate": None,
    "estimatedHours": None,
    "storyPoints": None,
    "sprintId": None,
    "commentCount": 0,
    "loggedHours": 0,
}


def test_create_takes_every_writable_field(board: Board) -> None:
    user, _ = board.member("MEMBER")
    sprint = board.sprint()
    task = board.task(
        title="Story",
        type="STORY",
        status="IN_PROGRESS",
        priority="URGENT",
        description="Details",
        assigneeIds=[user["$id"]],
        labels=["ui", "auth"],
        dueDate="2026-11-22",
        estimatedHours=2.5,
        storyPoints=8,
        flagged=True,
        sprintId=sprint["$id"],
        position=7.5,
    )
    assert task["title"] == "Story"
    assert {k: task[k] for k in ("type", "status", "priority", "description")} == {
        "type": "STORY",
        "status": "IN_PROGRESS",
        "priority": "URGENT",
        "description": "Details",
    }
    assert task["assigneeIds"] == [user["$id"]]
    assert task["assignees"] == [{"$id": user["$id"], "name": user["name"], "email": user["email"]}]
    assert task["labels"] == ["ui", "auth"]
    assert task["dueDate"] == "2026-11-22"
    assert (task["estimatedHours"], task["storyPoints"], task["flagged"]) == (2.5, 8, True)
    assert (task["sprintId"], task["position"]) == (sprint["$id"], 7.5)


def test_create_answers_what_a_read_answers(board: Board) -> None:
    """The create answers the row its insert returned: the same item, ETag and all, as a
    read of it gives, down to the types of the values."""
    user, _ = board.member("MEMBER")
    body = board.body(
        name="Story",
        description="Details",
        assigneeIds=[user["$id"]],
        labels=["ui"],
        dueDate="2026-11-22",
        estimatedHours=2,
        storyPoints=8,
        flagged=True,
        position=3,
    )
    for sent in (body, board.body(name="Bare")):
        created = board.api.post("/tasks", sent)
        assert created.status_code == 201, created.text
        read = board.api.get(f"/tasks/{created.json()['data']['$id']}")
        assert created.content == read.content  # (byte for byte: `2.0` is not `2`)
        assert created.headers["ETag"] == read.headers["ETag"]


def test_name_and_title_may_both_be_sent_if_equal(board: Board) -> None:
    assert board.task(name="Same", title="Same")["title"] == "Same"
    response = board.api.post("/tasks", board.body(name="One", title="Other"))
    assert response.status_code == 400
    assert response.json()["error"]["details"]["field"] == "title"


def test_required_fields(board: Board) -> None:
    for missing in ("name", "workspaceId", "projectId"):
        body = board.body()
        del body[missing]
        assert reason(board.api.post("/tasks", body)) == (400, missing, "required")


def test_blank_title_is_too_short(board: Board) -> None:
    assert reason(board.api.post("/tasks", board.body(name="   "))) == (400, "name", "too_short")


def test_project_must_be_in_the_workspace(board: Board) -> None:
    elsewhere = make_project(board.api, make_workspace(board.api)["$id"])
    response = board.api.post("/tasks", board.body(projectId=elsewhere["$id"]))
    assert reason(response) == (400, "projectId", "not_found")
    response = board.api.post("/tasks", board.body(projectId="nope"))
    assert reason(response) == (400, "projectId", "not_found")
    sprint = board.api.ok(
        "POST",
        "/sprints",
        {"name": "S", "workspaceId": board.workspace_id, "projectId": board.project_id},
    )
    response = board.api.post("/tasks", board.body(projectId="nope", sprintId=sprint["$id"]))
    assert reason(response) == (400, "projectId", "not_found")  # said before the sprint's


def test_unknown_workspace_is_not_found(board: Board) -> None:
    assert board.api.post("/tasks", board.body(workspaceId="nope")).status_code == 404


def test_keys_are_consecutive_per_project_and_never_reused(board: Board) -> None:
    other = make_project(board.api, board.workspace_id, key="API")
    assert [board.task()["key"] for _ in range(3)] == ["WEB-1", "WEB-2", "WEB-3"]
    assert board.task(projectId=other["$id"])["key"] == "API-1"
    board.api.ok("DELETE", "/tasks/WEB-3")
    assert board.task()["key"] == "WEB-4"


def test_position_defaults_to_the_end_of_the_project(board: Board) -> None:
    first = board.task()
    board.task(position=10)
    assert board.task()["position"] > 10 > first["position"]


def test_sprint_on_create(board: Board) -> None:
    planned = board.sprint()
    task = board.task()
    assert (task["sprintId"], task["status"]) == (None, "BACKLOG"), "planned is not joined"
    other = make_project(board.api, board.workspace_id)
    board.sprint(project=other, status="ACTIVE")
    assert board.task()["sprintId"] is None, "another project's active sprint is not joined"

    active = board.sprint(status="ACTIVE")
    task = board.task()
    assert (task["sprintId"], task["status"]) == (active["$id"], "TODO")
    task = board.task(sprintId=planned["$id"])
    assert (task["sprintId"], task["status"]) == (planned["$id"], "TODO")
    task = board.task(sprintId=None)
    assert (task["sprintId"], task["status"]) == (None, "BACKLOG")
    task = board.task(status="DONE")
    assert (task["sprintId"], task["status"]) == (active["$id"], "DONE")


def test_sprint_on_create_must_be_an_open_sprint_of_the_project(board: Board) -> None:
    other = make_project(board.api, board.workspace_id)
    foreign = make_board(board.api).sprint()
    cases = [
        (board.sprint(project=other)["$id"], "invalid_value"),
        ("nope", "not_found"),
        (foreign["$id"], "not_found"),
        (board.sprint(status="COMPLETED")["$id"], "invalid_value"),
    ]
    for sprint_id, why in cases:
        response = board.api.post("/tasks", board.body(sprintId=sprint_id))
        assert reason(response) == (400, "sprintId", why), sprint_id
    assert board.list()["total"] == 0


def test_custom_types(board: Board) -> None:
    assert board.task(type="BUG")["type"] == "BUG"
    response = board.api.post("/tasks", board.body(type="INCIDENT"))
    assert reason(response) == (400, "type", "invalid_value")
    board.api.ok("POST", f"/workspaces/{board.workspace_id}/work-item-types", {"name": "INCIDENT"})
    assert board.task(type="INCIDENT")["type"] == "INCIDENT"
    # A type registered in another workspace does not count here.
    other = make_board(board.api)
    response = other.api.post("/tasks", other.body(type="INCIDENT"))
    assert reason(response) == (400, "type", "invalid_value")


def test_assignees_must_be_members(board: Board) -> None:
    member, _ = board.member("VIEWER")
    assert board.task(assigneeIds=[member["$id"]])["assigneeIds"] == [member["$id"]]
    outsider = make_board(board.api).member("MEMBER")[0]
    for ids in ([outsider["$id"]], [member["$id"], "nope"]):
        response = board.api.post("/tasks", board.body(assigneeIds=ids))
        assert reason(response) == (400, "assigneeIds", "not_found")


FIELD_ERRORS: list[tuple[dict[str, Any], str, str]] = [
    ({"dueDate": "2026-13-01"}, "dueDate", "invalid_format"),
    ({"dueDate": "22.11.2026"}, "dueDate", "invalid_format"),
    ({"dueDate": "2026-11-22T10:00:00Z"}, "dueDate", "invalid_format"),
    ({"dueDate": 20261122}, "dueDate", "invalid_type"),
    ({"name": "x" * 256}, "name", "too_long"),
    ({"title": "x" * 256}, "title", "too_long"),
    ({"description": "x" * 65_537}, "description", "too_long"),
    ({"labels": [f"l{i}" for i in range(51)]}, "labels", "too_long"),
    ({"labels": ["x" * 65]}, "labels", "too_long"),
    ({"labels": [""]}, "labels", "too_short"),
    ({"assigneeIds": [f"u{i}" for i in range(51)]}, "assigneeIds", "too_long"),
    ({"estimatedHours": -1}, "estimatedHours", "out_of_range"),
    ({"estimatedHours": 100_000.5}, "estimatedHours", "out_of_range"),
    ({"storyPoints": -0.5}, "storyPoints", "out_of_range"),
    ({"storyPoints": 100_001}, "storyPoints", "out_of_range"),
    ({"priority": "BLOCKER"}, "priority", "invalid_value"),
    ({"status": "OPEN"}, "status", "invalid_value"),
    ({"flagged": "yes"}, "flagged", "invalid_type"),
    ({"type": "bug"}, "type", "invalid_value"),
    ({"type": ""}, "type", "invalid_value"),
    ({"type": "NOT A TYPE"}, "type", "invalid_value"),
    ({"colour": "red"}, "colour", "unknown_field"),
    ({"key": "WEB-9"}, "key", "read_only"),
    ({"$id": "abc"}, "$id", "read_only"),
    ({"commentCount": 3}, "commentCount", "read_only"),
]


def test_field_validation(board: Board) -> None:
    for fields, field, why in FIELD_ERRORS:
        response = board.api.post("/tasks", board.body(**fields))
        assert reason(response) == (400, field, why), fields
    assert board.list()["total"] == 0


def test_field_limits_at_the_edge_are_accepted(board: Board) -> None:
    task = board.task(
        name="x" * 255,
        description="d" * 65_536,
        labels=[f"{i:02d}" + "x" * 62 for i in range(50)],
        estimatedHours=0,
        storyPoints=100_000,
    )
    assert len(task["title"]) == 255
    assert len(task["labels"]) == 50
    assert (task["estimatedHours"], task["storyPoints"]) == (0, 100_000)


def test_item_timestamps_read_as_the_orm_formats_them(board: Board, database: Database) -> None:
    """Work item reads take timestamps pre-formatted by the database (PostgreSQL's `to_char`):
    they must equal what `iso` makes of the stored value, sub-millisecond digits cut off.
    """
    task = board.task()
    stored = datetime(2026, 3, 4, 5, 6, 7, 891_999, tzinfo=UTC)
    with database.transaction() as session:
        item = session.get(WorkItem, task["$id"])
        assert item is not None
        assert iso(item.created_at) == task["$createdAt"]
        item.updated_at = stored
    for read in (
        board.api.ok("GET", f"/tasks/{task['$id']}"),
        board.list()["documents"][0],
    ):
        assert read["$createdAt"] == task["$createdAt"]
        assert read["$updatedAt"] == iso(stored) == "2026-03-04T05:06:07.891Z"

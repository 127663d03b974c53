"""Conventions for script writers (contract §16): operationIds, unknown query parameters,
sorting, cursors and the filters a sync client needs."""

import re
import time
from typing import Any

import pytest

from tests.factories import Api, make_project, make_workspace
from tests.workitem_factories import Board, make_board


@pytest.fixture
def board(admin: Api) -> Board:
    return make_board(admin, key="WEB")


def keys(page: dict[str, Any]) -> list[str]:
    return [item["key"] for item in page["documents"]]


def refused(response: Any, field: str, reason: str) -> None:
    assert response.status_code == 400, response.text
    details = response.json()["error"]["details"]
    assert (details["field"], details["reason"]) == (field, reason), details


# --- operationIds ---------------------------------------------------------------------------


def test_every_operation_has_a_unique_lower_camel_case_operation_id(api: Api) -> None:
    document = api.get("/api/v1/openapi.json").json()
    ids = [
        operation.get("operationId")
        for path_item in document["paths"].values()
        for operation in path_item.values()
    ]
    assert all(isinstance(i, str) and re.fullmatch(r"[a-z]+(?:[A-Z][a-z0-9]*)*", i) for i in ids), (
        ids
    )
    assert len(set(ids)) == len(ids), sorted(ids)
    for expected in (
        "listTasks",
        "createTask",
        "getTask",
        "updateTask",
        "deleteTask",
        "bulkUpdateTasks",
        "completeSprint",
        "listSprints",
    ):
        assert expected in ids


# --- unknown query parameters ---------------------------------------------------------------


def test_unknown_query_parameters_are_refused_on_every_kind_of_route(board: Board) -> None:
    task = board.task()
    api = board.api
    for method, path in (
        ("GET", f"/tasks?workspaceId={board.workspace_id}&stauts=DONE"),
        ("GET", "/workspaces?stauts=DONE"),
        ("GET", f"/tasks/{task['key']}?stauts=DONE"),
        ("GET", f"/tasks/{task['key']}/comments?stauts=DONE"),
        ("GET", "/me?stauts=DONE"),
        ("GET", f"/events?workspaceId={board.workspace_id}&stauts=DONE"),
        ("DELETE", f"/tasks/{task['$id']}?stauts=DONE"),
        ("POST", "/workspaces?stauts=DONE"),
    ):
        response = api.request(method, path, json={"name": "x"} if method == "POST" else None)
        refused(response, "stauts", "unknown_field")
    assert api.ok("GET", f"/tasks/{task['key']}")["key"] == task["key"]  # nothing was deleted
    assert api.get("/workspaces?limit=1").status_code == 200


def test_a_bad_key_is_still_a_401_before_an_unknown_parameter(api: Api) -> None:
    assert api.get("/workspaces?stauts=DONE").status_code == 401


# --- sorting --------------------------------------------------------------------------------


def test_sort_by_each_field_both_ways(board: Board) -> None:
    board.task(name="banana", priority="LOW", storyPoints=3, dueDate="2026-03-02")  # WEB-1
    board.task(name="Apple", priority="URGENT", dueDate="2026-03-01")  # WEB-2
    board.task(name="cherry", priority="HIGH", storyPoints=1)  # WEB-3
    for _ in range(7):
        board.task(name="zz", priority="MEDIUM")  # WEB-4 .. WEB-10
    board.api.ok("PATCH", "/tasks/WEB-1", {"position": 99_999})  # last in the board's order

    def first(sort: str, n: int = 3) -> list[str]:
        return keys(board.list(sort=sort))[:n]

    assert first("priority", 1) == ["WEB-1"]
    assert first("-priority", 2) == ["WEB-2", "WEB-3"]
    assert first("title") == ["WEB-2", "WEB-1", "WEB-3"]  # case-insensitive
    assert first("-title", 1) == ["WEB-4"]
    assert first("storyPoints", 2) == ["WEB-3", "WEB-1"]
    assert first("-storyPoints", 2) == ["WEB-1", "WEB-3"]
    assert first("dueDate", 2) == ["WEB-2", "WEB-1"]
    assert first("-dueDate", 2) == ["WEB-1", "WEB-2"]  # empty due dates last both ways
    assert keys(board.list(sort="-dueDate"))[-1] != "WEB-2"
    assert first("key") == ["WEB-1", "WEB-2", "WEB-3"]
    assert keys(board.list(sort="-key"))[:2] == ["WEB-10", "WEB-9"]  # numerically
    assert keys(board.list())[-1] == "WEB-1"  # position, the default
    assert first("-position", 1) == ["WEB-1"]
    assert first("createdAt", 1) == ["WEB-1"]
    assert first("-createdAt", 1) == ["WEB-10"]
    assert first("-updatedAt", 1) == ["WEB-1"]
    # ties fall back to position: the seven MEDIUMs in board order
    mediums = keys(board.list(sort="priority,title", priority="MEDIUM"))
    assert mediums == [f"WEB-{n}" for n in range(4, 11)]


def test_an_unknown_or_repeated_sort_field_is_refused(board: Board) -> None:
    for sort in ("name", "-status", "priority,priority", "position,,key", "-", "", "key, title"):
        refused(
            board.api.get(f"/tasks?workspaceId={board.workspace_id}&sort={sort}"),
            "sort",
            "invalid_value",
        )


# --- cursors --------------------------------------------------------------------------------


def walk(board: Board, **params: Any) -> list[str]:
    seen: list[str] = []
    page = board.list(limit=3, **params)
    while True:
        seen += keys(page)
        if page["nextCursor"] is None:
            return seen
        page = board.list(limit=3, cursor=page["nextCursor"], **params)


def test_a_cursor_walks_every_order_without_repeats_or_gaps(board: Board) -> None:
    for n in range(8):
        board.task(priority=("LOW", "HIGH")[n % 2], storyPoints=n if n % 3 else None)
    for sort in ("position", "-priority", "storyPoints", "-storyPoints,-key", "-updatedAt"):
        assert walk(board, sort=sort) == keys(board.list(sort=sort, limit=500)), sort


def test_creates_and_deletes_between_pages_neither_repeat_nor_skip(board: Board) -> None:
    for _ in range(6):
        board.task()
    first = board.list(limit=3, sort="key")
    assert keys(first) == ["WEB-1", "WEB-2", "WEB-3"]
    board.api.ok("DELETE", "/tasks/WEB-1")
    board.api.ok("DELETE", "/tasks/WEB-5")
    board.task()  # WEB-7
    second = board.list(limit=3, sort="key", cursor=first["nextCursor"])
    assert keys(second) == ["WEB-4", "WEB-6", "WEB-7"]
    assert second["total"] == 5
    assert second["nextCursor"] is None


def test_a_cursor_keeps_its_filters_and_order(board: Board) -> None:
    for _ in range(4):
        board.task()
    cursor = board.list(limit=2)["nextCursor"]
    path = f"/tasks?workspaceId={board.workspace_id}&cursor={cursor}"
    refused(board.api.get(f"{path}&sort=-key"), "cursor", "invalid_value")
    refused(board.api.get(f"{path}&status=TODO"), "cursor", "invalid_value")
    refused(board.api.get(f"{path[:-3]}"), "cursor", "invalid_value")
    assert keys(board.api.ok("GET", f"{path}&limit=5")) == ["WEB-3", "WEB-4"]


def test_offset_still_works_with_next_cursor(board: Board) -> None:
    for _ in range(3):
        board.task()
    page = board.list(limit=1, offset=1)
    assert keys(page) == ["WEB-2"]
    assert keys(board.list(limit=1, cursor=page["nextCursor"])) == ["WEB-3"]


def test_other_lists_page_by_cursor_too(admin: Api) -> None:
    for _ in range(3):
        make_workspace(admin)
    first = admin.ok("GET", "/workspaces?limit=2")
    assert first["nextCursor"] is not None
    second = admin.ok("GET", f"/workspaces?limit=2&cursor={first['nextCursor']}")
    everything = admin.ok("GET", "/workspaces?limit=500")
    assert everything["nextCursor"] is None
    shown = [w["$id"] for w in first["documents"] + second["documents"]]
    assert shown == [w["$id"] for w in everything["documents"]][: len(shown)]
    bad = admin.get("/workspaces?cursor=not-a-cursor")
    refused(bad, "cursor", "invalid_value")


# --- filters for sync clients ---------------------------------------------------------------


def test_project_id_alone_is_enough_and_does_not_leak(board: Board, admin: Api) -> None:
    board.task()
    listed = board.api.ok("GET", f"/tasks?projectId={board.project_id}")
    assert keys(listed) == ["WEB-1"]
    _, stranger = board.member("VIEWER")
    other = make_project(admin, make_workspace(admin)["$id"])
    assert stranger.get(f"/tasks?projectId={other['$id']}").status_code == 404
    assert stranger.get("/tasks?projectId=nope").status_code == 404
    refused(board.api.get("/tasks"), "workspaceId", "required")


def test_unassigned_updated_since_and_search_in_descriptions(board: Board) -> None:
    alice, _ = board.member("MEMBER")
    board.task(assigneeIds=[alice["$id"]])  # WEB-1
    board.task(description="Fix the flaky Webhook retry")  # WEB-2
    assert keys(board.list(assigneeId="none")) == ["WEB-2"]
    assert keys(board.list(assigneeId=alice["$id"])) == ["WEB-1"]
    assert keys(board.list(search="webhook")) == ["WEB-2"]
    time.sleep(0.01)  # (so that the next change is a later millisecond than the creates)
    changed = board.api.ok("PATCH", "/tasks/WEB-1", {"title": "Renamed"})
    since = changed["$updatedAt"]
    assert keys(board.list(updatedSince=since)) == ["WEB-1"]
    assert keys(board.list(updatedSince="2000-01-01")) == ["WEB-1", "WEB-2"]
    refused(
        board.api.get(f"/tasks?workspaceId={board.workspace_id}&updatedSince=soon"),
        "updatedSince",
        "invalid_format",
    )


def test_error_messages_name_the_field_once(board: Board) -> None:
    response = board.api.post("/tasks", board.body(sprintId="a\x00b"))
    assert response.status_code == 400
    assert response.json()["error"]["message"] == "sprintId: must not contain U+0000."


def test_every_required_string_of_every_body_says_it_is_not_blank(api: Api) -> None:
    """A body's non-empty strings state "not only white space" (strings are trimmed), nested
    models included: a model's own `json_schema_extra` once dropped it from bulk entries, and
    the fuzz test found `title: "\\u0085"` refused as valid data."""
    schemas = api.client.get("/api/v1/openapi.json").json()["components"]["schemas"]
    unstated = [
        f"{name}.{field}"
        for name, schema in schemas.items()
        for field, node in schema.get("properties", {}).items()
        if node.get("type") == "string"
        and node.get("minLength", 0) >= 1
        and "not" not in node
        and "enum" not in node
        and "pattern" not in node
        and "format" not in node
    ]
    assert unstated == []


def test_a_create_body_documents_that_it_needs_a_name_or_a_title(admin: Api) -> None:
    document = admin.get("/api/v1/openapi.json").json()
    create = document["components"]["schemas"]["TaskCreate"]
    assert [create["if"]["required"], create["else"]["required"]] == [["name"], ["title"]]
    # Each branch is what the server takes, and neither (a null one counts as not given) is
    # what it refuses.
    workspace = make_workspace(admin)
    project = make_project(admin, workspace["$id"], key="PR")
    where = {"workspaceId": workspace["$id"], "projectId": project["$id"]}
    for body in ({"name": "By name"}, {"title": "By title"}):
        assert admin.post("/api/v1/tasks", json={**where, **body}).status_code == 201
    refused(admin.post("/api/v1/tasks", json={**where, "name": None}), "name", "required")

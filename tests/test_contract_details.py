"""Points of the contract found by probing a running server as a black-box client would."""

from typing import Any

from tests.factories import Api, make_project, make_workspace
from tests.sprint_factories import error, make_board, make_sprint, make_task, start, task_of


def test_a_key_in_two_workspaces_means_the_newest_unless_workspace_is_named(admin: Api) -> None:
    older = make_project(admin, make_workspace(admin)["$id"], key="TK")
    newer = make_project(admin, make_workspace(admin)["$id"], key="TK")
    first = make_task(admin, older)
    second = make_task(admin, newer)
    assert first["key"] == second["key"] == "TK-1"

    assert admin.ok("GET", "/tasks/TK-1")["$id"] == second["$id"]
    named = admin.ok("GET", f"/tasks/TK-1?workspaceId={older['workspaceId']}")
    assert named["$id"] == first["$id"]
    patched = admin.ok(
        "PATCH", f"/tasks/TK-1?workspaceId={older['workspaceId']}", {"status": "DONE"}
    )
    assert patched["$id"] == first["$id"]
    assert task_of(admin, second["$id"])["status"] == "BACKLOG"
    admin.ok("DELETE", f"/tasks/TK-1?workspaceId={older['workspaceId']}")
    assert admin.ok("GET", "/tasks/TK-1")["$id"] == second["$id"]


def test_workspaces_and_projects_carry_etags_and_honour_if_match(admin: Api) -> None:
    workspace = make_workspace(admin)
    project = make_project(admin, workspace["$id"])
    for path, body in (
        (f"/workspaces/{workspace['$id']}", {"description": "new"}),
        (f"/projects/{project['$id']}", {"description": "new"}),
    ):
        read = admin.get(path)
        tag = read.headers["ETag"]
        stale = admin.patch(path, json=body, headers={"If-Match": '"stale.1"'})
        assert error(stale, 412)["code"] == "PRECONDITION_FAILED"
        assert admin.ok("GET", path)["description"] is None
        changed = admin.patch(path, json=body, headers={"If-Match": tag})
        assert changed.status_code == 200, changed.text
        assert changed.headers["ETag"] != tag
        refused = admin.delete(path, headers={"If-Match": tag})
        assert error(refused, 412)["code"] == "PRECONDITION_FAILED"
    admin.ok("GET", f"/projects/{project['$id']}")
    admin.ok("GET", f"/workspaces/{workspace['$id']}")


def test_patch_completed_takes_unfinished_details_like_the_complete_route(admin: Api) -> None:
    project = make_board(admin)
    current = make_sprint(admin, project)
    start(admin, current)
    following = make_sprint(admin, project)
    open_item = make_task(admin, project)
    done_item = make_task(admin, project, status="DONE")

    misplaced = admin.patch(
        f"/sprints/{following['$id']}",
        json={"name": "x", "unfinishedDetails": {"moveTo": "backlog"}},
    )
    assert error(misplaced, 400)["details"]["field"] == "unfinishedDetails"

    completed = admin.ok(
        "PATCH",
        f"/sprints/{current['$id']}",
        {"status": "COMPLETED", "unfinishedDetails": {"moveTo": {"sprintId": following["$id"]}}},
    )
    assert completed["status"] == "COMPLETED"
    assert completed["movedItemCount"] == 1
    assert task_of(admin, open_item["$id"])["sprintId"] == following["$id"]
    assert task_of(admin, done_item["$id"])["sprintId"] == current["$id"]


def test_a_date_time_out_of_range_in_utc_is_400(admin: Api) -> None:
    project = make_board(admin)
    body: dict[str, Any] = {
        "name": "x",
        "workspaceId": project["workspaceId"],
        "projectId": project["$id"],
        "startDate": "0001-01-01T00:00:00+01:00",
    }
    details = error(admin.post("/sprints", json=body), 400)["details"]
    assert details == {"field": "startDate", "reason": "out_of_range"}


def test_a_trailing_slash_is_an_unknown_path_not_a_redirect(admin: Api) -> None:
    response = admin.get("/workspaces/")
    assert error(response, 404)["code"] == "NOT_FOUND"


def test_a_body_that_is_not_utf8_is_invalid_json(admin: Api) -> None:
    response = admin.post(
        "/workspaces", content=b'{"name": "\xff\xfe"}', headers={"Content-Type": "application/json"}
    )
    assert error(response, 400)["details"] == {"field": "body", "reason": "invalid_json"}


def test_a_nul_character_names_its_field(admin: Api) -> None:
    response = admin.post("/workspaces", json={"name": "nul\u0000byte"})
    assert error(response, 400)["details"] == {"field": "name", "reason": "invalid_value"}


def test_server_owned_fields_are_read_only(admin: Api) -> None:
    workspace = make_workspace(admin)
    project = make_project(admin, workspace["$id"])
    task = make_task(admin, project)
    for path, body, field in (
        (
            f"/workspaces/{workspace['$id']}/webhooks",
            {"url": "http://127.0.0.1:9/hook", "events": ["task.updated"], "secret": "mine"},
            "secret",
        ),
        (f"/tasks/{task['$id']}/comments", {"body": "hi", "authorId": "someone"}, "authorId"),
        (f"/tasks/{task['$id']}/time-logs", {"hours": 1, "userId": "someone"}, "userId"),
    ):
        details = error(admin.post(path, json=body), 400)["details"]
        assert details == {"field": field, "reason": "read_only"}


def test_an_idempotent_repeat_compares_bodies_as_json(admin: Api) -> None:
    headers = {"Idempotency-Key": "same-document", "Content-Type": "application/json"}
    first = admin.post(
        "/workspaces", content=b'{"name": "one", "description": "d"}', headers=headers
    )
    again = admin.post(
        "/workspaces", content=b'{ "description":"d",\n  "name":"one" }', headers=headers
    )
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert admin.ok("GET", "/workspaces")["total"] == 1

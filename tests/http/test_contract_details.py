"""Points of the contract found by probing a running server as a black-box client would."""

from datetime import datetime
from typing import Any

from tests.factories import Api, make_project, make_user, make_workspace
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


def test_fields_a_record_shows_but_the_server_sets_are_read_only(admin: Api) -> None:
    """Fields of one kind of record that the server sets (its workspace, from the path; a
    member's name and email, from the user; a webhook's state) are `read_only` there."""
    workspace = make_workspace(admin)
    ws = workspace["$id"]
    project = make_project(admin, ws)
    user, _ = make_user(admin)
    hook = {"url": "http://127.0.0.1:9/hook", "events": ["task.updated"]}
    member = {"userId": user["$id"], "role": "MEMBER"}
    sprint = {"name": "S", "workspaceId": ws, "projectId": project["$id"]}
    for method, path, body, field in (
        ("POST", f"/workspaces/{ws}/webhooks", {**hook, "enabled": False}, "enabled"),
        ("POST", f"/workspaces/{ws}/webhooks", {**hook, "workspaceId": ws}, "workspaceId"),
        ("POST", f"/workspaces/{ws}/members", {**member, "name": "N"}, "name"),
        ("POST", f"/workspaces/{ws}/projects", {"name": "P", "workspaceId": ws}, "workspaceId"),
        (
            "POST",
            f"/workspaces/{ws}/work-item-types",
            {"name": "T", "workspaceId": ws},
            "workspaceId",
        ),
        ("POST", "/sprints", {**sprint, "position": 1}, "position"),
        ("PATCH", f"/workspaces/{ws}/members/{admin_id(admin)}", {"email": "x@y.z"}, "email"),
    ):
        response = admin.request(method, path, json=body)
        assert error(response, 400)["details"] == {"field": field, "reason": "read_only"}, path
    for path, body in (
        (f"/workspaces/{ws}/webhooks", hook),
        (f"/workspaces/{ws}/members", member),
        ("/sprints", sprint),
    ):
        admin.ok("POST", path, body)


def admin_id(admin: Api) -> str:
    me: str = admin.ok("GET", "/me")["$id"]
    return me


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


def test_every_single_record_response_carries_an_etag(admin: Api) -> None:
    """§8: creates, reads and updates of every kind of record answer with an `ETag`."""
    workspace = make_workspace(admin)
    project = make_project(admin, workspace["$id"])
    task = make_task(admin, project)
    user, _ = make_user(admin)
    ws = f"/workspaces/{workspace['$id']}"
    calls: list[tuple[str, str, dict[str, Any] | None]] = [
        ("POST", "/workspaces", {"name": "tagged"}),
        ("POST", f"{ws}/projects", {"name": "Tagged"}),
        ("POST", "/users", {"name": "tagged", "email": "tagged@example.com"}),
        ("POST", "/keys", {"name": "tagged"}),
        ("POST", f"/users/{user['$id']}/keys", {"name": "tagged"}),
        ("POST", f"{ws}/members", {"userId": user["$id"], "role": "MEMBER"}),
        ("PATCH", f"{ws}/members/{user['$id']}", {"role": "VIEWER"}),
        ("POST", f"{ws}/work-item-types", {"name": "SPIKE"}),
        ("POST", f"{ws}/webhooks", {"url": "http://127.0.0.1:9/hook", "events": ["task.created"]}),
        ("POST", f"/tasks/{task['$id']}/comments", {"body": "tagged"}),
        ("POST", f"/tasks/{task['$id']}/time-logs", {"hours": 1, "date": "2026-11-22"}),
        ("GET", "/me", None),
    ]
    for method, path, body in calls:
        response = admin.request(method, path, json=body)
        assert response.status_code in (200, 201), (path, response.text)
        record = response.json()["data"]
        assert response.headers.get("ETag") == f'"{record["$id"]}.{_ms(record["$updatedAt"])}"'


def _ms(timestamp: str) -> int:
    return int(datetime.fromisoformat(timestamp).timestamp() * 1000)


def test_if_match_guards_every_patch_and_delete(admin: Api) -> None:
    """§8: members, keys, comments and webhooks too: a stale `If-Match` is 412 and changes
    nothing; the current `ETag` lets the change through.
    """
    workspace = make_workspace(admin)
    task = make_task(admin, make_project(admin, workspace["$id"]))
    user, _ = make_user(admin)
    ws = f"/workspaces/{workspace['$id']}"
    member = admin.post(f"{ws}/members", json={"userId": user["$id"], "role": "MEMBER"})
    key = admin.post("/keys", json={"name": "doomed"})
    comment = admin.post(f"/tasks/{task['$id']}/comments", json={"body": "doomed"})
    hook = {"url": "http://127.0.0.1:9/hook", "events": ["task.created"]}
    webhook = admin.post(f"{ws}/webhooks", json=hook)
    member_path = f"{ws}/members/{user['$id']}"
    changes = [
        ("PATCH", member_path, {"role": "VIEWER"}, member),
        ("DELETE", f"/keys/{key.json()['data']['$id']}", None, key),
        ("DELETE", f"/comments/{comment.json()['data']['$id']}", None, comment),
        ("DELETE", f"/webhooks/{webhook.json()['data']['$id']}", None, webhook),
    ]
    for method, path, body, created in changes:
        stale = admin.request(method, path, json=body, headers={"If-Match": '"stale.1"'})
        assert error(stale, 412)["details"]["etag"] == created.headers["ETag"], path
        done = admin.request(method, path, json=body, headers={"If-Match": created.headers["ETag"]})
        assert done.status_code == 200, (path, done.text)

    def roles() -> list[str]:
        members = admin.ok("GET", f"{ws}/members")["documents"]
        return [m["role"] for m in members if m["userId"] == user["$id"]]

    assert roles() == ["VIEWER"]
    # The role change moved the member's ETag on: the one from before no longer deletes.
    refused = admin.delete(member_path, headers={"If-Match": member.headers["ETag"]})
    assert error(refused, 412)["code"] == "PRECONDITION_FAILED"
    assert roles() == ["VIEWER"]
    assert admin.ok("GET", f"/tasks/{task['$id']}/comments")["total"] == 0

"""Every validation reason the endpoints can give, with `details.field` and `details.reason`."""

from typing import Any

import orjson
import pytest

from tests.factories import Api, make_project, make_user, make_workspace


def invalid(response: Any) -> dict[str, Any]:
    assert response.status_code == 400, response.text
    body = response.json()
    assert body["error"]["code"] == "INVALID_REQUEST"
    details: dict[str, Any] = body["error"]["details"]
    return details


@pytest.fixture
def workspace(admin: Api) -> dict[str, Any]:
    return make_workspace(admin)


@pytest.fixture
def project(admin: Api, workspace: dict[str, Any]) -> dict[str, Any]:
    return make_project(admin, workspace["$id"], name="Web Platform")


# (path template, body, field, reason); {ws} and {project} are filled in.
CASES: list[tuple[str, str, dict[str, Any], str, str]] = [
    ("POST", "/workspaces", {}, "name", "required"),
    ("POST", "/workspaces", {"description": "d"}, "name", "required"),
    ("POST", "/workspaces", {"name": 42}, "name", "invalid_type"),
    ("POST", "/workspaces", {"name": None}, "name", "invalid_type"),
    ("POST", "/workspaces", {"name": ["a"]}, "name", "invalid_type"),
    ("POST", "/workspaces", {"name": ""}, "name", "too_short"),
    ("POST", "/workspaces", {"name": "   "}, "name", "too_short"),
    ("POST", "/workspaces", {"name": "\t\n "}, "name", "too_short"),
    ("POST", "/workspaces", {"name": "x" * 256}, "name", "too_long"),
    ("POST", "/workspaces", {"name": "ok", "description": "x" * 65_537}, "description", "too_long"),
    ("POST", "/workspaces", {"name": "ok", "description": 5}, "description", "invalid_type"),
    ("POST", "/workspaces", {"name": "ok", "owner": "me"}, "owner", "unknown_field"),
    ("POST", "/workspaces", {"name": "ok", "$id": "x"}, "$id", "read_only"),
    ("POST", "/workspaces", {"name": "ok", "$createdAt": "x"}, "$createdAt", "read_only"),
    ("PATCH", "/workspaces/{ws}", {"name": ""}, "name", "too_short"),
    ("PATCH", "/workspaces/{ws}", {"name": None}, "name", "invalid_type"),
    ("PATCH", "/workspaces/{ws}", {"$updatedAt": "x"}, "$updatedAt", "read_only"),
    ("POST", "/workspaces/{ws}/projects", {}, "name", "required"),
    ("POST", "/workspaces/{ws}/projects", {"name": "  "}, "name", "too_short"),
    ("POST", "/workspaces/{ws}/projects", {"name": "P", "key": "ab"}, "key", "invalid_format"),
    ("POST", "/workspaces/{ws}/projects", {"name": "P", "key": "1AB"}, "key", "invalid_format"),
    ("POST", "/workspaces/{ws}/projects", {"name": "P", "key": "A-B"}, "key", "invalid_format"),
    ("POST", "/workspaces/{ws}/projects", {"name": "P", "key": "A"}, "key", "too_short"),
    (
        "POST",
        "/workspaces/{ws}/projects",
        {"name": "P", "key": "ABCDEFGHIJK"},
        "key",
        "too_long",
    ),
    ("POST", "/workspaces/{ws}/projects", {"name": "P", "key": 12}, "key", "invalid_type"),
    ("PATCH", "/projects/{project}", {"key": "NEW"}, "key", "immutable"),
    ("PATCH", "/projects/{project}", {"key": None}, "key", "immutable"),
    ("PATCH", "/projects/{project}", {"workspaceId": "x"}, "workspaceId", "immutable"),
    ("PATCH", "/projects/{project}", {"name": "x" * 256}, "name", "too_long"),
    ("PATCH", "/projects/{project}", {"$id": "x"}, "$id", "read_only"),
    ("POST", "/workspaces/{ws}/members", {}, "userId", "required"),
    ("POST", "/workspaces/{ws}/members", {"userId": "nobody"}, "userId", "not_found"),
    ("POST", "/workspaces/{ws}/members", {"userId": 7}, "userId", "invalid_type"),
    (
        "POST",
        "/workspaces/{ws}/members",
        {"userId": "{me}", "role": "OWNER"},
        "role",
        "invalid_value",
    ),
    (
        "POST",
        "/workspaces/{ws}/members",
        {"userId": "{me}", "role": "admin"},
        "role",
        "invalid_value",
    ),
    ("PATCH", "/workspaces/{ws}/members/{me}", {}, "role", "required"),
    ("PATCH", "/workspaces/{ws}/members/{me}", {"role": "GOD"}, "role", "invalid_value"),
    ("PATCH", "/workspaces/{ws}/members/{me}", {"role": 5}, "role", "invalid_type"),
    ("PATCH", "/workspaces/{ws}/members/{me}", {"role": True}, "role", "invalid_type"),
    ("POST", "/workspaces/{ws}/work-item-types", {"name": "spike"}, "name", "invalid_format"),
    ("POST", "/workspaces/{ws}/work-item-types", {"name": "A-B"}, "name", "invalid_format"),
    ("POST", "/workspaces/{ws}/work-item-types", {"name": "A" * 33}, "name", "too_long"),
    ("POST", "/users", {"name": "X"}, "email", "required"),
    ("POST", "/users", {"name": "X", "email": "nope"}, "email", "invalid_format"),
    (
        "POST",
        "/users",
        {"name": "X", "email": "a@b.c", "isOrgAdmin": "yes"},
        "isOrgAdmin",
        "invalid_type",
    ),
    ("POST", "/users", {"name": "X", "email": "a@b.co", "$id": "x"}, "$id", "read_only"),
    ("POST", "/keys", {}, "name", "required"),
    ("POST", "/keys", {"name": "k", "expiresAt": "2001-01-01"}, "expiresAt", "invalid_value"),
    ("POST", "/keys", {"name": "k", "expiresAt": "soon"}, "expiresAt", "invalid_format"),
    ("POST", "/keys", {"name": "k", "expiresAt": 12}, "expiresAt", "invalid_type"),
    ("POST", "/keys", {"name": "k", "permissions": ["NOPE"]}, "permissions", "invalid_value"),
    ("POST", "/keys", {"name": "k", "permissions": [1]}, "permissions", "invalid_type"),
    ("POST", "/keys", {"name": "k", "permissions": "SPRINT_CREATE"}, "permissions", "invalid_type"),
    ("POST", "/keys", {"name": "k", "workspaceId": "nope"}, "workspaceId", "not_found"),
    ("POST", "/keys", {"name": "k", "prefix": "sb_x"}, "prefix", "read_only"),
    ("POST", "/keys", {"name": "k", "key": "sb_x"}, "key", "read_only"),
    ("GET", "/workspaces?limit=0", None, "limit", "out_of_range"),
    ("GET", "/workspaces?limit=501", None, "limit", "out_of_range"),
    ("GET", "/workspaces?offset=-1", None, "offset", "out_of_range"),
    ("GET", "/workspaces?limit=ten", None, "limit", "invalid_type"),
]


@pytest.mark.parametrize(
    ("method", "path", "body", "field", "reason"),
    CASES,
    ids=[f"{m} {p} {f} {r}" for m, p, _, f, r in CASES],
)
def test_validation_reason(
    admin: Api,
    workspace: dict[str, Any],
    project: dict[str, Any],
    method: str,
    path: str,
    body: dict[str, Any] | None,
    field: str,
    reason: str,
) -> None:
    me = admin.ok("GET", "/me")["$id"]
    fill = {"ws": workspace["$id"], "project": project["$id"], "me": me}
    if body is not None:
        body = {k: v.format(**fill) if isinstance(v, str) else v for k, v in body.items()}
    details = invalid(admin.request(method, path.format(**fill), json=body))
    assert details["field"] == field
    assert details["reason"] == reason
    # Nothing changed.
    assert admin.ok("GET", f"/workspaces/{workspace['$id']}") == workspace
    assert admin.ok("GET", f"/projects/{project['$id']}") == project
    assert admin.ok("GET", "/workspaces")["total"] == 1


def test_invalid_json(admin: Api) -> None:
    response = admin.post(
        "/workspaces", content=b"{name: 1}", headers={"Content-Type": "application/json"}
    )
    assert invalid(response) == {"field": "body", "reason": "invalid_json"}


def test_nan_and_infinity_are_not_json(admin: Api) -> None:
    json_body = {"Content-Type": "application/json"}
    workspace = make_workspace(admin)
    project = admin.ok("POST", f"/workspaces/{workspace['$id']}/projects", {"name": "P"})
    task = {"name": "t", "workspaceId": workspace["$id"], "projectId": project["$id"]}
    for constant in (b"NaN", b"Infinity", b"-Infinity"):
        body = orjson.dumps(task)[:-1] + b', "storyPoints": ' + constant + b"}"
        response = admin.post("/tasks", content=body, headers=json_body)
        assert invalid(response) == {"field": "body", "reason": "invalid_json"}, constant
    for path in ("/workspaces", f"/sprints/{'x' * 32}/complete"):  # (FastAPI parses the latter)
        response = admin.post(path, content=b'{"name": NaN}', headers=json_body)
        assert invalid(response) == {"field": "body", "reason": "invalid_json"}, path
    named = admin.post("/workspaces", content=b'{"name": "NaN Infinity"}', headers=json_body)
    assert named.status_code == 201, named.text
    deep = b"[" * 50_000 + b"NaN" + b"]" * 50_000
    assert invalid(admin.post("/workspaces", content=deep, headers=json_body))["field"] == "body"
    keyless = admin.as_(None).post("/workspaces", content=b'{"name": NaN}', headers=json_body)
    assert keyless.status_code == 401


def test_several_errors_are_listed(admin: Api) -> None:
    details = invalid(admin.post("/workspaces", {"name": "", "description": 1, "x": 2}))
    assert details["field"] == "name"
    assert {e["field"] for e in details["errors"]} == {"name", "description", "x"}


def test_strings_are_trimmed(admin: Api) -> None:
    workspace = make_workspace(admin, name="  Team  ", description="  notes \n")
    assert workspace["name"] == "Team"
    assert workspace["description"] == "notes"
    project = make_project(admin, workspace["$id"], name="  Web  ", key=" WEB ")
    assert project["name"] == "Web"
    assert project["key"] == "WEB"
    renamed = admin.ok("PATCH", f"/projects/{project['$id']}", {"name": " Web 2 "})
    assert renamed["name"] == "Web 2"
    name = "  trimmed-user "
    user = admin.ok("POST", "/users", {"name": name, "email": "  trim@example.com  "})
    assert user["name"] == "trimmed-user"
    assert user["email"] == "trim@example.com"
    item_type = admin.ok(
        "POST", f"/workspaces/{workspace['$id']}/work-item-types", {"name": " SPIKE "}
    )
    assert item_type["name"] == "SPIKE"
    project = make_project(admin, workspace["$id"])
    task = admin.ok(
        "POST",
        "/tasks",
        {
            "name": "t",
            "workspaceId": workspace["$id"],
            "projectId": project["$id"],
            "dueDate": " 2026-12-01 ",
        },
    )
    assert task["dueDate"] == "2026-12-01"


def test_a_length_limit_counts_the_string_as_sent(admin: Api, workspace: dict[str, Any]) -> None:
    """Every limited string, a name's as a comment's: the document's `maxLength` is of the
    string sent, so trimming does not save one over the limit."""
    project = make_project(admin, workspace["$id"])
    task = admin.ok(
        "POST",
        "/tasks",
        {"name": "t", "workspaceId": workspace["$id"], "projectId": project["$id"]},
    )
    for path, body, field in (
        ("/workspaces", {"name": " " + "n" * 255}, "name"),
        (f"/tasks/{task['$id']}/comments", {"body": " " + "b" * 65_536}, "body"),
        (f"/tasks/{task['$id']}/time-logs", {"hours": 1, "note": "n" * 4_000 + " "}, "note"),
        (f"/workspaces/{workspace['$id']}/webhooks", {"url": " " * 2049, "events": []}, "url"),
    ):
        details = invalid(admin.post(path, json=body))
        assert (details["field"], details["reason"]) == (field, "too_long"), path
    assert admin.ok("POST", f"/tasks/{task['$id']}/comments", {"body": " ok "})["body"] == "ok"


def test_name_of_255_characters_is_accepted(admin: Api) -> None:
    workspace = make_workspace(admin, name="n" * 255)
    assert workspace["name"] == "n" * 255


def test_viewer_role_is_accepted_as_a_string(admin: Api) -> None:
    workspace = make_workspace(admin)
    user, _ = make_user(admin)
    member = admin.ok(
        "POST", f"/workspaces/{workspace['$id']}/members", {"userId": user["$id"], "role": "VIEWER"}
    )
    assert member["role"] == "VIEWER"

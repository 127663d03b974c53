"""Projects: CRUD, keys derived and explicit."""

from typing import Any

import pytest

from sprintboard.db import Database
from sprintboard.models import Project
from sprintboard.projects.service import derive_key
from tests.factories import Api, make_project, make_workspace


def error(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    details: dict[str, Any] = response.json()["error"]["details"]
    return details


def test_create_get_update_delete(admin: Api) -> None:
    workspace = make_workspace(admin)
    created = admin.ok(
        "POST",
        f"/workspaces/{workspace['$id']}/projects",
        {"name": "Mobile App", "description": "iOS and Android"},
    )
    assert set(created) == {
        "$id",
        "workspaceId",
        "name",
        "key",
        "description",
        "$createdAt",
        "$updatedAt",
    }
    assert created["workspaceId"] == workspace["$id"]
    assert created["key"] == "MA"
    path = f"/projects/{created['$id']}"
    assert admin.ok("GET", path) == created

    updated = admin.ok("PATCH", path, {"name": "Mobile", "description": None})
    assert updated["name"] == "Mobile"
    assert updated["description"] is None
    assert updated["key"] == "MA"  # the key does not follow the name
    assert updated["$createdAt"] == created["$createdAt"]
    assert admin.ok("GET", path) == updated

    assert admin.ok("DELETE", path) == {"$id": created["$id"], "deleted": True}
    assert admin.get(path).status_code == 404
    assert admin.ok("GET", f"/workspaces/{workspace['$id']}/projects")["total"] == 0


def test_patch_without_changes_keeps_updated_at(admin: Api) -> None:
    workspace = make_workspace(admin)
    project = make_project(admin, workspace["$id"], description="d")
    path = f"/projects/{project['$id']}"
    assert admin.ok("PATCH", path, {"name": project["name"], "description": "d"}) == project
    assert admin.ok("PATCH", path, {}) == project


def test_list_projects_pages_and_counts(admin: Api) -> None:
    workspace = make_workspace(admin)
    other = make_workspace(admin)
    created = [make_project(admin, workspace["$id"]) for _ in range(4)]
    make_project(admin, other["$id"])
    path = f"/workspaces/{workspace['$id']}/projects"
    listed = admin.ok("GET", path)
    assert listed["total"] == 4
    assert [p["$id"] for p in listed["documents"]] == [p["$id"] for p in created]
    page = admin.ok("GET", f"{path}?limit=2&offset=1")
    assert page["total"] == 4
    assert page["documents"] == created[1:3]


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("Web Platform", "WP"),
        ("Website", "WEBS"),
        ("web", "WEB"),
        ("the quick brown fox", "TQBF"),
        ("A", "PRJ"),
        ("!!!", "PRJ"),
        ("2024 Roadmap", "ROAD"),
        ("1", "P1"),
        ("Data-Pipeline v2", "DPV"),
        ("a b c d e f g h i j k l", "ABCDEFGHIJ"),
    ],
)
def test_derive_key(name: str, key: str) -> None:
    assert derive_key(name) == key


def test_derived_keys_follow_the_key_rules() -> None:
    for name in ["x", "1", "ü", "Über Project", "42", "9 lives", "a1", "Ab", "日本語"]:
        key = derive_key(name)
        assert 2 <= len(key) <= 10, (name, key)
        assert key[0].isascii()
        assert key[0].isupper(), (name, key)
        assert all(c.isascii() and (c.isupper() or c.isdigit()) for c in key), (name, key)


def test_derived_key_is_made_unique(admin: Api) -> None:
    workspace = make_workspace(admin)
    keys = [make_project(admin, workspace["$id"], name="Web Platform")["key"] for _ in range(3)]
    assert keys == ["WP", "WP2", "WP3"]
    other = make_workspace(admin)
    assert make_project(admin, other["$id"], name="Web Platform")["key"] == "WP"


def test_a_derived_key_with_a_long_number_stays_within_ten_characters(
    admin: Api, database: Database
) -> None:
    workspace = make_workspace(admin)
    base = derive_key("Alpha Beta Gamma Delta Epsilon Zeta Eta Theta Iota Kappa")
    assert base == "ABGDEZETIK"
    with database.transaction() as session:  # the base and its first 98 numbered successors
        keys = [base] + [f"{base[:8]}{n}" for n in range(2, 100)]
        session.add_all(Project(workspace_id=workspace["$id"], name=k, key=k) for k in keys)
    named = {"name": "Alpha Beta Gamma Delta Epsilon Zeta Eta Theta Iota Kappa"}
    hundredth = admin.ok("POST", f"/workspaces/{workspace['$id']}/projects", named)
    assert hundredth["key"] == "ABGDEZE100"


def test_derived_key_skips_an_explicit_one(admin: Api) -> None:
    workspace = make_workspace(admin)
    make_project(admin, workspace["$id"], name="Other", key="WP")
    assert make_project(admin, workspace["$id"], name="Web Platform")["key"] == "WP2"


def test_explicit_key(admin: Api) -> None:
    workspace = make_workspace(admin)
    project = make_project(admin, workspace["$id"], name="Web Platform", key="WEB2")
    assert project["key"] == "WEB2"
    assert make_project(admin, workspace["$id"], key="ABCDEFGHIJ")["key"] == "ABCDEFGHIJ"


def test_duplicate_explicit_key_is_409(admin: Api) -> None:
    workspace = make_workspace(admin)
    make_project(admin, workspace["$id"], key="WEB")
    response = admin.post(f"/workspaces/{workspace['$id']}/projects", {"name": "X", "key": "WEB"})
    details = error(response, 409)
    assert details["reason"] == "duplicate_key"
    assert admin.ok("GET", f"/workspaces/{workspace['$id']}/projects")["total"] == 1
    # Keys are unique per workspace only.
    other = make_workspace(admin)
    assert make_project(admin, other["$id"], key="WEB")["key"] == "WEB"


def test_deleted_projects_key_can_be_reused(admin: Api) -> None:
    workspace = make_workspace(admin)
    project = make_project(admin, workspace["$id"], key="WEB")
    admin.ok("DELETE", f"/projects/{project['$id']}")
    assert make_project(admin, workspace["$id"], key="WEB")["key"] == "WEB"


def test_key_is_immutable(admin: Api) -> None:
    workspace = make_workspace(admin)
    project = make_project(admin, workspace["$id"], key="WEB")
    response = admin.patch(f"/projects/{project['$id']}", {"key": "APP", "name": "Renamed"})
    assert error(response, 400) == {"field": "key", "reason": "immutable"}
    assert admin.ok("GET", f"/projects/{project['$id']}") == project


def test_project_in_unknown_workspace_is_404(admin: Api) -> None:
    response = admin.post("/workspaces/nope/projects", {"name": "X"})
    assert response.status_code == 404
    assert admin.get("/workspaces/nope/projects").status_code == 404


def test_unknown_project_is_404(admin: Api) -> None:
    for method in ("GET", "PATCH", "DELETE"):
        response = admin.request(method, "/projects/nope", json={} if method == "PATCH" else None)
        assert response.status_code == 404, method
        assert response.json()["error"]["code"] == "NOT_FOUND"

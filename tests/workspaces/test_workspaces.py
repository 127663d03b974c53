"""Workspaces, members and custom work item types."""

from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any

import pytest

from sprintboard import models
from tests.factories import Api, add_member, make_project, make_user, make_workspace


def error(response: Any, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    details: dict[str, Any] = response.json()["error"]["details"]
    return details


# --- CRUD ----------------------------------------------------------------------------------


def test_create_get_update_delete(admin: Api) -> None:
    created = admin.ok("POST", "/workspaces", {"name": "Team", "description": "Ours"})
    assert set(created) == {"$id", "name", "description", "$createdAt", "$updatedAt"}
    assert created["description"] == "Ours"
    assert created["$createdAt"] == created["$updatedAt"]
    path = f"/workspaces/{created['$id']}"
    assert admin.ok("GET", path) == created

    updated = admin.ok("PATCH", path, {"name": "Team 2"})
    assert updated["name"] == "Team 2"
    assert updated["description"] == "Ours"
    assert updated["$createdAt"] == created["$createdAt"]
    assert updated["$updatedAt"] >= created["$updatedAt"]
    assert admin.ok("GET", path) == updated

    cleared = admin.ok("PATCH", path, {"description": None})
    assert cleared["description"] is None
    assert cleared["name"] == "Team 2"

    assert admin.ok("DELETE", path) == {"$id": created["$id"], "deleted": True}
    assert admin.get(path).status_code == 404
    assert admin.delete(path).status_code == 404
    assert admin.ok("GET", "/workspaces")["total"] == 0


def test_a_new_record_was_updated_when_it_was_created(
    admin: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`$updatedAt` equals `$createdAt` on a create, even when the clock moves on between the
    two readings a record's defaults would take (here: a millisecond a reading)."""
    start = datetime(2026, 11, 26, 7, 0, tzinfo=UTC)
    readings = iter(range(1_000_000))
    monkeypatch.setattr(models, "clock", lambda: start + timedelta(milliseconds=next(readings)))
    workspace = make_workspace(admin)
    user, _ = make_user(admin)
    created = [
        workspace,
        make_project(admin, workspace["$id"]),
        user,
        admin.ok(
            "POST",
            "/sprints",
            {
                "name": "S",
                "workspaceId": workspace["$id"],
                "projectId": make_project(admin, workspace["$id"])["$id"],
            },
        ),
        add_member(admin, workspace["$id"], user["$id"], "MEMBER"),
    ]
    for record in created:
        assert record["$createdAt"] == record["$updatedAt"], record


def test_description_defaults_to_null(admin: Api) -> None:
    assert make_workspace(admin)["description"] is None


def test_patch_without_changes_keeps_updated_at(admin: Api) -> None:
    workspace = make_workspace(admin, description="same")
    path = f"/workspaces/{workspace['$id']}"
    again = admin.ok("PATCH", path, {"name": workspace["name"], "description": "same"})
    assert again == workspace
    assert admin.ok("PATCH", path, {}) == workspace


def test_creator_is_admin_member(admin: Api) -> None:
    user, client = make_user(admin)
    workspace = make_workspace(client)
    members = client.ok("GET", f"/workspaces/{workspace['$id']}/members")
    assert members["total"] == 1
    (member,) = members["documents"]
    assert member["userId"] == user["$id"]
    assert member["role"] == "ADMIN"
    assert member["workspaceId"] == workspace["$id"]
    assert member["email"] == user["email"]
    assert member["name"] == user["name"]


def test_list_only_callers_workspaces(admin: Api) -> None:
    _, alice = make_user(admin)
    bob_user, bob = make_user(admin)
    alices = [make_workspace(alice) for _ in range(2)]
    bobs = make_workspace(bob)
    shared = make_workspace(alice)
    add_member(alice, shared["$id"], bob_user["$id"], "VIEWER")

    listed = alice.ok("GET", "/workspaces")
    assert listed["total"] == 3
    assert [w["$id"] for w in listed["documents"]] == [w["$id"] for w in [*alices, shared]]
    bob_listed = bob.ok("GET", "/workspaces")
    assert {w["$id"] for w in bob_listed["documents"]} == {bobs["$id"], shared["$id"]}
    assert bob_listed["total"] == 2
    assert admin.ok("GET", "/workspaces") == {"documents": [], "total": 0, "nextCursor": None}


def test_list_pages_with_limit_and_offset(admin: Api) -> None:
    created = [make_workspace(admin) for _ in range(5)]
    page = admin.ok("GET", "/workspaces?limit=2&offset=1")
    assert page["total"] == 5
    assert [w["$id"] for w in page["documents"]] == [w["$id"] for w in created[1:3]]
    tail = admin.ok("GET", "/workspaces?limit=2&offset=4")
    assert [w["$id"] for w in tail["documents"]] == [created[4]["$id"]]
    assert tail["total"] == 5
    beyond = admin.ok("GET", "/workspaces?offset=10")
    assert beyond == {"documents": [], "total": 5, "nextCursor": None}


def test_delete_workspace_cascades(admin: Api) -> None:
    workspace = make_workspace(admin)
    other = make_workspace(admin)
    project = make_project(admin, workspace["$id"])
    kept = make_project(admin, other["$id"])
    user, client = make_user(admin)
    add_member(admin, workspace["$id"], user["$id"], "MEMBER")
    admin.ok("POST", f"/workspaces/{workspace['$id']}/work-item-types", {"name": "SPIKE"})

    admin.ok("DELETE", f"/workspaces/{workspace['$id']}")
    assert admin.get(f"/projects/{project['$id']}").status_code == 404
    assert admin.get(f"/workspaces/{workspace['$id']}/members").status_code == 404
    assert client.ok("GET", "/workspaces") == {"documents": [], "total": 0, "nextCursor": None}
    assert admin.ok("GET", f"/projects/{kept['$id']}") == kept
    # The user survives; only the membership went with the workspace.
    assert client.ok("GET", "/me")["$id"] == user["$id"]


def test_delete_workspace_removes_keys_restricted_to_it(admin: Api) -> None:
    _, client = make_user(admin)
    workspace = make_workspace(client)
    restricted = admin.as_(
        client.ok("POST", "/keys", {"name": "ci", "workspaceId": workspace["$id"]})["key"]
    )
    assert restricted.get("/me").status_code == 200
    client.ok("DELETE", f"/workspaces/{workspace['$id']}")
    assert restricted.get("/me").status_code == 401


# --- members -------------------------------------------------------------------------------


def test_add_change_remove_member(admin: Api) -> None:
    workspace = make_workspace(admin)
    members = f"/workspaces/{workspace['$id']}/members"
    user, client = make_user(admin)
    assert client.get(f"/workspaces/{workspace['$id']}").status_code == 404

    added = admin.ok("POST", members, {"userId": user["$id"]})
    assert added["role"] == "MEMBER"
    assert added["userId"] == user["$id"]
    assert client.ok("GET", f"/workspaces/{workspace['$id']}")["$id"] == workspace["$id"]
    assert admin.ok("GET", members)["total"] == 2

    changed = admin.ok("PATCH", f"{members}/{user['$id']}", {"role": "VIEWER"})
    assert changed["role"] == "VIEWER"
    assert changed["$id"] == added["$id"]
    roles = {m["userId"]: m["role"] for m in admin.ok("GET", members)["documents"]}
    assert roles[user["$id"]] == "VIEWER"

    removed = admin.ok("DELETE", f"{members}/{user['$id']}")
    assert removed == {"$id": added["$id"], "deleted": True}
    assert client.get(f"/workspaces/{workspace['$id']}").status_code == 404
    assert admin.ok("GET", members)["total"] == 1


def test_duplicate_member_is_409(admin: Api) -> None:
    workspace = make_workspace(admin)
    user, _ = make_user(admin)
    add_member(admin, workspace["$id"], user["$id"], "MEMBER")
    response = admin.post(
        f"/workspaces/{workspace['$id']}/members", {"userId": user["$id"], "role": "ADMIN"}
    )
    assert error(response, 409)["reason"] == "duplicate_member"
    roles = [
        m["role"] for m in admin.ok("GET", f"/workspaces/{workspace['$id']}/members")["documents"]
    ]
    assert sorted(roles) == ["ADMIN", "MEMBER"]


def test_adding_self_again_is_409(admin: Api) -> None:
    workspace = make_workspace(admin)
    me = admin.ok("GET", "/me")["$id"]
    response = admin.post(f"/workspaces/{workspace['$id']}/members", {"userId": me})
    assert error(response, 409)["reason"] == "duplicate_member"


def test_last_admin_cannot_be_demoted_or_removed(admin: Api) -> None:
    workspace = make_workspace(admin)
    me = admin.ok("GET", "/me")["$id"]
    members = f"/workspaces/{workspace['$id']}/members"
    assert error(admin.patch(f"{members}/{me}", {"role": "MEMBER"}), 409)["reason"] == "last_admin"
    assert error(admin.delete(f"{members}/{me}"), 409)["reason"] == "last_admin"
    assert admin.ok("GET", members)["documents"][0]["role"] == "ADMIN"


def test_admin_may_leave_when_another_admin_remains(admin: Api) -> None:
    workspace = make_workspace(admin)
    me = admin.ok("GET", "/me")["$id"]
    other, other_client = make_user(admin)
    members = f"/workspaces/{workspace['$id']}/members"
    add_member(admin, workspace["$id"], other["$id"], "ADMIN")
    assert admin.ok("PATCH", f"{members}/{me}", {"role": "MEMBER"})["role"] == "MEMBER"
    # Now the other ADMIN is the last one.
    response = other_client.delete(f"{members}/{other['$id']}")
    assert error(response, 409)["reason"] == "last_admin"
    other_client.ok("DELETE", f"{members}/{me}")
    assert admin.get(f"/workspaces/{workspace['$id']}").status_code == 404


def test_setting_the_same_role_is_a_no_op(admin: Api) -> None:
    workspace = make_workspace(admin)
    me = admin.ok("GET", "/me")["$id"]
    member = admin.ok("GET", f"/workspaces/{workspace['$id']}/members")["documents"][0]
    again = admin.ok("PATCH", f"/workspaces/{workspace['$id']}/members/{me}", {"role": "ADMIN"})
    assert again == member


@pytest.mark.parametrize("method", ["PATCH", "DELETE"])
def test_unknown_member_is_404(admin: Api, method: str) -> None:
    workspace = make_workspace(admin)
    stranger, _ = make_user(admin)
    path = f"/workspaces/{workspace['$id']}/members/{stranger['$id']}"
    body = {"role": "VIEWER"} if method == "PATCH" else None
    response = admin.request(method, path, json=body)
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "NOT_FOUND"


def test_members_list_pages(admin: Api) -> None:
    workspace = make_workspace(admin)
    for _ in range(3):
        add_member(admin, workspace["$id"], make_user(admin)[0]["$id"], "VIEWER")
    page = admin.ok("GET", f"/workspaces/{workspace['$id']}/members?limit=2&offset=2")
    assert page["total"] == 4
    assert len(page["documents"]) == 2


# --- work item types -----------------------------------------------------------------------


def test_custom_work_item_types(admin: Api) -> None:
    workspace = make_workspace(admin)
    other = make_workspace(admin)
    path = f"/workspaces/{workspace['$id']}/work-item-types"
    assert admin.ok("GET", path) == {"documents": [], "total": 0, "nextCursor": None}
    spike = admin.ok("POST", path, {"name": "SPIKE", "description": "Research"})
    assert spike["name"] == "SPIKE"
    assert spike["workspaceId"] == workspace["$id"]
    assert spike["description"] == "Research"
    longest = admin.ok("POST", path, {"name": "A" + "_9" * 15 + "Z"})
    assert len(longest["name"]) == 32
    chore = admin.ok("POST", path, {"name": "CHORE"})
    listed = admin.ok("GET", path)
    assert listed["total"] == 3
    assert {t["$id"] for t in listed["documents"]} == {spike["$id"], longest["$id"], chore["$id"]}
    # Types belong to one workspace: the same name is free elsewhere.
    admin.ok("POST", f"/workspaces/{other['$id']}/work-item-types", {"name": "SPIKE"})


def test_duplicate_work_item_type_is_409(admin: Api) -> None:
    workspace = make_workspace(admin)
    path = f"/workspaces/{workspace['$id']}/work-item-types"
    admin.ok("POST", path, {"name": "SPIKE"})
    assert error(admin.post(path, {"name": "SPIKE"}), 409)["reason"] == "duplicate_type"
    assert admin.ok("GET", path)["total"] == 1


@pytest.mark.parametrize("name", ["TASK", "BUG", "STORY", "EPIC"])
def test_builtin_type_names_are_taken(admin: Api, name: str) -> None:
    workspace = make_workspace(admin)
    path = f"/workspaces/{workspace['$id']}/work-item-types"
    assert error(admin.post(path, {"name": name}), 409)["reason"] == "duplicate_type"
    assert admin.ok("GET", path)["total"] == 0


@pytest.mark.parametrize("name", ["spike", "1SPIKE", "_SPIKE", "SP-IKE", "SP IKE", "A" * 33, ""])
def test_work_item_type_name_pattern(admin: Api, name: str) -> None:
    workspace = make_workspace(admin)
    response = admin.post(f"/workspaces/{workspace['$id']}/work-item-types", {"name": name})
    details = error(response, 400)
    assert details["field"] == "name"
    assert details["reason"] in {"invalid_format", "too_long", "too_short"}


@pytest.mark.parametrize("kind", ["workspace", "project"])
def test_two_changes_within_one_millisecond_get_two_etags(
    admin: Api, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """ETags of these records come from `$updatedAt`, to the millisecond: a second change in
    the same millisecond moves it on by one, so the first one's ETag no longer matches."""
    workspace = make_workspace(admin)
    path = f"/workspaces/{workspace['$id']}"
    if kind == "project":
        path = f"/projects/{make_project(admin, workspace['$id'])['$id']}"
    frozen = datetime.now(UTC)

    class Frozen(datetime):
        @classmethod
        def now(cls, tz: tzinfo | None = None) -> "Frozen":
            return cls.fromtimestamp(frozen.timestamp(), tz)

    monkeypatch.setattr(models, "datetime", Frozen)  # (what `models.utcnow` reads)
    first = admin.patch(path, {"description": "one"})
    second = admin.patch(path, {"description": "two"})
    assert first.status_code == second.status_code == 200
    assert first.headers["ETag"] != second.headers["ETag"]
    stale = admin.patch(path, {"name": "Lost update"}, headers={"If-Match": first.headers["ETag"]})
    assert stale.status_code == 412, stale.text

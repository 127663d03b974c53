"""Offboarding (contract §14): an organization admin deactivates a user, whose keys all stop
at once while their records stay; sees and revokes a user's keys."""

import pytest

from tests.factories import Api, make_user, make_workspace, unique


def test_deactivating_a_user_stops_every_key_at_once_and_keeps_their_records(
    admin: Api,
) -> None:
    user, api = make_user(admin)
    second = api.as_(api.ok("POST", "/keys", {"name": "laptop"})["key"])
    workspace = make_workspace(api)
    assert second.get("/me").status_code == 200  # (the key is known to the rate limiter)

    changed = admin.ok("PATCH", f"/users/{user['$id']}", {"active": False})
    assert changed["active"] is False

    for client in (api, second):
        response = client.get("/me")
        assert response.status_code == 401
        assert response.headers["WWW-Authenticate"] == "Bearer"
        assert client.post("/workspaces", json={"name": "x"}).status_code == 401
        replayable = client.post(
            "/workspaces", json={"name": "x"}, headers={"Idempotency-Key": "k1"}
        )
        assert replayable.status_code == 401
    listed = admin.ok("GET", "/users")["documents"]
    assert next(u for u in listed if u["$id"] == user["$id"])["active"] is False
    keys = admin.ok("GET", f"/users/{user['$id']}/keys")
    assert keys["total"] == 2
    assert all(key["revokedAt"] is None for key in keys["documents"])
    # Their workspace is still there: an org admin restores the user and it is theirs again.
    admin.ok("PATCH", f"/users/{user['$id']}", {"active": True})
    assert api.ok("GET", f"/workspaces/{workspace['$id']}")["name"] == workspace["name"]


def test_patch_changes_name_and_org_admin(admin: Api) -> None:
    user, api = make_user(admin)
    assert api.post("/users", json={"name": "n", "email": "n@example.com"}).status_code == 403
    changed = admin.ok("PATCH", f"/users/{user['$id']}", {"name": "  Renamed ", "isOrgAdmin": True})
    assert changed["name"] == "Renamed"
    assert changed["isOrgAdmin"] is True
    assert changed["active"] is True
    assert changed["$updatedAt"] > user["$updatedAt"]
    assert api.ok("GET", "/me")["name"] == "Renamed"
    api.ok("POST", "/users", {"name": "n", "email": f"{unique('n')}@example.com"})


def test_patch_of_a_user_needs_org_admin(admin: Api) -> None:
    user, api = make_user(admin)
    other, _ = make_user(admin)
    for path, body in (
        (f"/users/{other['$id']}", {"active": False}),
        (f"/users/{user['$id']}", {"isOrgAdmin": True}),
    ):
        response = api.patch(path, json=body)
        assert response.status_code == 403, response.text
        assert response.json()["error"]["details"]["permission"] == "ORG_ADMIN"
    response = api.get(f"/users/{other['$id']}/keys")
    assert response.status_code == 403
    assert admin.ok("GET", f"/users/{other['$id']}/keys")["total"] == 1


def test_patch_of_a_user_checks_its_body_and_if_match(admin: Api) -> None:
    user, _ = make_user(admin)
    path = f"/users/{user['$id']}"
    assert admin.patch("/users/nope", json={"active": False}).status_code == 404
    for body, field, reason in (
        ({"active": "no"}, "active", "invalid_type"),
        ({"active": None}, "active", "invalid_type"),
        ({"email": "x@example.com"}, "email", "unknown_field"),
        ({"name": ""}, "name", "too_short"),
    ):
        response = admin.patch(path, json=body)
        assert response.status_code == 400, (body, response.text)
        details = response.json()["error"]["details"]
        assert (details["field"], details["reason"]) == (field, reason), body
    first = admin.patch(path, json={"name": "One"})
    assert first.status_code == 200
    stale = admin.patch(path, json={"name": "Two"}, headers={"If-Match": '"nope"'})
    assert stale.status_code == 412
    fresh = admin.patch(path, json={"name": "Two"}, headers={"If-Match": first.headers["ETag"]})
    assert fresh.status_code == 200, fresh.text


def test_an_admin_cannot_deactivate_themself_nor_leave_no_admin(admin: Api) -> None:
    me = admin.ok("GET", "/me")
    refused = admin.patch(f"/users/{me['$id']}", json={"active": False})
    assert refused.status_code == 409
    assert refused.json()["error"]["details"]["reason"] == "cannot_deactivate_self"
    last = admin.patch(f"/users/{me['$id']}", json={"isOrgAdmin": False})
    assert last.status_code == 409
    assert last.json()["error"]["details"]["reason"] == "last_admin"
    assert admin.ok("GET", "/me")["isOrgAdmin"] is True
    # With another active admin, stepping down is allowed.
    other, other_api = make_user(admin)
    admin.ok("PATCH", f"/users/{other['$id']}", {"isOrgAdmin": True})
    assert admin.ok("PATCH", f"/users/{me['$id']}", {"isOrgAdmin": False})["isOrgAdmin"] is False
    assert admin.get("/users").status_code == 403
    # A deactivated admin does not count as the other one.
    other_api.ok("PATCH", f"/users/{me['$id']}", {"isOrgAdmin": True})
    other_api.ok("PATCH", f"/users/{me['$id']}", {"active": False})
    stepping_down = other_api.patch(f"/users/{other['$id']}", json={"isOrgAdmin": False})
    assert stepping_down.status_code == 409


def test_an_org_admin_lists_a_users_keys_without_secrets_and_revokes_them(admin: Api) -> None:
    user, api = make_user(admin)
    created = api.ok("POST", "/keys", {"name": "phone"})
    listed = admin.ok("GET", f"/users/{user['$id']}/keys")
    assert listed["total"] == 2
    for key in listed["documents"]:
        assert "key" not in key
        assert key["userId"] == user["$id"]
        assert created["key"] not in str(key)
    assert admin.get("/users/nope/keys").status_code == 404
    admin.ok("DELETE", f"/keys/{created['$id']}")
    assert api.as_(created["key"]).get("/me").status_code == 401
    assert api.get("/me").status_code == 200


@pytest.mark.parametrize("active", [False, True])
def test_active_shows_on_every_user_record(admin: Api, active: bool) -> None:
    user, _ = make_user(admin)
    if not active:
        admin.ok("PATCH", f"/users/{user['$id']}", {"active": False})
    users = admin.ok("GET", "/users")["documents"]
    assert next(u for u in users if u["$id"] == user["$id"])["active"] is active
    assert admin.ok("GET", "/me")["active"] is True

"""Users, API keys and authentication."""

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, update

from sprintboard.db import Database
from sprintboard.models import ApiKey
from tests.factories import (
    API,
    Api,
    add_member,
    make_project,
    make_user,
    make_workspace,
    unique,
)

# --- users ---------------------------------------------------------------------------------


def test_org_admin_creates_and_lists_users(admin: Api) -> None:
    email = f"{unique('ada')}@Example.com"
    user = admin.ok("POST", "/users", {"name": "  Ada  ", "email": email})
    assert user["name"] == "Ada"
    assert user["email"] == email
    assert user["isOrgAdmin"] is False
    assert user["active"] is True
    assert set(user) == {"$id", "name", "email", "isOrgAdmin", "active", "$createdAt", "$updatedAt"}
    listed = admin.ok("GET", "/users")
    assert listed["total"] == 2  # the admin and Ada
    assert user in listed["documents"]


def test_org_admin_can_create_another_org_admin(admin: Api) -> None:
    name = unique("boss")
    user = admin.ok("POST", "/users", {"name": name, "email": f"{name}@x.io", "isOrgAdmin": True})
    assert user["isOrgAdmin"] is True
    key = admin.ok("POST", f"/users/{user['$id']}/keys", {"name": "k"})["key"]
    assert admin.as_(key).ok("GET", "/users")["total"] == 2


def test_list_users_pages(admin: Api) -> None:
    for _ in range(3):
        make_user(admin)
    page = admin.ok("GET", "/users?limit=2&offset=1")
    assert page["total"] == 4
    assert len(page["documents"]) == 2
    everyone = admin.ok("GET", "/users")["documents"]
    assert page["documents"] == everyone[1:3]


@pytest.mark.parametrize(
    ("method", "path"),
    [("POST", "/users"), ("GET", "/users"), ("POST", "/users/{userId}/keys")],
)
def test_user_admin_needs_org_admin(admin: Api, method: str, path: str) -> None:
    user, client = make_user(admin)
    workspace = make_workspace(client)  # an ADMIN of a workspace is still no org admin
    assert workspace["$id"]
    body = {"name": "x", "email": f"{unique('x')}@x.io"} if path == "/users" else {"name": "x"}
    response = client.request(
        method, path.format(userId=user["$id"]), json=body if method == "POST" else None
    )
    assert response.status_code == 403, response.text
    assert response.json()["error"]["code"] == "FORBIDDEN"
    assert response.json()["error"]["details"] == {"permission": "ORG_ADMIN"}
    assert admin.ok("GET", "/users")["total"] == 2


@pytest.mark.parametrize("variant", ["same", "upper", "padded"])
def test_duplicate_email_is_case_insensitive(admin: Api, variant: str) -> None:
    email = f"{unique('grace')}@example.com"
    admin.ok("POST", "/users", {"name": "Grace", "email": email})
    again = {"same": email, "upper": email.upper(), "padded": f"  {email.title()} "}[variant]
    response = admin.post("/users", {"name": "Grace 2", "email": again})
    assert response.status_code == 409, response.text
    assert response.json()["error"]["code"] == "CONFLICT"
    assert response.json()["error"]["details"]["reason"] == "duplicate_email"
    assert admin.ok("GET", "/users")["total"] == 2


@pytest.mark.parametrize("email", ["not-an-email", "a@b", "a b@c.io", "@c.io", "a@@c.io"])
def test_invalid_email_is_invalid_format(admin: Api, email: str) -> None:
    response = admin.post("/users", {"name": "X", "email": email})
    assert response.status_code == 400, response.text
    assert response.json()["error"]["details"] == {"field": "email", "reason": "invalid_format"}


def test_unknown_user_for_key_is_404(admin: Api) -> None:
    response = admin.post("/users/nope/keys", {"name": "k"})
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "NOT_FOUND"


# --- keys ----------------------------------------------------------------------------------


def test_key_secret_is_shown_once(admin: Api) -> None:
    user, client = make_user(admin)
    created = client.ok("POST", "/keys", {"name": "laptop"})
    secret = created["key"]
    assert secret.startswith("sb_")
    assert len(secret) >= 3 + 27  # 160 random bits in base64url is 27 characters
    assert secret.startswith(created["prefix"])
    assert created["prefix"] != secret
    assert created["userId"] == user["$id"]
    assert created["permissions"] is None
    assert created["workspaceId"] is None
    assert created["revokedAt"] is None

    listed = client.get("/keys")
    assert listed.status_code == 200
    assert secret not in listed.text
    documents = listed.json()["data"]["documents"]
    assert listed.json()["data"]["total"] == 2
    assert all("key" not in document for document in documents)
    mine = next(d for d in documents if d["$id"] == created["$id"])
    assert mine["prefix"] == created["prefix"]
    assert mine["name"] == "laptop"

    me = client.get("/me")
    assert secret not in me.text


def test_new_key_works_and_keys_are_distinct(admin: Api) -> None:
    user, client = make_user(admin)
    first = client.ok("POST", "/keys", {"name": "a"})["key"]
    second = client.ok("POST", "/keys", {"name": "b"})["key"]
    assert first != second
    for secret in (first, second):
        assert admin.as_(secret).ok("GET", "/me")["$id"] == user["$id"]


def test_keys_list_only_the_callers_own(admin: Api) -> None:
    _, alice = make_user(admin)
    _, bob = make_user(admin)
    bob_key = bob.ok("POST", "/keys", {"name": "bob"})
    alice_keys = alice.ok("GET", "/keys")
    assert bob_key["$id"] not in {k["$id"] for k in alice_keys["documents"]}
    assert alice_keys["total"] == 1


def test_revoked_key_is_401(admin: Api) -> None:
    _, client = make_user(admin)
    created = client.ok("POST", "/keys", {"name": "temp"})
    temp = admin.as_(created["key"])
    assert temp.get("/me").status_code == 200
    assert client.ok("DELETE", f"/keys/{created['$id']}") == {
        "$id": created["$id"],
        "deleted": True,
    }
    response = temp.get("/me")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "UNAUTHENTICATED"
    assert response.headers["www-authenticate"] == "Bearer"
    listed = client.ok("GET", "/keys")["documents"]
    revoked = next(k for k in listed if k["$id"] == created["$id"])
    assert revoked["revokedAt"] is not None
    assert client.get("/me").status_code == 200  # other keys keep working


def test_revoking_the_key_in_use_locks_it_out(admin: Api) -> None:
    _, client = make_user(admin)
    own = client.ok("GET", "/me")["key"]
    client.ok("DELETE", f"/keys/{own['$id']}")
    assert client.get("/me").status_code == 401


def test_cannot_revoke_someone_elses_key(admin: Api) -> None:
    _, alice = make_user(admin)
    _, bob = make_user(admin)
    bob_key = bob.ok("GET", "/me")["key"]
    response = alice.delete(f"/keys/{bob_key['$id']}")
    assert response.status_code == 404
    assert bob.get("/me").status_code == 200


def test_org_admin_can_revoke_anyones_key(admin: Api) -> None:
    _, bob = make_user(admin)
    bob_key = bob.ok("GET", "/me")["key"]
    admin.ok("DELETE", f"/keys/{bob_key['$id']}")
    assert bob.get("/me").status_code == 401


def test_a_user_holds_at_most_25_unrevoked_keys(admin: Api) -> None:
    user, api = make_user(admin)  # (one key already)
    for number in range(24):
        api.ok("POST", "/keys", {"name": f"key {number}"})
    for refused in (
        api.post("/keys", json={"name": "one too many"}),
        admin.post(f"/users/{user['$id']}/keys", json={"name": "one too many"}),
    ):
        assert refused.status_code == 409, refused.text
        assert refused.json()["error"]["details"]["reason"] == "key_limit"
    assert admin.ok("GET", f"/users/{user['$id']}/keys")["total"] == 25
    some_key = admin.ok("GET", f"/users/{user['$id']}/keys")["documents"][-1]
    api.ok("DELETE", f"/keys/{some_key['$id']}")
    api.ok("POST", "/keys", {"name": "in its place"})


def test_revoking_unknown_key_is_404(admin: Api) -> None:
    assert admin.delete("/keys/nope").status_code == 404


def test_expired_key_is_401(admin: Api, database: Database) -> None:
    _, client = make_user(admin)
    created = client.ok("POST", "/keys", {"name": "short", "expiresAt": "2999-01-01"})
    assert created["expiresAt"] == "2999-01-01T00:00:00.000Z"
    short = admin.as_(created["key"])
    assert short.get("/me").status_code == 200
    with database.transaction() as session:
        session.execute(
            update(ApiKey)
            .where(ApiKey.id == created["$id"])
            .values(expires_at=datetime.now(UTC) - timedelta(seconds=1))
        )
    response = short.get("/me")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "UNAUTHENTICATED"
    assert response.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize(
    "expires_at", ["2000-01-01", "2001-05-05T10:00:00Z", "2020-01-01T00:00:00+02:00"]
)
def test_expires_at_in_the_past_is_invalid_value(admin: Api, expires_at: str) -> None:
    response = admin.post("/keys", {"name": "k", "expiresAt": expires_at})
    assert response.status_code == 400
    assert response.json()["error"]["details"] == {"field": "expiresAt", "reason": "invalid_value"}
    assert admin.ok("GET", "/keys")["total"] == 1


def test_expires_at_must_be_a_date(admin: Api) -> None:
    response = admin.post("/keys", {"name": "k", "expiresAt": "next tuesday"})
    assert response.status_code == 400
    assert response.json()["error"]["details"] == {
        "field": "expiresAt",
        "reason": "invalid_format",
    }


def test_workspace_restricted_key_sees_only_its_workspace(admin: Api) -> None:
    user, client = make_user(admin)
    home = make_workspace(client)
    other = make_workspace(client)
    other_project = make_project(client, other["$id"])
    restricted = admin.as_(
        client.ok("POST", "/keys", {"name": "ci", "workspaceId": home["$id"]})["key"]
    )
    listed = restricted.ok("GET", "/workspaces")
    assert listed == {"documents": [home], "total": 1, "nextCursor": None}
    assert restricted.ok("GET", f"/workspaces/{home['$id']}")["$id"] == home["$id"]
    for path in (
        f"/workspaces/{other['$id']}",
        f"/workspaces/{other['$id']}/projects",
        f"/workspaces/{other['$id']}/members",
        f"/projects/{other_project['$id']}",
    ):
        response = restricted.get(path)
        assert response.status_code == 404, path
        assert response.json()["error"]["code"] == "NOT_FOUND"
    response = restricted.post(f"/workspaces/{other['$id']}/projects", {"name": "Sneaky"})
    assert response.status_code == 404
    assert client.ok("GET", f"/workspaces/{other['$id']}/projects")["total"] == 1
    assert user["$id"]


def test_key_for_a_workspace_the_owner_is_not_in_is_rejected(admin: Api) -> None:
    _, alice = make_user(admin)
    _, bob = make_user(admin)
    bobs = make_workspace(bob)
    response = alice.post("/keys", {"name": "k", "workspaceId": bobs["$id"]})
    assert response.status_code == 400
    assert response.json()["error"]["details"] == {"field": "workspaceId", "reason": "not_found"}


def test_restricted_key_cannot_mint_a_broader_key(admin: Api) -> None:
    _, client = make_user(admin)
    home = make_workspace(client)
    other = make_workspace(client)
    restricted = admin.as_(
        client.ok(
            "POST",
            "/keys",
            {"name": "ci", "workspaceId": home["$id"], "permissions": ["WORK_ITEM_WRITE"]},
        )["key"]
    )
    child = restricted.ok("POST", "/keys", {"name": "child"})
    assert child["workspaceId"] == home["$id"]
    assert child["permissions"] == ["WORK_ITEM_WRITE"]
    broader = restricted.post("/keys", {"name": "x", "permissions": ["PROJECT_MANAGE"]})
    assert broader.status_code == 400
    assert broader.json()["error"]["details"]["field"] == "permissions"
    elsewhere = restricted.post("/keys", {"name": "x", "workspaceId": other["$id"]})
    assert elsewhere.status_code == 400
    assert elsewhere.json()["error"]["details"]["field"] == "workspaceId"


def test_permission_subset_key_is_403_for_what_it_lacks(admin: Api) -> None:
    _, client = make_user(admin)
    workspace = make_workspace(client)
    narrow_key = client.ok("POST", "/keys", {"name": "n", "permissions": ["WORK_ITEM_WRITE"]})
    assert narrow_key["permissions"] == ["WORK_ITEM_WRITE"]
    narrow = admin.as_(narrow_key["key"])
    response = narrow.post(f"/workspaces/{workspace['$id']}/projects", {"name": "P"})
    assert response.status_code == 403
    assert response.json()["error"]["details"] == {"permission": "PROJECT_MANAGE"}
    response = narrow.patch(f"/workspaces/{workspace['$id']}", {"name": "renamed"})
    assert response.status_code == 403
    assert response.json()["error"]["details"] == {"permission": "WORKSPACE_MANAGE"}
    # Reading needs membership only.
    assert narrow.ok("GET", f"/workspaces/{workspace['$id']}")["name"] == workspace["name"]
    # The full key of the same user still holds everything.
    make_project(client, workspace["$id"])


def test_org_admin_key_without_org_admin_permission_is_403(admin: Api) -> None:
    narrow = admin.as_(admin.ok("POST", "/keys", {"name": "n", "permissions": []})["key"])
    response = narrow.get("/users")
    assert response.status_code == 403
    assert response.json()["error"]["details"] == {"permission": "ORG_ADMIN"}


def test_key_permission_must_be_known(admin: Api) -> None:
    response = admin.post("/keys", {"name": "k", "permissions": ["SUPERPOWERS"]})
    assert response.status_code == 400
    details = response.json()["error"]["details"]
    assert details["field"] == "permissions"
    assert details["reason"] == "invalid_value"


def test_org_admin_issues_key_for_a_user(admin: Api) -> None:
    user, _ = make_user(admin)
    created = admin.ok("POST", f"/users/{user['$id']}/keys", {"name": "issued"})
    assert created["userId"] == user["$id"]
    assert created["key"].startswith("sb_")
    assert admin.as_(created["key"]).ok("GET", "/me")["$id"] == user["$id"]


def test_last_used_at_is_set_after_use(admin: Api, database: Database) -> None:
    user, _ = make_user(admin)
    created = admin.ok("POST", f"/users/{user['$id']}/keys", {"name": "fresh"})
    assert created["lastUsedAt"] is None
    with database.transaction() as session:
        stored = session.scalar(select(ApiKey.last_used_at).where(ApiKey.id == created["$id"]))
    assert stored is None
    before = datetime.now(UTC) - timedelta(seconds=1)
    me = admin.as_(created["key"]).ok("GET", "/me")
    assert me["key"]["$id"] == created["$id"]
    assert me["key"]["lastUsedAt"] is not None
    listed = admin.as_(created["key"]).ok("GET", "/keys")["documents"]
    used = next(k for k in listed if k["$id"] == created["$id"])
    last_used = datetime.fromisoformat(used["lastUsedAt"].replace("Z", "+00:00"))
    assert before <= last_used <= datetime.now(UTC) + timedelta(seconds=1)


# --- me and authentication -----------------------------------------------------------------


def test_me_returns_the_caller_and_the_key(admin: Api) -> None:
    user, client = make_user(admin)
    workspace = make_workspace(client)
    add_member(client, workspace["$id"], make_user(admin)[0]["$id"], "VIEWER")
    me = client.ok("GET", "/me")
    assert {k: me[k] for k in ("$id", "name", "email", "isOrgAdmin")} == {
        k: user[k] for k in ("$id", "name", "email", "isOrgAdmin")
    }
    assert me["key"]["userId"] == user["$id"]
    assert me["key"]["name"] == "test"
    assert "key" not in me["key"]


@pytest.mark.parametrize(
    "authorization",
    [
        None,
        "",
        "Bearer",
        "Bearer ",
        "Bearer not-a-key",
        "Bearer sb_",
        "Bearer sb_" + "A" * 43,  # well-formed, unknown
        "Basic dXNlcjpwYXNz",
        "Token sb_" + "A" * 43,
    ],
)
def test_bad_credentials_are_401_with_bearer_challenge(api: Api, authorization: str | None) -> None:
    headers = {} if authorization is None else {"Authorization": authorization}
    for path in ("/me", "/workspaces", "/users"):
        response = api.get(path, headers=headers)
        assert response.status_code == 401, (path, response.text)
        assert response.json()["error"]["code"] == "UNAUTHENTICATED"
        assert response.headers["www-authenticate"] == "Bearer"


def test_a_real_key_under_another_scheme_is_401(admin: Api) -> None:
    secret = admin.key
    assert secret is not None
    response = admin.client.get(f"{API}/me", headers={"Authorization": f"Basic {secret}"})
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"


def test_bearer_scheme_is_case_insensitive(admin: Api) -> None:
    response = admin.client.get(f"{API}/me", headers={"Authorization": f"bearer {admin.key}"})
    assert response.status_code == 200

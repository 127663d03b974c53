"""Integrations (contract §20): made by a workspace's admins, read by its members, with a
secret shown once and kept sealed, a user of their own, at most 10 per workspace, audited."""

from sqlalchemy import text

from sprintboard.db import Database
from tests.factories import Api, add_member, make_user, make_workspace
from tests.identity.test_audit import entries
from tests.integrations.forge_factories import make_integration


def test_an_integration_is_made_shown_changed_and_deleted(admin: Api, database: Database) -> None:
    workspace = make_workspace(admin)
    created = make_integration(admin, workspace["$id"], "github", onMerge="DONE")
    assert set(created) == {
        "$id",
        "workspaceId",
        "provider",
        "name",
        "url",
        "secret",
        "onOpen",
        "onMerge",
        "userId",
        "$createdAt",
        "$updatedAt",
    }
    assert created["provider"] == "github"
    assert created["name"] == "GitHub"
    assert created["onOpen"] is None
    assert created["onMerge"] == "DONE"
    assert created["url"] == f"http://testserver/api/v1/integrations/{created['$id']}/hooks"
    assert len(created["secret"]) >= 32

    shown = admin.ok("GET", f"/integrations/{created['$id']}")
    assert "secret" not in shown
    assert shown == {k: v for k, v in created.items() if k != "secret"}
    listed = admin.ok("GET", f"/workspaces/{workspace['$id']}/integrations")
    assert listed["documents"] == [shown]
    assert listed["total"] == 1

    with database.engine.connect() as connection:
        stored = connection.execute(text("SELECT secret_encrypted FROM integrations")).scalar()
        user = connection.execute(
            text("SELECT name, active FROM users WHERE id = :id"), {"id": created["userId"]}
        ).one()
        keys = connection.execute(
            text("SELECT count(*) FROM api_keys WHERE user_id = :id"), {"id": created["userId"]}
        ).scalar()
        memberships = connection.execute(
            text("SELECT count(*) FROM workspace_members WHERE user_id = :id"),
            {"id": created["userId"]},
        ).scalar()
    assert created["secret"] not in str(stored)
    assert tuple(user) == ("GitHub", True)
    assert keys == 0
    assert memberships == 0

    changed = admin.ok(
        "PATCH", f"/integrations/{created['$id']}", {"name": "Our GitHub", "onOpen": "IN_REVIEW"}
    )
    assert changed["name"] == "Our GitHub"
    assert changed["onOpen"] == "IN_REVIEW"
    assert changed["onMerge"] == "DONE"
    cleared = admin.ok("PATCH", f"/integrations/{created['$id']}", {"onMerge": None})
    assert cleared["onMerge"] is None
    assert cleared["onOpen"] == "IN_REVIEW"
    for body, field, reason in [
        ({"secret": "mine"}, "secret", "read_only"),
        ({"provider": "gitlab"}, "provider", "read_only"),
        ({"onOpen": "in review"}, "onOpen", None),
        ({"colour": "red"}, "colour", "unknown_field"),
    ]:
        refused = admin.patch(f"/integrations/{created['$id']}", json=body)
        assert refused.status_code == 400, body
        details = refused.json()["error"]["details"]
        assert details["field"] == field
        assert reason is None or details["reason"] == reason

    assert admin.ok("DELETE", f"/integrations/{created['$id']}") == {
        "$id": created["$id"],
        "deleted": True,
    }
    assert admin.get(f"/integrations/{created['$id']}").status_code == 404
    audited = [e for e in entries(admin) if e["action"].startswith("integration.")]
    assert [e["action"] for e in audited] == ["integration.created", "integration.deleted"]
    target = {"kind": "integration", "$id": created["$id"]}
    assert all(e["target"] == target for e in audited)
    assert all(e["workspaceId"] == workspace["$id"] for e in audited)
    assert created["secret"] not in str(entries(admin))


def test_each_provider_is_accepted_and_others_are_not(admin: Api) -> None:
    workspace = make_workspace(admin)
    for provider, name in (("gitlab", "GitLab"), ("gitea", "Gitea")):
        assert make_integration(admin, workspace["$id"], provider)["name"] == name
    named = make_integration(admin, workspace["$id"], "gitea", name="  Forgejo  ")
    assert named["name"] == "Forgejo"
    for body, field in [
        ({"provider": "bitbucket"}, "provider"),
        ({}, "provider"),
        ({"provider": "github", "secret": "x"}, "secret"),
        ({"provider": "github", "url": "https://x"}, "url"),
        ({"provider": "github", "onMerge": ""}, "onMerge"),
    ]:
        refused = admin.post(f"/workspaces/{workspace['$id']}/integrations", json=body)
        assert refused.status_code == 400, body
        assert refused.json()["error"]["details"]["field"] == field


def test_a_workspace_has_at_most_ten(admin: Api) -> None:
    workspace = make_workspace(admin)
    for _ in range(10):
        make_integration(admin, workspace["$id"], "github")
    refused = admin.post(f"/workspaces/{workspace['$id']}/integrations", json={"provider": "gitea"})
    assert refused.status_code == 409
    assert refused.json()["error"]["details"]["reason"] == "integration_limit"
    assert admin.ok("GET", f"/workspaces/{workspace['$id']}/integrations")["total"] == 10


def test_members_read_admins_manage_outsiders_see_nothing(admin: Api) -> None:
    workspace = make_workspace(admin)
    created = make_integration(admin, workspace["$id"], "gitlab")
    member, member_api = make_user(admin)
    add_member(admin, workspace["$id"], member["$id"], "MEMBER")
    _, outsider = make_user(admin)

    assert member_api.ok("GET", f"/workspaces/{workspace['$id']}/integrations")["total"] == 1
    assert "secret" not in member_api.ok("GET", f"/integrations/{created['$id']}")
    forbidden = member_api.post(
        f"/workspaces/{workspace['$id']}/integrations", json={"provider": "github"}
    )
    assert forbidden.status_code == 403
    renamed = member_api.patch(f"/integrations/{created['$id']}", json={"name": "x"})
    assert renamed.status_code == 403
    assert member_api.delete(f"/integrations/{created['$id']}").status_code == 403

    for response in (
        outsider.get(f"/integrations/{created['$id']}"),
        outsider.get(f"/workspaces/{workspace['$id']}/integrations"),
        outsider.patch(f"/integrations/{created['$id']}", json={"name": "x"}),
        outsider.delete(f"/integrations/{created['$id']}"),
    ):
        assert response.status_code == 404


def test_a_replayed_create_shows_no_secret(admin: Api) -> None:
    workspace = make_workspace(admin)
    path = f"/workspaces/{workspace['$id']}/integrations"
    headers = {"Idempotency-Key": "connect-github"}
    first = admin.post(path, json={"provider": "github"}, headers=headers)
    again = admin.post(path, json={"provider": "github"}, headers=headers)
    assert first.status_code == again.status_code == 201
    assert first.json()["data"]["secret"]
    assert again.json()["data"]["secret"] is None
    assert again.json()["data"]["$id"] == first.json()["data"]["$id"]
    assert admin.ok("GET", path)["total"] == 1

"""The audit log (contract §19): who did what, in the change's own transaction, as a hash
chain that organization admins read and verify, and that nothing forks or rewrites unseen."""

import hashlib
import json
from typing import Any

import httpx
import pytest
from sqlalchemy import text
from starlette.testclient import TestClient

from sprintboard.db import Database
from tests.factories import API, Api, add_member, make_org_admin, make_user, make_workspace
from tests.http.test_races import at_once
from tests.servers import running_server

ORIGIN = "http://testserver"
PASSWORD = "audited password"


def entries(admin: Api, query: str = "") -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    after = 0
    while True:
        page = admin.ok("GET", f"/audit?limit=1000&after={after}{query}")
        found += page["documents"]
        if len(page["documents"]) < 1000:
            return found
        after = found[-1]["seq"]


def chain_holds(listed: list[dict[str, Any]]) -> bool:
    """The chain, recomputed here from the contract's words alone."""
    previous = "0" * 64
    for entry in listed:
        body = {k: v for k, v in entry.items() if k != "hash"}
        canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        if hashlib.sha256((previous + canonical).encode()).hexdigest() != entry["hash"]:
            return False
        previous = entry["hash"]
    return True


def test_only_organization_admins_read_the_log(admin: Api) -> None:
    _, member = make_user(admin)
    for path in ("/audit", "/audit/verify"):
        refused = member.get(path)
        assert refused.status_code == 403
        assert refused.json()["error"]["details"]["permission"] == "ORG_ADMIN"
    narrow = admin.as_(
        admin.ok("POST", "/keys", {"name": "n", "permissions": ["SPRINT_CREATE"]})["key"]
    )
    assert narrow.get("/audit").status_code == 403
    assert admin.get("/audit").status_code == 200
    assert admin.post("/audit", json={}).status_code == 405


def test_every_change_to_people_and_settings_is_recorded_with_who_where_and_what(
    app: Any, admin: Api, database: Database
) -> None:
    me = admin.ok("GET", "/me")
    user, user_api = make_user(admin)
    key = user_api.ok("POST", "/keys", {"name": "laptop"})
    user_api.ok("DELETE", f"/keys/{key['$id']}")
    admin.ok("PATCH", f"/users/{user['$id']}", {"name": "Renamed"})
    workspace = make_workspace(admin, name="Café ☕")
    add_member(admin, workspace["$id"], user["$id"], "MEMBER")
    admin.ok("PATCH", f"/workspaces/{workspace['$id']}/members/{user['$id']}", {"role": "VIEWER"})
    admin.ok("DELETE", f"/workspaces/{workspace['$id']}/members/{user['$id']}")
    project = admin.ok(
        "POST", f"/workspaces/{workspace['$id']}/projects", {"name": "Audit", "key": "AUD"}
    )
    admin.ok("DELETE", f"/projects/{project['$id']}")
    hook = admin.ok(
        "POST",
        f"/workspaces/{workspace['$id']}/webhooks",
        {"url": "http://127.0.0.1:9/hook?token=receiver-secret", "events": ["task.created"]},
    )
    admin.ok("PATCH", f"/webhooks/{hook['$id']}", {"enabled": False})
    admin.ok("DELETE", f"/webhooks/{hook['$id']}")
    invitation = admin.ok(
        "POST", f"/workspaces/{workspace['$id']}/invitations", {"email": "inv@example.com"}
    )
    admin.ok("DELETE", f"/invitations/{invitation['$id']}")
    again = admin.ok(
        "POST", f"/workspaces/{workspace['$id']}/invitations", {"email": "inv@example.com"}
    )
    token = again["url"].rsplit("/", 1)[1]
    with TestClient(app, base_url=ORIGIN, headers={"Origin": ORIGIN}) as browser:
        accepted = browser.post(
            f"{API}/invitations/accept", json={"token": token, "name": "Inv", "password": PASSWORD}
        )
        assert accepted.status_code == 201
        newcomer = accepted.json()["data"]["user"]
        assert (
            browser.put(
                f"{API}/me/password",
                json={"password": "changed password!", "currentPassword": PASSWORD},
            ).status_code
            == 204
        )
        assert browser.delete(f"{API}/sessions/current").status_code == 200
        assert (
            browser.post(
                f"{API}/sessions", json={"email": "inv@example.com", "password": "wrong guess 1"}
            ).status_code
            == 401
        )
        assert (
            browser.post(
                f"{API}/sessions",
                json={"email": "INV@example.com", "password": "changed password!"},
            ).status_code
            == 201
        )
    admin.ok("DELETE", f"/workspaces/{workspace['$id']}")

    listed = entries(admin)
    actions = [e["action"] for e in listed]
    for expected in (
        "user.created",
        "key.created",
        "key.revoked",
        "user.updated",
        "workspace.created",
        "member.added",
        "member.updated",
        "member.removed",
        "project.created",
        "project.deleted",
        "webhook.created",
        "webhook.updated",
        "webhook.deleted",
        "invitation.created",
        "invitation.revoked",
        "invitation.accepted",
        "password.changed",
        "session.created",
        "session.closed",
        "session.failed",
        "workspace.deleted",
    ):
        assert expected in actions, expected
    assert [e["seq"] for e in listed] == list(range(1, len(listed) + 1))
    by_action = {e["action"]: e for e in listed}  # (the last of each)
    updated = by_action["member.updated"]
    assert updated["target"] == {"kind": "user", "$id": user["$id"]}
    assert (updated["actorId"], updated["actorEmail"]) == (me["$id"], me["email"])
    assert (updated["workspaceId"], updated["ip"]) == (workspace["$id"], "testclient")
    assert updated["details"] == {"role": "VIEWER", "was": "MEMBER"}
    failed = by_action["session.failed"]
    assert (failed["actorId"], failed["details"]) == (None, {"email": "inv@example.com"})
    assert by_action["invitation.accepted"]["actorId"] == newcomer["$id"]
    assert by_action["workspace.created"]["details"] == {"name": "Café ☕"}
    assert by_action["workspace.deleted"]["target"] == {
        "kind": "workspace",
        "$id": workspace["$id"],
    }
    dump = json.dumps(listed)
    for secret in (
        "wrong guess 1",
        "changed password!",
        PASSWORD,
        token[4:],
        "receiver-secret",
        user_api.key,
    ):
        assert secret not in dump
    with database.engine.connect() as connection:
        stored = str(connection.execute(text("SELECT * FROM audit_log")).all())
    assert "wrong guess 1" not in stored
    assert chain_holds(listed)
    assert admin.ok("GET", "/audit/verify") == {"ok": True, "entries": len(listed)}
    # Filters, and paging after a `seq`.
    keys = admin.ok("GET", "/audit?action=key.created")
    assert {e["action"] for e in keys["documents"]} == {"key.created"}
    assert keys["total"] == len([a for a in actions if a == "key.created"])
    mine = admin.ok("GET", f"/audit?actorId={newcomer['$id']}")["documents"]
    assert mine
    assert {e["actorId"] for e in mine} == {newcomer["$id"]}
    page = admin.ok("GET", "/audit?after=3&limit=2")
    assert [e["seq"] for e in page["documents"]] == [4, 5]
    assert page["total"] == len(listed) + 0  # (every entry; this read adds none)


def test_a_refused_change_leaves_no_entry_and_a_failed_sign_in_stays(admin: Api) -> None:
    workspace = make_workspace(admin)
    path = f"/workspaces/{workspace['$id']}/invitations"
    admin.ok("POST", path, {"email": "once@example.com"})
    before = admin.ok("GET", "/audit")["total"]
    assert admin.post(path, json={"email": "once@example.com"}).status_code == 409
    assert admin.ok("GET", "/audit")["total"] == before
    refused = admin.client.post(
        f"{API}/sessions", json={"email": "ghost@example.com", "password": "x" * 12}
    )
    assert refused.status_code == 401
    last = admin.ok("GET", f"/audit?after={before}")["documents"]
    assert [e["action"] for e in last] == ["session.failed"]
    assert last[0]["details"] == {"email": "ghost@example.com"}


def test_verify_finds_the_first_entry_changed_or_removed(admin: Api, database: Database) -> None:
    for n in range(4):
        make_workspace(admin, name=f"w{n}")
    listed = entries(admin)
    assert admin.ok("GET", "/audit/verify") == {"ok": True, "entries": len(listed)}
    target = listed[-2]["seq"]
    with database.transaction() as session:
        session.execute(
            text("UPDATE audit_log SET actor_email = 'someone@else.example' WHERE seq = :seq"),
            {"seq": target},
        )
    assert admin.ok("GET", "/audit/verify") == {"ok": False, "brokenAt": target}
    assert not chain_holds(entries(admin))
    with database.transaction() as session:
        session.execute(
            text("UPDATE audit_log SET actor_email = :e WHERE seq = :seq"),
            {"e": listed[-2]["actorEmail"], "seq": target},
        )
    assert admin.ok("GET", "/audit/verify")["ok"] is True
    with database.transaction() as session:
        session.execute(text("DELETE FROM audit_log WHERE seq = :seq"), {"seq": listed[1]["seq"]})
    assert admin.ok("GET", "/audit/verify") == {"ok": False, "brokenAt": listed[2]["seq"]}


@pytest.mark.postgresql_only
def test_writers_at_once_never_fork_the_chain(database: Database, database_url: str) -> None:
    key = make_org_admin(database)
    database.dispose()
    with running_server(database_url) as server:
        headers = {"Authorization": f"Bearer {key}"}
        base = f"{server.base_url}{API}"

        def create(n: int) -> Any:
            return lambda: httpx.post(
                f"{base}/workspaces", json={"name": f"r{n}"}, headers=headers, timeout=30
            )

        def fail(n: int) -> Any:
            body = {"email": f"nobody{n}@example.com", "password": "x" * 12}
            return lambda: httpx.post(f"{base}/sessions", json=body, timeout=30)

        responses = at_once([create(n) for n in range(8)] + [fail(n) for n in range(4)])
        assert sorted(r.status_code for r in responses) == [201] * 8 + [401] * 4
        with httpx.Client(base_url=base, headers=headers, timeout=30) as api:
            listed = api.get("/audit?limit=1000").json()["data"]["documents"]
            verified = api.get("/audit/verify").json()["data"]
    assert [e["seq"] for e in listed] == list(range(1, len(listed) + 1))
    assert len([e for e in listed if e["action"] == "workspace.created"]) == 8
    assert chain_holds(listed)
    assert verified == {"ok": True, "entries": len(listed)}
